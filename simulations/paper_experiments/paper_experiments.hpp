#pragma once
/// \file paper_experiments.hpp
/// The paper's training experiments at CPU scale, each a JSON file in an output folder:
/// * `table1.json`: activity classification on the random 7:3 split — supervised ViT from random
///   initialisation (fine-tuned), MAE synchronised masking and MoCA cross masking (linear probe
///   and fine-tune), optionally with on-the-fly Algorithm 1 augmentation; confusion matrices;
/// * `imputation.json`: the four generative tasks (random, temporal, sensor, extrapolation at
///   70%) for the cross and sync models and the statistical baselines (linear, nearest, MICE);
/// * `ablation_mask_ratio.json`: cross masking at several ratios -> linear-probe accuracy;
/// * `ablation_patch_length.json`: cross masking at several patch lengths -> linear probe;
/// * `reconstructions/<task>.{csv,png}` + `reconstructions.json`: one held-out window per task
///   reconstructed by the cross model, beside the baselines (linear, nearest, MICE) on the same
///   mask;
/// * `inspect/` + `inspect.json`: the fine-tuned cross, sync and from-scratch classifiers (kept
///   as `<workdir>/finetuned_*.pt`): attention maps of a walking and a laying test window and a
///   UMAP map of their class-token embeddings side by side.
/// Every model has the same preset, epochs, optimiser and seed; only the studied factor changes.
/// Reported accuracies are those of the final epoch (no selection on the test set).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/model/train/pretrain.hpp"
#include "study_data.hpp"

namespace moca::sim {

/// The experiments' pre-training defaults: cpu-small, Lp 20, 20 epochs (2 of warm-up), batch 50,
/// lr 5e-4.
model::PretrainOptions default_experiments_pretrain();

/// Options of run_paper_experiments.
struct PaperExperimentsOptions {
  StudyDataOptions data;              ///< samples = training windows cap (test: 3/7 of it)
  std::string out = "paper/results";  ///< output folder (created)
  std::string workdir;                ///< checkpoints; empty = <out>/checkpoints
  /// Experiments to run: table1, imputation, mask_ratio, patch_length, label_fraction,
  /// input_length, input_shape, reconstruct, inspect.
  std::vector<std::string> only = {"table1",       "imputation",     "mask_ratio",
                                   "patch_length", "label_fraction", "input_length",
                                   "input_shape",  "reconstruct",    "inspect"};
  /// Every model's pre-training: the study's rows of model::PretrainOptions (kStudyScope: preset,
  /// patch_length (Lp of all but the patch-length ablation), epochs, batch_size, lr,
  /// warmup_epochs) at default_experiments_pretrain(); each model sets its policy and Lp.
  model::PretrainOptions pretrain = default_experiments_pretrain();
  double ratio = 0.75;              ///< mask ratio of table 1 / imputation / patch ablation
  int probe_epochs = 20;            ///< linear-probe epochs, >= 1
  int finetune_epochs = 10;         ///< fine-tune and supervised epochs, >= 1
  bool augment = false;             ///< table 1: also the "w/ aug." rows
  bool finetune_ablations = false;  ///< ablations: also fine-tune (slower)
  std::vector<double> mask_ratios = {0.25, 0.5, 0.75, 0.9};  ///< each in (0, 1)
  std::vector<int> patch_lengths = {10, 20, 25, 40};         ///< each divides the length
  /// Label-fraction ablation: cross and sync probed on these shares of the training windows
  /// (per class, at least one each; model::label_subset), each in (0, 1].
  std::vector<double> label_fractions = {0.01, 0.05, 0.1, 0.5, 1.0};
  /// Input-length ablation: the cross model probed on windows of these many seconds (> 0).
  std::vector<double> input_seconds = {2, 3, 4, 6, 8};
  int mice_iterations = 5;  ///< MICE sweeps
  int mice_draws = 2;       ///< MICE chains
  bool png = true;          ///< reconstruction PNGs (gnuplot)
  std::uint64_t seed = 0;
  int threads = 0;  ///< torch threads; 0 = default
  /// Where every model trains and runs: kCpu (default; the committed CPU-scale results), kCuda
  /// or kAuto (the paper's scale on a GPU: paper/reproduce --gpu).
  model::Device device = model::Device::kCpu;
  /// Arithmetic of the training forward passes (model::RuntimeOptions::precision).
  model::Precision precision = model::Precision::kFp32;
  /// Throws std::invalid_argument naming the option, its value and the rule.
  void validate() const;
};

/// Runs the selected experiments; returns {"files": [...], "seconds": ...}.
nlohmann::json run_paper_experiments(const PaperExperimentsOptions& options, std::ostream& out,
                                     std::ostream& log);

}  // namespace moca::sim
