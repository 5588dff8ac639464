/* Symbol visibility for JigsawDB's public API. JIGSAW_EXPORT marks the
 * classes and functions that make up the library's ABI. The library is
 * compiled with -fvisibility=hidden; a shared build (BUILD_SHARED_LIBS)
 * defines JIGSAW_SHARED_LIBRARY for the library and its users and
 * JIGSAW_COMPILING_LIBRARY for the library only, so that exactly these
 * symbols are exported. A static build defines neither: the mark is empty.
 * In C++ it is written as a standard attribute so that it can follow
 * [[nodiscard]]. This header is also included from C (jigsaw/c.h): C89
 * comments, and the GNU spelling in C, which has no [[...]] before C23. */
#ifndef JIGSAW_INCLUDE_JIGSAW_EXPORT_H_
#define JIGSAW_INCLUDE_JIGSAW_EXPORT_H_

#if defined(JIGSAW_SHARED_LIBRARY) && defined(JIGSAW_COMPILING_LIBRARY)
#if defined(__cplusplus)
#define JIGSAW_EXPORT [[gnu::visibility("default")]]
#else
#define JIGSAW_EXPORT __attribute__((visibility("default")))
#endif
#else
#define JIGSAW_EXPORT
#endif

#endif /* JIGSAW_INCLUDE_JIGSAW_EXPORT_H_ */
