// Slice: a non-owning view of bytes (pointer + length).
//
// Lifetime: a Slice never owns its bytes. The caller must keep the referenced
// memory alive and unchanged for as long as the Slice is used. Slices returned
// by JigsawDB readers and iterators point into the block they were read from
// and are valid until that block (or the iterator) is released, as stated by
// the returning call.
//
// Thread-safety: a const Slice may be read from several threads.
#ifndef JIGSAW_INCLUDE_JIGSAW_SLICE_H_
#define JIGSAW_INCLUDE_JIGSAW_SLICE_H_

#include <cassert>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

#include "jigsaw/export.h"

namespace jigsaw {

class JIGSAW_EXPORT Slice {
 public:
  constexpr Slice() noexcept : data_(""), size_(0) {}
  constexpr Slice(const char* data, size_t size) noexcept : data_(data), size_(size) {}
  Slice(const std::string& s) noexcept : data_(s.data()), size_(s.size()) {}  // NOLINT
  constexpr Slice(std::string_view s) noexcept : data_(s.data()), size_(s.size()) {}  // NOLINT
  Slice(const char* s) noexcept : data_(s), size_(std::strlen(s)) {}  // NOLINT

  const char* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  char operator[](size_t n) const noexcept {
    assert(n < size_);
    return data_[n];
  }

  void remove_prefix(size_t n) noexcept {
    assert(n <= size_);
    data_ += n;
    size_ -= n;
  }

  std::string ToString() const { return std::string(data_, size_); }
  std::string_view ToStringView() const noexcept { return {data_, size_}; }

  // Three-way bytewise comparison: <0, 0, >0.
  int compare(const Slice& b) const noexcept {
    const size_t min_len = size_ < b.size_ ? size_ : b.size_;
    int r = min_len == 0 ? 0 : std::memcmp(data_, b.data_, min_len);
    if (r == 0) {
      if (size_ < b.size_) return -1;
      if (size_ > b.size_) return 1;
    }
    return r;
  }

  bool starts_with(const Slice& x) const noexcept {
    return size_ >= x.size_ && (x.size_ == 0 || std::memcmp(data_, x.data_, x.size_) == 0);
  }

 private:
  const char* data_;
  size_t size_;
};

inline bool operator==(const Slice& x, const Slice& y) noexcept {
  return x.size() == y.size() && (x.size() == 0 || std::memcmp(x.data(), y.data(), x.size()) == 0);
}
inline bool operator!=(const Slice& x, const Slice& y) noexcept { return !(x == y); }

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_SLICE_H_
