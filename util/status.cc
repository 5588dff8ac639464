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

Status::Status(Code code, const Slice& msg, const Slice& detail)
    : rep_(std::make_unique<Rep>()) {
  rep_->code = code;
  rep_->message.assign(msg.data(), msg.size());
  if (!detail.empty()) {
    rep_->message.append(": ");
    rep_->message.append(detail.data(), detail.size());
  }
}

Status::Status(const Status& other)
    : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
  return *this;
}

const std::string& Status::message() const noexcept {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

std::string Status::ToString() const {
  if (!rep_) return "OK";
  std::string result = CodeName(rep_->code);
  result.append(": ");
  result.append(rep_->message);
  return result;
}

}  // namespace jigsaw
