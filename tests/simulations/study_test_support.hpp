#pragma once
// What the resumable-study tests share: running a program, reading its files, and ledgers
// compared without the fields that may differ between runs (wall times, worker threads, the
// starting invocation's flags).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace moca::test {

/// The programs' folder: $MOCA_BIN_DIR, else the build's bin/.
inline std::string bin_dir() {
  const char* bin = std::getenv("MOCA_BIN_DIR");
  return bin ? std::string(bin) : std::string(MOCA_BINARY_DIR) + "/bin";
}

/// Runs `command` with /bin/sh; its exit status (-1 when it did not exit).
inline int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// `j` without "seconds" and "threads" at any depth.
inline nlohmann::json without_times(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("seconds");
    j.erase("threads");
    for (auto& kv : j.items()) kv.value() = without_times(kv.value());
  } else if (j.is_array()) {
    for (auto& v : j) v = without_times(v);
  }
  return j;
}

/// Ledger records as {kind|key -> record without times}; checks there is no duplicate key; the
/// study record's "options" (the starting invocation's flags) is required and left out.
inline std::map<std::string, nlohmann::json> record_map(
    const std::vector<nlohmann::json>& records) {
  std::map<std::string, nlohmann::json> m;
  for (const nlohmann::json& r : records) {
    const std::string k = r.at("kind").get<std::string>() + "|" + r.value("key", "");
    CHECK_MESSAGE(!m.count(k), "duplicate ledger record " << k);
    m[k] = without_times(r);
    if (r.at("kind") == "study") {
      CHECK(r.contains("options"));
      m[k].erase("options");
    }
  }
  return m;
}

/// The same keys and records.
inline void check_same_records(const std::map<std::string, nlohmann::json>& a,
                               const std::map<std::string, nlohmann::json>& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& kv : a) {
    REQUIRE_MESSAGE(b.count(kv.first), "missing " << kv.first);
    CHECK_MESSAGE(b.at(kv.first) == kv.second, kv.first << ":\n"
                                                        << kv.second.dump() << "\n"
                                                        << b.at(kv.first).dump());
  }
}

}  // namespace moca::test
