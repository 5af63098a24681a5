#include "moca/data/ucihar.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/text_parse.hpp"
#include "moca/data/resample.hpp"
#include "moca/data/windowing.hpp"

namespace moca::data {

void UciHarOptions::validate() const {
  const std::string f = "UciHarOptions::validate(): ";
  if (length < 1) throw_invalid("", f + "length (" + std::to_string(length) + ") must be >= 1");
  if (cut_samples < length) {
    throw_invalid("", f + "cut_samples (" + std::to_string(cut_samples) + ") must be >= length (" +
                          std::to_string(length) + ")");
  }
  if (transition_min_samples < 0 || transition_min_samples >= length) {
    throw_invalid("", f + "transition_min_samples (" + std::to_string(transition_min_samples) +
                          ") must be in [0, length (" + std::to_string(length) + "))");
  }
}

// ---- filters ----

IirFilter butterworth_lowpass3(double cutoff_hz, double rate_hz) {
  if (!(rate_hz > 0) || !(cutoff_hz > 0) || !(cutoff_hz < rate_hz / 2)) {
    throw_invalid("butterworth_lowpass3()", "cutoff (" + format_number(cutoff_hz, 6) +
                                                " Hz) must be in (0, rate/2) at rate " +
                                                format_number(rate_hz, 6) + " Hz");
  }
  // Analog prototype 1 / ((s + 1)(s^2 + s + 1)) at the pre-warped cut-off; s -> (1/K)(1 -
  // z^-1)/(1 + z^-1) gives the first-order section K (1 + z^-1) / ((1 + K) + (K - 1) z^-1) and
  // the second-order one K^2 (1 + z^-1)^2 / ((1 + K + K^2) + 2 (K^2 - 1) z^-1 + (1 - K + K^2)
  // z^-2).
  const double k = std::tan(M_PI * cutoff_hz / rate_hz);
  const std::array<double, 2> d1 = {1 + k, k - 1};
  const std::array<double, 3> d2 = {1 + k + k * k, 2 * (k * k - 1), 1 - k + k * k};
  IirFilter f;
  f.a = {d1[0] * d2[0], d1[0] * d2[1] + d1[1] * d2[0], d1[0] * d2[2] + d1[1] * d2[1],
         d1[1] * d2[2]};
  const double g = k * k * k;
  f.b = {g, 3 * g, 3 * g, g};
  const double a0 = f.a[0];
  for (double& v : f.a) v /= a0;
  for (double& v : f.b) v /= a0;
  return f;
}

void filter_rows(const IirFilter& f, RowMatrixXf& x) {
  const size_t order = std::max(f.a.size(), f.b.size()) - 1;
  std::vector<double> b(order + 1, 0.0), a(order + 1, 0.0), z(order + 1, 0.0);
  std::copy(f.b.begin(), f.b.end(), b.begin());
  std::copy(f.a.begin(), f.a.end(), a.begin());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    std::fill(z.begin(), z.end(), 0.0);
    for (Eigen::Index t = 0; t < x.cols(); ++t) {
      const double in = x(r, t);
      const double out = b[0] * in + z[0];
      for (size_t k = 1; k <= order; ++k) z[k - 1] = b[k] * in - a[k] * out + z[k];
      x(r, t) = static_cast<float>(out);
    }
  }
}

void median3_rows(RowMatrixXf& x) {
  const Eigen::Index t = x.cols();
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    float prev = 0.0f;  // the input's previous sample (zero before the start)
    for (Eigen::Index i = 0; i < t; ++i) {
      const float cur = x(r, i), next = i + 1 < t ? x(r, i + 1) : 0.0f;
      x(r, i) = std::max(std::min(prev, cur), std::min(std::max(prev, cur), next));
      prev = cur;
    }
  }
}

void uci_har_filter(RowMatrixXf& x, double rate_hz) {
  median3_rows(x);
  filter_rows(butterworth_lowpass3(20.0, rate_hz), x);
}

// ---- HAPT raw -> streams ----

std::vector<SubjectStream> uci_har_streams(const std::vector<Recording>& recordings,
                                           const UciHarOptions& o) {
  o.validate();
  std::map<int, std::vector<const Recording*>> by_subject;
  for (const Recording& r : recordings) {
    if (r.signal.rows() != kHaptChannels) {
      throw_invalid("uci_har_streams()", "recording " + std::to_string(r.experiment) + " has " +
                                             std::to_string(r.signal.rows()) + " channels, not 6");
    }
    if (r.sample_labels.size() != r.signal.cols()) {
      throw_invalid("uci_har_streams()", "recording " + std::to_string(r.experiment) + " has " +
                                             std::to_string(r.sample_labels.size()) +
                                             " labels for " + std::to_string(r.samples()) +
                                             " samples");
    }
    by_subject[r.subject].push_back(&r);
  }
  std::vector<SubjectStream> out;
  for (auto& [subject, recs] : by_subject) {
    std::sort(recs.begin(), recs.end(),
              [](const Recording* p, const Recording* q) { return p->experiment < q->experiment; });
    SubjectStream s;
    s.subject = subject;
    s.source = "HAPT experiment";
    struct Piece {
      const RowMatrixXf* signal;
      Eigen::Index start, samples;
      int activity;
    };
    std::vector<Piece> pieces;
    std::vector<RowMatrixXf> filtered(recs.size());
    for (size_t e = 0; e < recs.size(); ++e) {
      const Recording& r = *recs[e];
      s.source += (e ? ", " : recs.size() > 1 ? "s " : " ") + std::to_string(r.experiment);
      filtered[e] = r.signal;
      if (o.filter) uci_har_filter(filtered[e], r.sample_rate_hz);
      // segments: maximal runs of one activity id 1..6
      std::vector<Piece> segs;
      for (Eigen::Index a = 0; a < r.samples();) {
        const int id = r.sample_labels(a);
        Eigen::Index b = a;
        while (b < r.samples() && r.sample_labels(b) == id) ++b;
        if (id >= 1 && id <= 6) segs.push_back({&filtered[e], a, b - a, id});
        a = b;
      }
      // UCI-HAR's order: activities by first appearance, each one's segments in time order
      std::vector<int> order;
      for (const Piece& p : segs)
        if (std::find(order.begin(), order.end(), p.activity) == order.end())
          order.push_back(p.activity);
      if (!o.activity_order) order = {0};
      for (int act : order) {
        for (Piece p : segs) {
          if (o.activity_order && p.activity != act) continue;
          if (o.trim_to_windows) {
            p.samples = p.samples < kUciHarWindow
                            ? 0
                            : ((p.samples - kUciHarWindow) / kUciHarHop + 1) * kUciHarHop;
          }
          if (p.samples > 0) pieces.push_back(p);
        }
      }
    }
    Eigen::Index total = 0;
    for (const Piece& p : pieces) total += p.samples;
    s.signal.resize(kHaptChannels, total);
    s.labels.resize(total);
    Eigen::Index at = 0;
    for (const Piece& p : pieces) {
      s.signal.middleCols(at, p.samples) = p.signal->middleCols(p.start, p.samples);
      s.labels.segment(at, p.samples).setConstant(p.activity);
      at += p.samples;
    }
    s.pieces = static_cast<int>(pieces.size());
    out.push_back(std::move(s));
  }
  return out;
}

// ---- UCI-HAR Inertial Signals -> streams ----

namespace {

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

// One integer per non-empty line.
std::vector<int> read_id_column(const std::string& path, int lo, int hi) {
  TextFileReader in(path);
  std::vector<int> ids;
  std::string line;
  long v[1];
  while (in.next_line(line)) {
    if (detail::is_blank(line)) continue;
    const auto r = detail::parse_longs(line, v, 1);
    const std::string at = in.path() + ":" + std::to_string(in.line_number()) + ": ";
    if (r.bad_field > 0 || r.count != 1) {
      throw_invalid("", at + "expected one integer per line");
    }
    if (v[0] < lo || v[0] > hi) {
      throw_invalid("", at + "value (" + std::to_string(v[0]) + ") must be in " +
                            std::to_string(lo) + ".." + std::to_string(hi));
    }
    ids.push_back(static_cast<int>(v[0]));
  }
  return ids;
}

// Rows of exactly 128 finite numbers (UCI-HAR's windows), row-major.
std::vector<float> read_windows(const std::string& path, long& rows, std::string& opened) {
  TextFileReader in(path);
  opened = in.path();
  std::vector<float> v;
  std::string line;
  std::array<double, kUciHarWindow> buf{};
  rows = 0;
  while (in.next_line(line)) {
    if (detail::is_blank(line)) continue;
    const auto r = detail::parse_doubles(line, buf.data(), kUciHarWindow);
    const std::string at = opened + ":" + std::to_string(in.line_number()) + ": ";
    if (r.bad_field > 0) {
      throw_invalid("", at + "field " + std::to_string(r.bad_field) + " is not a number ('" +
                            printable(r.bad_text) + "')");
    }
    if (r.count != kUciHarWindow) {
      throw_invalid("", at + "row has " + std::to_string(r.count) +
                            " fields, expected 128 (one UCI-HAR window)");
    }
    for (double x : buf) {
      if (!std::isfinite(x)) throw_invalid("", at + "a value is not finite");
      v.push_back(static_cast<float>(x));
    }
    ++rows;
  }
  return v;
}

bool same_value(float a, float b) {
  return std::abs(a - b) <= 1e-6f * std::max({std::abs(a), std::abs(b), 1e-30f});
}

}  // namespace

std::vector<SubjectStream> read_ucihar_streams(const std::string& dir) {
  const std::string fn = "read_ucihar_streams(): ";
  if (!detail::is_directory(dir)) {
    throw std::runtime_error(fn + "folder '" + dir + "' does not exist");
  }
  const std::string root =
      detail::is_directory(join(dir, "UCI HAR Dataset")) ? join(dir, "UCI HAR Dataset") : dir;
  static const char* const kSignals[6] = {"total_acc_x", "total_acc_y", "total_acc_z",
                                          "body_gyro_x", "body_gyro_y", "body_gyro_z"};
  struct Window {
    int subject, label;
    std::vector<float> x;  // 6 x 128
    std::string where;     // "train window 12"
  };
  std::vector<Window> windows;
  std::string files_read;
  int splits = 0;
  for (const std::string split : {"train", "test"}) {
    const std::string sdir = join(root, split);
    if (!detail::is_directory(sdir)) continue;
    ++splits;
    std::vector<std::string> needed = {join(sdir, "subject_" + split + ".txt"),
                                       join(sdir, "y_" + split + ".txt")};
    for (const char* s : kSignals)
      needed.push_back(join(join(sdir, "Inertial Signals"), std::string(s) + "_" + split + ".txt"));
    for (const std::string& p : needed) {
      if (!text_file_exists(p)) {
        throw std::runtime_error(fn + "'" + p +
                                 "[.gz]' is missing (a UCI HAR Dataset split needs subject_, y_ "
                                 "and Inertial Signals/total_acc_{x,y,z}_, body_gyro_{x,y,z}_ "
                                 "files)");
      }
    }
    const std::vector<int> subjects = read_id_column(needed[0], 1, 1000000);
    const std::vector<int> labels = read_id_column(needed[1], 1, 6);
    if (labels.size() != subjects.size()) {
      throw_invalid("", fn + "'" + needed[1] + "' has " + std::to_string(labels.size()) +
                            " labels but '" + needed[0] + "' " + std::to_string(subjects.size()) +
                            " subjects (one per window)");
    }
    const size_t first = windows.size();
    for (size_t i = 0; i < subjects.size(); ++i) {
      windows.push_back({subjects[i], labels[i], std::vector<float>(6 * kUciHarWindow),
                         split + " window " + std::to_string(i + 1)});
    }
    for (int c = 0; c < 6; ++c) {
      long rows = 0;
      std::string opened;
      const std::vector<float> v = read_windows(needed[2 + static_cast<size_t>(c)], rows, opened);
      if (static_cast<size_t>(rows) != subjects.size()) {
        throw_invalid("", fn + "'" + opened + "' has " + std::to_string(rows) + " windows but '" +
                              needed[0] + "' " + std::to_string(subjects.size()) +
                              " (every file has one row per window)");
      }
      for (size_t i = 0; i < subjects.size(); ++i) {
        std::copy(v.begin() + static_cast<std::ptrdiff_t>(i * kUciHarWindow),
                  v.begin() + static_cast<std::ptrdiff_t>((i + 1) * kUciHarWindow),
                  windows[first + i].x.begin() + c * kUciHarWindow);
      }
    }
    files_read += (files_read.empty() ? "" : ", ") + split + "/";
  }
  if (splits == 0) {
    throw std::runtime_error(fn + "'" + dir +
                             "' holds neither train/ nor test/ (expected the UCI HAR Dataset "
                             "layout: [UCI HAR Dataset/]train/Inertial Signals/...)");
  }
  if (windows.empty()) throw_invalid("", fn + "'" + root + "' holds no windows");
  std::map<int, std::vector<const Window*>> by_subject;
  for (const Window& w : windows) by_subject[w.subject].push_back(&w);
  std::vector<SubjectStream> out;
  constexpr int kShared = 6 * kUciHarHop;  // values two overlapping windows share
  for (const auto& [subject, ws] : by_subject) {
    SubjectStream s;
    s.subject = subject;
    s.source = "UCI-HAR subject " + std::to_string(subject) + " in '" + root + "'";
    s.signal.resize(6, static_cast<Eigen::Index>(ws.size()) * kUciHarHop);
    s.labels.resize(s.signal.cols());
    s.pieces = 1;
    for (size_t i = 0; i < ws.size(); ++i) {
      const Window& w = *ws[i];
      if (i > 0) {
        // the shared half: this window's first 64 samples against the previous one's last 64
        int agree = 0;
        for (int c = 0; c < 6; ++c)
          for (int t = 0; t < kUciHarHop; ++t)
            agree +=
                same_value(w.x[static_cast<size_t>(c * kUciHarWindow + t)],
                           ws[i - 1]->x[static_cast<size_t>(c * kUciHarWindow + kUciHarHop + t)]);
        if (agree < kShared && 2 * agree >= kShared) {
          throw_invalid("", fn + "subject " + std::to_string(subject) + ": " + w.where +
                                " shares " + std::to_string(agree) + " of its 384 first-half " +
                                "values with the second half of " + ws[i - 1]->where +
                                " (rule: consecutive windows of a subject overlap by 64 samples in "
                                "all six channels, or share under half of them at a segment "
                                "change); the files in '" +
                                root + "' are misaligned or damaged");
        }
        if (agree < kShared) ++s.pieces;
      }
      for (int c = 0; c < 6; ++c)
        for (int t = 0; t < kUciHarHop; ++t)
          s.signal(c, static_cast<Eigen::Index>(i) * kUciHarHop + t) =
              w.x[static_cast<size_t>(c * kUciHarWindow + t)];
      s.labels.segment(static_cast<Eigen::Index>(i) * kUciHarHop, kUciHarHop).setConstant(w.label);
    }
    out.push_back(std::move(s));
  }
  return out;
}

// ---- streams -> windows ----

Windows cut_subject_streams(const std::vector<SubjectStream>& streams, const UciHarOptions& o,
                            const std::string& what) {
  o.validate();
  if (streams.empty()) throw_invalid("", what + ": no subjects");
  const int per = o.cut_samples / o.length;
  for (const SubjectStream& s : streams) {
    if (s.samples() < o.cut_samples) {
      throw_invalid("", what + ": subject " + std::to_string(s.subject) + " (" + s.source +
                            ") has " + std::to_string(s.samples()) +
                            " samples of activities 1-6, fewer than the " +
                            std::to_string(o.cut_samples) +
                            " cut from each subject (rule: every subject needs >= " +
                            std::to_string(o.cut_samples) + ")");
    }
  }
  Windows w;
  w.channels = kHaptChannels;
  w.length = o.length;
  w.channel_names = hapt_channel_names();
  w.class_names = har_class_names();
  const Eigen::Index n = static_cast<Eigen::Index>(streams.size()) * per;
  w.x.resize(n, static_cast<Eigen::Index>(kHaptChannels) * o.length);
  w.labels.resize(n);
  w.subjects.resize(n);
  Eigen::Index row = 0;
  for (const SubjectStream& s : streams) {
    for (int k = 0; k < per; ++k, ++row) {
      const Eigen::Index start = static_cast<Eigen::Index>(k) * o.length;
      for (int c = 0; c < kHaptChannels; ++c) {
        w.x.row(row).segment(static_cast<Eigen::Index>(c) * o.length, o.length) =
            s.signal.row(c).segment(start, o.length);
      }
      w.labels(row) = window_class(s.labels.data() + start, o.length, o.transition_min_samples);
      w.subjects(row) = s.subject;
    }
  }
  w.description = "UCI-HAR-style streams of " + std::to_string(streams.size()) +
                  " subjects, first " + std::to_string(o.cut_samples) + " samples each, " +
                  std::to_string(per) + " windows of L=" + std::to_string(o.length) +
                  " per subject; 7-class rule (transition if two activities > " +
                  std::to_string(o.transition_min_samples) + " samples)";
  return w;
}

Windows load_hapt_uci_har_windows(const std::string& dir, const UciHarOptions& o) {
  o.validate();
  return cut_subject_streams(uci_har_streams(read_hapt_recordings(dir), o), o,
                             "DatasetOptions::hapt_windowing (uci-har)");
}

Windows load_ucihar_windows(const std::string& dir, const UciHarOptions& o) {
  o.validate();
  return cut_subject_streams(read_ucihar_streams(dir), o, "UCI-HAR data '" + dir + "'");
}

// The registry's row (dataset.hpp).

bool is_ucihar_folder(const std::string& dir) {
  for (const std::string& root : {dir, join(dir, "UCI HAR Dataset")})
    for (const char* split : {"train", "test"})
      if (detail::is_directory(join(join(root, split), "Inertial Signals"))) return true;
  return false;
}

namespace {
// The mode's options at the model's geometry: windows of the model's duration at 50 Hz.
UciHarOptions uci_har_options(const DatasetOptions& o) {
  UciHarOptions u;
  u.length = std::min(resampled_length(o.length, o.target_rate_hz, 50.0), u.cut_samples);
  u.transition_min_samples = std::min(u.transition_min_samples, u.length - 1);
  return u;
}

std::string stream_note(const std::vector<SubjectStream>& streams, const UciHarOptions& u) {
  int pieces = 0;
  for (const SubjectStream& s : streams) pieces += s.pieces;
  return std::to_string(streams.size()) + " subject streams (" + std::to_string(pieces) +
         " pieces stitched), the first " + std::to_string(u.cut_samples) +
         " samples of each cut "
         "into " +
         std::to_string(u.cut_samples / u.length) + " windows of " + std::to_string(u.length) +
         " samples";
}
}  // namespace

Windows open_ucihar_source(Dataset& d, const DatasetOptions& o) {
  const UciHarOptions u = uci_har_options(o);
  const auto streams = read_ucihar_streams(d.spec.path);
  Windows w = cut_subject_streams(streams, u, "UCI-HAR data '" + d.spec.path + "'");
  d.notes.push_back("UCI-HAR Inertial Signals (total_acc, body_gyro): " + stream_note(streams, u) +
                    "; each window's first 64 samples, as filtered by UCI-HAR");
  return w;
}

Windows open_hapt_uci_har(Dataset& d, const DatasetOptions& o) {
  const UciHarOptions u = uci_har_options(o);
  const auto streams = uci_har_streams(read_hapt_recordings(d.spec.path), u);
  Windows w = cut_subject_streams(streams, u, "DatasetOptions::hapt_windowing (uci-har)");
  d.notes.push_back(
      "hapt windowing uci-har: median 3 + causal 3rd-order Butterworth 20 Hz per recording; "
      "activities 1-6 only, per experiment in UCI-HAR's order, each segment's first 64*n "
      "samples; " +
      stream_note(streams, u));
  return w;
}

}  // namespace moca::data
