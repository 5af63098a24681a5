#include "moca/data/recordings.hpp"

#include <glob.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/text_parse.hpp"

namespace moca::data {

// (A named namespace, not an anonymous one: RecordingSource::Plan holds these types, and the
// data library's unity build must not meet another file's helpers of the same names.)
namespace recordings_detail {

constexpr const char* kMissingField = "RecordingWindowOptions::missing";

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

/// The whole of `s` as a number (std::from_chars: no blanks, no '+').
bool parse_double(const std::string& s, double& v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool ends_with(const std::string& s, const char* tail) {
  const size_t n = std::char_traits<char>::length(tail);
  return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

bool is_recording_name(const std::string& f) {
  return ends_with(f, ".csv") || ends_with(f, ".csv.gz");
}

/// A file name without .gz and then .csv / .txt / .tsv.
std::string file_stem(std::string name) {
  if (ends_with(name, ".gz")) name.resize(name.size() - 3);
  for (const char* ext : {".csv", ".txt", ".tsv"}) {
    if (ends_with(name, ext)) {
      name.resize(name.size() - 4);
      break;
    }
  }
  return name;
}

std::vector<std::string> path_components(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t slash = path.find('/', start);
    out.push_back(
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) return out;
    start = slash + 1;
  }
}

/// Splits a CSV line into `out` (views into `line` or, for quoted fields, into `scratch`),
/// RFC 4180 quoting ("a,b" is one field, "" inside quotes is a quote); unquoted fields are
/// trimmed of blanks and carriage returns.
void csv_fields(const std::string& line, std::vector<std::string_view>& out, std::string& scratch) {
  out.clear();
  const auto trimmed = [](std::string_view f) {
    const size_t a = f.find_first_not_of(" \t\r");
    if (a == std::string_view::npos) return std::string_view();
    return f.substr(a, f.find_last_not_of(" \t\r") - a + 1);
  };
  if (line.find('"') == std::string::npos) {  // the sensor exports' case: no quotes
    const std::string_view s(line);
    size_t start = 0;
    while (true) {
      const size_t comma = s.find(',', start);
      out.push_back(
          trimmed(s.substr(start, comma == std::string_view::npos ? comma : comma - start)));
      if (comma == std::string_view::npos) return;
      start = comma + 1;
    }
  }
  scratch.clear();
  scratch.reserve(line.size());  // never reallocated below: the views stay valid
  size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t begin = scratch.size();
    if (i < line.size() && line[i] == '"') {
      for (++i; i < line.size(); ++i) {
        if (line[i] != '"') {
          scratch.push_back(line[i]);
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          scratch.push_back('"');
          ++i;
        } else {
          ++i;
          break;
        }
      }
      while (i < line.size() && line[i] != ',') ++i;  // blanks after the closing quote
      out.emplace_back(scratch.data() + begin, scratch.size() - begin);
    } else {
      while (i < line.size() && line[i] != ',') scratch.push_back(line[i++]);
      out.push_back(trimmed(std::string_view(scratch.data() + begin, scratch.size() - begin)));
    }
    if (i >= line.size()) return;
    ++i;  // the comma
  }
}

std::vector<std::string> csv_header(const std::string& line) {
  std::vector<std::string_view> f;
  std::string scratch;
  csv_fields(line, f, scratch);
  return {f.begin(), f.end()};
}

bool is_missing(std::string_view s) {
  if (s.empty()) return true;
  std::string low(s);
  for (char& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return low == "na" || low == "nan" || low == "-nan" || low == "null";
}

/// The columns of one file that the options ask for.
struct FileColumns {
  std::vector<std::string> header;
  int label = -1;
  std::vector<int> channels;  ///< header index of each selected channel, in the data's order
};

/// The header of `path` and the label and channel columns in it (`names`: the channel names
/// wanted, in order; empty: every column but the label and time columns).
FileColumns read_columns(const std::string& path, const RecordingWindowOptions& o,
                         const std::vector<std::string>& names) {
  TextFileReader in(path);
  std::string line;
  if (!in.next_line(line)) throw_invalid(path, "empty file (a header row is needed)");
  FileColumns fc;
  fc.header = csv_header(line);
  const auto column = [&](const std::string& name) {
    return static_cast<int>(std::find(fc.header.begin(), fc.header.end(), name) -
                            fc.header.begin());
  };
  const int n = static_cast<int>(fc.header.size());
  fc.label = o.label_column.empty() ? column("annotation") : column(o.label_column);
  if (o.label_column.empty() && fc.label == n) fc.label = column("label");
  if (fc.label == n) {
    throw_invalid(
        "", path + ":1: no label column '" +
                (o.label_column.empty() ? std::string("annotation' or 'label") : o.label_column) +
                "' in the header");
  }
  const int time = column(o.time_column);
  if (names.empty()) {
    for (int c = 0; c < n; ++c) {
      if (c != fc.label && c != time) fc.channels.push_back(c);
    }
    if (fc.channels.empty()) throw_invalid("", path + ":1: no channel columns");
    return fc;
  }
  for (const std::string& name : names) {
    const int c = column(name);
    if (c == n || c == fc.label) {
      std::string have;
      for (int k = 0; k < n; ++k) {
        if (k == fc.label || k == time) continue;
        have += (have.empty() ? "" : ", ") + fc.header[static_cast<size_t>(k)];
      }
      throw_invalid("", "RecordingWindowOptions::channels (" + name +
                            "): " + (c == n ? "no such column" : "it is the label column") +
                            " in " + path + " (its channel columns: " + have + ")");
    }
    fc.channels.push_back(c);
  }
  return fc;
}

/// A parsed --label-map: raw label -> mapped label, and what the record says of it.
struct LabelMap {
  std::unordered_map<std::string, std::string> to;
  std::string column;
};

LabelMap read_label_map(const std::string& spec) {
  std::string path = spec, want;
  // FILE:COLUMN, where FILE exists and COLUMN has no '/' (a path may hold ':').
  for (size_t colon = spec.rfind(':'); colon != std::string::npos && colon > 0;
       colon = spec.rfind(':', colon - 1)) {
    const std::string head = spec.substr(0, colon), tail = spec.substr(colon + 1);
    if (tail.find('/') == std::string::npos && text_file_exists(head) &&
        !detail::is_directory(head)) {
      path = head;
      want = tail;
      break;
    }
    if (colon == 0) break;
  }
  if (!text_file_exists(path) || detail::is_directory(path)) {
    throw_invalid(
        "", "RecordingWindowOptions::label_map (" + spec + "): no such file (FILE or FILE:COLUMN)");
  }
  TextFileReader in(path);
  std::string line;
  if (!in.next_line(line)) throw_invalid(path, "empty label map (a header row is needed)");
  const std::vector<std::string> header = csv_header(line);
  const int n = static_cast<int>(header.size());
  int key =
      static_cast<int>(std::find(header.begin(), header.end(), "annotation") - header.begin());
  if (key == n) key = 0;
  int value = -1;
  if (want.empty()) {
    if (n != 2) {
      throw_invalid("", "RecordingWindowOptions::label_map (" + spec + "): " + path + " has " +
                            std::to_string(n) + " columns; name the mapped one as FILE:COLUMN (" +
                            join(header, ", ") + ")");
    }
    value = 1 - key;
  } else {
    for (int c = 0; c < n && value < 0; ++c) {
      const std::string& h = header[static_cast<size_t>(c)];
      if (c != key && (h == want || h == "label:" + want)) value = c;
    }
    if (value < 0) {
      throw_invalid("", "RecordingWindowOptions::label_map (" + spec + "): no column '" + want +
                            "' in " + path + " (its columns: " + join(header, ", ") + ")");
    }
  }
  LabelMap m;
  m.column = header[static_cast<size_t>(value)];
  std::vector<std::string_view> f;
  std::string scratch;
  while (in.next_line(line)) {
    if (detail::is_blank(line)) continue;
    csv_fields(line, f, scratch);
    if (static_cast<int>(f.size()) != n) {
      throw_invalid("", path + ":" + std::to_string(in.line_number()) + ": " +
                            std::to_string(f.size()) + " fields, the header has " +
                            std::to_string(n));
    }
    const std::string raw(f[static_cast<size_t>(key)]), to(f[static_cast<size_t>(value)]);
    const auto [it, fresh] = m.to.emplace(raw, to);
    if (!fresh && it->second != to) {
      throw_invalid("", path + ":" + std::to_string(in.line_number()) + ": label '" + raw +
                            "' is mapped twice ('" + it->second + "' and '" + to + "')");
    }
  }
  return m;
}

/// GROUP=FACTOR items of --scale for `groups`: one factor per channel (1 unless scaled).
std::vector<float> channel_scales(const std::string& text, const std::vector<ModalityGroup>& groups,
                                  int channels, nlohmann::json& record) {
  std::vector<float> factor(static_cast<size_t>(channels), 1.0f);
  record = nlohmann::json::object();
  std::string items = text;
  std::replace(items.begin(), items.end(), ';', ',');
  for (size_t start = 0; start <= items.size();) {
    const size_t comma = std::min(items.find(',', start), items.size());
    const std::string item = trim(items.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string name = trim(item.substr(0, eq));
    double v = 0.0;
    if (eq == std::string::npos || !parse_double(trim(item.substr(eq + 1)), v) ||
        !std::isfinite(v) || v == 0.0) {
      throw_invalid("", "RecordingWindowOptions::scale", text,
                    "items are GROUP=FACTOR with a finite, non-zero FACTOR ('" + item + "')");
    }
    const auto g = std::find_if(groups.begin(), groups.end(),
                                [&](const ModalityGroup& m) { return m.name == name; });
    if (g == groups.end()) {
      std::string have;
      for (const auto& m : groups) have += (have.empty() ? "" : ", ") + m.name;
      throw_invalid("", "RecordingWindowOptions::scale", text,
                    "names no group '" + name + "' (the groups: " + have + ")");
    }
    if (record.contains(name)) {
      throw_invalid("", "RecordingWindowOptions::scale", text, "scales '" + name + "' twice");
    }
    record[name] = v;
    for (int c : g->channels) factor[static_cast<size_t>(c)] = static_cast<float>(v);
  }
  return factor;
}

/// The streaming windower: samples of one labelled stretch at a time -> windows.
class Windower {
 public:
  Windower(const RecordingWindowOptions& o, int channels, int length, int stride,
           const std::function<void(const float*)>& sink, const std::vector<std::string>& names)
      : o_(o),
        c_(channels),
        l_(length),
        stride_(stride),
        sink_(sink),
        names_(names),
        row_(static_cast<size_t>(channels) * static_cast<size_t>(length)) {}

  /// Starts a new stretch (a label change does not: an unlabelled sample or a dropped gap does).
  void cut() {
    buf_.clear();
    lab_.clear();
    skip_ = 0;
  }
  void push(const float* v, int label) {
    if (skip_ > 0) {
      --skip_;
      return;
    }
    buf_.insert(buf_.end(), v, v + c_);
    lab_.push_back(label);
    if (static_cast<int>(lab_.size()) < l_) return;
    emit();
    if (stride_ < l_) {
      buf_.erase(buf_.begin(), buf_.begin() + static_cast<long>(stride_) * c_);
      lab_.erase(lab_.begin(), lab_.begin() + stride_);
    } else {
      cut();
      skip_ = stride_ - l_;
    }
  }
  /// Window label ids (into the names) and subjects so far.
  std::vector<int> labels, subjects;
  int subject = 0;

 private:
  void emit() {
    for (int t = 0; t < l_; ++t) {
      for (int ch = 0; ch < c_; ++ch) {
        row_[static_cast<size_t>(ch) * static_cast<size_t>(l_) + static_cast<size_t>(t)] =
            buf_[static_cast<size_t>(t) * static_cast<size_t>(c_) + static_cast<size_t>(ch)];
      }
    }
    sink_(row_.data());
    labels.push_back(window_label());
    subjects.push_back(subject);
  }
  /// The label by o_.rule (recordings.hpp); -2 stands for "transition".
  int window_label() {
    count_.clear();
    for (int id : lab_) {
      auto it =
          std::find_if(count_.begin(), count_.end(), [&](const auto& p) { return p.first == id; });
      if (it == count_.end()) {
        count_.emplace_back(id, 1);
      } else {
        ++it->second;
      }
    }
    const double cover = o_.transition_seconds * o_.sample_rate_hz;
    int best = -1, covering = 0;
    long most = -1;
    for (const auto& [id, n] : count_) {
      if (n > most ||
          (n == most && names_[static_cast<size_t>(id)] < names_[static_cast<size_t>(best)])) {
        best = id;
        most = n;
      }
      covering += static_cast<double>(n) > cover;
    }
    return o_.rule == LabelRule::kTransition && covering >= 2 ? -2 : best;
  }

  const RecordingWindowOptions& o_;
  int c_, l_, stride_;
  const std::function<void(const float*)>& sink_;
  const std::vector<std::string>& names_;
  std::vector<float> buf_, row_;
  std::vector<int> lab_;
  std::vector<std::pair<int, long>> count_;
  int skip_ = 0;
};

}  // namespace recordings_detail

// (Each function below says `using namespace recordings_detail` inside: at namespace scope it
// would reach the files after this one in the unity build.)

void RecordingWindowOptions::validate() const {
  using namespace recordings_detail;
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
  parse_gap_rule(missing);
  std::set<std::string> seen;
  for (const std::string& c : channels) {
    if (c.empty() || !seen.insert(c).second) {
      throw_invalid("", "RecordingWindowOptions::channels", join(channels, ","),
                    "names distinct, non-empty columns");
    }
  }
}

GapRule parse_gap_rule(const std::string& text) {
  using namespace recordings_detail;
  GapRule g;
  if (text == "error") return g;
  if (text == "drop") {
    g.rule = MissingRule::kDrop;
    return g;
  }
  const std::string head = "interpolate:";
  if (text.compare(0, head.size(), head) == 0 &&
      parse_double(text.substr(head.size()), g.max_seconds) && std::isfinite(g.max_seconds) &&
      g.max_seconds > 0) {
    g.rule = MissingRule::kInterpolate;
    return g;
  }
  throw_invalid("", kMissingField, text,
                "must be error, drop or interpolate:SECONDS with SECONDS > 0");
}

std::vector<UnusedOption> unused_options(const RecordingWindowOptions& o) {
  std::vector<UnusedOption> out;
  if (o.rule != LabelRule::kTransition) {
    out.push_back({"RecordingWindowOptions::transition_seconds",
                   "only RecordingWindowOptions::rule transition uses it"});
  }
  if (o.label_map.empty()) {
    out.push_back({"RecordingWindowOptions::unmapped",
                   "it says what to do with labels RecordingWindowOptions::label_map lacks, and "
                   "there is no label map"});
  }
  return out;
}

std::vector<RecordingFile> find_recordings(const std::string& from) {
  using namespace recordings_detail;
  std::vector<RecordingFile> files;
  if (from.find_first_of("*?[") != std::string::npos) {
    glob_t g{};
    const int rc = ::glob(from.c_str(), 0, nullptr, &g);
    std::vector<std::string> matches;
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) matches.emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
    if (rc != 0 && rc != GLOB_NOMATCH) {
      throw std::runtime_error("WindowExportOptions::from (" + from + "): the glob failed");
    }
    const std::vector<std::string> pattern = path_components(from);
    size_t k = 0;
    while (pattern[k].find_first_of("*?[") == std::string::npos) ++k;
    for (const std::string& m : matches) {
      if (detail::is_directory(m)) continue;
      const std::vector<std::string> parts = path_components(m);
      if (parts.size() != pattern.size()) continue;  // (glob never changes the depth)
      files.push_back({m, k + 1 == parts.size() ? file_stem(parts[k]) : parts[k]});
    }
    if (files.empty()) {
      throw_invalid("", "WindowExportOptions::from", from, "is a glob that matches no file");
    }
    return files;
  }
  if (!detail::is_directory(from)) {
    throw std::runtime_error(from +
                             ": no such folder (WindowExportOptions::from: a folder of "
                             "recordings, or a glob)");
  }
  for (const std::string& f : detail::list_files(from)) {
    if (is_recording_name(f)) files.push_back({from + "/" + f, file_stem(f)});
  }
  for (const std::string& sub : detail::list_subdirs(from)) {
    for (const std::string& f : detail::list_files(from + "/" + sub)) {
      if (is_recording_name(f)) files.push_back({from + "/" + sub + "/" + f, sub});
    }
  }
  if (files.empty()) {
    throw std::runtime_error(from +
                             ": no .csv or .csv.gz recordings (in it, or in one folder "
                             "per subject inside it)");
  }
  return files;
}

nlohmann::json RecordingStats::to_json() const {
  return {{"files", files},
          {"rows", rows},
          {"labelled_rows", labelled_rows},
          {"gaps", gaps},
          {"gap_rows", gap_rows},
          {"interpolated_gaps", interpolated_gaps},
          {"interpolated_rows", interpolated_rows},
          {"dropped_gaps", gaps - interpolated_gaps},
          {"dropped_gap_rows", gap_rows - interpolated_rows},
          {"unmapped_rows", unmapped_rows},
          {"unmapped_labels", unmapped_labels}};
}

struct RecordingSource::Plan {
  std::string from;
  RecordingWindowOptions o;
  GapRule gap;
  std::vector<RecordingFile> files;
  std::vector<recordings_detail::FileColumns> cols;
  std::vector<std::string> names;  ///< the channel columns (before the groups keep theirs)
  std::vector<int> keep;           ///< index into names of each kept channel, in group order
  std::vector<float> factor;       ///< per kept channel
  nlohmann::json scale_record;
  recordings_detail::LabelMap map;
  int length = 0, stride = 0;
  std::int64_t max_gap_rows = 0;
  Windows meta;  ///< channels, names, groups, length, rate
  bool used = false;
};

RecordingSource::~RecordingSource() = default;
int RecordingSource::channels() const {
  return plan_->meta.channels;
}
int RecordingSource::length() const {
  return plan_->length;
}

RecordingSource::RecordingSource(const std::string& from, const RecordingWindowOptions& o)
    : plan_(std::make_unique<Plan>()) {
  using namespace recordings_detail;
  o.validate();
  Plan& p = *plan_;
  p.from = from;
  p.o = o;
  p.gap = parse_gap_rule(o.missing);
  p.files = find_recordings(from);
  // Every header first: a usage error (a column, a group, a scale) before any data is read.
  for (const RecordingFile& f : p.files) p.cols.push_back(read_columns(f.path, o, o.channels));
  for (int c : p.cols[0].channels) p.names.push_back(p.cols[0].header[static_cast<size_t>(c)]);
  for (size_t i = 1; i < p.files.size() && o.channels.empty(); ++i) {
    std::vector<std::string> here;
    for (int c : p.cols[i].channels) here.push_back(p.cols[i].header[static_cast<size_t>(c)]);
    if (here != p.names) {
      throw_invalid(p.files[i].path, "channel columns (" + join(here, ", ") + ") differ from " +
                                         p.files[0].path + "'s (" + join(p.names, ", ") +
                                         "; --channels picks the same ones from each)");
    }
  }
  Windows& w = p.meta;
  // Groups, and the channels they keep in group order (as --modalities does elsewhere).
  std::vector<ModalityGroup> groups =
      o.modalities.empty()
          ? groups_from_names(p.names)
          : parse_modalities(o.modalities, static_cast<int>(p.names.size()), p.names);
  for (auto& g : groups) {
    for (int& c : g.channels) {
      p.keep.push_back(c);
      c = static_cast<int>(p.keep.size()) - 1;
    }
  }
  w.channels = static_cast<int>(p.keep.size());
  for (int c : p.keep) w.channel_names.push_back(p.names[static_cast<size_t>(c)]);
  w.modalities = groups;
  p.factor = channel_scales(o.scale, groups, w.channels, p.scale_record);
  if (!o.label_map.empty()) p.map = read_label_map(o.label_map);
  p.length = static_cast<int>(std::lround(o.window_seconds * o.sample_rate_hz));
  p.stride = o.stride_seconds > 0
                 ? std::max(1, static_cast<int>(std::lround(o.stride_seconds * o.sample_rate_hz)))
                 : p.length;
  p.max_gap_rows =
      static_cast<std::int64_t>(std::floor(p.gap.max_seconds * o.sample_rate_hz + 1e-9));
  w.length = p.length;
  w.sample_rate_hz = o.sample_rate_hz;
}

RecordingWindows RecordingSource::windows(const std::function<void(const float* x)>& sink) {
  using namespace recordings_detail;
  Plan& p = *plan_;
  if (p.used) throw std::logic_error("RecordingSource::windows(): called twice");
  p.used = true;
  const RecordingWindowOptions& o = p.o;
  const GapRule& gap = p.gap;
  const std::vector<RecordingFile>& files = p.files;
  const std::vector<FileColumns>& cols = p.cols;
  const std::vector<int>& keep = p.keep;
  const std::vector<float>& factor = p.factor;
  const LabelMap& map = p.map;
  const int length = p.length, stride = p.stride;
  const std::int64_t max_gap_rows = p.max_gap_rows;
  const std::string& from = p.from;
  RecordingWindows out;
  out.meta = p.meta;
  Windows& w = out.meta;
  std::vector<std::string> label_names;  // interned sample labels (after the map)
  std::unordered_map<std::string, int> label_ids;
  Windower win(o, w.channels, length, stride, sink, label_names);
  RecordingStats& st = out.stats;
  std::set<std::string> unmapped;
  const size_t C = keep.size();

  for (size_t fi = 0; fi < files.size(); ++fi) {
    const RecordingFile& file = files[fi];
    ++st.files;
    const auto sub = std::find(w.subject_names.begin(), w.subject_names.end(), file.subject);
    win.subject = static_cast<int>(sub - w.subject_names.begin());
    if (sub == w.subject_names.end()) w.subject_names.push_back(file.subject);
    std::vector<int> column(C);  // this file's header index of each kept channel
    for (size_t k = 0; k < C; ++k) {
      column[k] = cols[fi].channels[static_cast<size_t>(keep[k])];
    }
    const int label_col = cols[fi].label;
    const size_t n_fields = cols[fi].header.size();
    TextFileReader in(file.path);
    std::string line, scratch, last_raw;
    int last_id = -1;
    bool have_last = false;
    in.next_line(line);  // the header
    std::vector<std::string_view> f;
    std::vector<float> v(C), prev(C);
    bool have_prev = false, in_gap = false;
    std::int64_t gap_len = 0, file_gaps = 0, file_gap_rows = 0, file_unmapped = 0;
    std::vector<float> pending;  // the gap's rows (interpolate), NaN where missing
    std::vector<int> pending_lab;
    std::string first_gap, first_unmapped;  // under `error`: what to refuse at the file's end
    const auto end_gap = [&](const float* next) {
      // A gap ends at a complete row `next`, or (next null) at an unlabelled row or the end.
      const auto n = static_cast<std::int64_t>(pending_lab.size());
      if (next != nullptr && have_prev && gap.rule == MissingRule::kInterpolate &&
          gap_len <= max_gap_rows && n == gap_len) {
        std::vector<float> r(C);
        for (std::int64_t k = 0; k < n; ++k) {
          const float t = static_cast<float>(k + 1) / static_cast<float>(n + 1);
          for (size_t c = 0; c < C; ++c) {
            const float x = pending[static_cast<size_t>(k) * C + c];
            r[c] = std::isnan(x) ? prev[c] + (next[c] - prev[c]) * t : x;
          }
          win.push(r.data(), pending_lab[static_cast<size_t>(k)]);
        }
        ++st.interpolated_gaps;
        st.interpolated_rows += n;
      } else {
        win.cut();
      }
      pending.clear();
      pending_lab.clear();
      in_gap = false;
    };
    while (in.next_line(line)) {
      if (detail::is_blank(line)) continue;
      ++st.rows;
      csv_fields(line, f, scratch);
      if (f.size() != n_fields) {
        throw_invalid("", file.path + ":" + std::to_string(in.line_number()) + ": " +
                              std::to_string(f.size()) + " fields, the header has " +
                              std::to_string(n_fields));
      }
      // The label, through the map; -1 = unlabelled.
      const std::string_view raw = f[static_cast<size_t>(label_col)];
      if (!have_last || raw != last_raw) {
        last_raw.assign(raw);
        have_last = true;
        std::string to = last_raw;
        bool lacks = false;
        if (!o.label_map.empty() && !to.empty()) {
          const auto it = map.to.find(to);
          lacks = it == map.to.end();
          to = lacks ? std::string() : it->second;
        }
        if (lacks) {
          last_id = -3;
        } else if (to.empty()) {
          last_id = -1;
        } else {
          const auto [it, fresh] = label_ids.emplace(to, static_cast<int>(label_names.size()));
          if (fresh) label_names.push_back(to);
          last_id = it->second;
        }
      }
      int id = last_id;
      if (id == -3) {  // a label the map lacks
        ++st.unmapped_rows;
        ++file_unmapped;
        unmapped.insert(last_raw);
        if (o.unmapped == UnmappedRule::kError && first_unmapped.empty()) {
          first_unmapped =
              file.path + ":" + std::to_string(in.line_number()) + ": label '" + last_raw + "'";
        }
        id = -1;
      }
      if (id < 0) {
        if (in_gap) end_gap(nullptr);
        win.cut();
        have_prev = false;
        continue;
      }
      ++st.labelled_rows;
      bool complete = true;
      for (size_t k = 0; k < C; ++k) {
        const std::string_view s = f[static_cast<size_t>(column[k])];
        double x = 0.0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
        if (r.ec != std::errc() || r.ptr != s.data() + s.size() || std::isnan(x)) {
          if (!is_missing(s) && !std::isnan(x)) {
            throw_invalid("", file.path + ":" + std::to_string(in.line_number()) + ": column '" +
                                  w.channel_names[k] + "' holds '" + std::string(s) +
                                  "', not a number");
          }
          complete = false;
          if (first_gap.empty() && gap.rule == MissingRule::kError) {
            first_gap = file.path + ":" + std::to_string(in.line_number()) + ": column '" +
                        w.channel_names[k] + "' holds '" + std::string(s) + "'";
          }
          v[k] = std::numeric_limits<float>::quiet_NaN();
        } else if (!std::isfinite(x)) {
          throw_invalid("", file.path + ":" + std::to_string(in.line_number()) + ": column '" +
                                w.channel_names[k] + "' holds '" + std::string(s) +
                                "', not a finite number");
        } else {
          v[k] = static_cast<float>(x) * factor[k];
        }
      }
      const bool refusing = !first_gap.empty() || !first_unmapped.empty();
      if (complete) {
        if (in_gap) end_gap(v.data());
        if (!refusing) win.push(v.data(), id);
        prev = v;
        have_prev = true;
        continue;
      }
      if (!in_gap) {
        in_gap = true;
        gap_len = 0;
        ++st.gaps;
        ++file_gaps;
        if (gap.rule != MissingRule::kInterpolate) win.cut();
      }
      ++gap_len;
      ++st.gap_rows;
      ++file_gap_rows;
      if (gap.rule == MissingRule::kInterpolate && gap_len <= max_gap_rows) {
        pending.insert(pending.end(), v.begin(), v.end());
        pending_lab.push_back(id);
      } else {
        pending.clear();  // too long to fill: dropped when it ends
        pending_lab.clear();
      }
    }
    if (in_gap) end_gap(nullptr);
    win.cut();
    if (!first_unmapped.empty()) {
      std::vector<std::string> list(unmapped.begin(), unmapped.end());
      if (list.size() > 8) list.resize(8), list.push_back("...");
      throw_invalid("", first_unmapped + " is not in the label map (" + o.label_map +
                            "): " + std::to_string(file_unmapped) + " rows of this file carry " +
                            std::to_string(unmapped.size()) + " unmapped labels (" +
                            join(list, "; ") +
                            "); RecordingWindowOptions::unmapped error refuses them (drop makes "
                            "their samples unlabelled)");
    }
    if (!first_gap.empty()) {
      throw_invalid("", first_gap + ", a missing value: the first of " + std::to_string(file_gaps) +
                            " gaps (" + std::to_string(file_gap_rows) + " rows) in this file; " +
                            kMissingField + " error refuses gaps (drop, or interpolate:SECONDS)");
    }
  }
  st.unmapped_labels.assign(unmapped.begin(), unmapped.end());

  // Classes: the window labels, sorted by name.
  std::vector<std::string> classes;
  for (int id : win.labels)
    classes.push_back(id == -2 ? "transition" : label_names[static_cast<size_t>(id)]);
  std::vector<std::string> sorted = classes;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  w.class_names = sorted;
  const auto n = static_cast<Eigen::Index>(classes.size());
  w.x.resize(n, 0);  // (the samples went to the sink)
  w.labels.resize(n);
  w.subjects.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    w.labels(i) = static_cast<int>(
        std::lower_bound(sorted.begin(), sorted.end(), classes[static_cast<size_t>(i)]) -
        sorted.begin());
    w.subjects(i) = win.subjects[static_cast<size_t>(i)];
  }
  w.description = "windows of the recordings in " + from + " (" + std::to_string(length) +
                  " samples every " + std::to_string(stride) + " at " +
                  format_number(o.sample_rate_hz, 6) + " Hz, label rule " +
                  enum_name(kLabelRuleNames, o.rule) + ", missing " + o.missing + ")";
  out.record = {{"from", from},         {"files", st.files},
                {"columns", p.names},   {"scale", p.scale_record},
                {"missing", o.missing}, {"label_rule", enum_name(kLabelRuleNames, o.rule)},
                {"stats", st.to_json()}};
  if (!o.label_map.empty()) {
    out.record["label_map"] = o.label_map;
    out.record["label_map_column"] = map.column;
    out.record["unmapped"] = enum_name(kUnmappedRuleNames, o.unmapped);
  }
  return out;
}

Windows window_recordings(const std::string& from, const RecordingWindowOptions& o,
                          RecordingStats* stats, nlohmann::json* record) {
  RecordingSource source(from, o);
  const size_t row = static_cast<size_t>(source.channels()) * static_cast<size_t>(source.length());
  std::vector<float> x;
  RecordingWindows r = source.windows([&](const float* v) { x.insert(x.end(), v, v + row); });
  Windows w = std::move(r.meta);
  w.x = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      x.data(), w.labels.size(), static_cast<Eigen::Index>(row));
  w.validate("window_recordings()");
  if (stats != nullptr) *stats = r.stats;
  if (record != nullptr) *record = r.record;
  return w;
}

}  // namespace moca::data
