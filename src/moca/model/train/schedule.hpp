#pragma once
/// \file schedule.hpp
/// Learning-rate schedules and parameter grouping rules (torch-free).
#include <string>

namespace moca::model {

/// Per-iteration linear warm-up then half-cosine decay (MAE util/lr_sched.py), evaluated at the
/// fractional epoch e = epoch + iteration / iterations_per_epoch:
///   e < warmup:  lr(e) = base_lr * e / warmup
///   otherwise:   lr(e) = min_lr + (base_lr - min_lr) * (1 + cos(pi (e - warmup) / (epochs -
///   warmup))) / 2
struct LrSchedule {
  double base_lr = 5e-4;       ///< peak learning rate (> 0)
  double min_lr = 0.0;         ///< floor of the cosine (0 <= min_lr <= base_lr)
  double warmup_epochs = 0.0;  ///< linear warm-up length in epochs (0 <= warmup < epochs, or 0)
  double epochs = 1.0;         ///< total epochs (> 0)
  /// Throws std::invalid_argument naming the field that breaks its rule.
  void validate() const;
  /// The learning rate at fractional epoch e (clamped to [0, epochs]).
  double at(double e) const;
};

/// Layer id for layer-wise learning-rate decay (BEiT/MAE param_groups_lrd) of a classifier
/// parameter named as in MocaClassifier: 0 for encoder.cls_token, encoder.pos_embed and
/// encoder.patch_embed.*; k + 1 for encoder.blocks.<k>.*; depth + 1 for everything else
/// (final norm, head).
int layer_id(const std::string& parameter_name, int depth);

/// Layer-wise lr scale decay^(depth + 1 - layer_id), in (0, 1].
double layer_scale(int layer_id, int depth, double decay);

/// The weight-decay rule of timm's add_weight_decay / param_groups_lrd: no decay for 1-D
/// parameters (biases, norms) and names ending in ".bias"; `no_decay_tokens` also exempts
/// cls_token and pos_embed (fine-tuning rule; pre-training decays the tokens, as upstream).
bool uses_weight_decay(const std::string& parameter_name, long ndim, bool no_decay_tokens);

}  // namespace moca::model
