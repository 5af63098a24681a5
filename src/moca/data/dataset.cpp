#include "moca/data/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/data/detail/dataset_settle.hpp"
#include "moca/data/detail/text_parse.hpp"
#include "moca/data/hmp.hpp"
#include "moca/data/npy_windows.hpp"
#include "moca/data/resample.hpp"
#include "moca/data/windowing.hpp"

namespace moca::data {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

const char* const kGeneratorKeys = "windows, coupling, noise, subjects, seed";

// Channel ranges "0-2+4" -> {0, 1, 2, 4}.
std::vector<int> parse_channel_list(const std::string& text, const std::string& item, int channels,
                                    const std::vector<std::string>& names, char separator) {
  std::vector<int> out;
  for (const auto& part : split(text, separator)) {
    const std::string p = trim(part);
    const auto named = std::find(names.begin(), names.end(), p);
    if (!p.empty() && named != names.end()) {  // a channel's name, before any index reading
      out.push_back(static_cast<int>(named - names.begin()));
      continue;
    }
    const bool numeric = !p.empty() && p.find_first_not_of("0123456789- ") == std::string::npos;
    if (!numeric && !names.empty()) {
      std::string known;
      for (size_t k = 0; k < names.size() && k < 12; ++k) known += (k ? ", " : "") + names[k];
      if (names.size() > 12) known += ", ...";
      throw_invalid("DatasetOptions::modalities", "'" + item + "' has '" + p +
                                                      "', neither a channel name of the data (" +
                                                      known + ") nor a channel index");
    }
    const auto dash = p.find('-');
    auto to_int = [&](const std::string& t) {
      char* end = nullptr;
      const long v = std::strtol(t.c_str(), &end, 10);
      if (t.empty() || *end != '\0' || v < 0) {
        throw_invalid("DatasetOptions::modalities",
                      "'" + item + "' has '" + t +
                          "', not a channel index (use name=first-last, e.g. acc=0-2)");
      }
      if (v >= channels) {
        throw_invalid("DatasetOptions::modalities",
                      "'" + item + "' names channel " + std::to_string(v) + ", outside [0, " +
                          std::to_string(channels) +
                          ") (the data has C = " + std::to_string(channels) + " channels)");
      }
      return static_cast<int>(v);
    };
    if (dash == std::string::npos) {
      out.push_back(to_int(p));
    } else {
      const int a = to_int(trim(p.substr(0, dash))), b = to_int(trim(p.substr(dash + 1)));
      if (b < a) {
        throw_invalid("DatasetOptions::modalities", "'" + item + "' has the empty range " + p);
      }
      for (int c = a; c <= b; ++c) out.push_back(c);
    }
  }
  return out;
}

std::string format_channels(const std::vector<int>& ch) {
  std::string s;
  for (size_t i = 0; i < ch.size();) {
    size_t j = i;
    while (j + 1 < ch.size() && ch[j + 1] == ch[j] + 1) ++j;
    if (!s.empty()) s += "+";
    s += std::to_string(ch[i]);
    if (j > i) s += "-" + std::to_string(ch[j]);
    i = j + 1;
  }
  return s;
}

// Keeps the channels of `groups` (in group order) and re-indexes the groups.
Windows select_channels(const Windows& w, std::vector<ModalityGroup> groups) {
  std::vector<int> keep;
  for (auto& g : groups) {
    for (int& c : g.channels) {
      keep.push_back(c);
      c = static_cast<int>(keep.size()) - 1;
    }
  }
  Windows out = w.subset({});
  out.labels = w.labels;
  out.subjects = w.subjects;
  out.parts = w.parts;
  out.channels = static_cast<int>(keep.size());
  out.channel_names.clear();
  for (int c : keep)
    out.channel_names.push_back(w.channel_names.empty() ? "ch" + std::to_string(c)
                                                        : w.channel_names[static_cast<size_t>(c)]);
  out.x.resize(w.size(), static_cast<Eigen::Index>(out.channels) * w.length);
  for (int i = 0; i < w.size(); ++i)
    for (size_t k = 0; k < keep.size(); ++k)
      out.window(i).row(static_cast<Eigen::Index>(k)) = w.window(i).row(keep[k]);
  out.modalities = std::move(groups);
  return out;
}

Windows keep_classes(const Windows& w, const std::string& list, std::vector<std::string>& notes) {
  std::vector<std::string> names;
  for (const auto& n : split(list, ',')) {
    const std::string t = trim(n);
    if (t.empty())
      throw_invalid("DatasetOptions::keep_classes", "empty class name in '" + list + "'");
    if (std::find(names.begin(), names.end(), t) != names.end()) {
      throw_invalid("DatasetOptions::keep_classes", "class '" + t + "' is named twice");
    }
    names.push_back(t);
  }
  std::vector<int> old_id;
  for (const auto& n : names) {
    const auto it = std::find(w.class_names.begin(), w.class_names.end(), n);
    if (it == w.class_names.end()) {
      std::string known;
      for (const auto& k : w.class_names) known += (known.empty() ? "" : ", ") + k;
      throw_invalid("DatasetOptions::keep_classes",
                    "class '" + n + "' is not in the data (classes: " +
                        (known.empty() ? "none named" : known) + ")");
    }
    old_id.push_back(static_cast<int>(it - w.class_names.begin()));
  }
  std::vector<int> rows, relabel;
  for (int i = 0; i < w.size(); ++i) {
    const auto it = std::find(old_id.begin(), old_id.end(), w.labels(i));
    if (it != old_id.end()) {
      rows.push_back(i);
      relabel.push_back(static_cast<int>(it - old_id.begin()));
    }
  }
  if (rows.empty()) throw_invalid("DatasetOptions::keep_classes", "no window has these classes");
  Windows out = w.subset(rows);
  for (int i = 0; i < out.size(); ++i) out.labels(i) = relabel[static_cast<size_t>(i)];
  out.class_names = names;
  notes.push_back("kept " + std::to_string(out.size()) + " of " + std::to_string(w.size()) +
                  " windows of the classes " + list + " (relabelled 0.." +
                  std::to_string(names.size() - 1) + " in that order)");
  return out;
}

}  // namespace

std::string to_string(DataFormat format) {
  return enum_name(kDataFormatNames, format);
}

void to_json(nlohmann::json& j, DataFormat format) {
  j = to_string(format);
}

void from_json(const nlohmann::json& j, DataFormat& format) {
  format = parse_enum(kDataFormatNames, j.get<std::string>(), "format");
}

std::string DataSpec::to_string() const {
  if (format != DataFormat::kGenerator) return data::to_string(format) + ":" + path;
  std::string s = "generator";
  for (size_t k = 0; k < params.size(); ++k)
    s += (k ? "," : ":") + params[k].first + "=" + params[k].second;
  return s;
}

DataFormat detect_format(const std::string& dir) {
  if (is_ts_source(dir) && !detail::is_directory(dir)) return DataFormat::kTs;  // a .ts file
  if (!detail::is_directory(dir)) {
    throw std::runtime_error("DataOptions::data: '" + dir +
                             "' is not a folder (and not generator[:...] or FORMAT:DIR)");
  }
  std::string looked, names;
  for (const FormatEntry& row : format_registry()) {
    if (row.detect == nullptr) continue;
    if (row.detect(dir)) return row.format;
    looked +=
        (looked.empty() ? "" : "; ") + std::string(row.looks_for) + " -> " + to_string(row.format);
    names += (names.empty() ? "" : "|") + to_string(row.format);
  }
  throw_invalid("DataOptions::data", "cannot tell the format of '" + dir + "' (looked for " +
                                         looked + "); name it with DatasetOptions::data_format " +
                                         names + " or FORMAT:DIR");
}

DataSpec parse_data_spec(const std::string& text, DataFormat format) {
  DataSpec s;
  const auto colon = text.find(':');
  const std::string head = colon == std::string::npos ? text : text.substr(0, colon);
  if (head == "generator") {
    if (format != DataFormat::kAuto && format != DataFormat::kGenerator) {
      throw_invalid("", "DatasetOptions::data_format", to_string(format),
                    "contradicts DataOptions::data " + text);
    }
    s.format = DataFormat::kGenerator;
    if (colon != std::string::npos) {
      for (const auto& kv : split(text.substr(colon + 1), ',')) {
        const auto eq = kv.find('=');
        const std::string key = trim(kv.substr(0, eq));
        if (eq == std::string::npos || key.empty()) {
          throw_invalid(
              "DataOptions::data",
              "generator option '" + kv + "' is not key=value (keys: " + kGeneratorKeys + ")");
        }
        if (key != "windows" && key != "coupling" && key != "noise" && key != "subjects" &&
            key != "seed") {
          throw_invalid("DataOptions::data",
                        "unknown generator key '" + key + "' (keys: " + kGeneratorKeys + ")");
        }
        s.params.emplace_back(key, trim(kv.substr(eq + 1)));
      }
    }
    return s;
  }
  const EnumName<DataFormat>* prefix = nullptr;
  for (const auto& e : kDataFormatNames)
    if (head == e.name && e.value != DataFormat::kAuto) prefix = &e;
  if (colon != std::string::npos && prefix != nullptr) {
    s.format = prefix->value;
    s.path = text.substr(colon + 1);
    if (format != DataFormat::kAuto && format != s.format) {
      throw_invalid("", "DatasetOptions::data_format", to_string(format),
                    "contradicts DataOptions::data " + text);
    }
    if (s.path.empty()) throw_invalid("DataOptions::data", text + " names no folder");
    return s;
  }
  if (text.empty()) throw_invalid("DataOptions::data", "empty spec");
  s.path = text;
  s.format = format == DataFormat::kAuto ? detect_format(text) : format;
  if (s.format == DataFormat::kGenerator) {
    throw_invalid("",
                  "DatasetOptions::data_format generator takes DataOptions::data "
                  "generator[:key=value,...], not a folder (" +
                      text + ")");
  }
  return s;
}

std::vector<ModalityGroup> groups_from_names(const std::vector<std::string>& names) {
  std::vector<ModalityGroup> g;
  for (size_t c = 0; c < names.size(); ++c) {
    const auto us = names[c].rfind('_');
    if (us == std::string::npos || us == 0) {
      std::vector<int> all(names.size());
      for (size_t k = 0; k < names.size(); ++k) all[k] = static_cast<int>(k);
      return {ModalityGroup{"all", all}};
    }
    const std::string prefix = names[c].substr(0, us);
    auto it =
        std::find_if(g.begin(), g.end(), [&](const ModalityGroup& m) { return m.name == prefix; });
    if (it == g.end()) {
      g.push_back({prefix, {}});
      it = g.end() - 1;
    }
    it->channels.push_back(static_cast<int>(c));
  }
  return g;
}

std::vector<ModalityGroup> parse_modalities(const std::string& text, int channels,
                                            const std::vector<std::string>& names) {
  std::vector<ModalityGroup> groups;
  std::vector<std::string> owner(static_cast<size_t>(std::max(channels, 0)));
  // `a=x,y;b=z` (groups by ';', channels by ',' or '+') or `a=0-2,b=3+5` (groups by ',')
  const bool semicolons = text.find(';') != std::string::npos;
  for (const auto& raw : split(text, semicolons ? ';' : ',')) {
    const std::string item = trim(raw);
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      throw_invalid("DatasetOptions::modalities",
                    "'" + item + "' is not name=channels (e.g. acc=0-2,gyro=3-5)");
    }
    std::string list = item.substr(eq + 1);
    if (semicolons) std::replace(list.begin(), list.end(), ',', '+');
    ModalityGroup g{trim(item.substr(0, eq)), parse_channel_list(list, item, channels, names, '+')};
    if (g.name.empty()) throw_invalid("DatasetOptions::modalities", "'" + item + "' has no name");
    for (const auto& o : groups) {
      if (o.name == g.name) {
        throw_invalid("DatasetOptions::modalities", "the name '" + g.name + "' is used twice");
      }
    }
    std::sort(g.channels.begin(), g.channels.end());
    for (size_t k = 0; k < g.channels.size(); ++k) {
      const int c = g.channels[k];
      if ((k > 0 && g.channels[k - 1] == c) || !owner[static_cast<size_t>(c)].empty()) {
        throw_invalid(
            "DatasetOptions::modalities",
            "channel " + std::to_string(c) + " is in two groups ('" +
                (owner[static_cast<size_t>(c)].empty() ? g.name : owner[static_cast<size_t>(c)]) +
                "' and '" + g.name + "'); groups must not overlap");
      }
      owner[static_cast<size_t>(c)] = g.name;
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

std::string format_modalities(const std::vector<ModalityGroup>& groups) {
  std::string s;
  for (const auto& g : groups)
    s += (s.empty() ? "" : ",") + g.name + "=" + format_channels(g.channels);
  return s;
}

void DatasetOptions::validate() const {
  check_ranges(*this);
  if (!(target_rate_hz > 0.0) || !std::isfinite(target_rate_hz)) {
    throw_invalid("",
                  "the model's sample rate (" + format_number(target_rate_hz, 6) + ") must be > 0");
  }
  if (length < 2) {
    throw_invalid("", "the model's window length (" + std::to_string(length) + ") must be >= 2");
  }
  std::set<std::string> seen;
  for (const std::string& name : channel_names) {
    if (name.empty()) throw_invalid("DatasetOptions::channel_names", "an empty name");
    if (!seen.insert(name).second) {
      throw_invalid("DatasetOptions::channel_names", "'" + name + "' is named twice");
    }
  }
  if (!segment.empty())
    parse_segment(segment, 1e6, "DatasetOptions::segment");  // the form; lengths later
}

namespace {

/// The generator's windows: o.generator with the spec's key=value parameters applied; the
/// spec's parameters become the values used.
Windows generate_for_spec(DataSpec& spec, const DatasetOptions& o) {
  SyntheticOptions so = o.generator;
  so.length = o.length;
  so.sample_rate_hz = o.target_rate_hz;
  for (const auto& [k, v] : spec.params) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(x)) {
      throw_invalid("DataOptions::data", "generator " + k + " (" + v + ") is not a number");
    }
    const bool whole = x == std::floor(x) && x >= 0 && x < 9.2e18;
    if ((k == "windows" || k == "subjects" || k == "seed") && !whole) {
      throw_invalid("DataOptions::data",
                    "generator " + k + " (" + v + ") must be a whole number >= 0");
    }
    if (k == "windows") so.windows = static_cast<int>(std::min(x, 2e9));
    if (k == "subjects") so.subjects = static_cast<int>(std::min(x, 2e9));
    if (k == "seed") so.seed = static_cast<std::uint64_t>(x);
    if (k == "coupling") so.coupling = x;
    if (k == "noise") so.noise = x;
  }
  Windows w = generate_synthetic(so);
  spec.params = {{"windows", std::to_string(so.windows)},
                 {"coupling", format_number(so.coupling, 6)},
                 {"noise", format_number(so.noise, 6)},
                 {"subjects", std::to_string(so.subjects)},
                 {"seed", std::to_string(so.seed)}};
  return w;
}

}  // namespace

Windows open_generator_source(Dataset& d, const DatasetOptions& o) {
  return generate_for_spec(d.spec, o);
}

namespace {

/// --sample-rate (.npy only), or the model's rate when the data states none.
void settle_rate(Windows& w, Dataset& d, const DatasetOptions& o) {
  if (o.sample_rate_hz > 0) {
    if (!format_entry(d.spec.format).windows_as_given) {
      throw_invalid(
          "", "DatasetOptions::sample_rate", format_number(o.sample_rate_hz, 6),
          "applies to .npy folders; " + to_string(d.spec.format) + " data has a known rate");
    }
    w.sample_rate_hz = o.sample_rate_hz;
  }
  if (!(w.sample_rate_hz > 0)) {
    // Resampling or segmenting needs the rate: a guess would play a 30 Hz set 1.7x too fast.
    if (!o.keep_rate_and_length || !o.segment.empty()) {
      throw_invalid(
          "", d.spec.to_string() + ": sample rate unknown (no DatasetOptions::sample_rate, " +
                  (d.spec.format == DataFormat::kTs ? std::string("and the .ts format states none")
                                                    : std::string("no sample_rate in meta.json")) +
                  "); state it with DatasetOptions::sample_rate HZ");
    }
    w.sample_rate_hz = o.target_rate_hz;
    d.notes.push_back(
        "sample rate unknown (no sample_rate in meta.json): kept as stored, labelled " +
        format_number(o.target_rate_hz, 6) + " Hz");
  }
}

/// --channel-names: the input's channels renamed in order.
void settle_channel_names(Windows& w, Dataset& d, const DatasetOptions& o) {
  if (o.channel_names.empty()) return;
  if (static_cast<int>(o.channel_names.size()) != w.channels) {
    throw_invalid("DatasetOptions::channel_names",
                  std::to_string(o.channel_names.size()) + " names for the data's " +
                      std::to_string(w.channels) + " channels (" + d.spec.to_string() + ")");
  }
  w.channel_names = o.channel_names;
  d.notes.push_back("channels named by --channel-names");
}

/// Whether `w` has the .npy reader's stand-in names ch0, ch1, ... (a folder that names none).
bool unnamed_channels(const Windows& w) {
  for (const std::string& n : w.channel_names) {
    if (n.size() < 3 || n.compare(0, 2, "ch") != 0 ||
        n.find_first_not_of("0123456789", 2) != std::string::npos) {
      return false;
    }
  }
  return true;
}

/// A .npy folder without channel names: its channels named from its stated modality groups
/// (meta.json's or --modalities; groups guessed from the stand-in names name nothing).
void names_from_groups(Windows& w, Dataset& d) {
  if (!format_entry(d.spec.format).windows_as_given || !unnamed_channels(w) ||
      w.modalities.empty()) {
    return;
  }
  bool named = false;
  for (const ModalityGroup& g : w.modalities) {
    static const char* const xyz[] = {"_x", "_y", "_z"};
    for (size_t k = 0; k < g.channels.size(); ++k) {
      w.channel_names[static_cast<size_t>(g.channels[k])] =
          g.name + (g.channels.size() == 3 ? xyz[k] : "_" + std::to_string(k));
      named = true;
    }
  }
  if (!named) return;
  std::string list;
  for (const std::string& n : w.channel_names) list += (list.empty() ? "" : ",") + n;
  d.notes.push_back("channels named from their modality groups: " + list);
}

/// --segment: sub-windows at the input's rate.
void settle_segments(Windows& w, Dataset& d, const DatasetOptions& o) {
  if (o.segment.empty()) return;
  const auto [length, stride] =
      parse_segment(o.segment, w.sample_rate_hz, "DatasetOptions::segment");
  if (length > w.length) {
    throw_invalid("", "DatasetOptions::segment", o.segment,
                  "is " + std::to_string(length) + " samples at " +
                      format_number(w.sample_rate_hz, 6) + " Hz, longer than the windows (" +
                      std::to_string(w.length) + " samples)");
  }
  const int n = w.size(), per = (w.length - length) / stride + 1;
  const int tail = w.length - ((per - 1) * stride + length);
  w = segment_windows(w, length, stride);
  d.notes.push_back(
      "segment " + o.segment + ": " + std::to_string(n) + " windows -> " +
      std::to_string(w.size()) + " sub-windows of " + std::to_string(length) + " samples every " +
      std::to_string(stride) +
      (tail > 0 ? "; the last " + std::to_string(tail) + " samples of each dropped" : ""));
}

/// Modality groups as the public settle_modalities() settles them, with its notes.
void settle_modalities(Windows& w, Dataset& d, const DatasetOptions& o) {
  for (auto& note : settle_modalities(w, o.modalities)) d.notes.push_back(std::move(note));
}

/// Resamples to the model's rate and crops / pads to its length (unless kept for .npy).
void fit_to_model(Windows& w, Dataset& d, const DatasetOptions& o) {
  const bool keep = o.keep_rate_and_length && format_entry(d.spec.format).windows_as_given;
  if (keep || (w.sample_rate_hz == o.target_rate_hz && w.length == o.length)) return;
  const int m = resampled_length(w.length, w.sample_rate_hz, o.target_rate_hz);
  std::string note;
  if (w.sample_rate_hz != o.target_rate_hz) {
    note = "resampled " + format_number(w.sample_rate_hz, 6) + " -> " +
           format_number(o.target_rate_hz, 6) +
           " Hz (band-limited, windowed sinc): " + std::to_string(w.length) + " -> " +
           std::to_string(m) + " samples";
  }
  if (m != o.length) {
    note += std::string(note.empty() ? "" : "; ") +
            (m > o.length ? "centre-cropped " : "edge-padded ") + std::to_string(m) + " -> " +
            std::to_string(o.length) + " samples (the model's L)";
  }
  w = resample_windows(w, o.target_rate_hz, o.length);
  d.notes.push_back(note);
}

}  // namespace

const FormatEntry& format_entry(DataFormat format) {
  for (const FormatEntry& row : format_registry())
    if (row.format == format) return row;
  throw std::logic_error("format_entry(): no registry row for format " + to_string(format));
}

std::string folder_from_environment(DataFormat format) {
  const char* name = format_entry(format).env;
  const char* value = name != nullptr ? std::getenv(name) : nullptr;
  return value != nullptr ? value : "";
}

std::string default_data_spec(bool use_env) {
  for (const FormatEntry& row : format_registry()) {
    if (!row.default_source || !use_env) continue;
    const std::string folder = folder_from_environment(row.format);
    if (!folder.empty()) return to_string(row.format) + ":" + folder;
  }
  return "generator";
}

namespace {
/// "$VAR" of the default source's environment variable (for messages).
std::string default_env_name() {
  for (const FormatEntry& row : format_registry())
    if (row.default_source && row.env != nullptr) return std::string("$") + row.env;
  return "";
}
}  // namespace

Dataset open_dataset(const std::string& spec_text, const DatasetOptions& o) {
  o.validate();
  Dataset d;
  std::string text = spec_text;
  d.origin = "given";
  if (text.empty()) {
    text = default_data_spec(o.use_env);
    d.origin = text == "generator" ? "default" : default_env_name();
  }
  d.spec = parse_data_spec(text, text == spec_text ? o.format : DataFormat::kAuto);
  Windows w = format_entry(d.spec.format).read(d, o);
  settle_dataset(w, d, o);
  d.windows = std::move(w);
  return d;
}

void settle_dataset(Windows& w, Dataset& d, const DatasetOptions& o) {
  d.source_channels = w.channels;
  d.source_length = w.length;
  settle_channel_names(w, d, o);
  settle_rate(w, d, o);
  d.source_rate_hz = w.sample_rate_hz;
  settle_segments(w, d, o);
  const bool stated_groups = !o.modalities.empty() || !w.modalities.empty();
  settle_modalities(w, d, o);
  if (stated_groups) names_from_groups(w, d);
  if (!o.keep_classes.empty()) w = keep_classes(w, o.keep_classes, d.notes);
  fit_to_model(w, d, o);
  w.validate("open_dataset(" + d.spec.to_string() + ")");
}

std::string Dataset::summary() const {
  const Windows& w = windows;
  std::set<int> subjects(w.subjects.data(), w.subjects.data() + w.size());
  subjects.erase(-1);
  std::string s =
      spec.format == DataFormat::kGenerator
          ? "built-in synthetic IMU generator (" + spec.to_string() +
                (origin == "default" ? "; no data given and no " + default_env_name() : "") + ")"
          : spec.to_string() + (origin == "given" ? " (given)" : " (from " + origin + ")");
  return s + ": " + std::to_string(w.size()) + " windows of " + std::to_string(w.channels) +
         " channels x " + std::to_string(w.length) + " samples at " +
         format_number(w.sample_rate_hz, 6) + " Hz, modalities " + format_modalities(w.modalities) +
         ", " + std::to_string(w.class_names.size()) + " classes, " +
         std::to_string(subjects.size()) + " subjects";
}

nlohmann::json Dataset::to_json() const {
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& g : windows.modalities) groups[g.name] = g.channels;
  std::set<int> subjects(windows.subjects.data(), windows.subjects.data() + windows.size());
  subjects.erase(-1);
  return {{"spec", spec.to_string()},
          {"source", data::to_string(spec.format)},
          {"from", origin},
          {"windows", windows.size()},
          {"channels", windows.channel_names},
          {"length", windows.length},
          {"sample_rate_hz", windows.sample_rate_hz},
          {"source_sample_rate_hz", source_rate_hz},
          {"source_length", source_length},
          {"modalities", format_modalities(windows.modalities)},
          {"modality_channels", groups},
          {"class_names", windows.class_names},
          {"subjects", subjects.size()},
          {"dropped_nonfinite", dropped_nonfinite},
          {"notes", notes},
          {"description", windows.description}};
}

std::string describe_dataset(const Dataset& d) {
  const Windows& w = d.windows;
  std::ostringstream s;
  s << "classes (" << w.class_names.size() << " named):\n" << class_count_table(w);
  std::map<int, int> per_subject;
  for (int i = 0; i < w.size(); ++i) ++per_subject[w.subjects(i)];
  s << "subjects (" << per_subject.size() - (per_subject.count(-1) ? 1 : 0) << "):";
  int k = 0;
  for (const auto& [id, n] : per_subject) {
    std::string name = id < 0 ? "(none)" : std::to_string(id);
    if (id >= 0 && id < static_cast<int>(w.subject_names.size())) {
      name = w.subject_names[static_cast<size_t>(id)];
    }
    s << (k++ % 8 == 0 ? "\n  " : "  ") << name << " " << n;
  }
  s << "\n";
  if (w.parts.size() != 0) {
    const auto train = (w.parts.array() == Windows::kTrainPart).count();
    s << "its own split: " << train << " training, " << w.size() - train
      << " test windows (--split predefined, --protocol predefined)\n";
  }
  return s.str();
}

void export_dataset(const Windows& w, const std::string& dir) {
  w.validate("export_dataset()");
  create_output_folder(dir);
  NpyWriteOptions o;
  o.layout = NpyLayout::kChannelsFirst;
  o.labels_as_strings = !w.class_names.empty();
  for (int i = 0; i < w.size() && o.labels_as_strings; ++i) {
    if (w.labels(i) < 0 || w.labels(i) >= static_cast<int>(w.class_names.size())) {
      o.labels_as_strings = false;
    }
  }
  write_windows_npy(w, dir, o);
}

std::vector<std::string> settle_modalities(Windows& w, const std::string& modalities) {
  std::vector<std::string> notes;
  if (!modalities.empty()) {
    const auto groups = parse_modalities(modalities, w.channels, w.channel_names);
    int named = 0;
    for (const auto& g : groups) named += static_cast<int>(g.channels.size());
    const int before = w.channels;
    w = select_channels(w, groups);
    if (named < before) {
      notes.push_back("the modality groups name " + std::to_string(named) + " of " +
                      std::to_string(before) + " channels; the others are dropped");
    }
  } else if (w.modalities.empty()) {
    w.modalities = groups_from_names(w.channel_names);
    notes.push_back("modality groups from the channel names: " + format_modalities(w.modalities));
  }
  return notes;
}

std::vector<std::vector<int>> require_modalities(const Windows& w, const std::string& what) {
  if (w.modalities.size() < 2) {
    throw_invalid(
        "", what + " needs >= 2 modality groups; the data has " +
                (w.modalities.empty() ? std::string("none stated")
                                      : std::to_string(w.modalities.size()) + " (" +
                                            format_modalities(w.modalities) + ")") +
                " (set groups with DatasetOptions::modalities, e.g. acc=0-2,gyro=3-5, or meta.json "
                "'modalities')");
  }
  return w.modality_channels();
}

}  // namespace moca::data
