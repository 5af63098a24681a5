#pragma once
/// \file imputation.hpp
/// The paper's generative task: reconstruct masked samples with a pre-trained MAE and compare
/// with the statistical baselines (masking/imputation_baselines.hpp) on the same masks.
///
/// Tasks (policy specs of masking::make_policy, ratio 0.7 as in the paper):
/// random:ratio=0.7 (random patches across time and modalities), temporal:ratio=0.7 (one
/// contiguous block of time columns in all modalities), sensor:keep=1 (one modality visible, the
/// others masked), extrapolation:ratio=0.7 (the last 70% of the columns). For window i of task k
/// the mask is drawn from Rng(derive_seed(derive_seed(seed, k), i)), so every method sees the
/// same masks. Errors are MAE and MSE over the masked samples, in the data's units, and
/// nMSE = MSE / (unbiased variance of all values of the evaluated windows), which is unitless
/// and sits beside the authors' logged nMSE (ImputationError::nmse says how they differ).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/data/window_source.hpp"
#include "moca/data/windows.hpp"
#include "moca/masking/mask.hpp"
#include "moca/model/eval/imputation_baselines.hpp"
#include "moca/model/runtime.hpp"

namespace moca::model {

/// Batching and device of model inference.
struct InferenceOptions {
  RuntimeOptions runtime;  ///< (the programs' runtime flag group)
  int batch_size = 256;    ///< windows per forward pass (>= 1)

  /// The option a user sets (option_schema.hpp): `moca impute`'s, `reconstruct`'s and
  /// `embed`'s --batch; the structs that hold an InferenceOptions add this row to theirs.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    v(o.batch_size, Option{"InferenceOptions", "batch_size", "--batch",
                           "windows per forward pass (memory, not results)", Range::at_least(1)});
  }
};

/// The MAE's reconstruction of every sample (masked and visible) of each window under its mask:
/// n x (C*L). Windows whose channels are a named subset of the model's use the matching rows.
/// Throws std::runtime_error for checkpoint problems, std::invalid_argument when the data or
/// masks do not fit the model, or the model was trained with norm_pix_loss (its outputs are
/// per-patch normalised and cannot be mapped back to signal units).
data::RowMatrixXf reconstruct_with_model(const std::string& checkpoint,
                                         const data::Windows& windows,
                                         const std::vector<masking::Mask>& masks,
                                         const InferenceOptions& options = {});

/// The MAE's error over the samples `masks` hide (one mask per window, or one for all):
/// imputation_error of reconstruct_with_model, in the data's units. Throws
/// std::invalid_argument when the masks hide nothing, and as reconstruct_with_model does.
ImputationError masked_reconstruction_error(const std::string& checkpoint,
                                            const data::Windows& windows,
                                            const std::vector<masking::Mask>& masks,
                                            const InferenceOptions& options = {});

/// reconstruct_with_model on the masked samples, observed samples copied.
data::RowMatrixXf impute_with_model(const std::string& checkpoint, const data::Windows& windows,
                                    const std::vector<masking::Mask>& masks,
                                    const InferenceOptions& options = {});

/// Options of evaluate_imputation().
struct ImputeOptions {
  std::vector<std::string> tasks = {"random:ratio=0.7", "temporal:ratio=0.7", "sensor:keep=1",
                                    "extrapolation:ratio=0.7"};
  std::vector<std::string> checkpoints;  ///< models to evaluate (may be empty)
  std::vector<std::string> labels;       ///< row names of the models (default: file names)
  bool baselines = true;                 ///< linear, nearest, MICE rows
  MiceOptions mice;                      ///< MICE settings (its seed is derived from `seed`)
  int patch_length = 20;                 ///< grid of the masks when no checkpoint is given
  std::uint64_t seed = 0;
  InferenceOptions inference;
  /// Throws std::invalid_argument naming the field (`ImputeOptions::patch_length`), its value and
  /// the rule.
  void validate() const;

  /// Every option a user sets, declared once (option_schema.hpp): `moca impute`'s flags and the
  /// range checks of validate(). `baselines` is the tool's --no-baselines; the runtime has its
  /// own flag group.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* I = "ImputeOptions";
    const Range any = Range::any();
    // (lists whose items may hold commas: the flag is repeated)
    v(o.checkpoints, Option{I, "checkpoints", "--checkpoint", "pre-trained MAE(s)", any,
                            kEveryScope, nullptr, Surface::kBoth, false});
    v(o.labels, Option{I, "labels", "--label", "row name per checkpoint", any, kEveryScope, nullptr,
                       Surface::kBoth, false});
    v(o.tasks, Option{I, "tasks", "--task", "policy specs of the tasks", any, kEveryScope, nullptr,
                      Surface::kBoth, false});
    v(o.mice.iterations, Option{I, "mice_iterations", "--mice-iterations",
                                "MICE sweeps over the channels per chain", Range::at_least(1)});
    v(o.mice.draws,
      Option{I, "mice_draws", "--mice-draws", "MICE chains averaged", Range::at_least(1)});
    v(o.patch_length,
      Option{I, "patch_length", "--patch-length", "grid without a checkpoint", Range::at_least(1)});
    v(o.seed, Option{I, "seed", "--seed", "seed of the task masks and of MICE"});
    InferenceOptions::schema(o.inference, v);
  }
};

/// One cell of the table.
struct ImputeCell {
  std::string method;
  std::string task;  ///< canonical policy spec
  double mae = 0.0;
  double mse = 0.0;
  double nmse = 0.0;  ///< mse / ImputeTable::target_variance (ImputationError::nmse)
  long count = 0;     ///< masked samples scored
  /// False when the method cannot run the task (a stacked-layout model on masks that split a
  /// time column); mae/mse are then 0 and the text table shows "n/a".
  bool applicable = true;
};

/// The table: methods x tasks.
struct ImputeTable {
  std::vector<std::string> methods;
  std::vector<std::string> tasks;
  std::vector<ImputeCell> cells;  ///< task-major: every method of the first task, then the next
  /// Unbiased variance of all values of the windows evaluated (every cell's nMSE denominator).
  double target_variance = 0.0;
  double seconds = 0.0;
  nlohmann::json to_json() const;
  /// "method | task1 MAE MSE nMSE | ..." aligned text.
  std::string to_text() const;
};

/// Runs every method on every task over `windows` (the test split). Models with a patch length
/// or window length other than the grid's are rejected (std::invalid_argument).
ImputeTable evaluate_imputation(const ImputeOptions& options, const data::Windows& windows,
                                std::ostream& log);

/// The same over a source, read data::kEvalChunk windows at a time when it is on disk (held in
/// memory: one chunk, the numbers above). Window i's task mask is drawn from its index i in the
/// source, so the masks do not depend on the chunks, and the errors and the target variance are
/// summed over the chunks; a first pass over the source sums each task's observed channel means
/// (the fallback of linear and nearest for a channel a window hides whole), so those two
/// baselines equal the in-memory ones. Two things are per chunk: MICE is fitted on each
/// chunk's samples (chunk k > 0 seeded derive_seed(MICE's seed, k)), and the policies' pilot
/// is the first chunk.
ImputeTable evaluate_imputation(const ImputeOptions& options, const data::WindowSource& windows,
                                std::ostream& log);

}  // namespace moca::model
