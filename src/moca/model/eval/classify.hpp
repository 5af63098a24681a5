#pragma once
/// \file classify.hpp
/// `moca linprobe` / `finetune` as one library call: open the data at the checkpoint's geometry
/// (or at a chosen input length), optionally as the paper's ADL transfer set, run the protocol
/// (protocol.hpp) and describe the outcome as a results document. The program parses flags into
/// ClassifyOptions, calls classify() and prints; tests and other callers call the same function.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"
#include "moca/data/selection.hpp"
#include "moca/model/dist/run_context.hpp"
#include "moca/model/eval/protocol.hpp"

namespace moca::model {

/// The classes of the ADL transfer set (HMP).
enum class AdlClasses {
  kPaper,  ///< the five ADL activities of the paper's transfer table, relabelled 0..4
  kAll,    ///< every HMP activity (14)
};
inline constexpr EnumName<AdlClasses> kAdlClassesNames[] = {{AdlClasses::kPaper, "paper"},
                                                            {AdlClasses::kAll, "all"}};

/// What classify() runs.
struct ClassifyOptions {
  /// The data source (its split rows are the protocol's, not these).
  data::DataOptions data;
  /// The protocol and the classifier's training: random | subject-kfold (all folds, mean +- sd)
  /// | loso on `data`, which may be another data set than the pre-training one (channels
  /// matched by name, rate and length resampled to the checkpoint's).
  ProtocolOptions run;
  /// The paper's ADL transfer: HMP (`hmp`, else $MOCA_HMP_DIR) under leave-one-subject-out with
  /// `adl_classes`; `run.protocol` is then kLoso and `data` names no source.
  bool adl_loso = false;
  std::string hmp;  ///< the HMP folder of adl_loso; empty = $MOCA_HMP_DIR
  /// adl_loso: kPaper keeps climb_stairs, drink_glass, getup_bed, pour_water and walk
  /// (relabelled 0..4 in that order), kAll every activity.
  AdlClasses adl_classes = AdlClasses::kPaper;
  /// > 0: windows of this many seconds at the checkpoint's rate instead of its own length
  /// (rounded down to whole patches; every token at the position the model was trained with,
  /// model::options_at_length: 1-D positions allow at most the model's patches per modality).
  double input_seconds = 0.0;

  /// Throws std::invalid_argument naming the field (`ClassifyOptions::input_seconds`, ...), its
  /// value and the rule: data.validate(), run.validate(), the rows below, and the cross-field
  /// rules.
  void validate() const;
  /// The protocol as reported: run.protocol's name, or adl-loso.
  std::string protocol_name() const;

  /// The rows of this struct alone (the program adds ProtocolOptions' and DataOptions' rows
  /// with their own scopes).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* C = "ClassifyOptions";
    v(o.hmp,
      Option{C, "hmp", "--hmp", "UCI ADL (HMP) folder for adl-loso (default $MOCA_HMP_DIR)"});
    v(o.adl_classes,
      Option{C, "adl_classes", "--adl-classes",
             "adl-loso: paper (5 activities of the paper's table) | all (14)"},
      kAdlClassesNames);
    v(o.input_seconds,
      Option{C, "input_seconds", "--input-seconds",
             "windows of this many seconds at the checkpoint's rate instead of its own length "
             "(whole patches; 0 = the checkpoint's)",
             Range::at_least(0)});
  }
};

/// What classify() found.
struct Classification {
  std::string command;   ///< the downstream mode's name (linear-probe, finetune, ...)
  std::string protocol;  ///< ClassifyOptions::protocol_name()
  ProtocolResult result;
  std::string source;                    ///< the resolved data spec
  std::vector<std::string> class_names;  ///< the data's classes
  /// The results document: command, protocol, data, settings, label_fraction, folds,
  /// saved_models (when kept), summary. The caller adds its "options".
  nlohmann::json json;
  /// One split: its confusion table (readable); several: empty.
  std::string confusion_table() const;
  /// "linear-probe (random, 1 split, SOURCE): top-1 ... %, macro-F1 ... %, balanced accuracy
  /// ... %" with +- sd over folds.
  std::string summary_line() const;
};

/// Validates `options`, checks that the kept model (run.save_model) can be written, opens the
/// data (described on context.log()) and runs the protocol on the ranks of `context`.
/// std::invalid_argument for bad options or data, std::runtime_error for I/O and numerical
/// failures.
Classification classify(const ClassifyOptions& options, RunContext& context);

}  // namespace moca::model
