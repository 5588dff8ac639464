// Status: the result of every JigsawDB operation that can fail.
//
// JigsawDB never throws across its API. A Status is either OK or carries a
// code and a human-readable message. OK, and any code without a message
// (the NotFound of a lookup that found nothing), are represented without
// allocation.
// Status is [[nodiscard]]: ignoring a returned Status is a compile warning.
//
// Thread-safety: distinct Status objects may be used from different threads;
// a single Status must not be mutated concurrently.
#ifndef JIGSAW_INCLUDE_JIGSAW_STATUS_H_
#define JIGSAW_INCLUDE_JIGSAW_STATUS_H_

#include <memory>
#include <string>

#include "jigsaw/export.h"
#include "jigsaw/slice.h"

namespace jigsaw {

class [[nodiscard]] JIGSAW_EXPORT Status {
 public:
  enum class Code : int {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,
    kNotSupported = 3,
    kInvalidArgument = 4,
    kIOError = 5,
    kNoSpace = 6,
  };

  Status() noexcept = default;
  Status(const Status& other);
  Status& operator=(const Status& other);
  // A moved-from Status is OK.
  Status(Status&& other) noexcept : code_(other.code_), message_(std::move(other.message_)) {
    other.code_ = Code::kOk;
  }
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      code_ = other.code_;
      message_ = std::move(other.message_);
      other.code_ = Code::kOk;
    }
    return *this;
  }
  ~Status() = default;

  static Status OK() { return Status(); }
  static Status NotFound(const Slice& msg, const Slice& detail = Slice()) {
    return Status(Code::kNotFound, msg, detail);
  }
  static Status Corruption(const Slice& msg, const Slice& detail = Slice()) {
    return Status(Code::kCorruption, msg, detail);
  }
  static Status NotSupported(const Slice& msg, const Slice& detail = Slice()) {
    return Status(Code::kNotSupported, msg, detail);
  }
  static Status InvalidArgument(const Slice& msg, const Slice& detail = Slice()) {
    return Status(Code::kInvalidArgument, msg, detail);
  }
  static Status IOError(const Slice& msg, const Slice& detail = Slice()) {
    return Status(Code::kIOError, msg, detail);
  }
  static Status NoSpace(const Slice& msg, const Slice& detail = Slice()) {
    return Status(Code::kNoSpace, msg, detail);
  }

  bool ok() const noexcept { return code_ == Code::kOk; }
  bool IsNotFound() const noexcept { return code() == Code::kNotFound; }
  bool IsCorruption() const noexcept { return code() == Code::kCorruption; }
  bool IsNotSupported() const noexcept { return code() == Code::kNotSupported; }
  bool IsInvalidArgument() const noexcept { return code() == Code::kInvalidArgument; }
  bool IsIOError() const noexcept { return code() == Code::kIOError; }
  bool IsNoSpace() const noexcept { return code() == Code::kNoSpace; }

  Code code() const noexcept { return code_; }
  // The message without the code prefix; empty for OK.
  const std::string& message() const noexcept;
  // "OK" or "<Code name>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, const Slice& msg, const Slice& detail);

  Code code_ = Code::kOk;
  std::unique_ptr<std::string> message_;  // nullptr when the message is empty
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_STATUS_H_
