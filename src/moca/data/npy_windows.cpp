#include "moca/data/npy_windows.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/output_file.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/npy_meta.hpp"
#include "moca/data/detail/text_parse.hpp"
#include "moca/data/mapped_npy.hpp"

namespace moca::data {

std::string to_string(NpyLayout layout) {
  return enum_name(kNpyLayoutNames, layout);
}

void to_json(nlohmann::json& j, NpyLayout layout) {
  j = to_string(layout);
}

void from_json(const nlohmann::json& j, NpyLayout& layout) {
  layout = parse_enum(kNpyLayoutNames, j.get<std::string>(), "layout");
}

void NpyReadOptions::validate() const {
  if (!(sample_rate_hz >= 0.0 && std::isfinite(sample_rate_hz))) {
    throw_invalid(
        "NpyReadOptions::validate()",
        "sample_rate_hz (" + std::to_string(sample_rate_hz) + ") must be finite and >= 0");
  }
}

void NpyWriteOptions::validate() const {
  if (layout == NpyLayout::kAuto) {
    throw_invalid("NpyWriteOptions::validate()", "layout (auto) must be NCL or NLC when writing");
  }
}

namespace npy_detail {

Meta read_meta(const std::string& path) {
  Meta m;
  std::ifstream in(path);
  if (!in) return m;
  nlohmann::json j;
  try {
    in >> j;
    m.present = true;
    if (!j.is_object()) throw_invalid("", "not a JSON object");
    for (const auto& item : j.items()) {
      const auto& known = npy_meta_keys();
      if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
      m.warnings.push_back(path + ": unknown key '" + item.key() +
                           "' ignored (nearest known key: '" + nearest_name(item.key(), known) +
                           "')");
    }
    if (j.contains("layout"))
      m.layout = parse_enum(kNpyLayoutNames, j.at("layout").get<std::string>(), "layout");
    if (j.contains("channel_names"))
      m.channel_names = j.at("channel_names").get<decltype(m.channel_names)>();
    if (j.contains("class_names"))
      m.class_names = j.at("class_names").get<decltype(m.class_names)>();
    if (j.contains("subject_names"))
      m.subject_names = j.at("subject_names").get<decltype(m.subject_names)>();
    if (j.contains("sample_rate_hz")) m.sample_rate_hz = j.at("sample_rate_hz").get<double>();
    if (j.contains("sample_rate")) m.sample_rate_hz = j.at("sample_rate").get<double>();
    if (j.contains("modalities")) {
      for (const auto& [name, channels] : j.at("modalities").items()) {
        ModalityGroup g{name, channels.get<std::vector<int>>()};
        std::sort(g.channels.begin(), g.channels.end());
        m.modalities.push_back(g);
      }
      // JSON objects are unordered: groups are kept in the order of their first channel.
      std::sort(m.modalities.begin(), m.modalities.end(),
                [](const ModalityGroup& a, const ModalityGroup& b) {
                  return a.channels.empty() ||
                         (!b.channels.empty() && a.channels[0] < b.channels[0]);
                });
    }
    if (j.contains("description")) m.description = j.at("description").get<std::string>();
    if (j.contains("windows")) m.windows = j.at("windows").get<std::int64_t>();
    if (j.contains("channels")) m.channels = j.at("channels").get<std::int64_t>();
    if (j.contains("length")) m.length = j.at("length").get<std::int64_t>();
  } catch (const std::exception& e) {
    throw_invalid(path, std::string("malformed meta.json (") + e.what() + ")");
  }
  return m;
}

Eigen::VectorXi ids_from_array(const NdArray& a, const std::string& path, Eigen::Index n,
                               const std::string& what, const std::vector<std::string>& known,
                               std::vector<std::string>& names, int min_id) {
  if (a.shape.size() != 1 && !(a.shape.size() == 2 && a.shape[1] == 1)) {
    throw_invalid(path, what + " must be a 1-D array of length N (" + std::to_string(n) +
                            "), got " + std::to_string(a.shape.size()) + " dimensions");
  }
  if (a.shape[0] != n) {
    throw_invalid(path, what + " has " + std::to_string(a.shape[0]) +
                            " entries, X has N = " + std::to_string(n) + " windows");
  }
  Eigen::VectorXi ids(n);
  if (a.is_string()) {
    std::map<std::string, int> index;
    bool covered = !known.empty();
    for (const auto& s : a.strings) {
      if (covered && std::find(known.begin(), known.end(), s) == known.end()) covered = false;
    }
    if (covered) {
      names = known;
    } else {
      names = a.strings;
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
    }
    for (size_t k = 0; k < names.size(); ++k) index.emplace(names[k], static_cast<int>(k));
    for (Eigen::Index i = 0; i < n; ++i) ids(i) = index.at(a.strings[static_cast<size_t>(i)]);
    return ids;
  }
  for (Eigen::Index i = 0; i < n; ++i) {
    const double v = a.data[static_cast<size_t>(i)];
    if (!std::isfinite(v) || v != std::floor(v) || v < min_id || v > 2147483647.0) {
      throw_invalid(path, what + " entry " + std::to_string(i) + " (" + std::to_string(v) +
                              ") is not an integer id >= " + std::to_string(min_id));
    }
    ids(i) = static_cast<int>(v);
  }
  return ids;
}

const std::vector<std::string>& part_names() {
  static const std::vector<std::string> kParts = {"train", "test"};
  return kParts;
}

void check_parts(const Eigen::VectorXi& ids, const std::vector<std::string>& names,
                 const std::string& path) {
  if (!names.empty() && names != part_names()) {
    std::string found;
    for (const auto& s : names) found += (found.empty() ? "" : ", ") + s;
    throw_invalid(path, "split entries must be 'train' or 'test' (found " + found + ")");
  }
  for (Eigen::Index i = 0; i < ids.size(); ++i) {
    if (ids(i) > 1) {
      throw_invalid(path, "split entry " + std::to_string(i) + " (" + std::to_string(ids(i)) +
                              ") must be 0 (train) or 1 (test)");
    }
  }
}

void write_meta_json(const Windows& w, std::int64_t n, const std::string& dir, NpyLayout layout,
                     const std::string& x_dtype, const nlohmann::json& extra) {
  const std::int64_t c = w.channels, len = w.length;
  nlohmann::json meta = {{"layout", to_string(layout)},
                         {"channel_names", w.channel_names},
                         {"class_names", w.class_names},
                         {"subject_names", w.subject_names},
                         {"sample_rate_hz", w.sample_rate_hz},
                         {"sample_rate", w.sample_rate_hz},
                         {"description", w.description},
                         {"windows", n},
                         {"channels", c},
                         {"length", len},
                         {"x_dtype", x_dtype}};
  if (!w.modalities.empty()) {
    meta["modalities"] = nlohmann::json::object();
    for (const auto& g : w.modalities) meta["modalities"][g.name] = g.channels;
  }
  const auto& known = npy_meta_keys();
  for (const auto& item : extra.items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      throw std::logic_error("write_meta_json(): meta.json key '" + item.key() +
                             "' is not one of npy_meta_keys()");
    }
    meta[item.key()] = item.value();
  }
  write_output_text(dir + "/meta.json", meta.dump(2) + "\n");
}

}  // namespace npy_detail

namespace {

bool file_exists(const std::string& p) {
  return static_cast<bool>(std::ifstream(p));
}

using npy_detail::Meta;
using npy_detail::read_meta;

Eigen::VectorXi read_ids(const std::string& path, Eigen::Index n, const std::string& what,
                         const std::vector<std::string>& known, std::vector<std::string>& names,
                         int min_id) {
  return npy_detail::ids_from_array(read_npy(path), path, n, what, known, names, min_id);
}

/// X's window count, channels, length and the layout they were read with.
struct XShape {
  std::int64_t n = 0, c = 0, len = 0;
  NpyLayout layout = NpyLayout::kAuto;
};

/// Checks X is a C-ordered little-endian float 3-d array and resolves its layout (options, then
/// meta.json, then the shorter of the last two axes as channels).
XShape x_shape(const NdArray& a, const std::string& x_path, NpyLayout requested, const Meta& meta) {
  if (a.is_string()) {
    throw_invalid(x_path, "X must be numeric, got dtype '" + printable(a.dtype) + "'");
  }
  if (a.fortran_order && a.shape.size() > 1) {
    throw_invalid("", x_path +
                          ": X is stored in Fortran (column-major) order; save it C-ordered "
                          "(numpy.ascontiguousarray(X))");
  }
  if (a.dtype != "<f4" && a.dtype != "<f8") {
    throw_invalid(x_path, "X has dtype '" + printable(a.dtype) +
                              "'; windows must be little-endian float32 '<f4' or float64 '<f8'");
  }
  if (a.shape.size() != 3) {
    throw_invalid(x_path, "X must be N x C x L or N x L x C (3 dimensions), got " +
                              std::to_string(a.shape.size()) +
                              " dimensions (a one-channel N x L array needs X[:, None, :])");
  }
  XShape s;
  s.n = a.shape[0];
  s.layout = requested;
  if (s.layout == NpyLayout::kAuto) s.layout = meta.layout;
  if (s.layout == NpyLayout::kAuto) {
    s.layout = a.shape[2] < a.shape[1] ? NpyLayout::kChannelsLast : NpyLayout::kChannelsFirst;
  }
  s.c = s.layout == NpyLayout::kChannelsFirst ? a.shape[1] : a.shape[2];
  s.len = s.layout == NpyLayout::kChannelsFirst ? a.shape[2] : a.shape[1];
  if (s.n < 1 || s.c < 1 || s.len < 1) {
    throw_invalid(x_path, "X is empty (shape with a zero axis: N = " + std::to_string(s.n) +
                              ", C = " + std::to_string(s.c) + ", L = " + std::to_string(s.len) +
                              ", layout " + to_string(s.layout) + ")");
  }
  return s;
}

/// Non-finite values of X: how many, in how many windows, and the windows kept.
struct NonFinite {
  std::int64_t values = 0, windows = 0;
  std::vector<int> keep;
};

/// Counts X's non-finite values over the whole array; throws unless `drop` (or when every
/// window holds one).
NonFinite scan_nonfinite(const NdArray& a, const XShape& s, bool drop, const std::string& x_path) {
  const std::int64_t c = s.c, len = s.len;
  NonFinite out;
  std::int64_t first_bad = -1;
  std::vector<char> bad_window(static_cast<size_t>(s.n), 0);
  for (std::int64_t k = 0; k < a.size(); ++k) {
    if (!std::isfinite(a.data[static_cast<size_t>(k)])) {
      if (first_bad < 0) first_bad = k;
      ++out.values;
      bad_window[static_cast<size_t>(k / (c * len))] = 1;
    }
  }
  out.windows = std::count(bad_window.begin(), bad_window.end(), 1);
  if (out.values > 0 && !drop) {
    const std::int64_t i = first_bad / (c * len), r = first_bad % (c * len);
    const std::int64_t ch = s.layout == NpyLayout::kChannelsFirst ? r / len : r % c;
    const std::int64_t t = s.layout == NpyLayout::kChannelsFirst ? r % len : r / c;
    throw_invalid("", x_path + ": X holds " + std::to_string(out.values) +
                          " non-finite values (NaN/Inf) in " + std::to_string(out.windows) +
                          " of " + std::to_string(s.n) + " windows; the first is window " +
                          std::to_string(i) + " channel " + std::to_string(ch) + " sample " +
                          std::to_string(t) +
                          " (it is not finite); clean them or drop those windows with "
                          "DatasetOptions::drop_nonfinite");
  }
  if (out.windows == s.n) {
    throw_invalid(x_path, "every window of X holds non-finite values (" +
                              std::to_string(out.values) + "); nothing is left to read");
  }
  for (std::int64_t i = 0; i < s.n; ++i)
    if (!bad_window[static_cast<size_t>(i)]) out.keep.push_back(static_cast<int>(i));
  return out;
}

/// X as windows: row i holds channel ch's samples at ch * L .. ch * L + L - 1.
Windows copy_windows(const NdArray& a, const XShape& s) {
  const std::int64_t c = s.c, len = s.len;
  Windows w;
  w.channels = static_cast<int>(c);
  w.length = static_cast<int>(len);
  w.x.resize(s.n, c * len);
  for (std::int64_t i = 0; i < s.n; ++i) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      for (std::int64_t t = 0; t < len; ++t) {
        const std::int64_t src =
            s.layout == NpyLayout::kChannelsFirst ? (i * c + ch) * len + t : (i * len + t) * c + ch;
        w.x(i, ch * len + t) = static_cast<float>(a.data[static_cast<size_t>(src)]);
      }
    }
  }
  return w;
}

/// split.npy: N entries "train"/"test" (or 0/1), the data's own split (Windows::parts).
Eigen::VectorXi read_parts(const std::string& path, Eigen::Index n) {
  std::vector<std::string> names;
  Eigen::VectorXi ids = read_ids(path, n, "split entries", npy_detail::part_names(), names, 0);
  npy_detail::check_parts(ids, names, path);
  return ids;
}

/// Channel names (options, meta.json or ch0, ch1, ...), sample rate, labels, subjects, split.
void attach_metadata(Windows& w, const std::string& x_path, const std::string& y_path,
                     const std::string& pid_path, const std::string& split_path,
                     const NpyReadOptions& o, const Meta& meta) {
  const std::int64_t n = w.size(), c = w.channels;
  if (!o.channel_names.empty()) {
    w.channel_names = o.channel_names;
  } else if (!meta.channel_names.empty()) {
    w.channel_names = meta.channel_names;
  } else {
    for (std::int64_t ch = 0; ch < c; ++ch) w.channel_names.push_back("ch" + std::to_string(ch));
  }
  if (static_cast<std::int64_t>(w.channel_names.size()) != c) {
    throw_invalid(x_path, std::to_string(w.channel_names.size()) +
                              " channel names for C = " + std::to_string(c) + " channels");
  }
  w.sample_rate_hz = o.sample_rate_hz > 0 ? o.sample_rate_hz : meta.sample_rate_hz;
  w.class_names = meta.class_names;
  if (!y_path.empty()) {
    std::vector<std::string> names;
    w.labels = read_ids(y_path, n, "labels", meta.class_names, names, -1);
    if (!names.empty()) w.class_names = names;
  } else {
    w.labels = Eigen::VectorXi::Constant(n, -1);
  }
  w.subject_names = meta.subject_names;
  if (!pid_path.empty()) {
    std::vector<std::string> names;
    w.subjects = read_ids(pid_path, n, "subject ids", meta.subject_names, names, -1);
    if (!names.empty()) w.subject_names = names;
  } else {
    w.subjects = Eigen::VectorXi::Constant(n, -1);
  }
  if (!split_path.empty()) w.parts = read_parts(split_path, n);
  w.modalities = meta.modalities;
}

Windows read_impl(const std::string& x_path, const std::string& y_path, const std::string& pid_path,
                  const std::string& split_path, const NpyReadOptions& o, const Meta& meta,
                  std::int64_t* dropped_windows) {
  o.validate();
  if (!file_exists(x_path)) throw std::runtime_error("cannot open '" + x_path + "'");
  const NdArray a = read_npy(x_path);
  const XShape s = x_shape(a, x_path, o.layout, meta);
  // meta.json's counts describe X: one that disagrees means the two files are not one data set.
  for (const auto& [key, stated, actual] :
       {std::tuple<const char*, std::int64_t, std::int64_t>{"windows", meta.windows, s.n},
        {"channels", meta.channels, s.c},
        {"length", meta.length, s.len}}) {
    if (stated >= 0 && stated != actual) {
      throw_invalid(x_path, std::string("meta.json states ") + key + " " + std::to_string(stated) +
                                ", X.npy (read as " + to_string(s.layout) + ") has " +
                                std::to_string(actual) +
                                " (the two must describe the same windows)");
    }
  }
  const NonFinite bad = scan_nonfinite(a, s, o.drop_nonfinite, x_path);
  if (dropped_windows != nullptr) *dropped_windows = bad.windows;
  Windows w = copy_windows(a, s);
  attach_metadata(w, x_path, y_path, pid_path, split_path, o, meta);
  w.description = meta.description.empty()
                      ? "windows from " + x_path + " (" + to_string(s.layout) + ", " + a.dtype + ")"
                      : meta.description;
  if (w.sample_rate_hz <= 0) w.description += "; sample rate unknown";
  if (bad.windows > 0) {
    w = w.subset(bad.keep);
    w.description += "; dropped " + std::to_string(bad.windows) + " windows with " +
                     std::to_string(bad.values) + " non-finite values";
  }
  try {
    w.validate("read_windows_npy()");
  } catch (const std::invalid_argument& e) {
    throw_invalid(x_path, e.what());
  }
  return w;
}

}  // namespace

const std::vector<std::string>& npy_meta_keys() {
  static const std::vector<std::string> keys = {
      "layout",      "channel_names", "class_names", "subject_names", "sample_rate_hz",
      "sample_rate", "description",   "modalities",  "windows",       "channels",
      "length",      "x_dtype",       "recordings"};
  return keys;
}

Windows read_windows_npy(const std::string& dir, const NpyReadOptions& options,
                         std::int64_t* dropped_windows, std::vector<std::string>* warnings) {
  const std::string x = dir + "/X.npy";
  if (!file_exists(x)) {
    throw std::runtime_error("read_windows_npy(): no X.npy in '" + dir + "'");
  }
  // The folder's label files by scheme: Y.npy, y.npy, Y_<scheme>.npy.
  std::vector<std::string> schemes;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 6 && name.compare(0, 2, "Y_") == 0 &&
        name.compare(name.size() - 4, 4, ".npy") == 0)
      schemes.push_back(name);
  }
  std::sort(schemes.begin(), schemes.end());
  std::string y;
  std::vector<std::string> notes;
  if (!options.labels.empty()) {
    if (file_exists(dir + "/" + options.labels)) {
      y = dir + "/" + options.labels;
    } else if (file_exists(options.labels)) {
      y = options.labels;
    } else {
      std::string have;
      for (const char* f : {"Y.npy", "y.npy"})
        if (file_exists(dir + "/" + f)) have += std::string(have.empty() ? "" : ", ") + f;
      for (const auto& f : schemes) have += (have.empty() ? "" : ", ") + f;
      throw std::invalid_argument("DatasetOptions::labels (" + options.labels +
                                  "): no such file in '" + dir + "' (it holds " +
                                  (have.empty() ? std::string("no labels file") : have) + ")");
    }
  } else if (file_exists(dir + "/Y.npy")) {
    y = dir + "/Y.npy";
  } else if (file_exists(dir + "/y.npy")) {
    y = dir + "/y.npy";
  } else if (!schemes.empty()) {
    std::string list;
    for (const auto& f : schemes) list += (list.empty() ? "" : ", ") + f;
    notes.push_back("no Y.npy: the windows are unlabelled; the folder holds " + list +
                    " (choose one with --labels)");
  }
  const std::string pid = file_exists(dir + "/pid.npy") ? dir + "/pid.npy" : "";
  const std::string split = file_exists(dir + "/split.npy") ? dir + "/split.npy" : "";
  const Meta meta = read_meta(dir + "/meta.json");
  if (warnings != nullptr) {
    warnings->insert(warnings->end(), meta.warnings.begin(), meta.warnings.end());
    warnings->insert(warnings->end(), notes.begin(), notes.end());
  }
  return read_impl(x, y, pid, split, options, meta, dropped_windows);
}

Windows read_windows_npy_files(const std::string& x_path, const std::string& y_path,
                               const std::string& pid_path, const NpyReadOptions& options) {
  return read_impl(x_path, y_path, pid_path, "", options, Meta{}, nullptr);
}

void write_windows_npy_meta(const Windows& w, const std::string& dir, const NpyWriteOptions& o,
                            const nlohmann::json& extra) {
  o.validate();
  const std::int64_t n = w.labels.size();
  if (w.subjects.size() != n) {
    throw_invalid("write_windows_npy_meta()", std::to_string(n) + " labels but " +
                                                  std::to_string(w.subjects.size()) +
                                                  " subject ids (one each per window)");
  }
  if (o.labels_as_strings) {
    std::vector<std::string> names(static_cast<size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const int k = w.labels(i);
      if (k < 0 || k >= static_cast<int>(w.class_names.size())) {
        throw_invalid("write_windows_npy()",
                      "label " + std::to_string(k) + " of window " + std::to_string(i) +
                          " has no class name (labels_as_strings needs one per label)");
      }
      names[static_cast<size_t>(i)] = w.class_names[static_cast<size_t>(k)];
    }
    write_npy_strings(dir + "/Y.npy", names);
  } else {
    std::vector<std::int64_t> y(w.labels.data(), w.labels.data() + n);
    write_npy_int(dir + "/Y.npy", {n}, y.data());
  }
  std::vector<std::int64_t> pid(w.subjects.data(), w.subjects.data() + n);
  write_npy_int(dir + "/pid.npy", {n}, pid.data());
  if (w.parts.size() != 0) {
    if (w.parts.size() != n) {
      throw_invalid("write_windows_npy_meta()", std::to_string(n) + " labels but " +
                                                    std::to_string(w.parts.size()) +
                                                    " split entries (one each per window)");
    }
    std::vector<std::string> parts(static_cast<size_t>(n));
    for (std::int64_t i = 0; i < n; ++i)
      parts[static_cast<size_t>(i)] = w.parts(i) == Windows::kTrainPart ? "train" : "test";
    write_npy_strings(dir + "/split.npy", parts);
  } else {
    // a split.npy of earlier windows in this folder would be read as these windows' split
    std::error_code ec;
    std::filesystem::remove(dir + "/split.npy", ec);
  }
  npy_detail::write_meta_json(w, n, dir, o.layout, o.float64 ? "<f8" : "<f4", extra);
}

void write_windows_npy(const Windows& w, const std::string& dir, const NpyWriteOptions& o) {
  o.validate();
  w.validate("write_windows_npy()");
  const std::int64_t n = w.size(), c = w.channels, len = w.length;
  std::vector<double> x(static_cast<size_t>(n * c * len));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t ch = 0; ch < c; ++ch) {
      for (std::int64_t t = 0; t < len; ++t) {
        const std::int64_t dst =
            o.layout == NpyLayout::kChannelsFirst ? (i * c + ch) * len + t : (i * len + t) * c + ch;
        x[static_cast<size_t>(dst)] = w.x(i, ch * len + t);
      }
    }
  }
  const std::vector<std::int64_t> shape = o.layout == NpyLayout::kChannelsFirst
                                              ? std::vector<std::int64_t>{n, c, len}
                                              : std::vector<std::int64_t>{n, len, c};
  write_windows_npy_meta(w, dir, o);
  write_npy(dir + "/X.npy", shape, x.data(), !o.float64);
}

// The registry's row (dataset.hpp): detection and the reader as open_dataset calls it.

bool is_npy_folder(const std::string& dir) {
  return detail::path_exists(dir + "/X.npy") || is_sharded_npy_folder(dir);
}

Windows open_npy_source(Dataset& d, const DatasetOptions& o) {
  if (is_sharded_npy_folder(d.spec.path)) {
    // A sharded folder read into memory: through its maps, every window (mapped_npy.hpp).
    if (o.drop_nonfinite || !o.labels.empty()) {
      throw_invalid("",
                    o.drop_nonfinite ? "DatasetOptions::drop_nonfinite" : "DatasetOptions::labels",
                    o.drop_nonfinite ? "true" : o.labels,
                    "is for a folder with one X.npy; a sharded folder (" + d.spec.path +
                        ") is read as written (its Y_k.npy labels, all windows finite)");
    }
    MappedNpyOptions mo;
    mo.layout = o.npy_layout;
    std::vector<std::string> warnings;
    const MappedNpySource source(d.spec.path, mo, &warnings);
    for (const std::string& line : warnings) d.notes.push_back("warning: " + line);
    d.notes.push_back("read from " + source.storage_text());
    return materialize(source);
  }
  NpyReadOptions no;
  no.layout = o.npy_layout;
  no.drop_nonfinite = o.drop_nonfinite;
  no.labels = o.labels;
  std::vector<std::string> warnings;
  Windows w = read_windows_npy(d.spec.path, no, &d.dropped_nonfinite, &warnings);
  for (const std::string& line : warnings) d.notes.push_back("warning: " + line);
  if (d.dropped_nonfinite > 0) {
    d.notes.push_back("dropped " + std::to_string(d.dropped_nonfinite) +
                      " windows holding non-finite values (--drop-nonfinite)");
  }
  return w;
}

}  // namespace moca::data
