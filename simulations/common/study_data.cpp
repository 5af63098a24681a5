#include "study_data.hpp"

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/splits.hpp"

namespace moca::sim {

void StudyDataOptions::validate() const {
  if (samples < 3) {
    throw std::invalid_argument("StudyDataOptions::samples (" + std::to_string(samples) +
                                ") must be >= 3");
  }
  if (!(selection.coupling >= 0.0 && selection.coupling <= 1.0)) {
    throw std::invalid_argument("StudyDataOptions::coupling (" +
                                std::to_string(selection.coupling) + ") must be in [0, 1]");
  }
  if (selection.split_seed > 0xffffffffULL) {
    throw std::invalid_argument("StudyDataOptions::split_seed (" +
                                std::to_string(selection.split_seed) + ") must be <= 2^32 - 1");
  }
}

std::string StudyDataOptions::resolved_spec() const {
  return selection.data.empty() ? data::default_data_spec(selection.dataset.use_env)
                                : selection.data;
}

namespace {

/// The selection with the generator's size and seed, its spec resolved (the environment read once).
data::DataOptions with_generator(const StudyDataOptions& options, int windows, std::uint64_t seed) {
  data::DataOptions o = options.selection;
  o.data = options.resolved_spec();
  o.dataset.use_env = false;
  o.synthetic_windows = windows;
  o.synthetic_seed = seed;
  return o;
}

nlohmann::json describe(const data::Dataset& d) {
  nlohmann::json j = d.to_json();
  // Keys the studies' JSON had before open_dataset (kept for readers of old results).
  if (const char* key = data::format_entry(d.spec.format).study_windows_key) {
    j["path"] = d.spec.path;
    j[key] = d.windows.size();
  } else if (!d.spec.params.empty()) {  // the generator's keys
    for (const auto& [k, v] : d.spec.params) {
      if (k == "coupling" || k == "noise") {
        j[k] = std::stod(v);
      } else {
        j[k] = std::stoull(v);
      }
    }
  }
  return j;
}

void add_channels(nlohmann::json& j, const data::Windows& w) {
  j["channels"] = w.channel_names;
  j["sample_rate_hz"] = w.sample_rate_hz;
  j["window_length"] = w.length;
  j["modalities"] = data::format_modalities(w.modalities);
}

}  // namespace

StudyWindows transition_windows(const StudyDataOptions& options) {
  options.validate();
  StudyWindows out;
  const data::DataOptions selection = with_generator(options, options.samples, options.seed);
  const data::Dataset d = data::select(selection);
  out.description = describe(d);
  const bool transitions = data::format_entry(d.spec.format).transitions_by_default;
  data::WindowSample sample = data::sample_windows(
      d.windows, selection, transitions ? options.samples : 0, options.samples, options.seed);
  out.windows = std::move(sample.windows);
  if (transitions) {
    out.description["train_windows"] = sample.train_windows;
    out.description["split"] = "random 7:3";
    out.description["split_seed"] = selection.split_seed;
    out.description["transitions"] = out.windows.size();
    out.description["transition_seed"] = options.seed;
    out.description["construction"] = "Algorithm 1 splices of training-split windows";
  } else if (sample.subset) {
    out.description["construction"] = "a seeded random subset of the windows";
  }
  add_channels(out.description, out.windows);
  return out;
}

StudySplit train_test_windows(const StudyDataOptions& options) {
  options.validate();
  StudySplit out;
  const int n_test = static_cast<int>(std::ceil(options.samples * 3.0 / 7.0));
  if (options.resolved_spec().rfind("generator", 0) == 0) {
    const data::Dataset train =
        data::select(with_generator(options, options.samples, derive_seed(options.seed, 1)));
    const data::Dataset test =
        data::select(with_generator(options, n_test, derive_seed(options.seed, 2)));
    out.train = train.windows;
    out.test = test.windows;
    out.description = {
        {"source", "generator"}, {"train", describe(train)}, {"test", describe(test)}};
  } else {
    const data::DataOptions selection = with_generator(options, options.samples, options.seed);
    const data::Dataset d = data::select(selection);
    const data::Windows& all = d.windows;
    const data::Split split =
        data::random_split(all.size(), selection.train_fraction, selection.split_seed);
    std::vector<int> train_rows = split.train, test_rows = split.test;
    // The split rows are in permutation order, so their prefixes are random subsets.
    if (static_cast<int>(train_rows.size()) > options.samples) train_rows.resize(options.samples);
    if (static_cast<int>(test_rows.size()) > n_test) test_rows.resize(n_test);
    out.train = all.subset(train_rows);
    out.test = all.subset(test_rows);
    out.description = describe(d);
    out.description["split"] = "random 7:3";
    out.description["split_seed"] = selection.split_seed;
    out.description["train_windows"] = out.train.size();
    out.description["test_windows"] = out.test.size();
    out.description["subsample"] = "first rows of each part of the split (a random subset)";
  }
  add_channels(out.description, out.train);
  return out;
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + " is not valid JSON: " + e.what());
  }
}

void write_json(const std::string& path, const nlohmann::json& j) {
  write_output_file(path, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
}

}  // namespace moca::sim
