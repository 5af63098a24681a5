#include "moca/data/pamap2.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/text_parse.hpp"

namespace moca::data {

namespace pamap2_detail {

constexpr int kFields = 54;
constexpr int kLabelField = 1;
constexpr int kHandAcc16 = 4;           // columns 5-7 (1-based), ±16 g, m/s²
constexpr double kStandardG = 9.80665;  // scipy.constants.g
constexpr double kClipG = 3.0;
constexpr int kExcludedSubject = 109;
/// The 8 activities every subject performs, in id order, and their names (readme.pdf).
constexpr std::array<std::pair<int, const char*>, 8> kActivities = {{{1, "lying"},
                                                                     {2, "sitting"},
                                                                     {3, "standing"},
                                                                     {4, "walking"},
                                                                     {12, "ascending stairs"},
                                                                     {13, "descending stairs"},
                                                                     {16, "vacuum cleaning"},
                                                                     {17, "ironing"}}};

/// The folder holding Protocol/ (the download's root may hold PAMAP2_Dataset/).
std::string pamap2_root(const std::string& dir) {
  if (detail::is_directory(dir + "/PAMAP2_Dataset/Protocol")) return dir + "/PAMAP2_Dataset";
  return dir;
}

/// subjectNNN.dat -> NNN, else -1.
int subject_of(const std::string& name) {
  const std::string head = "subject", tail = ".dat";
  if (name.size() <= head.size() + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0) {
    return -1;
  }
  const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(digits);
}

std::vector<std::pair<int, std::string>> subject_files(const std::string& folder) {
  std::vector<std::pair<int, std::string>> out;
  if (!detail::is_directory(folder)) return out;
  for (const std::string& f : detail::list_files(folder)) {
    const int s = subject_of(f);
    if (s >= 0) out.emplace_back(s, folder + "/" + f);
  }
  return out;
}

}  // namespace pamap2_detail

bool is_pamap2_folder(const std::string& dir) {
  return !pamap2_detail::subject_files(pamap2_detail::pamap2_root(dir) + "/Protocol").empty();
}

Windows load_pamap2_windows(const std::string& dir, Pamap2Counts* counts) {
  using namespace pamap2_detail;
  const std::string root = pamap2_root(dir);
  std::vector<std::pair<int, std::string>> files = subject_files(root + "/Protocol");
  if (files.empty()) {
    throw std::runtime_error(dir +
                             ": no Protocol/subject1NN.dat files (PAMAP2: the download's "
                             "PAMAP2_Dataset folder, or the folder above it)");
  }
  for (auto& f : subject_files(root + "/Optional")) files.push_back(std::move(f));
  // by subject, Protocol before Optional (stable)
  std::stable_sort(files.begin(), files.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Pamap2Counts n;
  std::map<int, int> class_of;  // activity id -> class
  for (size_t k = 0; k < kActivities.size(); ++k) {
    class_of[kActivities[k].first] = static_cast<int>(k);
  }
  Windows w;
  w.channels = 3;
  w.length = kPamap2WindowRows;
  w.sample_rate_hz = kPamap2RateHz;
  w.channel_names = {"acc_x", "acc_y", "acc_z"};
  w.modalities = {{"acc", {0, 1, 2}}};
  for (const auto& a : kActivities) w.class_names.emplace_back(a.second);
  std::vector<float> xs;
  std::vector<int> labels, subjects;
  std::vector<int> subject_ids;  // sorted, 109 left out
  std::array<double, kFields> v{};
  for (const auto& [subject, path] : files) {
    ++n.files;
    TextFileReader in(path);
    std::string line;
    std::vector<float> acc;  // rows x 3 (m/s²)
    std::vector<int> act;
    while (in.next_line(line)) {
      if (detail::is_blank(line)) continue;
      ++n.rows;
      const detail::ParsedLine p = detail::parse_doubles(line, v.data(), kFields);
      if (p.bad_field >= 0) {
        throw_invalid("", path + ":" + std::to_string(in.line_number()) + ": field " +
                              std::to_string(p.bad_field) + " holds '" + p.bad_text +
                              "', not a number");
      }
      if (p.count != kFields) {
        throw_invalid("", path + ":" + std::to_string(in.line_number()) + ": " +
                              std::to_string(p.count) + " fields; PAMAP2's lines have " +
                              std::to_string(kFields));
      }
      const double label = v[kLabelField];
      if (std::isnan(v[0]) || std::isnan(label) || std::isnan(v[kHandAcc16]) ||
          std::isnan(v[kHandAcc16 + 1]) || std::isnan(v[kHandAcc16 + 2])) {
        ++n.nan_rows;
        continue;
      }
      if (label != std::floor(label) || label < 0 || label > 24) {
        throw_invalid("", path + ":" + std::to_string(in.line_number()) + ": activityID '" +
                              format_number(label, 6) + "' is not one of PAMAP2's (0-24)");
      }
      for (int c = 0; c < 3; ++c) acc.push_back(static_cast<float>(v[kHandAcc16 + c]));
      act.push_back(static_cast<int>(label));
    }
    const auto rows = static_cast<std::int64_t>(act.size());
    const std::int64_t limit = rows / kPamap2WindowRows * kPamap2WindowRows;
    for (std::int64_t s = 0; s + kPamap2WindowRows <= limit; s += kPamap2StrideRows) {
      std::map<int, int> count;
      for (std::int64_t t = s; t < s + kPamap2WindowRows; ++t) ++count[act[static_cast<size_t>(t)]];
      if (2 * count[0] > kPamap2WindowRows) {
        ++n.transient_windows;
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
      if (subject == kExcludedSubject) {
        ++n.excluded_windows;
        continue;
      }
      for (int c = 0; c < 3; ++c) {
        for (std::int64_t t = s; t < s + kPamap2WindowRows; ++t) {
          const double g = acc[static_cast<size_t>(t * 3 + c)] / kStandardG;
          xs.push_back(static_cast<float>(std::clamp(g, -kClipG, kClipG)));
        }
      }
      labels.push_back(cls->second);
      if (subject_ids.empty() || subject_ids.back() != subject) subject_ids.push_back(subject);
      subjects.push_back(static_cast<int>(subject_ids.size()) - 1);
    }
  }
  for (int s : subject_ids) w.subject_names.push_back("subject" + std::to_string(s));
  const auto count = static_cast<Eigen::Index>(labels.size());
  w.x = Eigen::Map<const RowMatrixXf>(xs.data(), count, 3 * kPamap2WindowRows);
  w.labels = Eigen::Map<const Eigen::VectorXi>(labels.data(), count);
  w.subjects = Eigen::Map<const Eigen::VectorXi>(subjects.data(), count);
  w.description = "PAMAP2 " + root +
                  ": hand IMU ±16 g acceleration in g (clipped to ±3), 10-s "
                  "windows every 5 s at 100 Hz, 8 activities, subject 109 left out "
                  "(ssl-wearables' preparation)";
  w.validate("load_pamap2_windows()");
  if (counts != nullptr) *counts = n;
  return w;
}

// The registry's row (dataset.hpp).
Windows open_pamap2_source(Dataset& d, const DatasetOptions&) {
  Pamap2Counts n;
  Windows w = load_pamap2_windows(d.spec.path, &n);
  d.notes.push_back(
      "PAMAP2: " + std::to_string(n.files) + " files, " + std::to_string(n.rows) + " rows; " +
      std::to_string(n.nan_rows) + " rows with NaN in the hand IMU's ±16 g acceleration dropped; " +
      std::to_string(n.transient_windows) + " windows mostly transient (activity 0), " +
      std::to_string(n.other_windows) + " of other activities and " +
      std::to_string(n.excluded_windows) + " of subject 109 left out (ssl-wearables' rules)");
  return w;
}

}  // namespace moca::data
