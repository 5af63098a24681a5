#pragma once
/// \file margin_study.hpp
/// The margin of cross-modality over synchronised masking, measured (issue 40, part 5): masking
/// policies (default cross 0.75 and sync 0.75 under both count rules) pre-trained on named
/// sources (default HAPT raw windowing and HAPT uci-har windowing) with several seeds, then each
/// pretrained model linear-probed and fine-tuned on named downstream sets; paired differences
/// over seeds and folds in the report. docs/studies.md ("margin_study").
///
/// Units in a fixed order: every pre-training (source x policy x seed: model::pretrain in a
/// worker process, its checkpoint kept under pretrain/), then every downstream unit (source x
/// policy x seed x data set x setting: model::run_protocol through transfer_study's data and
/// settings). The ledger, workers and shards are study_runner's; the report is built from the
/// ledgers alone.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/model/train/pretrain.hpp"
#include "transfer_study.hpp"

namespace moca::sim {

/// The downstream spec that stands for the pre-training source itself (each source's own data).
inline constexpr const char* kSourceSpec = "source";

/// Options of the study. Everything but `out`, `run` and the worker fields is a setting: stored in
/// the ledger, it must match on resume.
struct MarginStudyOptions {
  std::string out;  ///< output folder (required)
  /// Pre-training sources (NAME=SPEC with data options; `--source`, `--source-set`); empty =
  /// raw and uci-har from $MOCA_HAPT_DIR (default_margin_sources).
  std::vector<TransferDataSet> sources;
  std::vector<std::string> policies = {"cross:ratio=0.75", "sync:ratio=0.75",
                                       "sync:ratio=0.75,count=mask-floor"};
  int seeds = 3;             ///< run seeds 0 .. seeds-1 (init, batch order, masks, heads)
  int holdout_subjects = 0;  ///< the last N subjects of each source: never pre-trained on
  int window_length = 200;   ///< pre-training windows (samples at 50 Hz)
  model::PretrainOptions pretrain = default_margin_pretrain();
  /// Downstream sets (`--data`, `--set`); spec `source` = each source's own data, its
  /// `subjects` kept (not held out), held-out or all. Empty: own=source, protocol random.
  std::vector<TransferDataSet> data;
  std::vector<std::string> subjects;                 ///< per data set: kept | held-out | all
  std::vector<std::string> settings = {"lp", "ft"};  ///< of lp, ft (>= 1)
  int lp_epochs = 50, ft_epochs = 50;
  std::uint64_t split_seed = 1004;  ///< the 7:3 split of pre-training and protocol=random; folds

  StudyRunOptions run;      ///< --jobs, --threads, --max-units, --shard, --report
  std::string worker_unit;  ///< internal: run one unit (child process)
  int worker_threads = 1;   ///< internal

  static model::PretrainOptions default_margin_pretrain();
  /// raw=hapt:$MOCA_HAPT_DIR and uci-har=the same with hapt-windowing=uci-har;
  /// std::invalid_argument when $MOCA_HAPT_DIR is unset.
  static std::vector<TransferDataSet> default_margin_sources();

  /// Throws std::invalid_argument naming the option, its value and the rule.
  void validate() const;
  nlohmann::json settings_json() const;
  void set_settings(const nlohmann::json& settings);

  /// The options a user sets (option_schema.hpp), but --source/--source-set, --data/--set
  /// (parsed into `sources`, `data`, `subjects`), the pre-training rows (PretrainOptions' study
  /// rows) and the internal worker flags. List flags keep each text whole; the program splits.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* T = "MarginStudyOptions";
    const Range any = Range::any();
    auto list = [&](const char* key, const char* flag, const char* help) {
      return Option{T, key, flag, help, any, kEveryScope, nullptr, Surface::kBoth, false};
    };
    v(o.out, Option{T, "out", "--out", "output folder (ledger, pretrain/, units/, report)"});
    v(o.policies, list("policies", "--policies",
                       "comma-separated policy specs (default cross 0.75, sync 0.75 keep-floor, "
                       "sync 0.75 mask-floor)"));
    v(o.seeds, Option{T, "seeds", "--seeds", "run seeds 0 .. N-1 per source and policy",
                      Range::between(1, 1000)});
    v(o.holdout_subjects,
      Option{T, "holdout_subjects", "--holdout-subjects",
             "the last N subjects of each source are never pre-trained on (subjects=held-out)",
             Range::at_least(0)});
    v(o.window_length, Option{T, "window_length", "--window-length",
                              "pre-training window length (samples at 50 Hz)", Range::at_least(2)});
    v(o.settings, list("settings", "--settings", "comma-separated: lp, ft"));
    v(o.lp_epochs,
      Option{T, "lp_epochs", "--lp-epochs", "linear-probe epochs", Range::at_least(1)});
    v(o.ft_epochs, Option{T, "ft_epochs", "--ft-epochs", "fine-tuning epochs", Range::at_least(1)});
    v(o.split_seed, Option{T, "split_seed", "--split-seed",
                           "seed of the 7:3 split (pre-training part, protocol=random) and folds"});
    StudyRunOptions::schema(T, o.run, v);
  }
};

/// One unit: a pre-training (data and setting empty) or a downstream run of its model.
struct MarginUnit {
  std::string source, policy;  ///< policy: canonical spec as given
  int seed = 0;
  std::string data, setting;  ///< downstream only
  bool pretraining() const { return data.empty(); }
  std::string model_name() const;  ///< source/safe(policy)/seedS
  std::string key() const;         ///< pretrain/<model> or <model>/<data>/<setting>
};

/// The units in their fixed order: pre-trainings (source, policy, seed), then downstream
/// (source, policy, seed, data set, setting).
std::vector<MarginUnit> margin_units(const MarginStudyOptions& o);

/// Runs (or resumes) the study, then writes the report (unsharded); returns units recorded.
int run_margin_study(const MarginStudyOptions& options, std::ostream& out, std::ostream& log);

/// Worker mode: one unit, its result.json written atomically.
void run_margin_worker(const MarginStudyOptions& options, std::ostream& log);

/// report.json and report.md in `dir` from its ledgers alone; prints the verdicts to `out`.
nlohmann::json build_margin_report(const std::string& dir, std::ostream& out, std::ostream& log);

}  // namespace moca::sim
