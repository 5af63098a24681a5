#pragma once
/// \file transfer_study.hpp
/// The paper's transfer evaluation (Table 2, its boxplot and the appendix's macro-F1 and
/// balanced-accuracy tables) as one resumable study: named checkpoints (and `scratch`, the
/// supervised ViT) x named data sets x settings (lp, ft), each unit one model::run_protocol
/// call in a worker process; docs/studies.md ("transfer_study").
///
/// The output folder holds the ledger (study_runner.hpp: the study record, then one "unit"
/// record per finished unit), units/<model>/<data>/<setting>/ (worker log and result.json) and
/// the report (report.md, report.json, figures/). A killed study resumes where it stopped; the
/// report is built from the ledgers alone (sharded runs merged).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include <optional>

#include "moca/common/option_schema.hpp"
#include "moca/data/dataset.hpp"
#include "moca/model/eval/downstream.hpp"
#include "moca/model/eval/protocol.hpp"
#include "study_runner.hpp"

namespace moca::sim {

/// One data set of the study and how it is read and split.
struct TransferDataSet {
  std::string name;              ///< as in the tables ([A-Za-z0-9_-]+, unique)
  std::string spec;              ///< data::open_dataset spec (npy:DIR, hmp:DIR, ...)
  data::DatasetOptions dataset;  ///< format, modalities, rate, channel names, segment, ...
  /// random, subject-kfold or loso; empty = auto (subject-wise k-fold with more than 5
  /// subjects, leave-one-subject-out otherwise). Written "auto" in JSON and `--set`.
  std::optional<model::Protocol> protocol;
  int folds = 5;  ///< subject-kfold (and auto): k
  model::ChannelMatch match_channels = model::ChannelMatch::kName;
  double input_seconds = 0.0;  ///< > 0: windows of this length (geometry_at_seconds)
  /// The paper's appendix column whose fine-tuning / linear-probing settings apply (wisdm,
  /// imwsha, realworld, opportunity, pamap2, uci-har); "" = the data set's name when it is one
  /// of them, else the defaults (model::downstream_defaults, the UCI-HAR column); "none" = the
  /// defaults.
  std::string paper;
  nlohmann::json to_json() const;
  void set_json(const nlohmann::json& j);

  /// The study's own `--set NAME.KEY=VALUE` keys (the flag keys: folds, match-channels,
  /// input-seconds, paper), set by moca::set_option_text and checked by check_ranges; messages
  /// name them `--set NAME.KEY`. The data keys are DatasetOptions::schema's; `protocol` (auto or
  /// a model::Protocol) is read by apply_data_settings, as an optional enum with "auto" is no
  /// text row.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* T = "TransferDataSet";
    v(o.folds, Option{T, "folds", "--folds", "subject-kfold (and auto): k", Range::at_least(2)});
    v(o.match_channels,
      Option{T, "match_channels", "--match-channels",
             "name | position: how the data's channels meet the checkpoint's"},
      model::kChannelMatchNames);
    v(o.input_seconds,
      Option{T, "input_seconds", "--input-seconds",
             "> 0: windows of this length (0 = the checkpoint's)", Range::at_least(0)});
    v(o.paper, Option{T, "paper", "--paper",
                      "the paper's appendix column whose settings apply (none: the defaults)"});
  }
};

/// The keys of `--set NAME.KEY=VALUE` (format, modalities, sample-rate, channel-names, segment,
/// keep-classes, npy-layout, drop-nonfinite, protocol, folds, match-channels, input-seconds,
/// paper).
const std::vector<std::string>& transfer_data_keys();

/// Applies `--set` items (NAME.KEY=VALUE) to the data sets; std::invalid_argument for an unknown
/// data set or key (naming the nearest), or a bad value.
void apply_data_settings(std::vector<TransferDataSet>& sets, const std::vector<std::string>& items);

/// Parses `NAME=SPEC` (`--data`). std::invalid_argument for a missing '=' or a bad name.
TransferDataSet parse_transfer_data(const std::string& text);

/// Options of the study. Everything but `out`, `run` and the worker fields is a setting: stored in
/// the ledger, it must match on resume.
struct TransferStudyOptions {
  std::string out;  ///< output folder (required)
  /// Named checkpoints (NAME=PATH, in table order); the name `scratch` is reserved.
  std::vector<std::pair<std::string, std::string>> models;
  bool scratch = true;                               ///< add the supervised baseline (`scratch`)
  std::string scratch_preset = "cpu-small";          ///< its architecture
  std::vector<TransferDataSet> data;                 ///< in table order (>= 1)
  std::vector<std::string> settings = {"lp", "ft"};  ///< of lp, ft (>= 1)
  bool control = true;  ///< a shuffled-label LP unit per data set (first model): "no signal"
  int lp_epochs = 50, ft_epochs = 50, scratch_epochs = 50;  ///< the paper's 50 everywhere
  std::uint64_t split_seed = 0;                             ///< subject folds
  std::uint64_t seed = 0;                                   ///< heads, batch order, drop path
  double label_fraction = 1.0;                              ///< ProtocolOptions::label_fraction

  StudyRunOptions run;      ///< --jobs, --threads, --max-units, --shard, --report
  std::string worker_unit;  ///< internal: run one unit (child process)
  int worker_threads = 1;   ///< internal

  /// Throws std::invalid_argument naming the option, its value and the rule.
  void validate() const;
  nlohmann::json settings_json() const;

  /// The options a user sets (option_schema.hpp): transfer_study's flags but --model, --data and
  /// --set (parsed into `models` and `data`), the --no-scratch / --no-control switches and the
  /// internal worker flags. --settings keeps each given text whole; the program splits it.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* T = "TransferStudyOptions";
    const Range any = Range::any();
    v(o.out, Option{T, "out", "--out", "output folder (ledger, units/, report, figures/)"});
    v(o.settings, Option{T, "settings", "--settings", "comma-separated: lp, ft", any, kEveryScope,
                         nullptr, Surface::kBoth, false});
    v(o.scratch_preset,
      Option{T, "scratch_preset", "--scratch-preset", "the supervised baseline's architecture"});
    v(o.lp_epochs,
      Option{T, "lp_epochs", "--lp-epochs", "linear-probe epochs", Range::at_least(1)});
    v(o.ft_epochs, Option{T, "ft_epochs", "--ft-epochs", "fine-tuning epochs", Range::at_least(1)});
    v(o.scratch_epochs, Option{T, "scratch_epochs", "--scratch-epochs",
                               "supervised baseline epochs", Range::at_least(1)});
    v(o.split_seed, Option{T, "split_seed", "--split-seed", "seed of the subject folds"});
    v(o.seed, Option{T, "seed", "--seed", "seed of the heads, batch order and drop path"});
    v(o.label_fraction,
      Option{T, "label_fraction", "--label-fraction",
             "share of each training fold's labels, per class (at least one each)",
             Range::between(0, 1, true, false)});
    StudyRunOptions::schema(T, o.run, v);
  }
  void set_settings(const nlohmann::json& settings);
};

/// One unit: a model on a data set in a setting (lp, ft, supervised, lp-shuffled).
struct TransferUnit {
  std::string model, data, setting;
  std::string key() const;  ///< model/data/setting
};

/// The study's units in their fixed order: per data set, per model, per setting; then the
/// scratch baseline and the shuffled-label control of each data set.
std::vector<TransferUnit> transfer_units(const TransferStudyOptions& o);

/// The downstream options of a unit: mode and the paper's per-data-set settings (the appendix
/// tables), the study's epochs and seeds.
model::DownstreamOptions unit_downstream_options(const TransferStudyOptions& o,
                                                 const TransferDataSet& d,
                                                 const TransferUnit& unit);

/// Opens a data set for a model's geometry (the checkpoint's, or for scratch the first model's);
/// resolves protocol auto from its subjects. std::invalid_argument for bad data (one class, too
/// few subjects for the protocol, an unstated rate, ...), naming the data set.
struct OpenedTransferData {
  data::Dataset dataset;
  model::ProtocolOptions protocol;  ///< protocol, folds, split seed, channel match (no downstream)
};
OpenedTransferData open_transfer_data(const TransferStudyOptions& o, const TransferDataSet& d,
                                      const model::ModelGeometry& geometry);

/// Runs (or resumes) the study, then writes the report (unsharded). Returns the units recorded
/// in this process's ledger.
int run_transfer_study(const TransferStudyOptions& options, std::ostream& out, std::ostream& log);

/// Worker mode: one unit, its result.json written atomically.
void run_transfer_worker(const TransferStudyOptions& options, std::ostream& log);

/// Builds report.json, report.md and figures/ (one boxplot per setting, .dat/.gp and the PNG
/// when `png` and gnuplot is there) in `dir` from its ledgers alone; prints the top-1 table to
/// `out`; returns report.json's content.
nlohmann::json build_transfer_report(const std::string& dir, std::ostream& out, std::ostream& log,
                                     bool png = true);

}  // namespace moca::sim
