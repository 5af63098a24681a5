#pragma once
// Helpers shared by the moca::data tests: scratch folders, writing plain/gzip text files.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

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
