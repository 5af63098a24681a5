#include "moca/data/detail/text_parse.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace moca::data::detail {

namespace {

inline bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

template <typename T>
ParsedLine parse_fields(const std::string& line, T* out, int max_fields) {
  ParsedLine r;
  const char* p = line.data();
  const char* const end = p + line.size();
  while (true) {
    while (p < end && blank(*p)) ++p;
    if (p == end) break;
    const char* q = p;
    while (q < end && !blank(*q)) ++q;
    ++r.count;
    T v{};
    // from_chars does not accept a leading '+'; numbers in data files may carry one.
    const char* s = (*p == '+' && q - p > 1) ? p + 1 : p;
    const auto res = std::from_chars(s, q, v);
    if (res.ec != std::errc() || res.ptr != q) {
      if (r.bad_field < 0) {
        r.bad_field = r.count;
        r.bad_text.assign(p, q);
      }
    } else if (r.count <= max_fields) {
      out[r.count - 1] = v;
    }
    p = q;
  }
  return r;
}

bool stat_is(const std::string& p, bool want_dir) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return false;
  return want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

std::vector<std::string> list_entries(const std::string& dir, bool dirs) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) throw std::runtime_error("cannot open folder '" + dir + "'");
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    if (stat_is(dir + "/" + n, dirs)) names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

ParsedLine parse_doubles(const std::string& line, double* out, int max_fields) {
  return parse_fields(line, out, max_fields);
}

ParsedLine parse_longs(const std::string& line, long* out, int max_fields) {
  return parse_fields(line, out, max_fields);
}

bool is_blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return blank(c); });
}

std::vector<std::string> list_files(const std::string& dir) {
  return list_entries(dir, false);
}
std::vector<std::string> list_subdirs(const std::string& dir) {
  return list_entries(dir, true);
}
bool is_directory(const std::string& path) {
  return stat_is(path, true);
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace moca::data::detail
