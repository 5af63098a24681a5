#pragma once
/// \file policy_study.hpp
/// A resumable, multi-seed study of whether a masking policy's score E_m[Phi(m)] predicts what
/// training with it achieves (docs/studies.md, "policy_study").
///
/// The output folder holds `ledger.jsonl`, one JSON record per line, rewritten atomically after
/// every record: {"kind": "study", "settings": {...}, "data": {...}} first, then "score" records
/// (one per policy and feature map), one "reference" record (the encoder of the `encoder`
/// feature map) and "run" records (one per policy and seed, with every outcome). The runner
/// skips what the ledger holds, so a killed study resumes where it stopped; the report is built
/// from the ledger alone. Past one machine, `--shard K/N` runs a share of the runs per process
/// (a SLURM job array) with a ledger each; the report merges them (study_runner.hpp).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/selection.hpp"
#include "moca/data/windows.hpp"
#include "moca/model/train/pretrain.hpp"
#include "study_runner.hpp"

namespace moca::sim {

/// The default policies of the study (21: cross, extrapolation, sync, temporal, per-modality at
/// ratios 0.5 / 0.75 / 0.9, sensor with
/// keep 3 / 2 / 1, adaptive over cross 0.75 at beta 5 / 20 / 50).
std::vector<std::string> default_study_policies();

/// The study's defaults of the data selection: subject-wise folds (3, fold 0 held out, seed 0)
/// of the generator's 1400 windows or of the data named.
data::DataOptions default_study_selection();

/// The study's pre-training defaults: tiny, Lp 20, 5 epochs (1 of warm-up), batch 50, lr 1e-3, a
/// checkpoint every epoch.
model::PretrainOptions default_study_pretrain();

/// Options of the study. Everything but `out`, `jobs`, `threads`, `report`, `max_runs`, `shard`
/// and the worker fields is a setting: it is stored in the ledger and must match on resume.
struct PolicyStudyOptions {
  std::string out;  ///< output folder (required)
  /// The data selection (data::DataOptions): the spec (empty: $MOCA_HAPT_DIR, else the
  /// generator), the --data-* flags, the generator's size (synthetic_windows, 1400 here: 10
  /// subjects; its seed is derived from split_seed) and the subject-wise split: fold 0 of
  /// `folds` (3 here, >= 2) is held out; split_seed (0 here) also seeds the subsampling.
  data::DataOptions selection = default_study_selection();
  int train_windows = 1000;  ///< training windows kept (0 = all of the training part)
  int test_windows = 600;    ///< held-out windows kept (0 = all of the held-out part)
  std::vector<std::string> policies = default_study_policies();  ///< >= 3 distinct specs
  int seeds = 3;                                                 ///< run seeds 0 .. seeds-1 (>= 1)
  /// Every run's pre-training: the study's rows of model::PretrainOptions (kStudyScope and
  /// kResumableStudyScope: preset, patch_length, epochs, batch_size, lr, warmup_epochs and
  /// checkpoint_every, the resume granularity) at default_study_pretrain(); each run sets its
  /// policy, seed, checkpoint and threads.
  model::PretrainOptions pretrain = default_study_pretrain();
  int probe_epochs = 4;                                                  ///< linear-probe epochs
  std::vector<std::string> features = {"raw", "patch-mean", "encoder"};  ///< score maps
  int pca = 30;               ///< PCA components per view of the CCA score
  int draws = 10;             ///< mask draws per score (>= 2)
  int encoder_windows = 200;  ///< encoder map: training windows scored (0 = all)
  std::string reference_policy = "random:ratio=0.75";  ///< policy of the reference encoder
  std::uint64_t reference_seed = 1000;                 ///< its run seed
  std::vector<std::string> tasks = {"random:ratio=0.7", "temporal:ratio=0.7", "sensor:keep=1",
                                    "extrapolation:ratio=0.7"};  ///< common held-out tasks
  std::uint64_t seed = 0;  ///< base seed: task masks, score draws, own-mask streams, bootstrap
  int resamples = 2000;    ///< bootstrap resamples of the report (>= 100)

  int jobs = 1;         ///< trainings at once (child processes), >= 1
  int threads = 0;      ///< threads in all; each job gets max(1, threads / jobs); 0 = cores
  bool report = false;  ///< only rebuild the report from the ledger
  int max_runs = -1;    ///< stop after this many new runs (-1 = no limit); resumable
  /// K/N: this process's share of the runs (study_runner.hpp; "" = SLURM's array, else 1/1);
  /// its ledger is ledger.shard-K-of-N.jsonl and --report merges the shards' ledgers.
  std::string shard;
  std::string worker_policy;      ///< internal: run one training (child process)
  long worker_seed = -1;          ///< internal
  bool worker_reference = false;  ///< internal: the run is the reference encoder
  int worker_threads = 1;         ///< internal

  /// Throws std::invalid_argument naming the option, its value and the rule.
  void validate() const;
  /// The settings as JSON (the ledger's "settings").
  nlohmann::json settings_json() const;
  /// Sets the settings from settings_json() output (worker processes read them from the ledger).
  void set_settings(const nlohmann::json& settings);

  /// The options a user sets (option_schema.hpp), in the program's order; `selection` (but its
  /// generator size) and `pretrain` have their own schemas, the worker fields are internal.
  /// check_ranges checks the rows' ranges; the rules in words are validate()'s.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* P = "PolicyStudyOptions";
    const Range any = Range::any();
    constexpr const char* windows_rule = "0 or >= 3";
    // a list given as one comma-separated text, split by the program (split_spec_list: a policy
    // spec's options hold commas)
    auto list = [&](const char* key, const char* flag, const char* help) {
      return Option{P, key, flag, help, any, kEveryScope, nullptr, Surface::kBoth, false};
    };
    v(o.out, Option{P, "out", "--out", "output folder (ledger.jsonl, runs/, report, figures/)"});
    // (the generator's size of the data selection: a setting of its own name, generator_windows)
    v(o.selection.synthetic_windows,
      Option{P, "generator_windows", "--generator-windows", "generator: windows (10 subjects)",
             Range::at_least(30)});
    v(o.train_windows, Option{P, "train_windows", "--train-windows",
                              "training windows kept (0 = all)", any, kEveryScope, windows_rule});
    v(o.test_windows, Option{P, "test_windows", "--test-windows", "held-out windows kept (0 = all)",
                             any, kEveryScope, windows_rule});
    v(o.policies, list("policies", "--policies",
                       "comma-separated policy specs (default: 21 — cross, extrapolation, sync, "
                       "temporal, per-modality at 0.5/0.75/0.9, sensor keep 3/2/1, adaptive beta "
                       "5/20/50)"));
    v(o.seeds,
      Option{P, "seeds", "--seeds", "seeds per policy (0 .. N-1)", Range::between(1, 1000)});
    v(o.probe_epochs,
      Option{P, "probe_epochs", "--probe-epochs", "linear-probe epochs", Range::at_least(1)});
    v(o.features, list("features", "--features",
                       "score feature maps, comma-separated: raw, patch-mean, encoder (default "
                       "all)"));
    v(o.pca, Option{P, "pca", "--pca", "principal components per view", Range::at_least(1)});
    v(o.draws, Option{P, "draws", "--draws", "mask draws per score", Range::at_least(2)});
    v(o.encoder_windows,
      Option{P, "encoder_windows", "--encoder-windows",
             "encoder map: training windows scored (0 = all)", any, kEveryScope, windows_rule});
    v(o.reference_policy,
      Option{P, "reference_policy", "--reference-policy", "policy of the reference encoder"});
    v(o.reference_seed,
      Option{P, "reference_seed", "--reference-seed", "seed of the reference encoder"});
    v(o.tasks, list("tasks", "--tasks",
                    "common held-out tasks, comma-separated specs (default random 0.7, temporal "
                    "0.7, sensor keep 1, extrapolation 0.7)"));
    v(o.seed, Option{P, "seed", "--seed", "base seed (task masks, score draws, bootstrap)"});
    v(o.resamples,
      Option{P, "resamples", "--resamples", "bootstrap resamples", Range::at_least(100)});
    v(o.jobs, Option{P, "jobs", "--jobs", "trainings at once (threads are split between them)",
                     Range::between(1, 64)});
    v(o.threads,
      Option{P, "threads", "--threads", "threads in all (0 = cores)", Range::between(0, 1024)});
    v(o.report, Option{P, "report", "--report", "only rebuild the report from the ledger"});
    v(o.max_runs, Option{P, "max_runs", "--max-runs",
                         "stop after this many new runs (-1 = no limit); run again to resume", any,
                         kEveryScope, "-1 or >= 0"});
    v(o.shard, Option{P, "shard", "--shard",
                      "K/N: run this share of the runs (a SLURM array task; default "
                      "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, else 1/1) into "
                      "ledger.shard-K-of-N.jsonl; --report merges the shards"});
  }
};

/// The study's windows: a subject-wise split (no subject in both parts), subsampled.
struct PolicyStudyData {
  data::Windows train, test;
  nlohmann::json description;
};
/// Opens options.data with data::open_dataset (else $MOCA_HAPT_DIR, else the generator) and
/// splits it by subject.
PolicyStudyData load_policy_study_data(const PolicyStudyOptions& options);

/// Runs (or resumes) the study, then writes the report; workers are this program
/// (/proc/self/exe) in worker mode. Returns the number of run records in the ledger.
int run_policy_study(const PolicyStudyOptions& options, std::ostream& out, std::ostream& log);

/// Worker mode: one training run (options.worker_*), its metrics.json written atomically.
void run_policy_study_worker(const PolicyStudyOptions& options, std::ostream& log);

/// Builds report.json, report.md and figures/ in `dir` from `dir`/ledger.jsonl alone; prints
/// the verdict table to `out`; returns report.json's content. `png`: run gnuplot (else only the
/// .dat / .gp files are written).
nlohmann::json build_policy_study_report(const std::string& dir, std::ostream& out,
                                         std::ostream& log, bool png = true);

}  // namespace moca::sim
