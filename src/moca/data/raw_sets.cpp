#include "moca/data/raw_sets.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/raw_windows.hpp"
#include "moca/data/detail/text_parse.hpp"

namespace moca::data {

namespace raw_sets_detail {

constexpr double kStandardG = 9.80665;  // scipy.constants.g
constexpr double kClipG = 3.0;

/// One set's layout and ssl-wearables' rules for it (raw_sets.hpp).
struct SetSpec {
  const char* name;
  int fields;     ///< numbers per line
  int label_col;  ///< 0-based
  int acc_col;    ///< 0-based, x; y and z follow
  int max_label;  ///< labels are integers 0..max_label
  int window_rows;
  double divisor;  ///< raw units per g
  double rate_hz;
  std::vector<std::pair<int, const char*>> classes;  ///< raw label -> class name, in class order
  int excluded_subject = -1;
};

struct RawFile {
  int subject;
  std::string path;
};

SetSpec pamap2_spec() {
  return {"PAMAP2",
          54,
          1,
          4,
          24,
          kPamap2WindowRows,
          kStandardG,
          kPamap2RateHz,
          {{1, "lying"},
           {2, "sitting"},
           {3, "standing"},
           {4, "walking"},
           {12, "ascending stairs"},
           {13, "descending stairs"},
           {16, "vacuum cleaning"},
           {17, "ironing"}},
          109};
}

SetSpec opportunity_spec() {
  return {"OPPORTUNITY",
          250,
          243,
          22,
          5,
          kOpportunityWindowRows,
          1000.0,
          kOpportunityRateHz,
          {{1, "stand"}, {2, "walk"}, {5, "lie"}, {4, "sit"}}};  // lie is 5, relabelled 3
}

/// The subject number of `name` by `prefix` + digits + `end` (subject107.dat, S3-ADL2.dat),
/// else -1.
int subject_number(const std::string& name, const std::string& prefix, const std::string& end,
                   const std::string& suffix) {
  if (name.compare(0, prefix.size(), prefix) != 0 || name.size() < suffix.size() ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return -1;
  }
  size_t k = prefix.size();
  while (k < name.size() && std::isdigit(static_cast<unsigned char>(name[k]))) ++k;
  if (k == prefix.size() || name.compare(k, end.size(), end) != 0) return -1;
  return std::stoi(name.substr(prefix.size(), k - prefix.size()));
}

/// The files of `folder` named `prefix` + subject number + `end`, ending in `suffix`
/// (subject107.dat: ("subject", ".dat"); S3-ADL2.dat: ("S", "-"); data_1600_accel_watch.txt:
/// ("data_", "_accel_watch", ".txt")).
std::vector<RawFile> set_files(const std::string& folder, const std::string& prefix,
                               const std::string& end, const std::string& suffix = ".dat") {
  std::vector<RawFile> out;
  if (!detail::is_directory(folder)) return out;
  for (const std::string& f : detail::list_files(folder)) {
    const int s = subject_number(f, prefix, end, suffix);
    if (s >= 0) out.push_back({s, folder + "/" + f});
  }
  return out;
}

/// The folder holding `inner` (the download's root may hold `top`/).
std::string set_root(const std::string& dir, const std::string& top, const std::string& inner) {
  if (detail::is_directory(dir + "/" + top + "/" + inner)) return dir + "/" + top;
  return dir;
}

/// Steps 1-4 of raw_sets.hpp for `files` (sorted by subject, stable).
Windows grid_windows(const SetSpec& spec, std::vector<RawFile> files,
                     const std::string& subject_prefix, RawSetCounts& n) {
  std::stable_sort(files.begin(), files.end(),
                   [](const RawFile& a, const RawFile& b) { return a.subject < b.subject; });
  std::map<int, int> class_of;  // raw label -> class
  Windows w = detail::acc_windows(spec.window_rows, spec.rate_hz);
  for (const auto& [label, name] : spec.classes) {
    class_of[label] = static_cast<int>(w.class_names.size());
    w.class_names.emplace_back(name);
  }
  const int W = spec.window_rows, stride = spec.window_rows / 2;
  std::vector<float> xs;
  std::vector<int> labels, subjects, subject_ids;
  std::vector<double> v(static_cast<size_t>(spec.fields));
  for (const RawFile& file : files) {
    ++n.files;
    TextFileReader in(file.path);
    std::string line;
    std::vector<float> acc;  // rows x 3, raw units
    std::vector<int> act;
    while (in.next_line(line)) {
      if (detail::is_blank(line)) continue;
      ++n.rows;
      const std::string where = file.path + ":" + std::to_string(in.line_number()) + ": ";
      const detail::ParsedLine p = detail::parse_doubles(line, v.data(), spec.fields);
      if (p.bad_field >= 0) {
        throw_invalid("", where + "field " + std::to_string(p.bad_field) + " holds '" + p.bad_text +
                              "', not a number");
      }
      if (p.count != spec.fields) {
        throw_invalid("", where + std::to_string(p.count) + " fields; " + spec.name +
                              "'s lines have " + std::to_string(spec.fields));
      }
      const double label = v[static_cast<size_t>(spec.label_col)];
      const double* a = &v[static_cast<size_t>(spec.acc_col)];
      if (std::isnan(v[0]) || std::isnan(label) || std::isnan(a[0]) || std::isnan(a[1]) ||
          std::isnan(a[2])) {
        ++n.nan_rows;
        continue;
      }
      if (label != std::floor(label) || label < 0 || label > spec.max_label) {
        throw_invalid("", where + "label '" + format_number(label, 6) + "' is not one of " +
                              spec.name + "'s (0-" + std::to_string(spec.max_label) + ")");
      }
      for (int c = 0; c < 3; ++c) acc.push_back(static_cast<float>(a[c]));
      act.push_back(static_cast<int>(label));
    }
    const auto rows = static_cast<std::int64_t>(act.size());
    const std::int64_t limit = rows / W * W;
    for (std::int64_t s = 0; s + W <= limit; s += stride) {
      std::map<int, int> count;
      for (std::int64_t t = s; t < s + W; ++t) ++count[act[static_cast<size_t>(t)]];
      if (2 * count[0] > W) {
        ++n.null_windows;
        continue;
      }
      int mode = -1, most = -1;
      for (const auto& [id, c] : count) {  // ascending ids: ties keep the smaller
        if (c > most) {
          mode = id;
          most = c;
        }
      }
      const auto cls = class_of.find(mode);
      if (cls == class_of.end()) {
        ++n.other_windows;
        continue;
      }
      if (file.subject == spec.excluded_subject) {
        ++n.excluded_windows;
        continue;
      }
      for (int c = 0; c < 3; ++c) {
        for (std::int64_t t = s; t < s + W; ++t) {
          const double g = acc[static_cast<size_t>(t * 3 + c)] / spec.divisor;
          xs.push_back(static_cast<float>(std::clamp(g, -kClipG, kClipG)));
        }
      }
      labels.push_back(cls->second);
      if (subject_ids.empty() || subject_ids.back() != file.subject) {
        subject_ids.push_back(file.subject);
      }
      subjects.push_back(static_cast<int>(subject_ids.size()) - 1);
    }
  }
  for (int s : subject_ids) w.subject_names.push_back(subject_prefix + std::to_string(s));
  detail::set_acc_windows(w, xs, labels, subjects);
  return w;
}

/// WISDM's activity codes (A-S without N) and names, as make_wisdm.py's label_dict.
constexpr const char* kWisdmCodes = "ABCDEFGHIJKLMOPQRS";
constexpr std::array<const char*, 18> kWisdmNames = {
    "walking", "jogging", "stairs",    "sitting", "standing", "typing",
    "teeth",   "soup",    "chips",     "pasta",   "drinking", "sandwich",
    "kicking", "catch",   "dribbling", "writing", "clapping", "folding"};
constexpr std::array<int, 5> kWisdmExcluded = {1616, 1618, 1637, 1639, 1642};
constexpr std::int64_t kWisdmPeriodNs = 50'000'000;  // 20 Hz
constexpr double kWisdmG = 9.81;                     // make_wisdm.py's

struct WisdmSample {
  std::int64_t t;
  float v[3];
};

/// The folder holding raw/watch/accel (the download's root may hold wisdm-dataset/).
std::string wisdm_accel(const std::string& dir) {
  return set_root(dir, "wisdm-dataset", "raw") + "/raw/watch/accel";
}

/// One line `id,code,time,x,y,z;` -> code and sample; false with `why` for a malformed line.
bool parse_wisdm_line(const std::string& line, char& code, WisdmSample& out, std::string& why) {
  std::array<std::string_view, 6> f;  // (no allocation per line)
  size_t fields = 0, start = 0;
  const std::string_view s(line);
  while (true) {
    const size_t comma = s.find(',', start);
    if (fields < f.size()) {
      f[fields] = s.substr(start, comma == std::string_view::npos ? comma : comma - start);
    }
    ++fields;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (fields != 6) {
    why = std::to_string(fields) + " fields; WISDM's lines are id,code,time,x,y,z;";
    return false;
  }
  auto trim = [](std::string_view v) {
    while (!v.empty() && (v.back() == ';' || v.back() == ' ' || v.back() == '\r'))
      v.remove_suffix(1);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    return v;
  };
  const std::string_view c = trim(f[1]);
  if (c.size() != 1 || std::strchr(kWisdmCodes, c[0]) == nullptr) {
    why = "activity code '" + std::string(c) + "' is not one of WISDM's (A-S, no N)";
    return false;
  }
  code = c[0];
  const std::string_view t = trim(f[2]);
  const auto rt = std::from_chars(t.data(), t.data() + t.size(), out.t);
  if (rt.ec != std::errc() || rt.ptr != t.data() + t.size()) {
    why = "time stamp '" + std::string(t) + "' is not an integer";
    return false;
  }
  for (int k = 0; k < 3; ++k) {
    const std::string_view x = trim(f[static_cast<size_t>(3 + k)]);
    double v = 0;
    const auto r = std::from_chars(x.data(), x.data() + x.size(), v);
    if (r.ec != std::errc() || r.ptr != x.data() + x.size() || !std::isfinite(v)) {
      why = "value '" + std::string(x) + "' is not a finite number";
      return false;
    }
    out.v[k] = static_cast<float>(v);
  }
  return true;
}

}  // namespace raw_sets_detail

std::string RawSetCounts::summary() const {
  return std::to_string(files) + " files, " + std::to_string(rows) + " rows; " +
         std::to_string(nan_rows) + " rows with NaN in the kept columns dropped; " +
         std::to_string(null_windows) + " windows mostly label 0, " +
         std::to_string(other_windows) + " of other labels and " +
         std::to_string(excluded_windows) + " of a left-out subject dropped (ssl-wearables' rules)";
}

bool is_pamap2_folder(const std::string& dir) {
  using namespace raw_sets_detail;
  return !set_files(set_root(dir, "PAMAP2_Dataset", "Protocol") + "/Protocol", "subject", ".dat")
              .empty();
}

Windows load_pamap2_windows(const std::string& dir, RawSetCounts* counts) {
  using namespace raw_sets_detail;
  const std::string root = set_root(dir, "PAMAP2_Dataset", "Protocol");
  std::vector<RawFile> files = set_files(root + "/Protocol", "subject", ".dat");
  if (files.empty()) {
    throw std::runtime_error(dir +
                             ": no Protocol/subject1NN.dat files (PAMAP2: the download's "
                             "PAMAP2_Dataset folder, or the folder above it)");
  }
  for (RawFile& f : set_files(root + "/Optional", "subject", ".dat")) files.push_back(std::move(f));
  RawSetCounts n;
  Windows w = grid_windows(pamap2_spec(), files, "subject", n);
  w.description = "PAMAP2 " + root +
                  ": hand IMU ±16 g acceleration in g (clipped to ±3), 10-s windows every 5 s "
                  "at 100 Hz, 8 activities, subject 109 left out (ssl-wearables' preparation)";
  w.validate("load_pamap2_windows()");
  if (counts != nullptr) *counts = n;
  return w;
}

bool is_opportunity_folder(const std::string& dir) {
  using namespace raw_sets_detail;
  return !set_files(set_root(dir, "OpportunityUCIDataset", "dataset") + "/dataset", "S", "-")
              .empty();
}

Windows load_opportunity_windows(const std::string& dir, RawSetCounts* counts) {
  using namespace raw_sets_detail;
  const std::string root = set_root(dir, "OpportunityUCIDataset", "dataset");
  const std::vector<RawFile> files = set_files(root + "/dataset", "S", "-");
  if (files.empty()) {
    throw std::runtime_error(dir +
                             ": no dataset/S<n>-*.dat files (OPPORTUNITY: the download's "
                             "OpportunityUCIDataset folder, or the folder above it)");
  }
  RawSetCounts n;
  Windows w = grid_windows(opportunity_spec(), files, "S", n);
  w.description = "OPPORTUNITY " + root +
                  ": right-wrist accelerometer in g (clipped to ±3), 330-row windows every 165 "
                  "at 30 Hz, 4 locomotion classes (ssl-wearables' preparation)";
  w.validate("load_opportunity_windows()");
  if (counts != nullptr) *counts = n;
  return w;
}

bool is_wisdm_folder(const std::string& dir) {
  using namespace raw_sets_detail;
  return !set_files(wisdm_accel(dir), "data_", "_accel_watch", ".txt").empty();
}

Windows load_wisdm_windows(const std::string& dir, RawSetCounts* counts) {
  using namespace raw_sets_detail;
  const std::string folder = wisdm_accel(dir);
  std::vector<RawFile> files = set_files(folder, "data_", "_accel_watch", ".txt");
  if (files.empty()) {
    throw std::runtime_error(dir +
                             ": no raw/watch/accel/data_16NN_accel_watch.txt files (WISDM "
                             "2019: the download's wisdm-dataset folder, or the folder "
                             "above it)");
  }
  std::stable_sort(files.begin(), files.end(),
                   [](const RawFile& a, const RawFile& b) { return a.subject < b.subject; });
  RawSetCounts n;
  Windows w = detail::acc_windows(kWisdmLength, kWisdmLength / 10.0);
  for (const char* name : kWisdmNames) w.class_names.emplace_back(name);
  std::vector<float> xs;
  std::vector<int> labels, subjects;
  const int W = kWisdmWindowPoints, L = kWisdmLength;
  for (const RawFile& file : files) {
    ++n.files;
    std::map<char, std::vector<WisdmSample>> streams;
    TextFileReader in(file.path);
    std::string line, why;
    while (in.next_line(line)) {
      if (detail::is_blank(line)) continue;
      ++n.rows;
      char code = 0;
      WisdmSample smp{};
      if (!parse_wisdm_line(line, code, smp, why)) {
        throw_invalid("", file.path + ":" + std::to_string(in.line_number()) + ": " + why);
      }
      streams[code].push_back(smp);
    }
    const bool excluded = std::find(kWisdmExcluded.begin(), kWisdmExcluded.end(), file.subject) !=
                          kWisdmExcluded.end();
    bool any = false;
    for (auto& [code, st] : streams) {
      std::stable_sort(st.begin(), st.end(),
                       [](const WisdmSample& a, const WisdmSample& b) { return a.t < b.t; });
      const auto last = std::unique(st.begin(), st.end(), [](const auto& a, const auto& b) {
        return a.t == b.t;  // the first sample of a time stamp stays
      });
      n.nan_rows += static_cast<std::int64_t>(st.end() - last);
      st.erase(last, st.end());
      // the grid: each point's nearest sample within half a period, else missing
      const std::int64_t t0 = st.front().t;
      const std::int64_t points = (st.back().t - t0) / kWisdmPeriodNs + 1;
      std::vector<float> grid(static_cast<size_t>(points) * 3);
      std::vector<unsigned char> ok(static_cast<size_t>(points), 0);
      size_t j = 0;
      for (std::int64_t k = 0; k < points; ++k) {
        const std::int64_t g = t0 + k * kWisdmPeriodNs;
        while (j + 1 < st.size() && st[j + 1].t <= g) ++j;
        size_t best = j;
        if (j + 1 < st.size() && st[j + 1].t - g < g - st[j].t) best = j + 1;
        const std::int64_t dist = std::llabs(st[best].t - g);
        if (2 * dist > kWisdmPeriodNs) continue;
        ok[static_cast<size_t>(k)] = 1;
        std::copy_n(st[best].v, 3, &grid[static_cast<size_t>(k) * 3]);
      }
      const int cls = static_cast<int>(std::strchr(kWisdmCodes, code) - kWisdmCodes);
      for (std::int64_t s = 0; s + W <= points; s += W / 2) {
        if (std::find(ok.begin() + s, ok.begin() + s + W, 0) != ok.begin() + s + W) {
          ++n.null_windows;
          continue;
        }
        if (excluded) {
          ++n.excluded_windows;
          continue;
        }
        // linear resize, W -> L points over the same span, then /9.81
        detail::push_resized(xs, grid.data() + 3 * s, W, L, kWisdmG);
        labels.push_back(cls);
        subjects.push_back(static_cast<int>(w.subject_names.size()));
        any = true;
      }
    }
    if (any) w.subject_names.push_back(std::to_string(file.subject));
  }
  detail::set_acc_windows(w, xs, labels, subjects);
  w.description = "WISDM 2019 " + folder +
                  ": watch accelerometer in g on a 20 Hz grid, 10-s windows every 5 s resized "
                  "to 30 Hz, 18 activities, 5 subjects left out (ssl-wearables' preparation)";
  w.validate("load_wisdm_windows()");
  if (counts != nullptr) *counts = n;
  return w;
}

// The registry's rows (dataset.hpp).
Windows open_pamap2_source(Dataset& d, const DatasetOptions&) {
  RawSetCounts n;
  Windows w = load_pamap2_windows(d.spec.path, &n);
  d.notes.push_back("PAMAP2: " + n.summary());
  return w;
}

Windows open_wisdm_source(Dataset& d, const DatasetOptions&) {
  RawSetCounts n;
  Windows w = load_wisdm_windows(d.spec.path, &n);
  d.notes.push_back("WISDM: " + std::to_string(n.files) + " files, " + std::to_string(n.rows) +
                    " rows; " + std::to_string(n.nan_rows) +
                    " samples of a repeated time stamp dropped; " + std::to_string(n.null_windows) +
                    " windows with a missing grid point and " + std::to_string(n.excluded_windows) +
                    " of left-out subjects dropped (ssl-wearables' rules)");
  return w;
}

Windows open_opportunity_source(Dataset& d, const DatasetOptions&) {
  RawSetCounts n;
  Windows w = load_opportunity_windows(d.spec.path, &n);
  d.notes.push_back("OPPORTUNITY: " + n.summary());
  return w;
}

}  // namespace moca::data
