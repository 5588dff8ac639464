// Point lookups in a KeySet block of the current layout that is not in
// memory, read in pieces (docs/ssd_format.md, "Large blocks"): BlockBytes is
// where the block's bytes are read from, PieceReader keeps the block's
// outline and reads the one group of entries a key can be in. A block whose
// values are stored apart (a split-compressed SSD block) is searched in its
// key part (OpenKeyPartReader), its value region (ValueRegion) read on its
// own.
// Code outside format/ names them through this header only.
#ifndef JIGSAW_FORMAT_KEYSET_PIECES_H_
#define JIGSAW_FORMAT_KEYSET_PIECES_H_

#include "format/keyset_v2.h"

namespace jigsaw::keyset {

using v2::BlockBytes;
using v2::kMaxKeyPartValueRegion;
using v2::KeyPartValueOffset;
using v2::OpenKeyPartReader;
using v2::PieceReader;
using v2::ValueRegion;

}  // namespace jigsaw::keyset

#endif  // JIGSAW_FORMAT_KEYSET_PIECES_H_
