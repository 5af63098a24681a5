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
#include "moca/masking/feature_map.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/model/downstream.hpp"
#include "moca/model/encoder_features.hpp"
#include "moca/model/imputation.hpp"
#include "moca/model/pretrain.hpp"
#include "score_json.hpp"
#include "study_data.hpp"
#include "study_training.hpp"
#include "theory_vs_training.hpp"

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

void PolicyStudyOptions::validate() const {
  const std::string f = "PolicyStudyOptions::validate(): ";
  dataset.validate();
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(f + what);
  };
  need(!out.empty(), "out is empty (the output folder is required)");
  need(generator_windows >= 30,
       "generator_windows (" + std::to_string(generator_windows) + ") must be >= 30");
  need(folds >= 2, "folds (" + std::to_string(folds) + ") must be >= 2");
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
  need(seeds >= 1 && seeds <= 1000, "seeds (" + std::to_string(seeds) + ") must be in [1, 1000]");
  need(patch_length >= 1, "patch_length (" + std::to_string(patch_length) + ") must be >= 1");
  need(epochs >= 1, "epochs (" + std::to_string(epochs) + ") must be >= 1");
  need(batch_size >= 1, "batch_size (" + std::to_string(batch_size) + ") must be >= 1");
  need(lr > 0, "lr (" + masking::format_number(lr) + ") must be > 0");
  need(warmup_epochs >= 0 && warmup_epochs < epochs,
       "warmup_epochs (" + masking::format_number(warmup_epochs) + ") must be in [0, epochs)");
  need(checkpoint_every >= 1,
       "checkpoint_every (" + std::to_string(checkpoint_every) + ") must be >= 1");
  need(probe_epochs >= 1, "probe_epochs (" + std::to_string(probe_epochs) + ") must be >= 1");
  for (const auto& m : features) {
    need(m == "raw" || m == "patch-mean" || m == "encoder",
         "features (" + m + ") is not one of raw, patch-mean, encoder");
  }
  need(pca >= 1, "pca (" + std::to_string(pca) + ") must be >= 1");
  need(draws >= 2, "draws (" + std::to_string(draws) + ") must be >= 2");
  need(encoder_windows >= 0 && encoder_windows != 1 && encoder_windows != 2,
       "encoder_windows (" + std::to_string(encoder_windows) + ") must be 0 (all) or >= 3");
  masking::parse_policy_spec(reference_policy);
  need(resamples >= 100, "resamples (" + std::to_string(resamples) + ") must be >= 100");
  need(jobs >= 1 && jobs <= 64, "jobs (" + std::to_string(jobs) + ") must be in [1, 64]");
  need(threads >= 0 && threads <= 1024,
       "threads (" + std::to_string(threads) + ") must be in [0, 1024]");
  need(max_runs == -1 || max_runs >= 0,
       "max_runs (" + std::to_string(max_runs) + ") must be -1 (no limit) or >= 0");
}

json PolicyStudyOptions::settings_json() const {
  const data::DatasetOptions& d = dataset;
  return {{"data", data},
          {"dataset",
           {{"format", d.format},
            {"modalities", d.modalities},
            {"sample_rate_hz", d.sample_rate_hz},
            {"drop_nonfinite", d.drop_nonfinite},
            {"keep_classes", d.keep_classes},
            {"npy_layout", d.npy_layout}}},
          {"generator_windows", generator_windows},
          {"folds", folds},
          {"split_seed", split_seed},
          {"train_windows", train_windows},
          {"test_windows", test_windows},
          {"policies", policies},
          {"seeds", seeds},
          {"preset", preset},
          {"patch_length", patch_length},
          {"epochs", epochs},
          {"batch_size", batch_size},
          {"lr", lr},
          {"warmup_epochs", warmup_epochs},
          {"checkpoint_every", checkpoint_every},
          {"probe_epochs", probe_epochs},
          {"features", features},
          {"pca", pca},
          {"draws", draws},
          {"encoder_windows", encoder_windows},
          {"reference_policy", reference_policy},
          {"reference_seed", reference_seed},
          {"tasks", tasks},
          {"seed", seed},
          {"resamples", resamples}};
}

void PolicyStudyOptions::set_settings(const json& s) {
  s.at("data").get_to(data);
  const json& d = s.at("dataset");
  d.at("format").get_to(dataset.format);
  d.at("modalities").get_to(dataset.modalities);
  d.at("sample_rate_hz").get_to(dataset.sample_rate_hz);
  d.at("drop_nonfinite").get_to(dataset.drop_nonfinite);
  d.at("keep_classes").get_to(dataset.keep_classes);
  d.at("npy_layout").get_to(dataset.npy_layout);
  s.at("generator_windows").get_to(generator_windows);
  s.at("folds").get_to(folds);
  s.at("split_seed").get_to(split_seed);
  s.at("train_windows").get_to(train_windows);
  s.at("test_windows").get_to(test_windows);
  s.at("policies").get_to(policies);
  s.at("seeds").get_to(seeds);
  s.at("preset").get_to(preset);
  s.at("patch_length").get_to(patch_length);
  s.at("epochs").get_to(epochs);
  s.at("batch_size").get_to(batch_size);
  s.at("lr").get_to(lr);
  s.at("warmup_epochs").get_to(warmup_epochs);
  s.at("checkpoint_every").get_to(checkpoint_every);
  s.at("probe_epochs").get_to(probe_epochs);
  s.at("features").get_to(features);
  s.at("pca").get_to(pca);
  s.at("draws").get_to(draws);
  s.at("encoder_windows").get_to(encoder_windows);
  s.at("reference_policy").get_to(reference_policy);
  s.at("reference_seed").get_to(reference_seed);
  s.at("tasks").get_to(tasks);
  s.at("seed").get_to(seed);
  s.at("resamples").get_to(resamples);
}

// ---- data (the one place that loads the study's windows) ----

PolicyStudyData load_policy_study_data(const PolicyStudyOptions& o) {
  // Any open_dataset source: `--data` (hapt:DIR, hmp:DIR, npy:DIR, generator[:...], a folder),
  // else $MOCA_HAPT_DIR, else the generator (its windows, subjects and seed set here unless the
  // spec names them).
  StudyDataOptions where;
  where.data = o.data;
  data::DatasetOptions dopt = o.dataset;
  dopt.use_env = false;  // resolved_spec() has read the environment already
  dopt.generator.windows = o.generator_windows;
  dopt.generator.seed = derive_seed(o.split_seed, 3);
  const data::Dataset ds = data::open_dataset(where.resolved_spec(), dopt);
  const data::Windows& all = ds.windows;
  const json source = ds.to_json();
  const data::Split split = data::subject_kfold(all.subjects, o.folds, o.split_seed).at(0);
  auto subsample = [&](std::vector<int> rows, int keep, std::uint64_t stream) {
    if (keep > 0 && keep < static_cast<int>(rows.size())) {
      Rng rng(derive_seed(o.split_seed, stream));
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
                   {"split", "subject-wise: fold 0 of data::subject_kfold(k = folds) held out"},
                   {"folds", o.folds},
                   {"split_seed", o.split_seed},
                   {"train_windows", d.train.size()},
                   {"test_windows", d.test.size()},
                   {"train_subjects", subjects(d.train)},
                   {"test_subjects", subjects(d.test)},
                   {"channels", d.train.channel_names},
                   {"window_length", d.train.length}};
  return d;
}

// ---- ledger ----

std::vector<json> read_ledger(const std::string& path) {
  std::vector<json> records;
  std::ifstream in(path);
  if (!in) return records;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    try {
      records.push_back(json::parse(line));
    } catch (const json::exception& e) {
      throw std::runtime_error("ledger " + path + " line " + std::to_string(n) +
                               " is not valid JSON: " + e.what());
    }
    if (!records.back().is_object() || !records.back().contains("kind")) {
      throw std::runtime_error("ledger " + path + " line " + std::to_string(n) +
                               " is not a record (an object with \"kind\")");
    }
  }
  return records;
}

namespace {

/// The ledger in memory; every append rewrites the file atomically.
class Ledger {
 public:
  explicit Ledger(std::string path) : path_(std::move(path)), records_(read_ledger(path_)) {}
  const std::vector<json>& records() const { return records_; }
  void append(const json& record) {
    records_.push_back(record);
    std::string text;
    for (const json& r : records_) text += r.dump() + "\n";
    write_output_text(path_, text);
  }
  bool has(const std::string& kind, const std::string& key) const {
    return std::any_of(records_.begin(), records_.end(), [&](const json& r) {
      return r.at("kind") == kind && r.value("key", "") == key;
    });
  }
  const json* find(const std::string& kind, const std::string& key) const {
    for (const json& r : records_) {
      if (r.at("kind") == kind && r.value("key", "") == key) return &r;
    }
    return nullptr;
  }

 private:
  std::string path_;
  std::vector<json> records_;
};

std::string run_key(const std::string& policy, long seed) {
  return policy + "@" + std::to_string(seed);
}

std::string run_dir(const std::string& out, const std::string& policy, long seed, bool reference) {
  return reference ? out + "/reference"
                   : out + "/runs/" + safe_name(policy) + "/seed" + std::to_string(seed);
}

int hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

/// A started worker process.
struct Child {
  pid_t pid = -1;
  std::string key, policy, dir;
  long seed = 0;
  bool reference = false;
};

Child start_worker(const std::string& exe, const PolicyStudyOptions& o, const std::string& policy,
                   long seed, bool reference, int threads) {
  Child c;
  c.policy = policy;
  c.seed = seed;
  c.reference = reference;
  c.key = run_key(policy, seed);
  c.dir = run_dir(o.out, policy, seed, reference);
  fs::create_directories(c.dir);
  std::vector<std::string> args = {exe,
                                   "--out",
                                   o.out,
                                   "--worker-policy",
                                   policy,
                                   "--worker-seed",
                                   std::to_string(seed),
                                   "--worker-threads",
                                   std::to_string(threads)};
  if (reference) args.push_back("--worker-reference");
  const std::string log_path = c.dir + "/worker.log";
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: die with the parent (a killed study leaves no orphan training), log to a file.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
      close(fd);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  c.pid = pid;
  return c;
}

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error(path + " is not valid JSON: " + e.what());
  }
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

/// The worker's options: `given` (out and the worker fields) with the settings of the study
/// record of `given.out`/ledger.jsonl.
PolicyStudyOptions worker_options(const PolicyStudyOptions& given) {
  const auto ledger = read_ledger(given.out + "/ledger.jsonl");
  if (ledger.empty() || ledger.front().at("kind") != "study") {
    throw std::runtime_error("worker: " + given.out + "/ledger.jsonl has no study record");
  }
  PolicyStudyOptions o = given;
  o.set_settings(ledger.front().at("settings"));
  return o;
}

/// Pre-training of one run with `policy` (canonical spec): checkpoint `dir`/model.pt, resumed
/// when it exists; the run seed seeds the weights and the masks.
model::PretrainOptions run_pretrain_options(const PolicyStudyOptions& o, const std::string& policy,
                                            const std::string& dir, int train_windows) {
  model::PretrainOptions po = study_pretrain_options(o, policy, train_windows);
  po.checkpoint = dir + "/model.pt";
  po.checkpoint_every = o.checkpoint_every;
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
  const auto own_masks = draw_window_masks(
      policy, test,
      derive_seed(derive_seed(o.seed, 20), static_cast<std::uint64_t>(o.worker_seed)));
  const MaskedError own =
      masked_reconstruction_error(checkpoint, test, own_masks, o.worker_threads);
  outcomes["own_mse"] = own.mse;
  outcomes["own_mae"] = own.mae;
  double sum = 0;
  json task_mse;
  for (size_t t = 0; t < o.tasks.size(); ++t) {
    const auto task = masking::make_policy(o.tasks[t], grid, context);
    const auto masks = draw_window_masks(*task, test, derive_seed(derive_seed(o.seed, 30), t));
    const MaskedError e = masked_reconstruction_error(checkpoint, test, masks, o.worker_threads);
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
  dopt.warmup_epochs = std::min(dopt.warmup_epochs, o.probe_epochs / 2.0);
  dopt.batch_size = std::min(dopt.batch_size, d.train.size());
  dopt.seed = static_cast<std::uint64_t>(o.worker_seed);
  dopt.runtime.device = "cpu";
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
  const masking::Grid grid = masking::make_grid(d.train.channels, d.train.length, o.patch_length);
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
                    {"epochs", o.epochs},
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
  const masking::Grid grid = masking::make_grid(d.train.channels, d.train.length, o.patch_length);
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
                   {"score", tools::to_json(s)}});
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

/// Runs the study's pending trainings as worker processes (at most `jobs` at once, the reference
/// encoder alone with all threads) and records each finished one in the ledger.
class StudyRunner {
 public:
  StudyRunner(const PolicyStudyOptions& o, const PolicyStudyData& d, Ledger& ledger,
              std::ostream& log)
      : o_(o),
        d_(d),
        ledger_(ledger),
        log_(log),
        need_reference_(std::count(o.features.begin(), o.features.end(), "encoder") > 0),
        total_threads_(o.threads > 0 ? o.threads : hardware_threads()),
        per_job_(std::max(1, total_threads_ / o.jobs)),
        exe_(fs::read_symlink("/proc/self/exe").string()) {}

  /// The scores that need no encoder (they run with all threads), then the trainings not in
  /// the ledger: the reference encoder first (the encoder map needs it), then the grid.
  std::vector<Pending> score_and_list_pending() {
    std::vector<Pending> pending;
    if (need_reference_ && !ledger_.has("reference", "reference")) {
      pending.push_back({o_.reference_policy, static_cast<long>(o_.reference_seed), true});
    }
    for (const std::string& f : o_.features) {
      if (f != "encoder") score_policies(o_, d_, f, masking::make_feature_map(f), ledger_, log_);
    }
    for (long s = 0; s < o_.seeds; ++s) {
      for (const std::string& p : o_.policies) {
        if (!ledger_.has("run", run_key(p, s))) pending.push_back({p, s, false});
      }
    }
    return pending;
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

  /// Starts and waits for the workers of `to_start` until all are done, one failed (then
  /// throws, after the running ones have finished) or --max-runs is reached.
  void run_workers(const std::vector<Pending>& to_start) {
    std::vector<Child> running;
    size_t next = 0;
    std::string failure;
    while (true) {
      if (failure.empty()) next = start_workers(to_start, next, running);
      if (running.empty()) break;
      int status = 0;
      const pid_t pid = waitpid(-1, &status, 0);
      if (pid < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
      }
      const auto it = std::find_if(running.begin(), running.end(),
                                   [&](const Child& c) { return c.pid == pid; });
      if (it == running.end()) continue;
      const Child c = *it;
      running.erase(it);
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        record({c.policy, c.seed, c.reference});
        if (c.reference) {
          encoder_scores();
        } else {
          ++new_runs_;
        }
      } else if (failure.empty()) {
        failure = "run " + c.key + " failed (" +
                  (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                     : "signal " + std::to_string(WTERMSIG(status))) +
                  "); its log: " + c.dir + "/worker.log";
      }
    }
    if (!failure.empty()) throw std::runtime_error(failure);
  }

  /// The encoder map's scores, once the reference encoder is in the ledger.
  void encoder_scores() {
    if (!need_reference_ || !ledger_.has("reference", "reference")) return;
    const json* ref = ledger_.find("reference", "reference");
    model::InferenceOptions io;
    io.runtime.device = "cpu";
    io.runtime.threads = total_threads_;
    score_policies(o_, d_, "encoder",
                   model::make_encoder_feature_map(
                       o_.out + "/" + ref->at("checkpoint").get<std::string>(), io),
                   ledger_, log_);
  }

 private:
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

  bool limit_reached() const { return o_.max_runs >= 0 && new_runs_ >= o_.max_runs; }

  /// Starts workers from to_start[next] on while a job slot is free, no reference is running,
  /// and the started runs stay within --max-runs (the reference does not count); the reference
  /// starts alone. Returns the new `next`.
  size_t start_workers(const std::vector<Pending>& to_start, size_t next,
                       std::vector<Child>& running) {
    const bool reference_running =
        std::any_of(running.begin(), running.end(), [](const Child& c) { return c.reference; });
    while (next < to_start.size() && static_cast<int>(running.size()) < o_.jobs &&
           !reference_running && !limit_reached() &&
           (o_.max_runs < 0 || new_runs_ + static_cast<int>(running.size()) < o_.max_runs ||
            to_start[next].reference)) {
      const Pending& p = to_start[next++];
      const int threads = p.reference ? total_threads_ : per_job_;
      running.push_back(start_worker(exe_, o_, p.policy, p.seed, p.reference, threads));
      log_ << "policy_study: started " << (p.reference ? "reference " : "run ")
           << run_key(p.policy, p.seed) << " (" << threads << " threads, pid " << running.back().pid
           << ")\n";
      if (p.reference) break;
    }
    return next;
  }

  const PolicyStudyOptions& o_;
  const PolicyStudyData& d_;
  Ledger& ledger_;
  std::ostream& log_;
  bool need_reference_;
  int total_threads_, per_job_;
  std::string exe_;
  int new_runs_ = 0;
};

/// Starts the ledger with the study record, or checks that the one there has these settings.
void open_study(const PolicyStudyOptions& options, const PolicyStudyData& d, Ledger& ledger,
                std::ostream& log) {
  const json settings = options.settings_json();
  if (ledger.records().empty()) {
    json study = {{"kind", "study"}, {"settings", settings}, {"data", d.description}};
    if (!options.recorded_options.empty()) study["options"] = options.recorded_options;
    ledger.append(study);
    return;
  }
  const json& first = ledger.records().front();
  if (first.at("kind") != "study" || first.at("settings") != settings) {
    throw std::runtime_error(options.out +
                             " holds a study with different settings (ledger.jsonl line 1); "
                             "use another --out or the same options");
  }
  log << "policy_study: resuming " << options.out << " (" << ledger.records().size() - 1
      << " records done)\n";
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
  const FileLock lock(lock_path_for_folder(options.out), "output folder " + options.out);
  Ledger ledger(options.out + "/ledger.jsonl");
  open_study(options, d, ledger, log);

  StudyRunner runner(options, d, ledger, log);
  const std::vector<Pending> pending = runner.score_and_list_pending();
  runner.run_workers(runner.record_finished(pending));
  runner.encoder_scores();  // when the reference was recorded in an earlier session

  int runs = 0;
  for (const json& r : ledger.records()) runs += r.at("kind") == "run" ? 1 : 0;
  const int expected = static_cast<int>(options.policies.size()) * options.seeds;
  if (runs < expected) {
    log << "policy_study: " << runs << " of " << expected
        << " runs done; stopped (--max-runs); run the same command again to resume\n";
  }
  build_policy_study_report(options.out, out, log);
  return runs;
}

}  // namespace moca::sim
