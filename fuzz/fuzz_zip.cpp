// libFuzzer target: moca::data::ZipArchive (RealWorld's archives, and archives inside them):
// the directory's parse and every entry's read (inflate, CRC-32), an entry that is itself an
// archive parsed in turn.
#include "fuzz_input.hpp"
#include "moca/data/zip_archive.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  moca::fuzz::expect_clean([&] {
    const auto z = moca::data::ZipArchive::from_bytes(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.zip");
    for (const std::string& name : z.names()) {
      moca::fuzz::expect_clean([&] {
        const std::string bytes = z.read(name);
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".zip") == 0) {
          const auto inner = moca::data::ZipArchive::from_bytes(bytes, "fuzz.zip/" + name);
          for (const std::string& n : inner.names()) inner.read(n);
        }
      });
    }
  });
  return 0;
}
