#include "util/logging.h"

#include <sys/time.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

namespace jigsaw {

Logger::~Logger() = default;

void Log(Logger* logger, const char* format, ...) {
  if (logger == nullptr) return;
  char stack[512];
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(stack, sizeof(stack), format, args);
  va_end(args);
  if (n < 0) {
    va_end(again);
    return;
  }
  if (static_cast<size_t>(n) < sizeof(stack)) {
    va_end(again);
    logger->Log(Slice(stack, static_cast<size_t>(n)));
    return;
  }
  std::vector<char> heap(static_cast<size_t>(n) + 1);
  std::vsnprintf(heap.data(), heap.size(), format, again);
  va_end(again);
  logger->Log(Slice(heap.data(), static_cast<size_t>(n)));
}

namespace {

class FileLogger final : public Logger {
 public:
  explicit FileLogger(std::unique_ptr<WritableFile> file) : file_(std::move(file)) {}
  ~FileLogger() override { (void)file_->Close(); }

  void Log(const Slice& message) override {
    struct timeval now {};
    gettimeofday(&now, nullptr);
    struct tm local {};
    localtime_r(&now.tv_sec, &local);
    char prefix[64];
    std::snprintf(prefix, sizeof(prefix), "%04d/%02d/%02d-%02d:%02d:%02d.%06ld %d ", local.tm_year + 1900,
                  local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec,
                  static_cast<long>(now.tv_usec), static_cast<int>(gettid()));
    std::string line = prefix;
    line.append(message.data(), message.size());
    line.push_back('\n');
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_) return;
    failed_ = !file_->Append(line).ok();
  }

 private:
  std::mutex mu_;
  std::unique_ptr<WritableFile> file_;
  bool failed_ = false;
};

}  // namespace

std::unique_ptr<Logger> NewFileLogger(std::unique_ptr<WritableFile> file) {
  return std::make_unique<FileLogger>(std::move(file));
}

}  // namespace jigsaw
