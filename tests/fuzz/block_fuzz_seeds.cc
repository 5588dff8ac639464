// Writes a seed corpus for block_fuzzer: valid KeySet (both versions) and
// classic blocks of a few shapes, each prefixed with the fuzzer's control
// byte.
//   block_fuzz_seeds <output directory>
#include <cstdio>
#include <random>
#include <string>

#include "tests/support/block_test_util.h"

int main(int argc, char** argv) {
  using namespace jigsaw;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  std::mt19937_64 rng(42);
  int written = 0;
  for (size_t count : {0, 1, 5, 40}) {
    std::vector<test::TestEntry> entries = test::RandomEntries(&rng, count, 12, 24);
    // KeySet version 2 (written today), version 1 (still read), classic.
    const struct {
      BlockFormat format;
      uint32_t keyset_version;
      const char* name;
    } variants[] = {{BlockFormat::kKeySet, 2, "keyset-v2"},
                    {BlockFormat::kKeySet, 1, "keyset-v1"},
                    {BlockFormat::kClassic, 2, "classic"}};
    for (const auto& variant : variants) {
      test::AlignedBuffer buffer;
      size_t size = 0;
      BlockBuilderOptions options;
      options.keyset_version = variant.keyset_version;
      if (!test::BuildBlock(variant.format, entries, options, &buffer, &size).ok()) return 1;
      const char control = variant.format == BlockFormat::kKeySet ? 0 : 1;
      const std::string path = std::string(argv[1]) + "/seed-" + variant.name + "-" + std::to_string(count);
      FILE* f = std::fopen(path.c_str(), "wb");
      if (f == nullptr) return 1;
      std::fputc(control, f);
      std::fwrite(buffer.data(), 1, size, f);
      std::fclose(f);
      ++written;
    }
  }
  std::printf("wrote %d seeds to %s\n", written, argv[1]);
  return 0;
}
