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

#include "moca/common/option_schema.hpp"
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

  /// The options a user sets (option_schema.hpp), in the program's order; `data` and `pretrain`
  /// have their own, and `png` is the program's --no-png (a row would rename it). The lists'
  /// rules are validate()'s (check_ranges checks numbers, not lists).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* P = "PaperExperimentsOptions";
    const Range any = Range::any();
    // a list given as one text: comma-separated here, split by the program (split_spec_list)
    auto list = [&](const char* key, const char* flag, const char* help, const char* rule) {
      return Option{P, key, flag, help, any, kEveryScope, rule, Surface::kBoth, false};
    };
    v(o.out, Option{P, "out", "--out", "output folder"});
    v(o.workdir,
      Option{P, "workdir", "--workdir", "checkpoint folder (default <out>/checkpoints)"});
    v(o.only, list("only", "--only", "comma-separated experiments", nullptr));
    v(o.ratio, Option{P, "ratio", "--ratio", "mask ratio", Range::between(0, 1, true, true)});
    v(o.probe_epochs,
      Option{P, "probe_epochs", "--probe-epochs", "linear-probe epochs", Range::at_least(1)});
    v(o.finetune_epochs,
      Option{P, "finetune_epochs", "--finetune-epochs", "fine-tune epochs", Range::at_least(1)});
    v(o.augment, Option{P, "augment", "--augment", "table 1: also the w/ aug. rows"});
    v(o.finetune_ablations,
      Option{P, "finetune_ablations", "--finetune-ablations", "ablations: also fine-tune"});
    v(o.label_fractions, list("label_fractions", "--label-fractions",
                              "label-fraction ablation: shares of the training windows (per class)",
                              "each in (0, 1]"));
    v(o.input_seconds,
      list("input_seconds", "--input-seconds",
           "input-length ablation: seconds of input the cross model is probed at", "each > 0"));
    v(o.mask_ratios,
      list("mask_ratios", "--mask-ratios", "mask-ratio ablation values", "each in (0, 1)"));
    v(o.patch_lengths,
      list("patch_lengths", "--patch-lengths", "patch-length ablation values", "each >= 1"));
    v(o.mice_iterations,
      Option{P, "mice_iterations", "--mice-iterations", "MICE sweeps", Range::at_least(1)});
    v(o.mice_draws, Option{P, "mice_draws", "--mice-draws", "MICE chains", Range::at_least(1)});
    v(o.seed, Option{P, "seed", "--seed", "seed"});
    v(o.threads, Option{P, "threads", "--threads", "threads (0 = default)", Range::at_least(0)});
    v(o.device,
      Option{P, "device", "--device", "auto | cpu | cuda: where every model trains and runs"},
      model::kDeviceNames);
    v(o.precision,
      Option{P, "precision", "--precision",
             "fp32 | bf16 (autocast of the training forward passes)"},
      model::kPrecisionNames);
  }
};

/// Runs the selected experiments; returns {"files": [...], "seconds": ...}.
nlohmann::json run_paper_experiments(const PaperExperimentsOptions& options, std::ostream& out,
                                     std::ostream& log);

}  // namespace moca::sim
