#include "moca/data/ts.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "moca/common/error_text.hpp"
#include "moca/common/text_file.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/text_parse.hpp"

namespace moca::data {

namespace ts_detail {

std::string_view trim_view(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

[[noreturn]] void fail(const std::string& path, long line, const std::string& what) {
  throw std::invalid_argument(path + ":" + std::to_string(line) + ": " + what);
}

bool parse_bool(const std::vector<std::string>& w, const std::string& path, long line) {
  const std::string v = w.size() == 2 ? lower(w[1]) : "";
  if (v != "true" && v != "false") {
    fail(path, line,
         w[0] + " takes one value, true or false (found '" + (w.size() > 1 ? w[1] : std::string()) +
             "'" + (w.size() > 2 ? " and more" : "") + ")");
  }
  return v == "true";
}

int parse_count(const std::vector<std::string>& w, const std::string& path, long line) {
  int v = 0;
  const char* b = w.size() == 2 ? w[1].data() : nullptr;
  const char* e = b ? b + w[1].size() : nullptr;
  if (w.size() != 2 || std::from_chars(b, e, v).ptr != e || v < 1) {
    fail(path, line,
         w[0] + " takes one whole number >= 1 (found '" + (w.size() > 1 ? w[1] : std::string()) +
             "')");
  }
  return v;
}

bool is_missing(std::string_view v) {
  return v == "?" || (v.size() == 3 && std::tolower(static_cast<unsigned char>(v[0])) == 'n' &&
                      std::tolower(static_cast<unsigned char>(v[1])) == 'a' &&
                      std::tolower(static_cast<unsigned char>(v[2])) == 'n');
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The TRAIN and TEST files of a folder or a NAME prefix; empty when `path` is one file.
std::pair<std::string, std::string> pair_of(const std::string& path) {
  if (!detail::is_directory(path)) {
    if (detail::path_exists(path)) return {};
    if (detail::path_exists(path + "_TRAIN.ts") || detail::path_exists(path + "_TEST.ts"))
      return {path + "_TRAIN.ts", path + "_TEST.ts"};
    throw std::runtime_error("DataOptions::data: no '" + path + "' (nor " + path +
                             "_TRAIN.ts); ts: takes a .ts file, a folder holding NAME_TRAIN.ts "
                             "and NAME_TEST.ts, or DIR/NAME");
  }
  std::vector<std::string> stems;
  for (const std::string& f : detail::list_files(path)) {
    for (const char* tail : {"_TRAIN.ts", "_TEST.ts"}) {
      if (ends_with(f, tail)) stems.push_back(f.substr(0, f.size() - std::string(tail).size()));
    }
  }
  std::sort(stems.begin(), stems.end());
  stems.erase(std::unique(stems.begin(), stems.end()), stems.end());
  if (stems.size() != 1) {
    std::string list;
    for (const auto& s : stems) list += (list.empty() ? "" : ", ") + s;
    throw std::invalid_argument("DataOptions::data: the folder '" + path + "' holds " +
                                (stems.empty()
                                     ? std::string("no NAME_TRAIN.ts or NAME_TEST.ts")
                                     : std::to_string(stems.size()) + " problems (" + list +
                                           "); name one with ts:" + path + "/NAME"));
  }
  return {path + "/" + stems[0] + "_TRAIN.ts", path + "/" + stems[0] + "_TEST.ts"};
}

/// Where a case came from, for messages.
std::string where(const std::string& path, const TsCases& c, size_t i) {
  return path + ":" + std::to_string(c.lines[i]);
}

}  // namespace ts_detail

TsCases read_ts_cases(const std::string& path) {
  using namespace ts_detail;
  TextFileReader file(path);
  TsCases c;
  TsHeader& h = c.header;
  bool data = false;
  std::string line;
  std::vector<float> values;
  while (file.next_line(line)) {
    const long no = file.line_number();
    const std::string_view t = trim_view(line);
    if (t.empty() || t.front() == '#') continue;
    if (!data) {
      if (t.front() != '@') {
        fail(path, no,
             "a header line begins with '@' (found '" + std::string(t.substr(0, 40)) +
                 "' before @data)");
      }
      const std::vector<std::string> w = words(t);
      const std::string key = lower(std::string_view(w[0]).substr(1));
      if (key == "data") {
        if (w.size() != 1) fail(path, no, "@data takes no value");
        data = true;
        if (h.timestamps) {
          fail(path, no,
               "@timeStamps true: cases of (time,value) pairs are not read (moca reads "
               "equally spaced cases)");
        }
        if (h.target_label) {
          fail(path, no, "@targetLabel true: a regression problem; moca reads class labels");
        }
        if (h.univariate && h.dimensions > 1) {
          fail(path, no,
               "@univariate true and @dimensions " + std::to_string(h.dimensions) + " disagree");
        }
        c.dimensions = h.dimensions > 0 ? h.dimensions : (h.univariate ? 1 : 0);
        continue;
      }
      const std::pair<const char*, bool*> flags[] = {{"timestamps", &h.timestamps},
                                                     {"missing", &h.missing},
                                                     {"univariate", &h.univariate},
                                                     {"equallength", &h.equal_length},
                                                     {"targetlabel", &h.target_label}};
      const auto flag = std::find_if(std::begin(flags), std::end(flags),
                                     [&](const auto& f) { return key == f.first; });
      if (flag != std::end(flags)) {
        *flag->second = parse_bool(w, path, no);
      } else if (key == "problemname") {
        if (w.size() < 2) fail(path, no, "@problemName takes a name");
        h.problem_name = w[1];
      } else if (key == "dimensions") {
        h.dimensions = parse_count(w, path, no);
      } else if (key == "serieslength") {
        h.series_length = parse_count(w, path, no);
      } else if (key == "classlabel") {
        const std::string v = w.size() > 1 ? lower(w[1]) : "";
        if (v != "true" && v != "false") {
          fail(path, no,
               "@classLabel takes true LABEL ... or false (found '" +
                   (w.size() > 1 ? w[1] : std::string()) + "')");
        }
        h.class_label = v == "true";
        if (h.class_label && w.size() < 3) {
          fail(path, no, "@classLabel true declares no labels (give them: @classLabel true a b)");
        }
        if (!h.class_label && w.size() > 2) {
          fail(path, no, "@classLabel false declares labels");
        }
        h.class_values.assign(w.begin() + 2, w.end());
        for (size_t k = 0; k < h.class_values.size(); ++k) {
          if (std::count(h.class_values.begin(), h.class_values.end(), h.class_values[k]) > 1)
            fail(path, no, "@classLabel declares '" + h.class_values[k] + "' twice");
        }
      } else {
        c.notes.push_back(path + ":" + std::to_string(no) + ": header key " + w[0] +
                          " is not one the format defines; left out");
      }
      continue;
    }
    // A case: D dimensions separated by ':', then the label.
    std::vector<std::string_view> fields;
    for (size_t b = 0;;) {
      const size_t e = t.find(':', b);
      fields.push_back(t.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
      if (e == std::string_view::npos) break;
      b = e + 1;
    }
    const int label_fields = h.class_label ? 1 : 0;
    const int dims = static_cast<int>(fields.size()) - label_fields;
    if (c.dimensions == 0) {
      if (dims < 1) fail(path, no, "the case holds no dimension");
      c.dimensions = dims;
    }
    if (dims != c.dimensions) {
      fail(path, no,
           "the case has " + std::to_string(dims) + " dimension" + (dims == 1 ? "" : "s") +
               (h.class_label ? " and a label" : "") + ", the " +
               (h.dimensions > 0 ? "header's @dimensions"
                : h.univariate   ? "header's @univariate"
                                 : "first case's") +
               " " + std::to_string(c.dimensions) + " (dimensions are separated by ':')");
    }
    values.clear();
    int length = -1;
    for (int d = 0; d < dims; ++d) {
      const std::string_view f = trim_view(fields[static_cast<size_t>(d)]);
      if (f.empty()) fail(path, no, "dimension " + std::to_string(d) + " is empty");
      int n = 0;
      for (size_t b = 0;; ++n) {
        const size_t e = f.find(',', b);
        const std::string_view v =
            trim_view(f.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
        if (is_missing(v)) {
          if (!h.missing) {
            fail(path, no,
                 "dimension " + std::to_string(d) + " value " + std::to_string(n) +
                     " is missing ('" + std::string(v) +
                     "') but the header states @missing false (the default)");
          }
          values.push_back(std::numeric_limits<float>::quiet_NaN());
        } else {
          double x = 0.0;
          const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
          if (v.empty() || r.ptr != v.data() + v.size() || r.ec != std::errc() ||
              !std::isfinite(x)) {
            fail(path, no,
                 "dimension " + std::to_string(d) + " value " + std::to_string(n) + " ('" +
                     std::string(v.substr(0, 40)) + "') is not a finite number");
          }
          values.push_back(static_cast<float>(x));
        }
        if (e == std::string_view::npos) break;
        b = e + 1;
      }
      ++n;
      if (length < 0) {
        length = n;
      } else if (n != length) {
        fail(path, no,
             "dimension " + std::to_string(d) + " has " + std::to_string(n) +
                 " values, dimension 0 has " + std::to_string(length) +
                 " (a case's dimensions are one length)");
      }
    }
    if (h.equal_length) {
      const int expected = h.series_length > 0 ? h.series_length
                           : c.lengths.empty() ? length
                                               : c.lengths.front();
      if (length != expected) {
        fail(path, no,
             "the case has " + std::to_string(length) + " values per dimension; " +
                 (h.series_length > 0 ? "@seriesLength states "
                                      : "@equalLength true and the first case has ") +
                 std::to_string(expected));
      }
    }
    int label = -1;
    if (h.class_label) {
      const std::string text(trim_view(fields.back()));
      const auto it = std::find(h.class_values.begin(), h.class_values.end(), text);
      if (it == h.class_values.end()) {
        std::string declared;
        for (const auto& v : h.class_values) declared += (declared.empty() ? "" : " ") + v;
        fail(path, no,
             "class label '" + text + "' is not declared by @classLabel (" + declared + ")");
      }
      label = static_cast<int>(it - h.class_values.begin());
    }
    c.values.push_back(values);
    c.lengths.push_back(length);
    c.labels.push_back(label);
    c.lines.push_back(static_cast<int>(no));
  }
  if (!data) fail(path, file.line_number(), "no @data line: the header never ends");
  if (c.values.empty()) fail(path, file.line_number(), "no case after @data");
  return c;
}

bool is_ts_source(const std::string& path) {
  using ts_detail::ends_with;
  if (!detail::is_directory(path)) return ends_with(path, ".ts") && detail::path_exists(path);
  for (const std::string& f : detail::list_files(path)) {
    if (ends_with(f, "_TRAIN.ts") || ends_with(f, "_TEST.ts")) return true;
  }
  return false;
}

Windows read_ts(const std::string& path, TsUnequal unequal, bool drop_missing,
                std::vector<std::string>* notes, std::int64_t* dropped) {
  using namespace ts_detail;
  const auto [train_path, test_path] = pair_of(path);
  std::vector<std::pair<std::string, TsCases>> files;
  if (train_path.empty()) {
    files.emplace_back(path, read_ts_cases(path));
  } else {
    for (const std::string& p : {train_path, test_path}) {
      if (!detail::path_exists(p)) {
        throw std::invalid_argument(
            "DataOptions::data: " + p + " is missing: the archive's own split needs both " +
            train_path + " and " + test_path + " (name the one file with ts:FILE.ts)");
      }
      files.emplace_back(p, read_ts_cases(p));
    }
  }
  const TsCases& first = files.front().second;
  // The second file's labels in the first's order; its dimensions the first's.
  if (files.size() == 2) {
    TsCases& second = files.back().second;
    const auto sorted = [](std::vector<std::string> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    if (second.header.class_label != first.header.class_label ||
        sorted(second.header.class_values) != sorted(first.header.class_values)) {
      const auto list = [](const TsHeader& h) {
        std::string s = h.class_label ? "" : "no labels";
        for (const auto& v : h.class_values) s += (s.empty() ? "" : " ") + v;
        return s;
      };
      throw std::invalid_argument(train_path + " and " + test_path +
                                  " declare different class labels (" + list(first.header) + "; " +
                                  list(second.header) + ")");
    }
    if (second.dimensions != first.dimensions) {
      throw std::invalid_argument(train_path + " has " + std::to_string(first.dimensions) +
                                  " dimensions, " + test_path + " " +
                                  std::to_string(second.dimensions));
    }
    for (int& label : second.labels) {
      if (label < 0) continue;
      const std::string& name = second.header.class_values[static_cast<size_t>(label)];
      label = static_cast<int>(
          std::find(first.header.class_values.begin(), first.header.class_values.end(), name) -
          first.header.class_values.begin());
    }
  }
  const int dims = first.dimensions;
  // Cases with a missing value: dropped (counted) or refused.
  std::int64_t missing_cases = 0;
  std::vector<std::vector<char>> keep(files.size());
  for (size_t f = 0; f < files.size(); ++f) {
    const TsCases& c = files[f].second;
    keep[f].assign(c.values.size(), 1);
    for (size_t i = 0; i < c.values.size(); ++i) {
      const auto& v = c.values[i];
      const auto bad = std::find_if(v.begin(), v.end(), [](float x) { return std::isnan(x); });
      if (bad == v.end()) continue;
      if (!drop_missing) {
        const auto k = static_cast<int>(bad - v.begin());
        throw std::invalid_argument(
            where(files[f].first, c, i) + ": dimension " + std::to_string(k / c.lengths[i]) +
            " value " + std::to_string(k % c.lengths[i]) +
            " is missing; moca does not fill a case's gaps (DatasetOptions::drop_nonfinite drops "
            "the cases that have them)");
      }
      keep[f][i] = 0;
      ++missing_cases;
    }
  }
  // One length for every kept case.
  int shortest = std::numeric_limits<int>::max(), longest = 0;
  std::string at_short, at_long;
  std::int64_t kept = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    const TsCases& c = files[f].second;
    for (size_t i = 0; i < c.values.size(); ++i) {
      if (!keep[f][i]) continue;
      ++kept;
      if (c.lengths[i] < shortest) shortest = c.lengths[i], at_short = where(files[f].first, c, i);
      if (c.lengths[i] > longest) longest = c.lengths[i], at_long = where(files[f].first, c, i);
    }
  }
  if (kept == 0) {
    throw std::invalid_argument("DataOptions::data: " + path +
                                ": every case has a missing value (" +
                                std::to_string(missing_cases) + " dropped)");
  }
  if (shortest != longest && unequal == TsUnequal::kError) {
    throw std::invalid_argument(
        "DataOptions::data: " + path + ": cases of different lengths, " + std::to_string(shortest) +
        " (" + at_short + ") to " + std::to_string(longest) + " (" + at_long +
        "); DatasetOptions::ts_unequal pad (repeat each case's last sample) or truncate (cut to "
        "the shortest) makes them one length");
  }
  const int length = unequal == TsUnequal::kTruncate ? shortest : longest;
  Windows w;
  w.channels = dims;
  w.length = length;
  w.sample_rate_hz = 0.0;
  for (int d = 0; d < dims; ++d) w.channel_names.push_back("dim_" + std::to_string(d));
  w.class_names = first.header.class_values;
  w.x.resize(kept, static_cast<Eigen::Index>(dims) * length);
  w.labels.resize(kept);
  w.subjects = Eigen::VectorXi::Constant(kept, -1);
  if (files.size() == 2) w.parts.resize(kept);
  std::int64_t changed = 0;
  Eigen::Index row = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    const TsCases& c = files[f].second;
    for (size_t i = 0; i < c.values.size(); ++i) {
      if (!keep[f][i]) continue;
      const int n = c.lengths[i];
      changed += n != length;
      for (int d = 0; d < dims; ++d) {
        const float* src = c.values[i].data() + static_cast<size_t>(d) * static_cast<size_t>(n);
        for (int t = 0; t < length; ++t)
          w.x(row, static_cast<Eigen::Index>(d) * length + t) = src[std::min(t, n - 1)];
      }
      w.labels(row) = c.labels[i];
      if (files.size() == 2) w.parts(row) = f == 0 ? Windows::kTrainPart : Windows::kTestPart;
      ++row;
    }
  }
  const std::string name =
      first.header.problem_name.empty() ? std::string() : " " + first.header.problem_name;
  w.description =
      "UEA/UCR .ts" + name + ": " + (files.size() == 2 ? train_path + " and " + test_path : path);
  if (notes != nullptr) {
    for (const auto& [p, c] : files) notes->insert(notes->end(), c.notes.begin(), c.notes.end());
    if (files.size() == 2) {
      std::int64_t train = 0;
      for (Eigen::Index i = 0; i < w.parts.size(); ++i) train += w.parts(i) == 0;
      notes->push_back("the archive's own split: " + std::to_string(train) + " TRAIN and " +
                       std::to_string(kept - train) +
                       " TEST cases (split predefined, protocol predefined)");
    }
    if (missing_cases > 0) {
      notes->push_back("dropped " + std::to_string(missing_cases) +
                       " cases with missing values (DatasetOptions::drop_nonfinite)");
    }
    if (changed > 0) {
      notes->push_back(
          std::to_string(changed) + " cases " +
          (unequal == TsUnequal::kPad ? "padded with their last sample" : "cut to their first") +
          " to " + std::to_string(length) + " samples (lengths " + std::to_string(shortest) +
          " to " + std::to_string(longest) + ", DatasetOptions::ts_unequal)");
    }
    notes->push_back("the .ts format states no sample rate and no subjects");
  }
  if (dropped != nullptr) *dropped = missing_cases;
  return w;
}

Windows open_ts_source(Dataset& d, const DatasetOptions& o) {
  return read_ts(d.spec.path, o.ts_unequal, o.drop_nonfinite, &d.notes, &d.dropped_nonfinite);
}

}  // namespace moca::data
