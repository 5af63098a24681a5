#pragma once
// Helpers shared by the moca::data tests: scratch folders, writing plain/gzip text files.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace moca::data::test {

/// A fresh scratch folder /tmp/moca_data_test_<name>_<pid> (files inside are overwritten).
inline std::string scratch_dir(const std::string& name) {
  const std::string d = "/tmp/moca_data_test_" + name + "_" + std::to_string(::getpid());
  ::mkdir(d.c_str(), 0755);
  return d;
}

inline void write_text(const std::string& path, const std::string& body) {
  std::ofstream(path, std::ios::binary) << body;
}

inline void write_gz(const std::string& path, const std::string& body) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, body.data(), static_cast<unsigned>(body.size()));
  gzclose(f);
}

inline std::string fixture_dir() {
  return std::string(MOCA_SOURCE_DIR) + "/tests/data/fixtures";
}

/// The real-data folder from the environment, or "" when unset / missing.
inline std::string env_dir(const char* var) {
  const char* v = std::getenv(var);
  if (v == nullptr || *v == '\0') return "";
  struct stat st {};
  if (::stat(v, &st) != 0 || !S_ISDIR(st.st_mode)) return "";
  return v;
}

// Writes a .npy v1.0 file by hand (independent of moca's writer): header dict, padding, payload.
inline void write_raw_npy(const std::string& path, const std::string& descr,
                          const std::string& shape, const std::string& payload,
                          bool fortran = false) {
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const char hl[2] = {static_cast<char>(header.size() & 0xff),
                      static_cast<char>(header.size() >> 8)};
  out.write(hl, 2);
  out << header << payload;
}

template <typename T>
inline std::string bytes_of(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  std::memcpy(&s[0], v.data(), s.size());
  return s;
}

// numpy '<U<width>' payload: UTF-32LE code points, NUL padded.
inline std::string utf32(const std::vector<std::u32string>& values, size_t width) {
  std::string s;
  for (const auto& v : values) {
    for (size_t k = 0; k < width; ++k) {
      const char32_t cp = k < v.size() ? v[k] : 0;
      for (int b = 0; b < 4; ++b) s.push_back(static_cast<char>((cp >> (8 * b)) & 0xff));
    }
  }
  return s;
}

}  // namespace moca::data::test

namespace moca::data::test {

/// Runs f; returns the what() of the std::exception of type E it throws, or "<no exception>" /
/// "<other exception: ...>" so a CHECK on the text fails visibly.
template <typename E, typename F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("<other exception: ") + e.what() + ">";
  }
  return "<no exception>";
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace moca::data::test
