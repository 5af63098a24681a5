#include "moca/data/windowing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"

namespace moca::data {

void WindowingOptions::validate() const {
  const std::string f = "WindowingOptions::validate(): ";
  if (length < 1) {
    throw_invalid("", f + "length (" + std::to_string(length) + ") must be >= 1");
  }
  if (stride < 0) {
    throw_invalid("", f + "stride (" + std::to_string(stride) + ") must be >= 0 (0 = length)");
  }
  if (transition_min_samples < 0 || transition_min_samples >= length) {
    throw_invalid("", f + "transition_min_samples (" + std::to_string(transition_min_samples) +
                          ") must be in [0, length (" + std::to_string(length) + "))");
  }
}

const std::vector<std::string>& har_class_names() {
  static const std::vector<std::string> names = {"transition", "walking",  "upstairs", "downstairs",
                                                 "sitting",    "standing", "laying"};
  return names;
}

int window_class(const int* hapt_ids, int n, int transition_min_samples) {
  if (n < 1) throw_invalid("window_class()", "n (" + std::to_string(n) + ") < 1");
  std::array<int, kHaptActivities + 1> count{};
  for (int i = 0; i < n; ++i) {
    const int id = hapt_ids[i];
    if (id < 1 || id > kHaptActivities) {
      throw_invalid("window_class()", "sample " + std::to_string(i) + " has id " +
                                          std::to_string(id) + ", expected 1..12");
    }
    ++count[static_cast<size_t>(id)];
  }
  int covering = 0, best = 1;
  for (int id = 1; id <= kHaptActivities; ++id) {
    if (count[static_cast<size_t>(id)] > transition_min_samples) ++covering;
    if (count[static_cast<size_t>(id)] > count[static_cast<size_t>(best)]) best = id;
  }
  if (covering >= 2) return static_cast<int>(ActivityClass::kTransition);
  if (best > 6) return static_cast<int>(ActivityClass::kTransition);
  return best;
}

Windows make_windows(const std::vector<Recording>& recordings, const WindowingOptions& options) {
  options.validate();
  const int len = options.length, stride = options.effective_stride();
  Windows w;
  w.length = len;
  w.class_names = har_class_names();
  if (recordings.empty()) throw_invalid("make_windows()", "no recordings");
  w.channels = static_cast<int>(recordings.front().signal.rows());
  w.sample_rate_hz = recordings.front().sample_rate_hz;
  w.channel_names = recordings.front().channel_names;
  // First pass: window starts per recording.
  struct Cut {
    size_t rec;
    Eigen::Index start;
    int label;
  };
  std::vector<Cut> cuts;
  for (size_t r = 0; r < recordings.size(); ++r) {
    const Recording& rec = recordings[r];
    if (rec.signal.rows() != w.channels) {
      throw_invalid("make_windows()", "recording " + std::to_string(rec.experiment) + " has " +
                                          std::to_string(rec.signal.rows()) +
                                          " channels, the first has " + std::to_string(w.channels));
    }
    if (rec.sample_labels.size() != rec.signal.cols()) {
      throw_invalid("make_windows()", "recording " + std::to_string(rec.experiment) + " has " +
                                          std::to_string(rec.sample_labels.size()) +
                                          " labels for " + std::to_string(rec.signal.cols()) +
                                          " samples");
    }
    const Eigen::Index t = rec.signal.cols();
    const int* ids = rec.sample_labels.data();
    Eigen::Index a = 0;
    while (a < t) {
      if (ids[a] == 0) {
        ++a;
        continue;
      }
      Eigen::Index b = a;  // stretch [a, b)
      while (b < t && ids[b] != 0) ++b;
      for (Eigen::Index s = a; s + len <= b; s += stride) {
        const int cls = window_class(ids + s, len, options.transition_min_samples);
        if (options.drop_transitions && cls == 0) continue;
        cuts.push_back({r, s, cls});
      }
      a = b;
    }
  }
  const Eigen::Index n = static_cast<Eigen::Index>(cuts.size());
  w.x.resize(n, static_cast<Eigen::Index>(w.channels) * len);
  w.labels.resize(n);
  w.subjects.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Cut& c = cuts[static_cast<size_t>(i)];
    const Recording& rec = recordings[c.rec];
    for (int ch = 0; ch < w.channels; ++ch) {
      w.x.row(i).segment(static_cast<Eigen::Index>(ch) * len, len) =
          rec.signal.row(ch).segment(c.start, len);
    }
    w.labels(i) = c.label;
    w.subjects(i) = rec.subject;
  }
  std::set<int> subjects(w.subjects.data(), w.subjects.data() + n);
  w.description = "UCI HAPT raw: " + std::to_string(recordings.size()) + " recordings, " +
                  std::to_string(subjects.size()) + " subjects; windows L=" + std::to_string(len) +
                  " stride=" + std::to_string(stride) +
                  " inside labelled stretches; 7-class rule (transition if two activities > " +
                  std::to_string(options.transition_min_samples) +
                  " samples or mostly a postural transition)" +
                  (options.drop_transitions ? "; transitions dropped" : "");
  return w;
}

Windows load_hapt_windows(const std::string& dir, const WindowingOptions& options) {
  options.validate();
  return make_windows(read_hapt_recordings(dir), options);
}

std::vector<long> class_counts(const Windows& windows) {
  int k = static_cast<int>(windows.class_names.size());
  for (Eigen::Index i = 0; i < windows.labels.size(); ++i) k = std::max(k, windows.labels(i) + 1);
  std::vector<long> counts(static_cast<size_t>(k), 0);
  for (Eigen::Index i = 0; i < windows.labels.size(); ++i) {
    if (windows.labels(i) >= 0) ++counts[static_cast<size_t>(windows.labels(i))];
  }
  return counts;
}

std::string class_count_table(const Windows& windows) {
  const auto counts = class_counts(windows);
  long total = 0;
  for (long c : counts) total += c;
  std::string out = "class  name              windows  percent\n";
  char buf[160];
  for (size_t k = 0; k < counts.size(); ++k) {
    const std::string name = k < windows.class_names.size() ? windows.class_names[k] : "?";
    std::snprintf(
        buf, sizeof buf, "%5zu  %-16s %8ld  %6.2f%%\n", k, name.c_str(), counts[k],
        total ? 100.0 * static_cast<double>(counts[k]) / static_cast<double>(total) : 0.0);
    out += buf;
  }
  const long unknown = (windows.labels.array() < 0).count();
  if (unknown > 0) {
    std::snprintf(buf, sizeof buf, "   -1  %-16s %8ld  (not counted below)\n", "(unlabelled)",
                  unknown);
    out += buf;
  }
  std::set<int> subjects(windows.subjects.data(),
                         windows.subjects.data() + windows.subjects.size());
  subjects.erase(-1);  // no subject id
  std::snprintf(buf, sizeof buf, "total  %-16s %8ld  (%zu subjects)\n", "", total, subjects.size());
  out += buf;
  return out;
}

Windows segment_windows(const Windows& w, int length, int stride) {
  if (length < 1 || length > w.length) {
    throw_invalid("segment_windows()", "length (" + std::to_string(length) + ") must be in [1, " +
                                           std::to_string(w.length) + "], the windows' length");
  }
  if (stride < 1) {
    throw_invalid("segment_windows()", "stride (" + std::to_string(stride) + ") must be >= 1");
  }
  const int per = (w.length - length) / stride + 1;
  Windows out = w;
  out.length = length;
  out.x.resize(static_cast<Eigen::Index>(w.size()) * per,
               static_cast<Eigen::Index>(w.channels) * length);
  out.labels.resize(out.x.rows());
  out.subjects.resize(out.x.rows());
  if (w.parts.size() != 0) out.parts.resize(out.x.rows());
  for (int i = 0; i < w.size(); ++i) {
    for (int k = 0; k < per; ++k) {
      const Eigen::Index row = static_cast<Eigen::Index>(i) * per + k;
      out.window(static_cast<int>(row)) =
          w.window(i).middleCols(static_cast<Eigen::Index>(k) * stride, length);
      out.labels[row] = w.labels[i];
      out.subjects[row] = w.subjects[i];
      if (w.parts.size() != 0) out.parts[row] = w.parts[i];
    }
  }
  return out;
}

std::pair<int, int> parse_segment(const std::string& text, double rate_hz,
                                  const std::string& what) {
  const size_t colon = text.find(':');
  const auto seconds = [&](const std::string& part) {
    char* end = nullptr;
    const double v = std::strtod(part.c_str(), &end);
    if (part.empty() || end != part.c_str() + part.size() || !(v > 0) || !std::isfinite(v)) {
      throw_invalid(
          "", what + " (" + text + ") must be SECONDS[:STRIDE] with seconds > 0, e.g. 5 or 5:2.5");
    }
    const long samples = std::lround(v * rate_hz);
    if (samples < 1) {
      throw_invalid(
          "", what + " (" + text + ") is under one sample at " + format_number(rate_hz, 6) + " Hz");
    }
    return static_cast<int>(samples);
  };
  const int length = seconds(text.substr(0, colon));
  const int stride = colon == std::string::npos ? length : seconds(text.substr(colon + 1));
  return {length, stride};
}

}  // namespace moca::data
