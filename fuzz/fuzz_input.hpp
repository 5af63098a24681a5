#pragma once
// Shared by the fuzz targets: the parsers read files, so each input is written to a file in a
// per-process scratch folder, and the exception policy lives in one place.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace moca::fuzz {

/// A per-process scratch folder (under /dev/shm when it exists, else /tmp).
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string d = base + "/moca_fuzz_" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

/// Writes `size` bytes to `<scratch>/<name>` and returns the path.
inline std::string write_input(const std::string& name, const std::uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

/// Runs `parse`; the documented rejections (std::invalid_argument, std::runtime_error) are fine,
/// anything else escapes and libFuzzer reports it as a crash.
template <class F>
void expect_clean(F&& parse) {
  try {
    parse();
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {
  }
}

}  // namespace moca::fuzz
