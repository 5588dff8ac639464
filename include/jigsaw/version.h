// JigsawDB's version: the one place it is written (CMakeLists.txt reads it
// for the project, the CMake package and jigsaw.pc). Semantic versioning:
// the on-media formats and the public API are stable within a major
// version once it is 1 or more; before 1.0 any minor version may change
// them (each format's spec in docs/ says what a reader accepts).
#ifndef JIGSAW_INCLUDE_JIGSAW_VERSION_H_
#define JIGSAW_INCLUDE_JIGSAW_VERSION_H_

#define JIGSAW_VERSION_MAJOR 0
#define JIGSAW_VERSION_MINOR 1
#define JIGSAW_VERSION_PATCH 0

// "MAJOR.MINOR.PATCH" as a string literal.
#define JIGSAW_VERSION_STRINGIFY_(x) #x
#define JIGSAW_VERSION_STRINGIFY(x) JIGSAW_VERSION_STRINGIFY_(x)
#define JIGSAW_VERSION_STRING                                                        \
  JIGSAW_VERSION_STRINGIFY(JIGSAW_VERSION_MAJOR) "." JIGSAW_VERSION_STRINGIFY(JIGSAW_VERSION_MINOR) "." \
      JIGSAW_VERSION_STRINGIFY(JIGSAW_VERSION_PATCH)

#endif  // JIGSAW_INCLUDE_JIGSAW_VERSION_H_
