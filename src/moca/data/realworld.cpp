// RealWorld (HAR) read from its download: per-activity zip archives, some holding an archive per
// session (raw_sets.hpp states the rules).
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/raw_windows.hpp"
#include "moca/data/detail/text_parse.hpp"
#include "moca/data/raw_sets.hpp"
#include "moca/data/zip_archive.hpp"

namespace moca::data {

namespace realworld_detail {

// realworld_raw_preprocess.py's lists (the activities in its order, which is also their sorted
// order, and the positions).
constexpr std::array<const char*, 8> kActivities = {
    "climbingdown", "climbingup", "jumping", "lying", "running", "sitting", "standing", "walking"};
constexpr double kG = 9.81;  // make_realworld.py's

/// The probands' numbers under `root` (folders probandN), ascending.
std::vector<int> probands(const std::string& root) {
  std::vector<int> out;
  if (!detail::is_directory(root)) return out;
  for (const std::string& d : detail::list_subdirs(root)) {
    if (d.size() <= 7 || d.compare(0, 7, "proband") != 0) continue;
    int n = 0;
    const auto r = std::from_chars(d.data() + 7, d.data() + d.size(), n);
    if (r.ec == std::errc() && r.ptr == d.data() + d.size() &&
        detail::is_directory(root + "/" + d + "/data"))
      out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The folder holding probandN/ (the download's root may hold realworld2016_dataset/).
std::string root_of(const std::string& dir) {
  const std::string inner = dir + "/realworld2016_dataset";
  return probands(inner).empty() ? dir : inner;
}

/// The shortest "> entries" count of a session's readMe (realworld_raw_preprocess.py's
/// cal_min_time_len: every position is cut to it).
long shortest_entries(const ZipArchive& z) {
  if (!z.contains("readMe")) {
    throw_invalid("", z.name() +
                          ": no readMe (RealWorld's archives state each file's entries "
                          "in it; the preparation cuts every position to the shortest)");
  }
  const std::string text = z.read("readMe");
  long shortest = -1;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    at = end + 1;
    if (line.rfind("> entries", 0) != 0) continue;
    size_t k = 9;
    while (k < line.size() && (line[k] == ':' || line[k] == ' ' || line[k] == '\t')) ++k;
    long n = -1;
    const auto r = std::from_chars(line.data() + k, line.data() + line.size(), n);
    if (r.ec != std::errc() || n < 0) {
      throw_invalid(
          "", z.name() + "/readMe: '" + std::string(line) + "' does not state a number of entries");
    }
    shortest = shortest < 0 ? n : std::min(shortest, n);
  }
  if (shortest < 0) throw_invalid("", z.name() + "/readMe: no '> entries' line");
  return shortest;
}

/// The x, y, z columns of a position's CSV (id,attr_time,attr_x,attr_y,attr_z), its first
/// `rows` rows; an empty cell is NaN (as pandas reads it).
std::vector<double> read_xyz(const std::string& csv, const std::string& where, long rows) {
  std::vector<double> out;
  size_t at = 0;
  int col[3] = {-1, -1, -1};
  long line_no = 0;
  std::vector<std::string_view> f;
  while (at < csv.size() && static_cast<long>(out.size()) < 3 * rows) {
    size_t end = csv.find('\n', at);
    if (end == std::string::npos) end = csv.size();
    std::string_view line(csv.data() + at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    f.clear();
    for (size_t b = 0;;) {
      const size_t c = line.find(',', b);
      f.push_back(line.substr(b, c == std::string_view::npos ? c : c - b));
      if (c == std::string_view::npos) break;
      b = c + 1;
    }
    if (col[0] < 0) {  // the header
      const char* names[3] = {"attr_x", "attr_y", "attr_z"};
      for (int k = 0; k < 3; ++k) {
        for (size_t j = 0; j < f.size(); ++j)
          if (f[j] == names[k]) col[k] = static_cast<int>(j);
        if (col[k] < 0) {
          throw_invalid("", where + ":1: no column " + names[k] +
                                " (RealWorld's files are id,attr_time,attr_x,attr_y,attr_z)");
        }
      }
      continue;
    }
    for (int k = 0; k < 3; ++k) {
      if (static_cast<size_t>(col[k]) >= f.size()) {
        throw_invalid("", where + ":" + std::to_string(line_no) + ": " + std::to_string(f.size()) +
                              " fields; the header has more");
      }
      const std::string_view v = f[static_cast<size_t>(col[k])];
      double x = std::numeric_limits<double>::quiet_NaN();
      if (!v.empty()) {
        const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
        if (r.ec != std::errc() || r.ptr != v.data() + v.size()) {
          throw_invalid("", where + ":" + std::to_string(line_no) + ": '" + std::string(v) +
                                "' is not a number");
        }
      }
      out.push_back(x);
    }
  }
  if (col[0] < 0) throw_invalid("", where + ": empty (no header)");
  return out;
}

}  // namespace realworld_detail

bool is_realworld_folder(const std::string& dir) {
  using namespace realworld_detail;
  const std::string root = root_of(dir);
  for (int p : probands(root)) {
    for (const std::string& f : detail::list_files(root + "/proband" + std::to_string(p) + "/data"))
      if (f.rfind("acc_", 0) == 0 && f.size() > 8 && f.compare(f.size() - 8, 8, "_csv.zip") == 0)
        return true;
  }
  return false;
}

Windows load_realworld_windows(const std::string& dir, RawSetCounts* counts) {
  using namespace realworld_detail;
  const std::string root = root_of(dir);
  const std::vector<int> ids = probands(root);
  if (ids.empty()) {
    throw std::runtime_error(dir +
                             ": no probandN/data folders (RealWorld: the download's "
                             "realworld2016_dataset folder, or the folder above it)");
  }
  RawSetCounts n;
  Windows w = detail::acc_windows(kRealWorldLength, kRealWorldLength / 10.0);
  for (const char* a : kActivities) w.class_names.emplace_back(a);
  std::vector<float> xs;
  std::vector<int> labels, subjects;
  const int W = kRealWorldWindowRows, L = kRealWorldLength;
  // One session's forearm samples -> windows.
  const auto cut = [&](const ZipArchive& z, const std::string& csv, int cls) {
    const long rows = shortest_entries(z);
    if (!z.contains(csv)) {  // the preparation's NaN position: no window
      ++n.null_windows;
      return;
    }
    const std::vector<double> xyz = read_xyz(z.read(csv), z.name() + "/" + csv, rows);
    const auto count = static_cast<long>(xyz.size() / 3);
    n.rows += count;
    for (long s = 0; s + W <= count; s += W / 2) {
      if (std::any_of(xyz.begin() + 3 * s, xyz.begin() + 3 * (s + W),
                      [](double v) { return std::isnan(v); })) {
        ++n.nan_rows;  // (a window with a NaN cell)
        continue;
      }
      // the script's /9.81 and linear resize W -> L (linear: their order changes only rounding)
      detail::push_resized(xs, xyz.data() + 3 * s, W, L, kG);
      labels.push_back(cls);
      subjects.push_back(static_cast<int>(w.subject_names.size()));
    }
  };
  for (int p : ids) {
    const std::string data = root + "/proband" + std::to_string(p) + "/data";
    const size_t before = labels.size();
    for (int cls = 0; cls < static_cast<int>(kActivities.size()); ++cls) {
      const std::string a = kActivities[static_cast<size_t>(cls)];
      const std::string path = data + "/acc_" + a + "_csv.zip";
      if (!detail::path_exists(path)) {
        throw std::runtime_error(path +
                                 " is missing (RealWorld's probands each have an "
                                 "acc_<activity>_csv.zip for the 8 activities)");
      }
      const ZipArchive outer = ZipArchive::open(path);
      ++n.files;
      if (!outer.names().empty() && outer.names().front().size() >= 3 &&
          outer.names().front().compare(outer.names().front().size() - 3, 3, "zip") == 0) {
        // sessions: acc_<a>_<i>_csv.zip, i = 1 .. the number of entries
        for (size_t i = 1; i <= outer.names().size(); ++i) {
          const std::string inner = "acc_" + a + "_" + std::to_string(i) + "_csv.zip";
          const ZipArchive z = ZipArchive::from_bytes(outer.read(inner), path + "/" + inner);
          cut(z, "acc_" + a + "_" + std::to_string(i) + "_forearm.csv", cls);
        }
      } else {
        const bool second = (p == 4 && a == "walking") || (p == 6 && a == "sitting") ||
                            (p == 7 && a == "sitting") || (p == 8 && a == "standing") ||
                            (p == 13 && a == "walking");
        cut(outer, "acc_" + a + (second ? "_2" : "") + "_forearm.csv", cls);
      }
    }
    if (labels.size() > before) w.subject_names.push_back(std::to_string(p));
  }
  detail::set_acc_windows(w, xs, labels, subjects);
  w.description = "RealWorld (HAR) " + root +
                  ": forearm accelerometer in g, 10-s windows every 5 s resized to 30 Hz, 8 "
                  "activities (ssl-wearables' preparation)";
  w.validate("load_realworld_windows()");
  if (counts != nullptr) *counts = n;
  return w;
}

Windows open_realworld_source(Dataset& d, const DatasetOptions&) {
  RawSetCounts n;
  Windows w = load_realworld_windows(d.spec.path, &n);
  d.notes.push_back("RealWorld: " + std::to_string(n.files) + " archives, " +
                    std::to_string(n.rows) +
                    " forearm rows (each session cut to its readMe's "
                    "shortest entries); " +
                    std::to_string(n.null_windows) + " sessions without a forearm file and " +
                    std::to_string(n.nan_rows) +
                    " windows with an empty cell give no window (ssl-wearables' rules)");
  return w;
}

}  // namespace moca::data
