#include "moca/data/recordings.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/data/detail/text_parse.hpp"

namespace moca::data {

void RecordingWindowOptions::validate() const {
  if (sample_rate_hz == 0.0) {
    throw std::invalid_argument(
        "RecordingWindowOptions::sample_rate_hz is required (the recordings' rate; never "
        "assumed)");
  }
  check_ranges(*this);
  if (std::lround(window_seconds * sample_rate_hz) < 2) {
    throw_invalid("", "RecordingWindowOptions::window_seconds", format_number(window_seconds, 6),
                  "is under two samples at " + format_number(sample_rate_hz, 6) + " Hz");
  }
}

std::vector<UnusedOption> unused_options(const RecordingWindowOptions& o) {
  if (o.rule == LabelRule::kTransition) return {};
  return {{"RecordingWindowOptions::transition_seconds",
           "only RecordingWindowOptions::rule transition uses it"}};
}

namespace {

/// Splits a CSV line on commas (no quoting: sensor exports do not quote), trimming blanks.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    std::string f =
        line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t a = f.find_first_not_of(" \t\r\"");
    const size_t b = f.find_last_not_of(" \t\r\"");
    out.push_back(a == std::string::npos ? "" : f.substr(a, b - a + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

/// One subject's recording: C x T samples and T labels ("" = unlabelled).
struct Track {
  std::vector<std::string> channels;
  std::vector<std::vector<float>> values;  ///< per channel
  std::vector<std::string> labels;
};

Track read_track(const std::string& path, const RecordingWindowOptions& o) {
  TextFileReader in(path);
  std::string line;
  if (!in.next_line(line)) throw_invalid(path, "empty file (a header row is needed)");
  const std::vector<std::string> header = csv_fields(line);
  auto column = [&](const std::string& name) {
    return static_cast<int>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const int n = static_cast<int>(header.size());
  int label = o.label_column.empty() ? column("annotation") : column(o.label_column);
  if (o.label_column.empty() && label == n) label = column("label");
  if (label == n) {
    throw_invalid(
        "", path + ":1: no label column '" +
                (o.label_column.empty() ? std::string("annotation' or 'label") : o.label_column) +
                "' in the header");
  }
  const int time = column(o.time_column);
  Track t;
  std::vector<int> channel_cols;
  for (int c = 0; c < n; ++c) {
    if (c == label || c == time) continue;
    channel_cols.push_back(c);
    t.channels.push_back(header[static_cast<size_t>(c)]);
  }
  if (channel_cols.empty()) throw_invalid("", path + ":1: no channel columns");
  t.values.resize(channel_cols.size());
  while (in.next_line(line)) {
    if (detail::is_blank(line)) continue;
    const std::vector<std::string> f = csv_fields(line);
    const std::string where = path + ":" + std::to_string(in.line_number()) + ": ";
    if (static_cast<int>(f.size()) != n) {
      throw_invalid(
          "", where + std::to_string(f.size()) + " fields, the header has " + std::to_string(n));
    }
    for (size_t k = 0; k < channel_cols.size(); ++k) {
      const std::string& s = f[static_cast<size_t>(channel_cols[k])];
      double v = 0.0;
      const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
      if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) {
        throw_invalid(
            "", where + "column '" + t.channels[k] + "' holds '" + s + "', not a finite number");
      }
      t.values[k].push_back(static_cast<float>(v));
    }
    t.labels.push_back(f[static_cast<size_t>(label)]);
  }
  return t;
}

/// The label of samples [a, b) by `o.rule`.
std::string window_label(const std::vector<std::string>& labels, size_t a, size_t b,
                         const RecordingWindowOptions& o) {
  std::map<std::string, long> count;  // sorted: ties go to the first label
  for (size_t i = a; i < b; ++i) ++count[labels[i]];
  std::string best;
  long most = -1, covering = 0;
  const double cover = o.transition_seconds * o.sample_rate_hz;
  for (const auto& [name, c] : count) {
    if (c > most) {
      best = name;
      most = c;
    }
    covering += static_cast<double>(c) > cover;
  }
  return o.rule == LabelRule::kTransition && covering >= 2 ? "transition" : best;
}

}  // namespace

Windows window_recordings(const std::string& dir, const RecordingWindowOptions& o) {
  o.validate();
  std::vector<std::string> files;
  for (const std::string& f : detail::list_files(dir)) {
    const bool csv = f.size() > 4 && f.compare(f.size() - 4, 4, ".csv") == 0;
    const bool gz = f.size() > 7 && f.compare(f.size() - 7, 7, ".csv.gz") == 0;
    if (csv || gz) files.push_back(f);
  }
  if (files.empty()) throw std::runtime_error(dir + ": no .csv or .csv.gz recordings");
  const int length = static_cast<int>(std::lround(o.window_seconds * o.sample_rate_hz));
  const int stride =
      o.stride_seconds > 0
          ? std::max(1, static_cast<int>(std::lround(o.stride_seconds * o.sample_rate_hz)))
          : length;
  Windows w;
  w.length = length;
  w.sample_rate_hz = o.sample_rate_hz;
  std::vector<std::vector<float>> rows;
  std::vector<std::string> window_labels;
  std::vector<int> subjects;
  for (size_t s = 0; s < files.size(); ++s) {
    const std::string path = dir + "/" + files[s];
    const Track t = read_track(path, o);
    if (s == 0) {
      w.channel_names = t.channels;
      w.channels = static_cast<int>(t.channels.size());
    } else if (t.channels != w.channel_names) {
      throw_invalid(path, "channel columns differ from " + files[0] + "'s");
    }
    std::string name = files[s].substr(0, files[s].rfind(".csv"));
    w.subject_names.push_back(name);
    const size_t T = t.labels.size();
    for (size_t a = 0; a < T;) {  // labelled stretches
      if (t.labels[a].empty()) {
        ++a;
        continue;
      }
      size_t b = a;
      while (b < T && !t.labels[b].empty()) ++b;
      for (size_t start = a; start + static_cast<size_t>(length) <= b;
           start += static_cast<size_t>(stride)) {
        std::vector<float> x(static_cast<size_t>(w.channels) * static_cast<size_t>(length));
        for (int c = 0; c < w.channels; ++c) {
          std::copy_n(t.values[static_cast<size_t>(c)].begin() + static_cast<long>(start), length,
                      x.begin() + static_cast<long>(c) * length);
        }
        rows.push_back(std::move(x));
        window_labels.push_back(
            window_label(t.labels, start, start + static_cast<size_t>(length), o));
        subjects.push_back(static_cast<int>(s));
      }
      a = b;
    }
  }
  std::vector<std::string> classes = window_labels;
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  w.class_names = classes;
  const auto n = static_cast<Eigen::Index>(rows.size());
  w.x.resize(n, static_cast<Eigen::Index>(w.channels) * length);
  w.labels.resize(n);
  w.subjects.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    w.x.row(i) =
        Eigen::Map<const Eigen::RowVectorXf>(rows[static_cast<size_t>(i)].data(), w.x.cols());
    w.labels(i) = static_cast<int>(
        std::lower_bound(classes.begin(), classes.end(), window_labels[static_cast<size_t>(i)]) -
        classes.begin());
    w.subjects(i) = subjects[static_cast<size_t>(i)];
  }
  w.description = "windows of the recordings in " + dir + " (" + std::to_string(length) +
                  " samples every " + std::to_string(stride) + " at " +
                  format_number(o.sample_rate_hz, 6) + " Hz, label rule " +
                  enum_name(kLabelRuleNames, o.rule) + ")";
  w.validate("window_recordings()");
  return w;
}

}  // namespace moca::data
