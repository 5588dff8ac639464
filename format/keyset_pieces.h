// Point lookups in a KeySet block of the current layout that is not in
// memory, read in pieces (docs/ssd_format.md, "Large blocks"): BlockBytes is
// where the block's bytes are read from, PieceReader keeps the block's
// outline and reads the one group of entries a key can be in. Code outside
// format/ names them through this header only.
#ifndef JIGSAW_FORMAT_KEYSET_PIECES_H_
#define JIGSAW_FORMAT_KEYSET_PIECES_H_

#include "format/keyset_v2.h"

namespace jigsaw::keyset {

using v2::BlockBytes;
using v2::PieceReader;

}  // namespace jigsaw::keyset

#endif  // JIGSAW_FORMAT_KEYSET_PIECES_H_
