#include "moca/data/hmp.hpp"
#include "moca/data/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/data/detail/text_parse.hpp"

namespace moca::data {

void HmpOptions::validate() const {
  const std::string f = "HmpOptions::validate(): ";
  if (length < 1) {
    throw_invalid("", f + "length (" + std::to_string(length) + ") must be >= 1");
  }
  if (stride < 0) {
    throw_invalid("", f + "stride (" + std::to_string(stride) + ") must be >= 0 (0 = length)");
  }
  if (!(target_rate_hz > 0.0 && target_rate_hz <= 1000.0)) {
    throw_invalid(
        "", f + "target_rate_hz (" + std::to_string(target_rate_hz) + ") must be in (0, 1000]");
  }
}

bool parse_hmp_file_name(const std::string& name, std::string& activity, std::string& volunteer) {
  std::string base = name;
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".gz") == 0) base.resize(base.size() - 3);
  if (base.size() < 4 || base.compare(base.size() - 4, 4, ".txt") != 0) return false;
  base.resize(base.size() - 4);
  std::vector<std::string> parts;
  size_t a = 0;
  while (true) {
    const size_t b = base.find('-', a);
    parts.push_back(base.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  if (parts.size() != 9 || parts[0] != "Accelerometer") return false;
  for (int k = 1; k <= 6; ++k) {
    const auto& p = parts[static_cast<size_t>(k)];
    if (p.empty() ||
        !std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
  }
  activity = parts[7];
  volunteer = parts[8];
  const auto us = volunteer.find('_');  // *_MODEL files: "f1_1"
  if (us != std::string::npos) volunteer.resize(us);
  return !activity.empty() && !volunteer.empty();
}

RowMatrixXf resample_linear(const RowMatrixXf& x, double from_hz, double to_hz) {
  if (x.cols() < 1) throw_invalid("resample_linear()", "no samples (T = 0)");
  if (!(from_hz > 0.0) || !(to_hz > 0.0)) {
    throw_invalid("resample_linear()", "rates (" + std::to_string(from_hz) + ", " +
                                           std::to_string(to_hz) + ") must be > 0");
  }
  const Eigen::Index t = x.cols();
  const double step = from_hz / to_hz;  // source samples per output sample
  const Eigen::Index m =
      static_cast<Eigen::Index>(std::floor(static_cast<double>(t - 1) / step + 1e-9)) + 1;
  RowMatrixXf y(x.rows(), m);
  for (Eigen::Index j = 0; j < m; ++j) {
    const double p = static_cast<double>(j) * step;
    Eigen::Index k = static_cast<Eigen::Index>(std::floor(p + 1e-9));
    double f = p - static_cast<double>(k);
    if (f < 0) f = 0;
    if (k >= t - 1) {
      k = t - 1;
      f = 0;
    }
    for (Eigen::Index c = 0; c < x.rows(); ++c) {
      const double v0 = x(c, k);
      const double v1 = f > 0 ? x(c, k + 1) : v0;
      y(c, j) = static_cast<float>((1.0 - f) * v0 + f * v1);
    }
  }
  return y;
}

HmpRecording read_hmp_file(const std::string& path, double target_rate_hz) {
  TextFileReader in(path);
  HmpRecording rec;
  rec.path = in.path();
  std::string name = rec.path.substr(rec.path.find_last_of('/') + 1);
  if (!parse_hmp_file_name(name, rec.activity, rec.volunteer)) {
    throw_invalid("", rec.path +
                          ": file name does not match "
                          "Accelerometer-YYYY-MM-DD-HH-MM-SS-<activity>-<volunteer>.txt");
  }
  std::vector<float> v;
  std::string line;
  long blank_line = 0;
  long raw[3];
  while (in.next_line(line)) {
    if (detail::is_blank(line)) {
      if (blank_line == 0) blank_line = in.line_number();
      continue;
    }
    const std::string at = rec.path + ":" + std::to_string(in.line_number()) + ": ";
    if (blank_line != 0) {
      throw_invalid("", rec.path + ":" + std::to_string(blank_line) +
                            ": blank line inside the data (rows must be contiguous)");
    }
    const auto r = detail::parse_longs(line, raw, 3);
    if (r.bad_field > 0) {
      throw_invalid("", at + "field " + std::to_string(r.bad_field) + " is not an integer ('" +
                            printable(r.bad_text) + "')");
    }
    if (r.count != 3) {
      throw_invalid("", at + "row has " + std::to_string(r.count) +
                            " fields, expected 3 (ragged or truncated row)");
    }
    for (int k = 0; k < 3; ++k) {
      if (raw[k] < 0 || raw[k] > 63) {
        throw_invalid("", at + "field " + std::to_string(k + 1) + " (" + std::to_string(raw[k]) +
                              ") is outside the coded range 0..63");
      }
      v.push_back(static_cast<float>(raw[k]));
    }
  }
  if (v.empty()) throw_invalid("", rec.path + ": no data rows (empty file)");
  const Eigen::Index t = static_cast<Eigen::Index>(v.size() / 3);
  RowMatrixXf g(3, t);
  for (Eigen::Index i = 0; i < t; ++i) {
    for (int k = 0; k < 3; ++k) {
      g(k, i) = static_cast<float>(hmp_raw_to_g(v[static_cast<size_t>(3 * i + k)]));
    }
  }
  rec.signal = resample_linear(g, kHmpRateHz, target_rate_hz);
  return rec;
}

namespace {

/// The recording files under dir (or dir/HMP_Dataset): Accelerometer-...txt[.gz] in the activity
/// folders, _MODEL folders only when asked.
std::vector<std::string> hmp_files(const std::string& dir, bool include_model_folders) {
  std::string root = dir;
  if (detail::is_directory(dir + "/HMP_Dataset")) root = dir + "/HMP_Dataset";
  if (!detail::is_directory(root)) {
    throw std::runtime_error("load_hmp_windows(): folder '" + dir + "' does not exist");
  }
  std::vector<std::string> files;
  for (const auto& sub : detail::list_subdirs(root)) {
    const bool model = sub.size() > 6 && sub.compare(sub.size() - 6, 6, "_MODEL") == 0;
    if (model && !include_model_folders) continue;
    for (const auto& f : detail::list_files(root + "/" + sub)) {
      std::string act, vol;
      if (parse_hmp_file_name(f, act, vol)) files.push_back(root + "/" + sub + "/" + f);
    }
  }
  if (files.empty()) {
    throw std::runtime_error(
        "load_hmp_windows(): no Accelerometer-...txt[.gz] files in the "
        "activity folders of '" +
        root + "'");
  }
  return files;
}

/// Reads every file (in parallel); the first file's error is rethrown.
std::vector<HmpRecording> read_recordings(const std::vector<std::string>& files,
                                          double target_rate_hz) {
  const int n = static_cast<int>(files.size());
  std::vector<HmpRecording> recs(static_cast<size_t>(n));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
#pragma omp parallel for schedule(dynamic, 8)
  for (int i = 0; i < n; ++i) {
    try {
      recs[static_cast<size_t>(i)] = read_hmp_file(files[static_cast<size_t>(i)], target_rate_hz);
    } catch (...) {
      errors[static_cast<size_t>(i)] = std::current_exception();
    }
  }
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return recs;
}

/// Cuts every recording into windows of `len` samples every `stride` (labels and subjects
/// numbered in name order into w.class_names, w.subject_names); returns how many recordings
/// were shorter than one window.
int cut_windows(const std::vector<HmpRecording>& recs, int len, int stride, Windows& w) {
  std::map<std::string, int> act_id, vol_id;
  for (const auto& r : recs) {
    act_id.emplace(r.activity, 0);
    vol_id.emplace(r.volunteer, 0);
  }
  for (auto& [name, id] : act_id) {
    id = static_cast<int>(w.class_names.size());
    w.class_names.push_back(name);
  }
  for (auto& [name, id] : vol_id) {
    id = static_cast<int>(w.subject_names.size());
    w.subject_names.push_back(name);
  }
  long total = 0;
  int short_files = 0;
  for (const auto& r : recs) {
    const long m = static_cast<long>(r.signal.cols());
    if (m < len) {
      ++short_files;
      continue;
    }
    total += (m - len) / stride + 1;
  }
  w.x.resize(total, 3L * len);
  w.labels.resize(total);
  w.subjects.resize(total);
  Eigen::Index row = 0;
  for (const auto& r : recs) {
    for (Eigen::Index s = 0; s + len <= r.signal.cols(); s += stride) {
      for (int c = 0; c < 3; ++c) {
        w.x.row(row).segment(static_cast<Eigen::Index>(c) * len, len) =
            r.signal.row(c).segment(s, len);
      }
      w.labels(row) = act_id.at(r.activity);
      w.subjects(row) = vol_id.at(r.volunteer);
      ++row;
    }
  }
  return short_files;
}

}  // namespace

Windows load_hmp_windows(const std::string& dir, const HmpOptions& options) {
  options.validate();
  const std::vector<std::string> files = hmp_files(dir, options.include_model_folders);
  const std::vector<HmpRecording> recs = read_recordings(files, options.target_rate_hz);
  Windows w;
  w.channels = 3;
  w.length = options.length;
  w.sample_rate_hz = options.target_rate_hz;
  w.channel_names = {"acc_x", "acc_y", "acc_z"};
  const int len = options.length;
  const int stride = options.stride == 0 ? len : options.stride;
  const int short_files = cut_windows(recs, len, stride, w);
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", options.target_rate_hz);
  w.description = "UCI HMP (ADL wrist accelerometer): " + std::to_string(files.size()) + " files" +
                  (options.include_model_folders ? " incl. _MODEL folders" : "") +
                  ", raw/63*3-1.5 g, 32 Hz -> " + rate +
                  " Hz linear interpolation, windows L=" + std::to_string(len) +
                  " stride=" + std::to_string(stride) + "; " + std::to_string(short_files) +
                  " files shorter than one window gave none";
  return w;
}

AdlTransferData adl_transfer_data(const std::string& dir, bool paper_classes,
                                  const std::string& keep_classes) {
  AdlTransferData d;
  const std::string folder = dir.empty() ? folder_from_environment(DataFormat::kHmp) : dir;
  if (folder.empty()) {
    throw_invalid("adl_transfer_data()",
                  "protocol adl-loso needs the UCI ADL (HMP) data: ClassifyOptions::hmp DIR or "
                  "$MOCA_HMP_DIR");
  }
  d.spec = "hmp:" + folder;
  d.keep_classes = paper_classes && keep_classes.empty() ? kHmpPaperClasses : keep_classes;
  return d;
}

// The registry's row (dataset.hpp): detection and the reader as open_dataset calls it.

namespace {

bool has_hmp_files(const std::string& dir) {
  for (const auto& f : detail::list_files(dir))
    if (f.rfind("Accelerometer-", 0) == 0) return true;
  return false;
}

}  // namespace

bool is_hmp_folder(const std::string& dir) {
  if (detail::is_directory(dir + "/HMP_Dataset") || has_hmp_files(dir)) return true;
  for (const auto& sub : detail::list_subdirs(dir)) {
    if (has_hmp_files(dir + "/" + sub)) return true;
  }
  return false;
}

Windows open_hmp_source(Dataset& d, const DatasetOptions& o) {
  HmpOptions ho;
  ho.length = o.length;
  ho.target_rate_hz = o.target_rate_hz;
  ho.include_model_folders = o.hmp_include_model_folders;
  Windows w = load_hmp_windows(d.spec.path, ho);
  d.notes.push_back("HMP files are converted to g and resampled from 32 Hz to " +
                    format_number(o.target_rate_hz, 6) +
                    " Hz by their reader (linear interpolation) "
                    "before windowing");
  return w;
}

}  // namespace moca::data
