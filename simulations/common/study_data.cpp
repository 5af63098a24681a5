#include "study_data.hpp"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/augment.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/windowing.hpp"

namespace moca::sim {

void StudyDataOptions::validate() const {
  if (samples < 3) {
    throw std::invalid_argument("StudyDataOptions::validate(): samples (" +
                                std::to_string(samples) + ") must be >= 3");
  }
  if (!(coupling >= 0.0 && coupling <= 1.0)) {
    throw std::invalid_argument("StudyDataOptions::validate(): coupling (" +
                                std::to_string(coupling) + ") must be in [0, 1]");
  }
  if (split_seed > 0xffffffffULL) {
    throw std::invalid_argument("StudyDataOptions::validate(): split_seed (" +
                                std::to_string(split_seed) + ") must be <= 2^32 - 1");
  }
}

std::string StudyDataOptions::resolved_dir() const {
  if (!data.empty()) return data;
  if (use_env) {
    const char* env = std::getenv("MOCA_HAPT_DIR");
    if (env != nullptr && *env != '\0') return env;
  }
  return {};
}

namespace {

nlohmann::json generator_json(const data::SyntheticOptions& so) {
  return {{"source", "generator"},   {"windows", so.windows}, {"length", so.length},
          {"coupling", so.coupling}, {"noise", so.noise},     {"subjects", so.subjects},
          {"seed", so.seed}};
}

void add_channels(nlohmann::json& j, const data::Windows& w) {
  j["channels"] = w.channel_names;
  j["sample_rate_hz"] = w.sample_rate_hz;
  j["window_length"] = w.length;
}

}  // namespace

StudyWindows transition_windows(const StudyDataOptions& options) {
  options.validate();
  StudyWindows out;
  const std::string dir = options.resolved_dir();
  if (dir.empty()) {
    data::SyntheticOptions so;
    so.windows = options.samples;
    so.coupling = options.coupling;
    so.seed = options.seed;
    out.windows = data::generate_synthetic(so);
    out.description = generator_json(so);
  } else {
    const data::Windows all = data::load_hapt_windows(dir, data::WindowingOptions{});
    const data::Split split = data::random_split(all.size(), 0.7, options.split_seed);
    const data::Windows train = all.subset(split.train);
    out.windows = data::synthetic_transitions(train, options.samples, options.seed);
    out.description = {{"source", "hapt"},
                       {"path", dir},
                       {"hapt_windows", all.size()},
                       {"train_windows", train.size()},
                       {"split", "random 7:3"},
                       {"split_seed", options.split_seed},
                       {"transitions", out.windows.size()},
                       {"transition_seed", options.seed},
                       {"construction", "Algorithm 1 splices of training-split windows"}};
  }
  add_channels(out.description, out.windows);
  return out;
}

StudySplit train_test_windows(const StudyDataOptions& options) {
  options.validate();
  StudySplit out;
  const std::string dir = options.resolved_dir();
  const int n_test = static_cast<int>(std::ceil(options.samples * 3.0 / 7.0));
  if (dir.empty()) {
    data::SyntheticOptions so;
    so.windows = options.samples;
    so.coupling = options.coupling;
    so.seed = derive_seed(options.seed, 1);
    out.train = data::generate_synthetic(so);
    nlohmann::json train_json = generator_json(so);
    so.windows = n_test;
    so.seed = derive_seed(options.seed, 2);
    out.test = data::generate_synthetic(so);
    out.description = {
        {"source", "generator"}, {"train", train_json}, {"test", generator_json(so)}};
  } else {
    const data::Windows all = data::load_hapt_windows(dir, data::WindowingOptions{});
    const data::Split split = data::random_split(all.size(), 0.7, options.split_seed);
    std::vector<int> train_rows = split.train, test_rows = split.test;
    // The split rows are in permutation order, so their prefixes are random subsets.
    if (static_cast<int>(train_rows.size()) > options.samples) train_rows.resize(options.samples);
    if (static_cast<int>(test_rows.size()) > n_test) test_rows.resize(n_test);
    out.train = all.subset(train_rows);
    out.test = all.subset(test_rows);
    out.description = {{"source", "hapt"},
                       {"path", dir},
                       {"hapt_windows", all.size()},
                       {"split", "random 7:3"},
                       {"split_seed", options.split_seed},
                       {"train_windows", out.train.size()},
                       {"test_windows", out.test.size()},
                       {"subsample", "first rows of each part of the split (a random subset)"}};
  }
  add_channels(out.description, out.train);
  return out;
}

void write_json(const std::string& path, const nlohmann::json& j) {
  write_output_file(path, [&](std::ostream& os) { os << j.dump(2) << "\n"; });
}

}  // namespace moca::sim
