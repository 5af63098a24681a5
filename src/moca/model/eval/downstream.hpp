#pragma once
/// \file downstream.hpp
/// Activity classification on a pre-trained (or random) MoCA encoder: linear probing,
/// fine-tuning, and the supervised ViT baseline from random initialisation (torch-free API).
///
/// * linear probe (MAE protocol): the encoder is frozen; cls-token features (final norm, row 0)
///   are computed once per window, then BatchNorm1d without affine parameters (eps 1e-6) and a
///   linear head are trained with AdamW and cross-entropy. (Equivalent to running the frozen
///   encoder in every step, as the encoder is deterministic in eval mode and no augmentation is
///   applied.) Head weights N(0, 0.01^2), bias 0.
/// * fine-tune: encoder initialised from the checkpoint, stochastic depth (drop path, linearly
///   increasing to `drop_path`), label-smoothing cross-entropy (1-e) NLL + e mean_k(-log p_k),
///   AdamW over layer-wise lr-decay groups (scale decay^(depth+1-layer)), no weight decay for
///   1-D parameters, biases, cls_token and pos_embed. Head N(0, (2e-5)^2).
/// * from scratch: as fine-tune, with the encoder at its random MAE initialisation
///   (scratch_init mae) or at timm's ViT initialisation with a learnable positional table
///   (scratch_init timm, the authors' supervised baseline).
/// All use per-iteration warm-up + cosine (LrSchedule), batches shuffled each epoch with
/// Rng(derive_seed(derive_seed(seed, 3), epoch)), the last incomplete batch dropped. Reported
/// metrics are those of the FINAL epoch on the test windows (no selection on the test set,
/// unlike the released code's "max accuracy").
///
/// Data-parallel (distributed.hpp; `moca launch -- linprobe|finetune ...`): `batch_size` is the
/// global batch, rank r trains on its contiguous slice of each shuffled global batch, gradients
/// are summed over ranks with weights 1/N (the global mean loss) and rank 0's initial weights are
/// broadcast. Fine-tuning without drop path follows the 1-rank run to fp32 reduction order; drop
/// path draws from a per-rank torch stream (seed, rank) when N > 1. The probe's BatchNorm is
/// PER RANK (not synchronised): each rank normalises its own batch / N windows, so the probe on
/// N ranks is not the 1-rank probe; rank 0's running statistics serve the test. Every rank
/// evaluates the test windows; the caller reports rank 0's result.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/data/windows.hpp"
#include "moca/model/dist/distributed.hpp"
#include "moca/model/dist/run_context.hpp"
#include "moca/model/eval/metrics.hpp"
#include "moca/model/model_options.hpp"
#include "moca/model/runtime.hpp"

namespace moca::model {

/// Which classifier to train.
enum class DownstreamMode {
  kLinearProbe,  ///< frozen encoder + BatchNorm + linear head
  kFinetune,     ///< whole network from the checkpoint
  kScratch       ///< whole network from random initialisation (supervised baseline)
};
inline constexpr EnumName<DownstreamMode> kDownstreamModeNames[] = {
    {DownstreamMode::kLinearProbe, "linprobe"},
    {DownstreamMode::kFinetune, "finetune"},
    {DownstreamMode::kScratch, "scratch"}};
inline std::string to_string(DownstreamMode mode) {
  return enum_name(kDownstreamModeNames, mode);
}

/// How the scratch mode initialises its network.
enum class ScratchInit {
  /// MAE's (the pre-training network's): xavier-uniform Linear weights, N(0, 0.02^2) cls token,
  /// the fixed sin-cos positions (pos_embed), head N(0, (2e-5)^2).
  kMae,
  /// timm's ViT (the authors' supervised baseline, models_vit.py): trunc-normal(0.02) Linear
  /// weights (head included), cls token and a learnable, randomly initialised positional table
  /// (timm_init in moca_model.hpp).
  kTimm
};
inline constexpr EnumName<ScratchInit> kScratchInitNames[] = {{ScratchInit::kMae, "mae"},
                                                              {ScratchInit::kTimm, "timm"}};
inline std::string to_string(ScratchInit v) {
  return enum_name(kScratchInitNames, v);
}

/// The scopes of DownstreamOptions' schema rows: the modes that take an option.
inline constexpr Scope kLinearProbeScope = 1u << 0, kFinetuneScope = 1u << 1,
                       kScratchScope = 1u << 2;
/// The scope bit of `mode`.
Scope mode_scope(DownstreamMode mode);

/// Options of train_classifier(). Use downstream_defaults() for the paper's settings.
struct DownstreamOptions {
  DownstreamMode mode = DownstreamMode::kLinearProbe;
  std::string checkpoint;       ///< pre-trained MAE (linprobe, finetune); unused by scratch
  std::string preset = "tiny";  ///< architecture for scratch
  int patch_length = 20;        ///< scratch
  TokenLayout layout = TokenLayout::kModality;       ///< scratch
  PosEmbedKind pos_embed = PosEmbedKind::kSinCos2d;  ///< scratch
  ScratchInit scratch_init = ScratchInit::kMae;      ///< scratch only (validate() refuses others)
  /// Fine-tune only: train the positional table (from the checkpoint's fixed code; layer 0, no
  /// weight decay), as the authors' fine-tuning does. Default false: the table stays the fixed
  /// code, so a kept classifier can take other window lengths (options_at_length).
  bool train_pos_embed = false;
  int epochs = 50;      ///< >= 1
  int batch_size = 50;  ///< >= 1
  double lr = 1e-3;     ///< peak learning rate (> 0)
  double min_lr = 0.0;  ///< cosine floor in [0, lr]
  /// Linear warm-up in epochs, in [0, epochs) when set. Unset: default_warmup_epochs() (10 for
  /// the linear probe, 5 otherwise), capped at epochs - 1 (warmup_note() says so).
  std::optional<double> warmup_epochs;
  double weight_decay = 0.0;     ///< >= 0
  double layer_decay = 0.75;     ///< fine-tune/scratch, in (0, 1]
  double label_smoothing = 0.1;  ///< fine-tune/scratch, in [0, 1)
  double drop_path = 0.1;        ///< fine-tune/scratch, in [0, 1)
  int classes = 0;               ///< number of classes; 0 = from the labels / class names
  std::uint64_t seed = 0;        ///< head init, batch order, drop path
  RuntimeOptions runtime;
  DistOptions dist;      ///< data-parallel backend, timeout, gradient sync (several ranks)
  bool progress = true;  ///< progress bar on stderr
  /// Where to keep the trained classifier (classifier.hpp; written atomically by rank 0 after
  /// training); empty = not kept.
  std::string save_model;
  /// Written into the saved classifier's metadata as `provenance` (protocol, fold, data source).
  nlohmann::json provenance = nlohmann::json::object();
  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
  /// The mode's default warm-up: 10 epochs for the linear probe, 5 otherwise (the paper's).
  double default_warmup_epochs() const;
  /// The warm-up the run uses: warmup_epochs when set, else the default capped at epochs - 1.
  double effective_warmup_epochs() const;
  /// Non-empty when the default warm-up yielded to `epochs`: the note to show the user.
  std::string warmup_note() const;
  nlohmann::json to_json() const;

  /// Every option a user sets, declared once (option_schema.hpp). `mode` (the program or the
  /// Python call chooses it), runtime and dist (their own flag groups), progress, save_model and
  /// provenance (the protocol sets them) are not rows.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* D = "DownstreamOptions";
    constexpr Scope trained = kLinearProbeScope | kFinetuneScope,
                    whole = kFinetuneScope | kScratchScope;
    v(o.checkpoint,
      Option{D, "checkpoint", "--checkpoint",
             "pre-trained MAE ('{fold}' is replaced by the fold index)", Range::any(), trained});
    schedule_schema(D, o, v,
                    "linear warm-up in epochs; default 10 (linprobe) or 5 (finetune), at most "
                    "--epochs - 1 unless given");
    v(o.layer_decay, Option{D, "layer_decay", "--layer-decay", "layer-wise lr decay",
                            Range::between(0, 1, true, false), whole});
    v(o.label_smoothing,
      Option{D, "label_smoothing", "--label-smoothing", "label smoothing of the cross-entropy",
             Range::between(0, 1, false, true), whole});
    v(o.drop_path, Option{D, "drop_path", "--drop-path",
                          "stochastic depth, rising linearly to this rate at the last block",
                          Range::between(0, 1, false, true), whole});
    v(o.classes, Option{D, "classes", "--classes", "number of classes (0 = from the data)",
                        Range::any(), kEveryScope, "0 or >= 2"});
    v(o.seed, Option{D, "seed", "--seed", "seed of the head, the batch order and drop path"});
    v(o.preset, Option{D, "preset", "--preset",
                       "architecture for --from-scratch: paper-base | tiny | cpu-small",
                       Range::any(), kScratchScope});
    v(o.patch_length,
      Option{D, "patch_length", "--patch-length", "samples per patch for --from-scratch",
             Range::at_least(1), kScratchScope});
    v(o.layout,
      Option{D, "layout", "--layout", "modality | stacked (for --from-scratch)", Range::any(),
             kScratchScope},
      kTokenLayoutNames);
    v(o.pos_embed,
      Option{D, "pos_embed", "--pos-embed", "2d (paper) | 1d (released code) (for --from-scratch)",
             Range::any(), kScratchScope},
      kPosEmbedNames);
    v(o.scratch_init,
      Option{D, "scratch_init", "--scratch-init",
             "initialisation for --from-scratch: mae (MAE's, fixed sin-cos positions) | timm "
             "(timm's ViT: trunc-normal 0.02, learnable positions)",
             Range::any(), kScratchScope},
      kScratchInitNames);
    v(o.train_pos_embed,
      Option{D, "train_pos_embed", "--train-pos-embed",
             "train the positional table while fine-tuning, from the checkpoint's fixed code "
             "(the authors' fine-tuning; the kept classifier then takes only its window length)",
             Range::any(), kFinetuneScope});
  }
};

/// The paper's settings (Tables "Fine-tuning settings" / "Linear probing settings", UCI-HAR
/// column, and the released code's defaults for what the tables omit):
/// linprobe: lr 1e-3, weight decay 0, warm-up 10, 50 epochs, batch 50, min_lr 0;
/// finetune and scratch: lr 1e-3, weight decay 0.05, warm-up 5, 50 epochs, batch 50,
/// min_lr 1e-6, layer decay 0.75, label smoothing 0.1, drop path 0.1.
DownstreamOptions downstream_defaults(DownstreamMode mode);

/// Outcome of one train/test run.
struct DownstreamResult {
  ClassificationMetrics test;           ///< metrics on the test windows (final epoch)
  std::vector<int> truth;               ///< test labels
  std::vector<int> predicted;           ///< test predictions
  std::vector<nlohmann::json> history;  ///< per epoch: epoch, loss, lr, seconds
  int classes = 0;
  double seconds = 0.0;
  Device device = Device::kCpu;  ///< kCpu or kCuda
  std::string channel_map;       ///< e.g. "acc_x->0 acc_y->1 acc_z->2" or "identity"
};

/// Trains on `train` and evaluates on `test` (labels >= 0 required in both; an empty `test`
/// trains only, e.g. the final model of a k-fold protocol refitted on every window). Data whose
/// channels are a named subset of the checkpoint's (e.g. accelerometer only into an acc+gyro
/// model) use the matching modality rows of tokens and positions. Throws std::invalid_argument
/// for invalid options, unlabelled windows, or data that does not fit the model;
/// std::runtime_error for checkpoint problems and non-finite losses.
/// On the ranks of `context` (data-parallel when its world has several: options.dist must fit it,
/// RunContext::check_fits); progress to context.log().
DownstreamResult train_classifier(const DownstreamOptions& options, const data::Windows& train,
                                  const data::Windows& test, RunContext& context);
/// train_classifier() in one process (a local RunContext on `log`), whatever the environment
/// says.
DownstreamResult train_classifier(const DownstreamOptions& options, const data::Windows& train,
                                  const data::Windows& test, std::ostream& log);

}  // namespace moca::model
