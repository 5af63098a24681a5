#pragma once
/// \file protocol.hpp
/// The classification protocol of `moca linprobe` / `finetune` (and of the transfer study and
/// Python): labelled windows -> train/test splits (a random split, subject-wise k folds or leave
/// one subject out) -> one classifier per split (train_classifier) -> per-fold metrics and their
/// mean ± sd; optionally the trained classifiers kept (one fold's, each fold's, or one refitted
/// on every labelled window). One call from options + windows to a result struct.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/data/windows.hpp"
#include "moca/model/eval/classifier.hpp"
#include "moca/model/eval/downstream.hpp"
#include "moca/model/eval/metrics.hpp"

namespace moca::model {

/// How the labelled windows are split into training and test parts.
enum class Protocol {
  kRandom,        ///< one random split (train_fraction, split_seed)
  kSubjectKfold,  ///< subject-wise k folds (folds, split_seed): every fold, mean ± sd
  kLoso,          ///< leave one subject out: one fold per subject
  kPredefined,    ///< the data's own split (Windows::parts, e.g. a .ts pair): one fold
};
inline constexpr EnumName<Protocol> kProtocolNames[] = {{Protocol::kRandom, "random"},
                                                        {Protocol::kSubjectKfold, "subject-kfold"},
                                                        {Protocol::kLoso, "loso"},
                                                        {Protocol::kPredefined, "predefined"}};
inline std::string to_string(Protocol p) {
  return enum_name(kProtocolNames, p);
}

/// The windows a model takes: samples per channel, their rate and the patch length.
struct ModelGeometry {
  int length = 200;
  double sample_rate_hz = 50.0;
  int patch_length = 20;
  /// The most patches per modality the model's positions allow at another length
  /// (MocaOptions::max_patches: 1-D positions over several modalities); 0 = no bound.
  int max_patches = 0;
};
/// A checkpoint's geometry (its data's rate as recorded, else 50 Hz); std::runtime_error if the
/// checkpoint cannot be read.
ModelGeometry checkpoint_geometry(const std::string& checkpoint);
/// `g` taking windows of `seconds` (> 0) instead of its own length: round(seconds x rate)
/// samples, rounded down to whole patches (windows are then centre-cropped to it); the encoder
/// keeps every token's position (options_at_length). `note` (if not null) gets a line
/// saying so ("input of S s: N samples at R Hz -> ..."). std::invalid_argument (naming `what`,
/// e.g. "ClassifyOptions::input_seconds") when shorter than one patch, not finite and > 0, or
/// more patches than `g.max_patches` (check_patches_fit_positions: 1-D positions).
ModelGeometry geometry_at_seconds(const ModelGeometry& g, double seconds, const std::string& what,
                                  std::string* note = nullptr);

/// Options of run_protocol.
struct ProtocolOptions {
  /// The classifier's training: mode, checkpoint ('{fold}' is replaced by the fold index, so
  /// each fold may use an encoder pre-trained without its test subjects), epochs, ...
  DownstreamOptions downstream;
  Protocol protocol = Protocol::kRandom;
  std::string protocol_name;        ///< as reported ("" = to_string(protocol); e.g. "adl-loso")
  double train_fraction = 0.7;      ///< kRandom: training share
  int folds = 5;                    ///< kSubjectKfold: k (>= 2)
  std::uint64_t split_seed = 1004;  ///< seed of the split (upstream's 1004), label subset, shuffle
  std::string source;               ///< what the data is (recorded with kept models)
  /// kPosition: the data's channels are the checkpoint's first C, in order (renamed to them
  /// before anything is matched); kName: matched by name.
  ChannelMatch match_channels = ChannelMatch::kName;
  /// In (0, 1]: each fold trains on this share of its training windows, drawn per class
  /// (round(fraction * n_c) of class c's n_c, at least one: a class the fold has keeps one
  /// example), seeded by split_seed and the fold; the test part is whole.
  double label_fraction = 1.0;
  /// The no-signal control: each fold's training labels are permuted among its training windows
  /// (seeded by split_seed and the fold; class counts kept), the test labels are true. Scores
  /// should fall to what the class frequencies give.
  bool shuffle_labels = false;
  /// A fold with fewer training windows than downstream.batch_size trains with batches of all
  /// its training windows (the log says so) instead of failing. For studies whose folds differ
  /// in size (small subjects, label fractions).
  bool batch_at_most_train = false;
  /// Keep the trained classifier: a single split's model; with several folds each fold's when
  /// the name holds '{fold}', else fold 0's (the log says so), or with `refit` one model trained
  /// on every labelled window after the folds were scored.
  std::string save_model;
  bool refit = false;
  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;

  /// Every option a user sets, declared once (option_schema.hpp), then the classifier's
  /// (DownstreamOptions::schema). protocol_name, source and batch_at_most_train are set by the
  /// callers, not users. `moca linprobe|finetune` declare --protocol themselves (it adds the
  /// adl-loso spelling), so that row is not on the command line.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* P = "ProtocolOptions";
    v(o.protocol,
      Option{P, "protocol", "--protocol",
             "random | subject-kfold | loso | predefined (the data's own training and "
             "test part, e.g. a .ts archive set's)",
             Range::any(), kEveryScope, nullptr, Surface::kPython},
      kProtocolNames);
    v(o.train_fraction, Option{P, "train_fraction", "--train-fraction",
                               "random: the training share", Range::between(0, 1, true, true)});
    v(o.folds, Option{P, "folds", "--folds", "subject-kfold: k", Range::at_least(2)});
    v(o.split_seed, Option{P, "split_seed", "--split-seed",
                           "seed of the split, of the label subset and of the shuffled labels"});
    v(o.match_channels,
      Option{P, "match_channels", "--match-channels",
             "name (channels matched to the checkpoint's by name) | position (the data's "
             "channel i is the model's channel i)"},
      kChannelMatchNames);
    v(o.label_fraction, Option{P, "label_fraction", "--label-fraction",
                               "train each fold on this share of its labelled windows, per "
                               "class (at least one each), seeded by the split seed",
                               Range::between(0, 1, true, false)});
    v(o.shuffle_labels,
      Option{P, "shuffle_labels", "--shuffle-labels",
             "the no-signal control: each fold's training labels permuted among its training "
             "windows (class counts kept, test labels true)"});
    v(o.save_model, Option{P, "save_model", "--save-model",
                           "keep the trained classifier for `moca predict` (k folds: fold 0's, "
                           "each fold's with '{fold}' in the name, or refit)"});
    v(o.refit, Option{P, "refit", "--refit",
                      "after scoring the folds, train the kept model on every labelled window"});
    DownstreamOptions::schema(o.downstream, v);
  }
};

/// One split's outcome.
struct FoldResult {
  int fold = 0;
  int train_windows = 0, test_windows = 0;
  std::string checkpoint;          ///< the encoder it started from ('{fold}' replaced)
  std::vector<int> test_subjects;  ///< subject-wise protocols: the held-out subjects
  DownstreamResult result;
};

/// A kept classifier.
struct SavedModel {
  std::string path;
  int fold = -1;          ///< -1: the refitted model
  int train_windows = 0;  ///< the refitted model's training windows
};

/// Per-fold top-1, macro-F1 and balanced accuracy, and their summary.
struct FoldScores {
  std::vector<double> accuracy, macro_f1, balanced_accuracy;  ///< one per fold
  void add(const ClassificationMetrics& m);
  /// {"accuracy"|"macro_f1"|"balanced_accuracy": {mean, sd, n, values}}
  nlohmann::json summary_json() const;
};

/// Every fold, their scores and the kept models.
struct ProtocolResult {
  std::string protocol;  ///< as reported (ProtocolOptions::protocol_name or the enum's name)
  std::vector<FoldResult> folds;
  std::vector<SavedModel> saved;
  FoldScores scores;
  /// The folds as JSON (fold, windows, checkpoint, channel map, device, seconds, metrics,
  /// history, test_subjects for subject-wise protocols).
  nlohmann::json folds_json() const;
  /// The kept models as JSON (path and fold, or refit and train_windows).
  nlohmann::json saved_json() const;
  /// "fold,truth,predicted" lines of every fold, for `moca metrics`.
  std::string predictions_csv() const;
};

/// The options that `o`'s protocol leaves without effect: train_fraction unless the protocol is
/// random, folds unless it is subject-kfold (the programs refuse the flag stated, Python the
/// keyword given).
std::vector<UnusedOption> unused_options(const ProtocolOptions& o);

/// The rows of `train` that a label fraction keeps (ProtocolOptions::label_fraction's rule),
/// ascending; labels < 0 are never kept. Deterministic for `seed`.
std::vector<int> label_subset(const data::Windows& train, double fraction, std::uint64_t seed);

/// `w` with its labels permuted among its windows (the shuffled-label control's rule: class counts
/// kept), deterministic for `seed`.
data::Windows shuffle_labels(const data::Windows& w, std::uint64_t seed);

/// {mean, sd, n, values} of per-fold values.
nlohmann::json summary_json(const std::vector<double>& values);

/// `text` with every "{fold}" replaced by `fold`.
std::string replace_fold(std::string text, int fold);

/// Runs the protocol on `all` (labels -1 are left out of training and testing). Checks first
/// that the windows hold >= 2 classes, that a pre-trained checkpoint knows every channel (by
/// name) and that a subject-wise protocol has subject ids (std::invalid_argument naming the
/// rule). Every split trains on the ranks of `context` (train_classifier); progress goes to
/// context.log().
ProtocolResult run_protocol(const ProtocolOptions& options, const data::Windows& all,
                            RunContext& context);
/// run_protocol() in one process (a local RunContext on `log`), whatever the environment says.
ProtocolResult run_protocol(const ProtocolOptions& options, const data::Windows& all,
                            std::ostream& log);

}  // namespace moca::model
