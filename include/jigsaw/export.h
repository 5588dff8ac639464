// Symbol visibility for JigsawDB's public API. JIGSAW_EXPORT marks the
// classes and functions that make up the library's ABI. The build makes a
// static library only and defines neither macro below, so today the mark
// expands to nothing; a shared build would compile the library with
// -fvisibility=hidden and define JIGSAW_SHARED_LIBRARY (users and library)
// and JIGSAW_COMPILING_LIBRARY (library only), exporting just these.
#ifndef JIGSAW_INCLUDE_JIGSAW_EXPORT_H_
#define JIGSAW_INCLUDE_JIGSAW_EXPORT_H_

#if defined(JIGSAW_SHARED_LIBRARY) && defined(JIGSAW_COMPILING_LIBRARY)
#define JIGSAW_EXPORT __attribute__((visibility("default")))
#else
#define JIGSAW_EXPORT
#endif

#endif  // JIGSAW_INCLUDE_JIGSAW_EXPORT_H_
