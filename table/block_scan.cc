#include "table/table.h"

namespace jigsaw {

namespace {

class SingleBlockScan final : public BlockScan {
 public:
  explicit SingleBlockScan(const Slice& block) : block_(block) {}
  bool NextBlock(Slice* block) override {
    if (done_) return false;
    done_ = true;
    *block = block_;
    return true;
  }
  Status status() const override { return Status::OK(); }

 private:
  const Slice block_;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<BlockScan> NewSingleBlockScan(const Slice& block) { return std::make_unique<SingleBlockScan>(block); }

}  // namespace jigsaw
