#include "jigsaw/status.h"

namespace jigsaw {

namespace {
const char* CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kNotFound: return "NotFound";
    case Status::Code::kCorruption: return "Corruption";
    case Status::Code::kNotSupported: return "Not supported";
    case Status::Code::kInvalidArgument: return "Invalid argument";
    case Status::Code::kIOError: return "IO error";
    case Status::Code::kNoSpace: return "No space";
  }
  return "Unknown code";
}
}  // namespace

Status::Status(Code code, const Slice& msg, const Slice& detail) : code_(code) {
  if (msg.empty() && detail.empty()) return;
  message_ = std::make_unique<std::string>(msg.data(), msg.size());
  if (!detail.empty()) {
    message_->append(": ");
    message_->append(detail.data(), detail.size());
  }
}

Status::Status(const Status& other)
    : code_(other.code_), message_(other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    code_ = other.code_;
    message_ = other.message_ ? std::make_unique<std::string>(*other.message_) : nullptr;
  }
  return *this;
}

const std::string& Status::message() const noexcept {
  static const std::string kEmpty;
  return message_ ? *message_ : kEmpty;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string result = CodeName(code_);
  result.append(": ");
  result.append(message());
  return result;
}

}  // namespace jigsaw
