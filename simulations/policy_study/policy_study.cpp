#include "policy_study.hpp"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "moca/common/file_lock.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/windows.hpp"
#include "moca/masking/feature_map.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/masking/score_json.hpp"
#include "moca/model/eval/downstream.hpp"
#include "moca/model/eval/encoder_features.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/train/pretrain.hpp"
#include "run_cli.hpp"
#include "study_data.hpp"
#include "study_runner.hpp"
#include "study_training.hpp"

namespace moca::sim {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> default_study_policies() {
  std::vector<std::string> p;
  for (const char* family : {"cross", "extrapolation", "sync", "temporal", "per-modality"}) {
    for (const char* ratio : {"0.5", "0.75", "0.9"}) {
      p.push_back(std::string(family) + ":ratio=" + ratio);
    }
  }
  for (const char* keep : {"3", "2", "1"}) p.push_back(std::string("sensor:keep=") + keep);
  for (const char* beta : {"5", "20", "50"}) {
    p.push_back(std::string("adaptive:base=cross,ratio=0.75,beta=") + beta);
  }
  return p;
}

model::PretrainOptions default_study_pretrain() {
  model::PretrainOptions p;
  p.preset = "tiny";
  p.patch_length = 20;
  p.epochs = 5;
  p.batch_size = 50;
  p.lr = 1e-3;
  p.warmup_epochs = 1.0;
  p.checkpoint_every = 1;
  return p;
}

data::DataOptions default_study_selection() {
  data::DataOptions s;
  s.synthetic_windows = 1400;
  s.split = data::SplitKind::kSubjectKfold;
  s.folds = 3;
  s.fold = 0;
  s.split_seed = 0;
  return s;
}

void PolicyStudyOptions::validate() const {
  // Messages name the fields (PolicyStudyOptions::name); the program names its flags.
  const std::string f = "PolicyStudyOptions::";
  const int folds = selection.folds;
  selection.dataset.validate();
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(f + what);
  };
  need(!out.empty(), "out is empty (the output folder is required)");
  check_ranges(*this);  // the rows' ranges (generator_windows, seeds, pca, draws, jobs, ...)
  need(folds >= 2, "folds (" + std::to_string(folds) + ") must be >= 2");
  // (the held-out windows must be windows no run trained on)
  need(selection.split != data::SplitKind::kAll,
       "split (all) must be random or subject-kfold: the held-out part would be the training "
       "part");
  selection.validate();
  need(train_windows >= 0 && train_windows != 1 && train_windows != 2,
       "train_windows (" + std::to_string(train_windows) + ") must be 0 (all) or >= 3");
  need(test_windows >= 0 && test_windows != 1 && test_windows != 2,
       "test_windows (" + std::to_string(test_windows) + ") must be 0 (all) or >= 3");
  need(policies.size() >= 3, "policies has " + std::to_string(policies.size()) +
                                 " specs; rank correlations need at least 3");
  need(std::set<std::string>(policies.begin(), policies.end()).size() == policies.size(),
       "policies contains a spec twice");
  for (const auto& p : policies) masking::parse_policy_spec(p);
  for (const auto& t : tasks) masking::parse_policy_spec(t);
  need(!tasks.empty(), "tasks is empty");
  // the pre-training rows (PretrainOptions::epochs and the others, named by their flags), and a
  // warm-up that is set: the ledger records the one every run uses
  pretrain.validate();
  if (!pretrain.warmup_epochs) {
    throw std::invalid_argument(
        "PretrainOptions::warmup_epochs is unset (the study records the "
        "warm-up of its runs)");
  }
  for (const auto& m : features) {
    need(m == "raw" || m == "patch-mean" || m == "encoder",
         "features (" + m + ") is not one of raw, patch-mean, encoder");
  }
  need(encoder_windows >= 0 && encoder_windows != 1 && encoder_windows != 2,
       "encoder_windows (" + std::to_string(encoder_windows) + ") must be 0 (all) or >= 3");
  masking::parse_policy_spec(reference_policy);
  need(max_runs == -1 || max_runs >= 0,
       "max_runs (" + std::to_string(max_runs) + ") must be -1 (no limit) or >= 0");
}

namespace {

// The study's settings, each as (ledger key, member): settings_json() writes and set_settings()
// reads exactly these lists, so a setting cannot be written without being read back. "dataset"
// is an object of its own fields (for_each_dataset_setting).
template <class Options, class F>
void for_each_setting(Options& o, F&& f) {
  f("data", o.selection.data);
  f("dataset", o.selection.dataset);
  f("generator_windows", o.selection.synthetic_windows);
  f("folds", o.selection.folds);
  f("split_seed", o.selection.split_seed);
  f("train_windows", o.train_windows);
  f("test_windows", o.test_windows);
  f("policies", o.policies);
  f("seeds", o.seeds);
  f("preset", o.pretrain.preset);
  f("patch_length", o.pretrain.patch_length);
  f("epochs", o.pretrain.epochs);
  f("batch_size", o.pretrain.batch_size);
  f("lr", o.pretrain.lr);
  f("warmup_epochs", o.pretrain.warmup_epochs);  // std::optional<double>, set (validate())
  f("checkpoint_every", o.pretrain.checkpoint_every);
  f("probe_epochs", o.probe_epochs);
  f("features", o.features);
  f("pca", o.pca);
  f("draws", o.draws);
  f("encoder_windows", o.encoder_windows);
  f("reference_policy", o.reference_policy);
  f("reference_seed", o.reference_seed);
  f("tasks", o.tasks);
  f("seed", o.seed);
  f("resamples", o.resamples);
}

// The data-set options the study records (the --data-* flags it has).
template <class DatasetOptions, class F>
void for_each_dataset_setting(DatasetOptions& d, F&& f) {
  f("format", d.format);
  f("modalities", d.modalities);
  f("sample_rate_hz", d.sample_rate_hz);
  f("drop_nonfinite", d.drop_nonfinite);
  f("keep_classes", d.keep_classes);
  f("npy_layout", d.npy_layout);
}

template <class T>
json setting_json(const T& value) {
  return value;
}

json setting_json(const data::DatasetOptions& d) {
  json j = json::object();
  for_each_dataset_setting(d, [&](const char* key, const auto& value) { j[key] = value; });
  // Written only when given, so that a study started without them keeps its settings record.
  if (!d.channel_names.empty()) j["channel_names"] = d.channel_names;
  if (!d.segment.empty()) j["segment"] = d.segment;
  return j;
}

json setting_json(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

template <class T>
void read_setting(const json& j, T& value) {
  j.get_to(value);
}

void read_setting(const json& j, std::optional<double>& value) {
  if (j.is_null()) {
    value.reset();
  } else {
    value = j.get<double>();
  }
}

void read_setting(const json& j, data::DatasetOptions& d) {
  for_each_dataset_setting(d, [&](const char* key, auto& value) { j.at(key).get_to(value); });
  d.channel_names = j.value("channel_names", std::vector<std::string>{});
  d.segment = j.value("segment", std::string());
}

}  // namespace

json PolicyStudyOptions::settings_json() const {
  json s = json::object();
  for_each_setting(*this,
                   [&](const char* key, const auto& value) { s[key] = setting_json(value); });
  // The split and the held-out fold are written only where they differ from the subject-wise
  // fold 0, so that a study started before they were settings keeps its settings record.
  if (selection.split == data::SplitKind::kRandom) {
    s["split"] = to_string(selection.split);
    s["train_fraction"] = selection.train_fraction;
  } else if (selection.fold != 0) {
    s["fold"] = selection.fold;
  }
  return s;
}

void PolicyStudyOptions::set_settings(const json& s) {
  for_each_setting(*this, [&](const char* key, auto& value) { read_setting(s.at(key), value); });
  const std::string split = s.value("split", to_string(data::SplitKind::kSubjectKfold));
  selection.split = split == to_string(data::SplitKind::kRandom) ? data::SplitKind::kRandom
                                                                 : data::SplitKind::kSubjectKfold;
  selection.train_fraction = s.value("train_fraction", default_study_selection().train_fraction);
  selection.fold = s.value("fold", 0);
}

// ---- data (the one place that loads the study's windows) ----

PolicyStudyData load_policy_study_data(const PolicyStudyOptions& o) {
  // Any open_dataset source: `--data` (hapt:DIR, hmp:DIR, npy:DIR, generator[:...], a folder),
  // else $MOCA_HAPT_DIR, else the generator (its windows, subjects and seed set here unless the
  // spec names them).
  data::DataOptions selection = o.selection;
  selection.synthetic_seed = derive_seed(selection.split_seed, 3);
  const data::Dataset ds = data::select(selection);
  const data::Windows& all = ds.windows;
  const json source = ds.to_json();
  // The rows of the split (as data::split splits them: the random window-level split, or fold
  // `fold` of the subject-wise folds), subsampled below.
  const bool random = selection.split == data::SplitKind::kRandom;
  const data::Split split =
      random ? data::random_split(static_cast<int>(all.size()), selection.train_fraction,
                                  selection.split_seed)
             : data::subject_kfold(all.subjects, selection.folds, selection.split_seed)
                   .at(static_cast<size_t>(selection.fold));
  auto subsample = [&](std::vector<int> rows, int keep, std::uint64_t stream) {
    if (keep > 0 && keep < static_cast<int>(rows.size())) {
      Rng rng(derive_seed(selection.split_seed, stream));
      shuffle(rows, rng);
      rows.resize(static_cast<size_t>(keep));
      std::sort(rows.begin(), rows.end());
    }
    return rows;
  };
  PolicyStudyData d;
  d.train = all.subset(subsample(split.train, o.train_windows, 1));
  d.test = all.subset(subsample(split.test, o.test_windows, 2));
  auto subjects = [](const data::Windows& w) {
    std::set<int> s(w.subjects.data(), w.subjects.data() + w.subjects.size());
    return std::vector<int>(s.begin(), s.end());
  };
  d.description = {{"source", source},
                   {"split", random ? "random: a window-level split (data::random_split) with "
                                      "train_fraction of the windows for training"
                                    : "subject-wise: fold " + std::to_string(selection.fold) +
                                          " of data::subject_kfold(k = folds) held out"},
                   {"folds", selection.folds},
                   {"split_seed", selection.split_seed},
                   {"train_windows", d.train.size()},
                   {"test_windows", d.test.size()},
                   {"train_subjects", subjects(d.train)},
                   {"test_subjects", subjects(d.test)},
                   {"channels", d.train.channel_names},
                   {"window_length", d.train.length}};
  return d;
}

namespace {

std::string run_key(const std::string& policy, long seed) {
  return policy + "@" + std::to_string(seed);
}

std::string run_dir(const std::string& out, const std::string& policy, long seed, bool reference) {
  return reference ? out + "/reference"
                   : out + "/runs/" + safe_name(policy) + "/seed" + std::to_string(seed);
}

masking::PolicyContext context_for(const data::Windows& train) {
  masking::PolicyContext c;
  c.pilot = &train;
  return c;
}

}  // namespace

// ---- worker: one training run ----

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// The worker's options: `given` (out, shard and the worker fields) with the settings of the
/// study record of its shard's ledger.
PolicyStudyOptions worker_options(const PolicyStudyOptions& given) {
  const std::string path = given.out + "/" + parse_shard(given.shard, "--shard").ledger_name();
  const auto ledger = read_ledger(path);
  if (ledger.empty() || ledger.front().at("kind") != "study") {
    throw std::runtime_error("worker: " + path + " has no study record");
  }
  PolicyStudyOptions o = given;
  o.set_settings(ledger.front().at("settings"));
  return o;
}

/// Pre-training of one run with `policy` (canonical spec): checkpoint `dir`/model.pt, resumed
/// when it exists; the run seed seeds the weights and the masks.
model::PretrainOptions run_pretrain_options(const PolicyStudyOptions& o, const std::string& policy,
                                            const std::string& dir, int train_windows) {
  model::PretrainOptions po = study_pretrain_options(o.pretrain, policy, train_windows);
  po.checkpoint = dir + "/model.pt";
  po.resume = fs::exists(po.checkpoint);
  po.seed = static_cast<std::uint64_t>(o.worker_seed);
  po.runtime.threads = o.worker_threads;
  return po;
}

/// Held-out reconstruction outcomes of a trained run: MSE and MAE under the run's own policy
/// (mask stream of the run seed), MSE under each common task and their mean.
json reconstruction_outcomes(const PolicyStudyOptions& o, const masking::MaskPolicy& policy,
                             const masking::Grid& grid, const masking::PolicyContext& context,
                             const data::Windows& test, const std::string& checkpoint) {
  json outcomes;
  const auto own_masks = masking::window_masks(
      policy, test,
      derive_seed(derive_seed(o.seed, 20), static_cast<std::uint64_t>(o.worker_seed)));
  const model::ImputationError own = heldout_error(checkpoint, test, own_masks, o.worker_threads);
  outcomes["own_mse"] = own.mse;
  outcomes["own_mae"] = own.mae;
  double sum = 0;
  json task_mse;
  for (size_t t = 0; t < o.tasks.size(); ++t) {
    const auto task = masking::make_policy(o.tasks[t], grid, context);
    const auto masks = masking::window_masks(*task, test, derive_seed(derive_seed(o.seed, 30), t));
    const model::ImputationError e = heldout_error(checkpoint, test, masks, o.worker_threads);
    task_mse[task->spec()] = e.mse;
    sum += e.mse;
  }
  outcomes["task_mse"] = task_mse;
  outcomes["task_mse_mean"] = sum / static_cast<double>(o.tasks.size());
  return outcomes;
}

/// The linear probe of a trained run (train part -> held-out part), seeded by the run seed.
model::DownstreamResult probe_run(const PolicyStudyOptions& o, const PolicyStudyData& d,
                                  const std::string& checkpoint) {
  model::DownstreamOptions dopt = model::downstream_defaults(model::DownstreamMode::kLinearProbe);
  dopt.checkpoint = checkpoint;
  dopt.epochs = o.probe_epochs;
  dopt.warmup_epochs =
      std::min(dopt.warmup_epochs.value_or(dopt.default_warmup_epochs()), o.probe_epochs / 2.0);
  dopt.batch_size = std::min(dopt.batch_size, d.train.size());
  dopt.seed = static_cast<std::uint64_t>(o.worker_seed);
  dopt.runtime.device = model::Device::kCpu;
  dopt.runtime.threads = o.worker_threads;
  dopt.progress = false;
  std::ostringstream dlog;
  return model::train_classifier(dopt, d.train, d.test, dlog);
}

}  // namespace

void run_policy_study_worker(const PolicyStudyOptions& given, std::ostream& log) {
  const PolicyStudyOptions o = worker_options(given);
  const auto t0 = std::chrono::steady_clock::now();
  const PolicyStudyData d = load_policy_study_data(o);
  const masking::Grid grid =
      masking::make_grid(d.train.channels, d.train.length, o.pretrain.patch_length);
  const masking::PolicyContext context = context_for(d.train);
  const auto policy = masking::make_policy(o.worker_policy, grid, context);
  json timing = {{"setup", seconds_since(t0)}};
  auto t1 = std::chrono::steady_clock::now();
  const long seed = o.worker_seed;
  const std::string dir = run_dir(o.out, o.worker_policy, seed, o.worker_reference);
  fs::create_directories(dir);

  const model::PretrainOptions po = run_pretrain_options(o, policy->spec(), dir, d.train.size());
  const model::PretrainResult pr = model::pretrain(po, d.train, log);
  if (!pr.finished)
    throw std::runtime_error("worker: pre-training of " + po.policy + " stopped early");
  timing["pretrain"] = seconds_since(t1);
  t1 = std::chrono::steady_clock::now();
  json outcomes = reconstruction_outcomes(o, *policy, grid, context, d.test, po.checkpoint);
  timing["reconstruction"] = seconds_since(t1);
  t1 = std::chrono::steady_clock::now();
  const model::DownstreamResult dr = probe_run(o, d, po.checkpoint);
  outcomes["probe_top1"] = dr.test.accuracy;
  outcomes["probe_macro_f1"] = dr.test.macro_f1;
  timing["probe"] = seconds_since(t1);

  const masking::PolicySpec spec = masking::parse_policy_spec(policy->spec());
  json metrics = {{"policy", o.worker_policy},
                  {"canonical", policy->spec()},
                  {"family", spec.name},
                  {"seed", seed},
                  {"outcomes", outcomes},
                  {"train",
                   {{"final_loss", pr.history.empty() ? 0.0 : pr.history.back().loss},
                    {"iterations", pr.iterations},
                    {"epochs", o.pretrain.epochs},
                    {"threads", o.worker_threads}}},
                  {"checkpoint", fs::relative(po.checkpoint, o.out).string()},
                  {"timing", {{"seconds", timing}}},
                  {"seconds", seconds_since(t0)}};
  write_json(dir + "/metrics.json", metrics);
  log << "worker: " << run_key(o.worker_policy, seed) << " done\n";
}

// ---- the study ----

namespace {

/// Scores of every policy under `features` not yet in the ledger.
void score_policies(const PolicyStudyOptions& o, const PolicyStudyData& d, const std::string& name,
                    std::shared_ptr<const masking::FeatureMap> map, Ledger& ledger,
                    std::ostream& log) {
  const masking::Grid grid =
      masking::make_grid(d.train.channels, d.train.length, o.pretrain.patch_length);
  const masking::PolicyContext context = context_for(d.train);
  // The encoder map runs the encoder on every view of every draw: it scores a seeded random
  // subset of `encoder_windows` training windows (the same for every policy).
  data::Windows subset;
  const bool sub = name == "encoder" && o.encoder_windows > 0 && o.encoder_windows < d.train.size();
  if (sub) {
    std::vector<int> rows(static_cast<size_t>(d.train.size()));
    for (int i = 0; i < d.train.size(); ++i) rows[static_cast<size_t>(i)] = i;
    Rng rng(derive_seed(o.seed, 11));
    shuffle(rows, rng);
    rows.resize(static_cast<size_t>(o.encoder_windows));
    std::sort(rows.begin(), rows.end());
    subset = d.train.subset(rows);
  }
  const data::Windows& scored = sub ? subset : d.train;
  std::unique_ptr<masking::PolicyScorer> scorer;
  for (const std::string& p : o.policies) {
    const std::string key = name + "|" + p;
    if (ledger.has("score", key)) continue;
    if (!scorer) {
      masking::ScoreOptions so;
      so.estimator = masking::Estimator::kCca;
      so.mask_mode = name == "encoder" ? masking::MaskMode::kShared : masking::MaskMode::kPerWindow;
      so.draws = o.draws;
      so.pca = o.pca;
      so.seed = derive_seed(o.seed, 10);
      so.threads = o.threads > 0 ? o.threads : hardware_threads();
      scorer = std::make_unique<masking::PolicyScorer>(scored, grid, map, so);
    }
    const auto policy = masking::make_policy(p, grid, context);
    const masking::PolicyScore s = scorer->score(*policy);
    ledger.append({{"kind", "score"},
                   {"key", key},
                   {"features", name},
                   {"mask_mode", name == "encoder" ? "shared" : "per-window"},
                   {"policy", p},
                   {"windows", scored.size()},
                   {"score", masking::to_json(s)}});
    log << "policy_study: score " << name << " " << p << " = " << s.mean << " +- " << s.std_error
        << "\n";
  }
}

/// A training the study still needs: a grid run (policy, seed) or the reference encoder.
struct Pending {
  std::string policy;
  long seed;
  bool reference;
};

/// Runs the study's pending trainings as worker processes (study_runner: at most `jobs` at once,
/// the reference encoder alone with all threads) and records each finished one in the ledger.
/// With --shard K/N the runs at positions i % N == K - 1 of the grid (seed-major) are this
/// process's; shard 1 also scores the policies and trains the reference encoder.
class StudyRunner {
 public:
  StudyRunner(const PolicyStudyOptions& o, const PolicyStudyData& d, Ledger& ledger,
              std::ostream& log)
      : o_(o),
        d_(d),
        ledger_(ledger),
        log_(log),
        shard_(parse_shard(o.shard, "--shard")),
        need_reference_(shard_.index == 1 &&
                        std::count(o.features.begin(), o.features.end(), "encoder") > 0),
        total_threads_(o.threads > 0 ? o.threads : hardware_threads()),
        per_job_(std::max(1, total_threads_ / o.jobs)) {}

  /// The scores that need no encoder (they run with all threads), then the trainings not in
  /// the ledger: the reference encoder first (the encoder map needs it), then this shard's
  /// share of the grid.
  std::vector<Pending> score_and_list_pending() {
    std::vector<Pending> pending;
    if (need_reference_ && !ledger_.has("reference", "reference")) {
      pending.push_back({o_.reference_policy, static_cast<long>(o_.reference_seed), true});
    }
    if (shard_.index == 1) {
      for (const std::string& f : o_.features) {
        if (f != "encoder") score_policies(o_, d_, f, masking::make_feature_map(f), ledger_, log_);
      }
    }
    size_t position = 0;
    for (long s = 0; s < o_.seeds; ++s) {
      for (const std::string& p : o_.policies) {
        if (shard_.owns(position++) && !ledger_.has("run", run_key(p, s)))
          pending.push_back({p, s, false});
      }
    }
    return pending;
  }

  /// The runs of this shard (all of them when unsharded).
  int expected_runs() const {
    int n = 0;
    const size_t total = o_.policies.size() * static_cast<size_t>(o_.seeds);
    for (size_t i = 0; i < total; ++i) n += shard_.owns(i) ? 1 : 0;
    return n;
  }

  /// Records the pending runs whose metrics.json exists (finished before a kill); returns the
  /// others, which still have to be started.
  std::vector<Pending> record_finished(const std::vector<Pending>& pending) {
    std::vector<Pending> to_start;
    for (const Pending& p : pending) {
      if (fs::exists(run_dir(o_.out, p.policy, p.seed, p.reference) + "/metrics.json")) {
        record(p);
        if (!p.reference) ++new_runs_;
      } else {
        to_start.push_back(p);
      }
    }
    return to_start;
  }

  /// Runs the workers of `to_start` (the reference alone first, then the grid runs, --jobs at
  /// once) until all are done, one failed (then throws, after the running ones have finished)
  /// or --max-runs is reached.
  void run_workers(const std::vector<Pending>& to_start) {
    std::vector<WorkerJob> reference, runs;
    for (const Pending& p : to_start) (p.reference ? reference : runs).push_back(job(p));
    const auto on_success = [&](const WorkerJob& j) {
      const Pending& p = pending_of_.at(j.key);
      record(p);
      if (p.reference) {
        encoder_scores();
      } else {
        ++new_runs_;
      }
    };
    const std::string exe = self_executable();
    run_worker_jobs(exe, reference, 1, -1, on_success, "policy_study", log_);
    const int left = o_.max_runs < 0 ? -1 : std::max(0, o_.max_runs - new_runs_);
    run_worker_jobs(exe, runs, o_.jobs, left, on_success, "policy_study", log_);
  }

  /// The encoder map's scores, once the reference encoder is in the ledger.
  void encoder_scores() {
    if (!need_reference_ || !ledger_.has("reference", "reference")) return;
    const json* ref = ledger_.find("reference", "reference");
    model::InferenceOptions io;
    io.runtime.device = model::Device::kCpu;
    io.runtime.threads = total_threads_;
    score_policies(o_, d_, "encoder",
                   model::make_encoder_feature_map(
                       o_.out + "/" + ref->at("checkpoint").get<std::string>(), io),
                   ledger_, log_);
  }

 private:
  /// The worker process of a pending training.
  WorkerJob job(const Pending& p) {
    WorkerJob j;
    j.key = (p.reference ? "reference " : "run ") + run_key(p.policy, p.seed);
    j.threads = p.reference ? total_threads_ : per_job_;
    j.args = {"--out",
              o_.out,
              "--shard",
              shard_.to_string(),
              "--worker-policy",
              p.policy,
              "--worker-seed",
              std::to_string(p.seed),
              "--worker-threads",
              std::to_string(j.threads)};
    if (p.reference) j.args.push_back("--worker-reference");
    j.log_path = run_dir(o_.out, p.policy, p.seed, p.reference) + "/worker.log";
    pending_of_[j.key] = p;
    return j;
  }

  /// A finished run's metrics.json into the ledger as a "run" (or "reference") record.
  void record(const Pending& p) {
    const std::string dir = run_dir(o_.out, p.policy, p.seed, p.reference);
    json m = read_json_file(dir + "/metrics.json");
    m["kind"] = p.reference ? "reference" : "run";
    m["key"] = p.reference ? "reference" : run_key(p.policy, p.seed);
    m["metrics"] = fs::relative(dir + "/metrics.json", o_.out).string();
    ledger_.append(m);
    log_ << "policy_study: " << (p.reference ? "reference " : "run ") << run_key(p.policy, p.seed)
         << " recorded\n";
  }

  const PolicyStudyOptions& o_;
  const PolicyStudyData& d_;
  Ledger& ledger_;
  std::ostream& log_;
  Shard shard_;
  bool need_reference_;
  int total_threads_, per_job_;
  std::map<std::string, Pending> pending_of_;
  int new_runs_ = 0;
};

/// Starts the ledger with the study record, or checks that the one there has these settings.
void open_study(const PolicyStudyOptions& options, const PolicyStudyData& d, Ledger& ledger,
                std::ostream& log) {
  json study = {{"kind", "study"}, {"settings", options.settings_json()}, {"data", d.description}};
  // The windows' numbers, not only the data's path and shape: a resume on changed data would mix
  // its runs and scores with the old ones.
  const json fingerprints = {{"train", data::fingerprint(d.train)},
                             {"test", data::fingerprint(d.test)}};
  study["data_fingerprint"] = fingerprints;
  tools::record_program_options(study);
  if (open_study_record(ledger, study)) {
    // Ledgers written before the fingerprints lack them: compared where recorded.
    const json& was = ledger.records().front().value("data_fingerprint", fingerprints);
    for (const char* part : {"train", "test"}) {
      if (was.at(part) != fingerprints.at(part)) {
        throw std::runtime_error(ledger.path() + ": the study's " + part +
                                 " windows changed since its runs began (data fingerprint " +
                                 was.at(part).get<std::string>() + " -> " +
                                 fingerprints.at(part).get<std::string>() +
                                 "); restore the data or use another --out");
      }
    }
    log << "policy_study: resuming " << ledger.path() << " (" << ledger.records().size() - 1
        << " records done)\n";
  }
}

}  // namespace

int run_policy_study(const PolicyStudyOptions& options, std::ostream& out, std::ostream& log) {
  options.validate();
  if (options.report) {
    build_policy_study_report(options.out, out, log);
    return 0;
  }
  // The data first: bad data or data flags leave no output folder behind, and it is read once.
  const PolicyStudyData d = load_policy_study_data(options);
  fs::create_directories(options.out);
  const Shard shard = parse_shard(options.shard, "--shard");
  Ledger ledger(options.out + "/" + shard.ledger_name());
  const FileLock lock(lock_path_for_file(ledger.path()), "ledger " + ledger.path());
  open_study(options, d, ledger, log);

  StudyRunner runner(options, d, ledger, log);
  const std::vector<Pending> pending = runner.score_and_list_pending();
  runner.run_workers(runner.record_finished(pending));
  runner.encoder_scores();  // when the reference was recorded in an earlier session

  int runs = 0;
  for (const json& r : ledger.records()) runs += r.at("kind") == "run" ? 1 : 0;
  const int expected = runner.expected_runs();
  if (runs < expected) {
    log << "policy_study: " << runs << " of " << expected
        << " runs done; stopped (--max-runs); run the same command again to resume\n";
  }
  if (shard.sharded()) {
    log << "policy_study: shard " << shard.to_string() << " done (" << ledger.path()
        << "); policy_study --out " << options.out << " --report merges the shards' ledgers\n";
    return runs;
  }
  build_policy_study_report(options.out, out, log);
  return runs;
}

}  // namespace moca::sim
