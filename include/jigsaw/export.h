// Symbol visibility for JigsawDB's public API. The library is built with
// -fvisibility=hidden; only declarations marked JIGSAW_EXPORT are exported.
#ifndef JIGSAW_INCLUDE_JIGSAW_EXPORT_H_
#define JIGSAW_INCLUDE_JIGSAW_EXPORT_H_

#if defined(JIGSAW_SHARED_LIBRARY) && defined(JIGSAW_COMPILING_LIBRARY)
#define JIGSAW_EXPORT __attribute__((visibility("default")))
#else
#define JIGSAW_EXPORT
#endif

#endif  // JIGSAW_INCLUDE_JIGSAW_EXPORT_H_
