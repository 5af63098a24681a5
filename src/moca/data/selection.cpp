#include "moca/data/selection.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/data/augment.hpp"
#include "moca/data/detail/dataset_settle.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/windowing.hpp"

namespace moca::data {

void DataOptions::validate() const {
  check_ranges(*this);
  if (fold >= folds) {
    throw_invalid("", "DataOptions::fold", std::to_string(fold),
                  "must be < DataOptions::folds (" + std::to_string(folds) + ")");
  }
}

std::optional<DataSpec> resolve_spec(const DataOptions& o) {
  try {
    if (o.data.empty()) return parse_data_spec(default_data_spec(o.dataset.use_env));
    return parse_data_spec(o.data, o.dataset.format);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::vector<UnusedOption> unused_options(const DataOptions& o, bool split_used) {
  std::vector<UnusedOption> out;
  if (const std::optional<DataSpec> spec = resolve_spec(o)) {
    const std::string data = spec->to_string();
    // the format of a bare folder; a spec that names its format (or none) has it already
    if (o.data.empty() || o.data != spec->path) {
      out.push_back(
          {"DatasetOptions::data_format",
           "it names the format of a bare folder given as the data; the data is " + data});
    }
    // Each format's own field with the formats that list it (rows may share one); a field is
    // unused when the data's row does not list it.
    struct Own {
      std::string field, users;
      bool the_data = false;
    };
    std::vector<Own> owns;
    for (const FormatEntry& row : format_registry()) {
      std::istringstream list(row.own_options);
      for (std::string field; std::getline(list, field, ',');) {
        auto it =
            std::find_if(owns.begin(), owns.end(), [&](const Own& o) { return o.field == field; });
        if (it == owns.end()) it = owns.insert(owns.end(), Own{field, "", false});
        it->users += (it->users.empty() ? "" : " and ") + to_string(row.format);
        it->the_data = it->the_data || row.format == spec->format;
      }
    }
    for (const Own& o : owns) {
      if (!o.the_data)
        out.push_back({o.field, "only " + o.users + " data uses it; the data is " + data});
    }
    if (o.stream && spec->format != DataFormat::kNpy) {
      out.push_back({"DataOptions::stream", "only a .npy folder is streamed; the data is " + data});
    }
    // the generator spec's keys win over the options of the same name
    const std::pair<const char*, const char*> keys[] = {
        {"windows", "DataOptions::synthetic_windows"},
        {"coupling", "DataOptions::coupling"},
        {"seed", "DataOptions::synthetic_seed"}};
    for (const auto& [key, value] : spec->params) {
      for (const auto& [name, field] : keys) {
        if (key == name)
          out.push_back({field, "the data spec's " + key + "=" + value + " sets it"});
      }
    }
  }
  if (o.stream) {
    out.push_back({"DataOptions::window_length",
                   "a stream trains on the windows as stored, at their own length"});
  }
  if (split_used) {
    const std::string split_text = "the split is " + to_string(o.split);
    if (o.split != SplitKind::kRandom) {
      out.push_back(
          {"DataOptions::train_fraction", "only the random split uses it; " + split_text});
    }
    if (o.split != SplitKind::kSubjectKfold) {
      out.push_back({"DataOptions::folds", "only the subject-kfold split uses it; " + split_text});
      out.push_back({"DataOptions::fold", "only the subject-kfold split uses it; " + split_text});
    }
    if (o.split == SplitKind::kAll || o.split == SplitKind::kPredefined) {
      out.push_back(
          {"DataOptions::split_seed", "the split " + to_string(o.split) + " draws nothing"});
    }
  }
  return out;
}

Dataset select(const DataOptions& o, int length, double rate_hz) {
  o.validate();
  // A generator spec's coupling key wins over the coupling field, so a field set beside the key
  // would be ignored: refused instead. (By value: the field's default is "not set".)
  if (o.data.rfind("generator", 0) == 0 && o.coupling != DataOptions{}.coupling) {
    for (const auto& [key, value] : parse_data_spec(o.data).params) {
      if (key == "coupling") {
        throw_invalid("", "DataOptions::coupling", format_number(o.coupling, 6),
                      "and DataOptions::data's coupling=" + value +
                          " both set the generator's coupling (give one)");
      }
    }
  }
  DatasetOptions dopt = o.dataset;
  dopt.length = length > 0 ? length : o.window_length;
  dopt.target_rate_hz = rate_hz > 0.0 ? rate_hz : 50.0;
  dopt.generator.windows = o.synthetic_windows;
  dopt.generator.coupling = o.coupling;
  dopt.generator.seed = o.synthetic_seed;
  return open_dataset(o.data, dopt);
}

namespace {
/// The rows of the options' split of n windows with these subjects and parts (kAll: every row
/// on both sides, in order).
Split split_rows(int n, const Eigen::VectorXi& subjects, const Eigen::VectorXi& parts,
                 const DataOptions& o) {
  switch (o.split) {
    case SplitKind::kAll: {
      Split s;
      s.train.resize(static_cast<size_t>(n));
      std::iota(s.train.begin(), s.train.end(), 0);
      s.test = s.train;
      return s;
    }
    case SplitKind::kRandom:
      return random_split(n, o.train_fraction, o.split_seed);
    case SplitKind::kPredefined:
      return predefined_split(parts, "DataOptions::split predefined");
    case SplitKind::kSubjectKfold:
      break;
  }
  require_subject_ids(subjects, parts, "DataOptions::split subject-kfold", "split predefined");
  const auto folds = subject_kfold(subjects, o.folds, o.split_seed);
  return folds[static_cast<size_t>(o.fold)];
}
}  // namespace

std::pair<Windows, Windows> split(const Windows& all, const DataOptions& o) {
  if (o.split == SplitKind::kAll) return {all, all};
  const Split s = split_rows(all.size(), all.subjects, all.parts, o);
  return {all.subset(s.train), all.subset(s.test)};
}

WindowSample sample_windows(const Windows& all, const DataOptions& options, int transitions,
                            int cap, std::uint64_t seed) {
  WindowSample out;
  if (transitions > 0) {
    const Windows train = split(all, options).first;
    out.windows = synthetic_transitions(train, transitions, seed);
    out.train_windows = train.size();
    return out;
  }
  if (cap < 1) throw_invalid("sample_windows()", "cap", std::to_string(cap), "must be >= 1");
  if (all.size() <= cap) {
    out.windows = all;
    return out;
  }
  std::vector<int> rows =
      numpy_legacy_permutation(all.size(), static_cast<std::uint32_t>(seed & 0xffffffffULL));
  rows.resize(static_cast<size_t>(cap));
  std::sort(rows.begin(), rows.end());
  out.windows = all.subset(rows);
  out.subset = true;
  return out;
}

Dataset select_described(const DataOptions& options, std::ostream& log, int length,
                         double rate_hz) {
  Dataset d = select(options, length, rate_hz);
  log << "data: " << d.summary() << "\n";
  for (const auto& note : d.notes) log << "data: " << note << "\n";
  log << class_count_table(d.windows);
  return d;
}

Windows first_windows(const Windows& w, int n) {
  if (n <= 0 || n >= w.size()) return w;
  std::vector<int> rows(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = i;
  return w.subset(rows);
}

nlohmann::json SplitSelection::to_json() const {
  nlohmann::json j = dataset;
  j["source"] = source;
  j["train_windows"] = train.size();
  j["test_windows"] = test.size();
  return j;
}

SplitSelection select_and_split(const DataOptions& options, std::ostream& log, int length,
                                double rate_hz) {
  const Dataset d = select_described(options, log, length, rate_hz);
  SplitSelection out;
  out.source = d.spec.to_string();
  out.dataset = d.to_json();
  std::tie(out.train, out.test) = split(d.windows, options);
  log << "split: " << to_string(options.split) << " -> " << out.train.size() << " train, "
      << out.test.size() << " test windows\n";
  return out;
}

std::unique_ptr<TestSelection> select_test(const DataOptions& options, std::ostream& log,
                                           int length, double rate_hz, int max_windows) {
  auto t = std::make_unique<TestSelection>();
  if (wants_stream(options)) {
    t->stream = std::make_unique<StreamSelection>(select_stream(options, log));
    const WindowSource& test = *t->stream->test;
    const int n = max_windows > 0 ? std::min(max_windows, test.size()) : test.size();
    std::vector<int> rows(static_cast<size_t>(n));
    std::iota(rows.begin(), rows.end(), 0);
    t->stored = std::make_unique<SubsetSource>(test, rows);
    if (auto r = resampled_to(*t->stored, rate_hz, length, &log)) {
      t->windows = std::move(r);
    } else {
      t->windows = std::move(t->stored);
    }
    t->source = t->stream->source;
    t->data = t->stream->to_json();
  } else {
    SplitSelection d = select_and_split(options, log, length, rate_hz);
    t->held = first_windows(d.test, max_windows);
    t->windows = std::make_unique<InMemorySource>(t->held);
    t->source = d.source;
    t->data = d.to_json();
  }
  return t;
}

WindowSample sample_windows(const WindowSource& all, const DataOptions& options, int transitions,
                            int cap, std::uint64_t seed) {
  if (const Windows* w = all.in_memory())
    return sample_windows(*w, options, transitions, cap, seed);
  WindowSample out;
  const Windows& meta = all.meta();
  if (transitions > 0) {
    // The draws first; then only the rows they name are read.
    const Split parts = split_rows(all.size(), meta.subjects, meta.parts, options);
    const std::vector<int>& train = parts.train;
    const std::vector<SpliceRecord> rec =
        draw_transitions(static_cast<int>(train.size()), meta.length, transitions, seed);
    std::vector<int> needed;
    for (const auto& r : rec) {
      needed.push_back(train[static_cast<size_t>(r.first)]);
      needed.push_back(train[static_cast<size_t>(r.second)]);
    }
    std::sort(needed.begin(), needed.end());
    needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
    // The draws as rows of the windows read.
    std::vector<SpliceRecord> held_rec = rec;
    for (auto& r : held_rec) {
      for (int* row : {&r.first, &r.second}) {
        *row = static_cast<int>(
            std::lower_bound(needed.begin(), needed.end(), train[static_cast<size_t>(*row)]) -
            needed.begin());
      }
    }
    out.windows = apply_transitions(materialize(SubsetSource(all, needed)), held_rec, seed);
    out.train_windows = static_cast<int>(train.size());
    return out;
  }
  if (cap < 1) throw_invalid("sample_windows()", "cap", std::to_string(cap), "must be >= 1");
  std::vector<int> rows(static_cast<size_t>(all.size()));
  std::iota(rows.begin(), rows.end(), 0);
  if (all.size() > cap) {
    rows = numpy_legacy_permutation(all.size(), static_cast<std::uint32_t>(seed & 0xffffffffULL));
    rows.resize(static_cast<size_t>(cap));
    std::sort(rows.begin(), rows.end());
    out.subset = true;
  }
  out.windows = materialize(SubsetSource(all, rows));
  return out;
}

nlohmann::json StreamSelection::to_json() const {
  nlohmann::json j = dataset;
  j["source"] = source;
  j["train_windows"] = train->size();
  j["test_windows"] = test->size();
  j["storage"] = all->storage_text();
  return j;
}

bool wants_stream(const DataOptions& options) {
  if (options.stream) return true;
  const std::optional<DataSpec> spec = resolve_spec(options);
  return spec && spec->format == DataFormat::kNpy && is_sharded_npy_folder(spec->path);
}

StreamSelection select_stream(const DataOptions& options, std::ostream& log, int length,
                              double rate_hz) {
  options.validate();
  const DataSpec spec = parse_data_spec(
      options.data.empty() ? default_data_spec(options.dataset.use_env) : options.data,
      options.data.empty() ? DataFormat::kAuto : options.dataset.format);
  if (spec.format != DataFormat::kNpy) {
    throw_invalid("", "DataOptions::stream", "true",
                  "reads a .npy folder (npy:DIR: X.npy, or shards X_000.npy, ...); the data (" +
                      spec.to_string() + ") is " + to_string(spec.format) +
                      " data, which is read into memory (drop DataOptions::stream)");
  }
  const DatasetOptions& o = options.dataset;
  const std::string why =
      "changes the windows, which a stream does not do (it reads them as stored); write the "
      "changed windows first with moca data export, which reads a folder into memory unless "
      "given DataOptions::stream";
  if (!o.segment.empty()) throw_invalid("", "DatasetOptions::segment", o.segment, why);
  if (!o.keep_classes.empty()) {
    throw_invalid("", "DatasetOptions::keep_classes", o.keep_classes, why);
  }
  if (o.drop_nonfinite) throw_invalid("", "DatasetOptions::drop_nonfinite", "true", why);
  if (!o.labels.empty()) {
    throw_invalid("", "DatasetOptions::labels", o.labels,
                  "is not read by a stream, which takes Y.npy (Y_000.npy, ... for shards)");
  }
  StreamSelection out;
  out.source = spec.to_string();
  MappedNpyOptions mo;
  mo.layout = o.npy_layout;
  std::vector<std::string> warnings;
  out.all = std::make_unique<MappedNpySource>(spec.path, mo, &warnings);
  const MappedNpySource& all = *out.all;
  // The program's steps after reading, on the first window: they may name channels, state the
  // rate and the groups; one that would change the window's numbers or shape is refused.
  Dataset d;
  d.spec = spec;
  d.origin = options.data.empty() ? "default" : "given";
  DatasetOptions so = o;
  so.keep_rate_and_length = true;
  so.length = length > 0 ? length : options.window_length;
  so.target_rate_hz = rate_hz > 0 ? rate_hz : 50.0;
  Windows probe = materialize(SubsetSource(all, {0}));
  const RowMatrixXf first = probe.x;
  for (const std::string& line : warnings) d.notes.push_back("warning: " + line);
  settle_dataset(probe, d, so);
  if (probe.channels != all.meta().channels || probe.length != all.meta().length ||
      probe.x != first) {
    throw_invalid("", "DatasetOptions::modalities", o.modalities,
                  "selects or reorders channels (" + std::to_string(all.meta().channels) + " -> " +
                      std::to_string(probe.channels) + "), " + why);
  }
  // (By value, as select() does: the field's default is "not set".)
  if (options.window_length != DataOptions{}.window_length &&
      options.window_length != probe.length) {
    throw_invalid("", "DataOptions::window_length", std::to_string(options.window_length),
                  "differs from the streamed windows' own length (" + std::to_string(probe.length) +
                      " samples): a stream does not resample");
  }
  if (length > 0 && length != probe.length) {
    throw_invalid(spec.to_string(), "its windows have " + std::to_string(probe.length) +
                                        " samples, the model takes " + std::to_string(length) +
                                        " (a stream does not resample or crop)");
  }
  if (rate_hz > 0 && rate_hz != probe.sample_rate_hz) {
    throw_invalid(spec.to_string(), "its windows are at " + format_number(probe.sample_rate_hz, 6) +
                                        " Hz, the model's at " + format_number(rate_hz, 6) +
                                        " Hz (a stream does not resample)");
  }
  const Split rows = split_rows(all.size(), all.meta().subjects, all.meta().parts, options);
  out.train = std::make_unique<SubsetSource>(all, rows.train, &probe);
  out.test = std::make_unique<SubsetSource>(all, rows.test, &probe);
  // The description of the whole folder, as Dataset::to_json gives one (x with no columns: the
  // counts and the labels, not the numbers).
  d.windows = out.train->meta();
  d.windows.labels = all.meta().labels;
  d.windows.subjects = all.meta().subjects;
  d.windows.x.resize(all.size(), 0);
  d.notes.push_back("streamed from disk: " + all.storage_text());
  out.dataset = d.to_json();
  out.described = d;
  log << "data: " << d.summary() << "\n";
  for (const auto& note : d.notes) log << "data: " << note << "\n";
  log << class_count_table(d.windows);
  log << "split: " << to_string(options.split) << " -> " << out.train->size() << " train, "
      << out.test->size() << " test windows\n";
  return out;
}

}  // namespace moca::data
