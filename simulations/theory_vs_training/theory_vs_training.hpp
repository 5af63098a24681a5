#pragma once
/// \file theory_vs_training.hpp
/// Does the theoretical score of a masking policy predict what training with it achieves?
///
/// For each policy P_k of a set (default: cross at ratios 0.25, 0.5, 0.75, 0.9, sync, temporal,
/// per-modality, adaptive) on one train / test split:
/// 1. score: E_m[Phi(m)] with the policy scorer on the training windows (feature map raw or
///    patch-mean, PCA k + sigma_1(Gamma), R mask draws);
/// 2. train: a short MoCA pre-training with P_k (model::pretrain; same seed, preset, epochs for
///    every policy);
/// 3. evaluate on the held-out windows: the reconstruction MSE over the masked samples under
///    masks of P_k itself (the loss the paper's bound is about, "own"), the same under one common
///    evaluation policy ("common"), and the linear-probe top-1 accuracy (model::train_classifier).
/// Then Spearman and Kendall tau-b, with bootstrap CIs over the policies, between the score and
/// each outcome. The theory predicts a negative association of score with loss (a larger
/// objective gives a smaller lower bound on L_MAE) and — by the paper's argument — a positive one
/// with probe accuracy.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/masking/mask.hpp"
#include "moca/masking/policy.hpp"
#include "study_data.hpp"

namespace moca::sim {

/// Options of run_theory_vs_training.
struct TheoryVsTrainingOptions {
  StudyDataOptions data;  ///< samples = training windows (test: 3/7 of that)
  std::vector<std::string> policies = {
      "cross:ratio=0.25",        "cross:ratio=0.5",
      "cross:ratio=0.75",        "cross:ratio=0.9",
      "sync:ratio=0.75",         "temporal:ratio=0.75",
      "per-modality:ratio=0.75", "adaptive:base=cross,ratio=0.75,beta=20"};  ///< >= 3 specs
  std::string features = "raw";                     ///< score feature map: raw | patch-mean
  int pca = 50;                                     ///< >= 1
  int draws = 10;                                   ///< >= 2
  std::string eval_policy = "random:ratio=0.7";     ///< the common held-out task
  std::string preset = "cpu-small";                 ///< model preset
  int patch_length = 20;                            ///< Lp
  int epochs = 20;                                  ///< pre-training epochs, >= 1
  int batch_size = 50;                              ///< >= 1
  double lr = 5e-4;                                 ///< > 0
  double warmup_epochs = 2.0;                       ///< in [0, epochs)
  int probe_epochs = 20;                            ///< linear-probe epochs, >= 1
  int threads = 0;                                  ///< torch and OpenMP threads; 0 = default
  std::string workdir = "theory_vs_training_ckpt";  ///< where checkpoints go
  int resamples = 2000;                             ///< bootstrap resamples, >= 100
  std::uint64_t seed = 0;                           ///< masks, weights, bootstrap
  std::string json;                                 ///< output file; empty = none
  /// The program's effective options (tools::config_json: the keys of --print-config),
  /// recorded as the JSON's "options"; the study reports how it ran as "settings".
  nlohmann::json recorded_options;
  /// Throws std::invalid_argument naming the option, its value and the rule.
  void validate() const;
};

/// Runs the study (this trains one model per policy: minutes), prints the table and the rank
/// correlations, writes JSON when asked and returns it.
nlohmann::json run_theory_vs_training(const TheoryVsTrainingOptions& options, std::ostream& out,
                                      std::ostream& log);

}  // namespace moca::sim
