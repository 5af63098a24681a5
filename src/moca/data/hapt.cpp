#include "moca/data/hapt.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/text_parse.hpp"
#include "moca/data/resample.hpp"

namespace moca::data {

const std::vector<std::string>& hapt_channel_names() {
  static const std::vector<std::string> names = {"acc_x",  "acc_y",  "acc_z",
                                                 "gyro_x", "gyro_y", "gyro_z"};
  return names;
}

const std::vector<std::string>& hapt_activity_names() {
  static const std::vector<std::string> names = {
      "UNLABELLED", "WALKING",      "WALKING_UPSTAIRS", "WALKING_DOWNSTAIRS", "SITTING",
      "STANDING",   "LAYING",       "STAND_TO_SIT",     "SIT_TO_STAND",       "SIT_TO_LIE",
      "LIE_TO_SIT", "STAND_TO_LIE", "LIE_TO_STAND"};
  return names;
}

namespace {

std::string where(const std::string& path, long line) {
  return path + ":" + std::to_string(line) + ": ";
}

// Reads a file of rows with exactly three finite numbers into `values` (row-major, 3 per row).
void read_three_columns(const std::string& path, std::vector<float>& values, std::string& opened) {
  TextFileReader in(path);
  opened = in.path();
  values.clear();
  values.reserve(3 * 32768);
  std::string line;
  long blank_line = 0;  // first blank line seen (allowed only at the end)
  double v[3];
  while (in.next_line(line)) {
    if (detail::is_blank(line)) {
      if (blank_line == 0) blank_line = in.line_number();
      continue;
    }
    if (blank_line != 0) {
      throw_invalid(
          "", where(opened, blank_line) + "blank line inside the data (rows must be contiguous)");
    }
    const auto r = detail::parse_doubles(line, v, 3);
    if (r.bad_field > 0) {
      throw_invalid("", where(opened, in.line_number()) + "field " + std::to_string(r.bad_field) +
                            " is not a number ('" + printable(r.bad_text) + "')");
    }
    if (r.count != 3) {
      throw_invalid("", where(opened, in.line_number()) + "row has " + std::to_string(r.count) +
                            " fields, expected 3 (ragged or truncated row)");
    }
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(v[k])) {
        throw_invalid("", where(opened, in.line_number()) + "field " + std::to_string(k + 1) +
                              " is not finite");
      }
      values.push_back(static_cast<float>(v[k]));
    }
  }
  if (values.empty()) throw_invalid(opened, "no data rows (empty file)");
}

std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// Parses "acc_expXX_userYY.txt" or "....txt.gz"; false if the name does not match.
bool parse_acc_name(const std::string& name, int& exp, int& user) {
  std::string base = name;
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".gz") == 0) {
    base.resize(base.size() - 3);
  }
  if (base.size() < 4 || base.compare(base.size() - 4, 4, ".txt") != 0) return false;
  base.resize(base.size() - 4);
  const std::string p1 = "acc_exp", p2 = "_user";
  if (base.compare(0, p1.size(), p1) != 0) return false;
  const auto u = base.find(p2, p1.size());
  if (u == std::string::npos) return false;
  const std::string e = base.substr(p1.size(), u - p1.size());
  const std::string s = base.substr(u + p2.size());
  auto digits = [](const std::string& t) {
    return !t.empty() && t.size() < 6 &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(e) || !digits(s)) return false;
  exp = std::stoi(e);
  user = std::stoi(s);
  return true;
}

}  // namespace

std::vector<HaptLabelSegment> read_hapt_labels(const std::string& path) {
  TextFileReader in(path);
  const std::string& opened = in.path();
  std::vector<HaptLabelSegment> segs;
  std::string line;
  long v[5];
  while (in.next_line(line)) {
    if (detail::is_blank(line)) continue;
    const auto r = detail::parse_longs(line, v, 5);
    const std::string at = where(opened, in.line_number());
    if (r.bad_field > 0) {
      throw_invalid("", at + "field " + std::to_string(r.bad_field) + " is not an integer ('" +
                            printable(r.bad_text) +
                            "'); expected 'experiment user activity start end'");
    }
    if (r.count != 5) {
      throw_invalid("", at + "line has " + std::to_string(r.count) +
                            " fields, expected 5 ('experiment user activity start end')");
    }
    HaptLabelSegment s;
    s.experiment = static_cast<int>(v[0]);
    s.user = static_cast<int>(v[1]);
    s.activity = static_cast<int>(v[2]);
    s.start = v[3];
    s.end = v[4];
    s.line = in.line_number();
    if (v[0] < 1 || v[1] < 1) {
      throw_invalid("", at + "experiment (" + std::to_string(v[0]) + ") and user (" +
                            std::to_string(v[1]) + ") must be >= 1");
    }
    if (s.activity < 1 || s.activity > kHaptActivities) {
      throw_invalid("", at + "activity (" + std::to_string(v[2]) + ") must be in 1..12");
    }
    if (s.start < 1) {
      throw_invalid("", at + "start (" + std::to_string(s.start) +
                            ") must be >= 1 (labels.txt indices are 1-based)");
    }
    if (s.end < s.start) {
      throw_invalid(
          "", at + "end (" + std::to_string(s.end) + ") < start (" + std::to_string(s.start) + ")");
    }
    segs.push_back(s);
  }
  return segs;
}

Recording read_hapt_recording(const std::string& acc_path, const std::string& gyro_path,
                              int experiment, int subject) {
  std::vector<float> acc, gyro;
  Recording rec;
  rec.experiment = experiment;
  rec.subject = subject;
  read_three_columns(acc_path, acc, rec.acc_path);
  read_three_columns(gyro_path, gyro, rec.gyro_path);
  if (acc.size() != gyro.size()) {
    throw_invalid("", "HAPT experiment " + std::to_string(experiment) + ": '" + rec.acc_path +
                          "' has " + std::to_string(acc.size() / 3) + " rows but '" +
                          rec.gyro_path + "' has " + std::to_string(gyro.size() / 3) +
                          " (acc and gyro must have equal lengths)");
  }
  const Eigen::Index t = static_cast<Eigen::Index>(acc.size() / 3);
  rec.signal.resize(kHaptChannels, t);
  for (Eigen::Index i = 0; i < t; ++i) {
    for (int k = 0; k < 3; ++k) {
      rec.signal(k, i) = acc[static_cast<size_t>(3 * i + k)];
      rec.signal(3 + k, i) = gyro[static_cast<size_t>(3 * i + k)];
    }
  }
  rec.sample_labels = Eigen::VectorXi::Zero(t);
  rec.channel_names = hapt_channel_names();
  return rec;
}

void apply_hapt_labels(Recording& rec, const std::vector<HaptLabelSegment>& segments,
                       const std::string& labels_path) {
  const long t = rec.samples();
  std::vector<long> owner(static_cast<size_t>(t), 0);  // labels.txt line that labelled a sample
  if (rec.sample_labels.size() != t) rec.sample_labels = Eigen::VectorXi::Zero(t);
  for (const auto& s : segments) {
    if (s.experiment != rec.experiment) continue;
    const std::string at = where(labels_path, s.line);
    if (s.user != rec.subject) {
      throw_invalid("", at + "experiment " + std::to_string(s.experiment) + " has user " +
                            std::to_string(s.user) + " but its files '" + rec.acc_path +
                            "' say user " + std::to_string(rec.subject));
    }
    if (s.end > t) {
      throw_invalid("", at + "end (" + std::to_string(s.end) + ") exceeds the recording length (" +
                            std::to_string(t) + " rows in '" + rec.acc_path + "')");
    }
    for (long i = s.start - 1; i < s.end; ++i) {
      if (owner[static_cast<size_t>(i)] != 0) {
        throw_invalid("", at + "segment " + std::to_string(s.start) + ".." + std::to_string(s.end) +
                              " overlaps the segment on line " +
                              std::to_string(owner[static_cast<size_t>(i)]) + " at row " +
                              std::to_string(i + 1));
      }
      owner[static_cast<size_t>(i)] = s.line;
      rec.sample_labels(i) = s.activity;
    }
  }
}

std::vector<Recording> read_hapt_recordings(const std::string& dir) {
  if (!detail::is_directory(dir)) {
    throw std::runtime_error("read_hapt_recordings(): folder '" + dir + "' does not exist");
  }
  std::string raw = dir;
  if (detail::is_directory(join_path(dir, "RawData"))) raw = join_path(dir, "RawData");
  const std::string labels_path = join_path(raw, "labels.txt");
  if (!text_file_exists(labels_path)) {
    throw std::runtime_error("read_hapt_recordings(): no labels.txt[.gz] in '" + raw +
                             "' (expected the UCI HAPT RawData layout)");
  }
  // experiment -> (user, acc file name); a .txt and a .txt.gz of the same name count once.
  std::map<int, std::pair<int, std::string>> files;
  for (const auto& name : detail::list_files(raw)) {
    int e = 0, u = 0;
    if (!parse_acc_name(name, e, u)) continue;
    const auto it = files.find(e);
    if (it != files.end() && it->second.first != u) {
      throw_invalid("read_hapt_recordings()", "experiment " + std::to_string(e) +
                                                  " appears with users " +
                                                  std::to_string(it->second.first) + " and " +
                                                  std::to_string(u) + " in '" + raw + "'");
    }
    files[e] = {u, name};
  }
  if (files.empty()) {
    throw std::runtime_error("read_hapt_recordings(): no acc_expXX_userYY.txt[.gz] files in '" +
                             raw + "'");
  }
  const auto segments = read_hapt_labels(labels_path);
  const std::string labels_opened = TextFileReader(labels_path).path();
  for (const auto& s : segments) {
    if (!files.count(s.experiment)) {
      throw_invalid("", where(labels_opened, s.line) + "experiment " +
                            std::to_string(s.experiment) + " has no acc/gyro files in '" + raw +
                            "'");
    }
  }
  struct Job {
    int experiment, user;
    std::string acc, gyro;  // paths without a trailing .gz (TextFileReader finds either)
  };
  std::vector<Job> todo;
  for (const auto& [e, uf] : files) {
    std::string stem = uf.second.substr(4);  // after "acc_"
    if (stem.size() > 3 && stem.compare(stem.size() - 3, 3, ".gz") == 0)
      stem.resize(stem.size() - 3);
    todo.push_back({e, uf.first, join_path(raw, "acc_" + stem), join_path(raw, "gyro_" + stem)});
  }
  const int n = static_cast<int>(todo.size());
  std::vector<Recording> recs(static_cast<size_t>(n));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = 0; i < n; ++i) {
    try {
      const Job& job = todo[static_cast<size_t>(i)];
      if (!text_file_exists(job.gyro)) {
        throw std::runtime_error("read_hapt_recordings(): '" + job.acc +
                                 "[.gz]' has no gyro partner '" + job.gyro + "[.gz]'");
      }
      Recording r = read_hapt_recording(job.acc, job.gyro, job.experiment, job.user);
      apply_hapt_labels(r, segments, labels_opened);
      recs[static_cast<size_t>(i)] = std::move(r);
    } catch (...) {
      errors[static_cast<size_t>(i)] = std::current_exception();
    }
  }
  for (const auto& err : errors) {
    if (err) std::rethrow_exception(err);
  }
  return recs;
}

// The registry's row (dataset.hpp): detection and the reader as open_dataset calls it.

bool is_hapt_folder(const std::string& dir) {
  return detail::is_directory(dir + "/RawData") || detail::path_exists(dir + "/labels.txt");
}

Windows open_hapt_source(Dataset& d, const DatasetOptions& o) {
  if (o.hapt_windowing == HaptWindowing::kUciHar) return open_hapt_uci_har(d, o);
  // HAPT is recorded at 50 Hz: windows of the model's duration, then resampled if needed.
  WindowingOptions wo;
  wo.length = resampled_length(o.length, o.target_rate_hz, 50.0);
  wo.stride = wo.length;
  wo.transition_min_samples = std::min(wo.transition_min_samples, wo.length - 1);
  return load_hapt_windows(d.spec.path, wo);
}

}  // namespace moca::data
