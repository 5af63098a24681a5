#pragma once
/// \file reconstruct.hpp
/// Original vs reconstructed signals of one window under one mask: CSV and a gnuplot PNG with
/// the masked patches shaded (torch-free API).
#include <cstdint>
#include <ostream>
#include <string>

#include <utility>
#include <vector>
#include "moca/common/option_schema.hpp"
#include "moca/data/windows.hpp"

#include "moca/masking/mask.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/eval/imputation_baselines.hpp"

namespace moca::model {

/// Options of reconstruct_window().
struct ReconstructOptions {
  std::string checkpoint;                   ///< pre-trained MAE (required)
  int window = 0;                           ///< row of the window set (>= 0)
  std::string policy = "cross:ratio=0.75";  ///< mask policy spec
  std::uint64_t seed = 0;              ///< the mask is drawn from Rng(derive_seed(seed, window))
  std::string out = "reconstruction";  ///< writes <out>.csv, <out>.png, <out>.gp
  bool png = true;                     ///< run gnuplot (pngcairo or png terminal)
  /// Also impute the same window under the same mask with the statistical baselines (linear,
  /// nearest, MICE): extra CSV columns and curves. They run over the whole window set, window i
  /// masked by Rng(derive_seed(seed, i)) like this one, so their pooled statistics (channel
  /// means where a channel is wholly masked, MICE's regressions) come from the set.
  bool baselines = false;
  MiceOptions mice;  ///< MICE of the baselines (its seed: this seed)
  InferenceOptions inference;
  /// Throws std::invalid_argument naming the field (`ReconstructOptions::window`), its value and
  /// the rule.
  void validate() const;

  /// Every option a user sets, declared once (option_schema.hpp): `moca reconstruct`'s flags and
  /// the range checks of validate(). `png` is the tool's --no-png; the runtime has its own flag
  /// group.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* R = "ReconstructOptions";
    const Range any = Range::any();
    v(o.checkpoint, Option{R, "checkpoint", "--checkpoint", "pre-trained MAE"});
    v(o.window, Option{R, "window", "--window", "test window index", Range::at_least(0)});
    v(o.policy, Option{R, "policy", "--policy", "mask policy spec"});
    v(o.seed, Option{R, "seed", "--seed", "the mask's seed (with the window index)"});
    v(o.out, Option{R, "out", "--out", "output prefix (<out>.csv, .png, .gp)", any, kEveryScope,
                    "a path without quotes"});
    v(o.baselines,
      Option{R, "baselines", "--baselines", "also linear, nearest and MICE on the same mask"});
    InferenceOptions::schema(o.inference, v);
  }
};

/// What reconstruct_window() wrote.
struct ReconstructResult {
  std::string csv;          ///< wide CSV: t, then per channel <name>, <name>_rec, <name>_masked
  std::string png;          ///< empty when png is off
  std::string script;       ///< the gnuplot script (kept so the figure can be restyled)
  masking::Mask mask;       ///< the mask used
  double mae_masked = 0.0;  ///< over masked samples
  double mse_masked = 0.0;
  long masked_samples = 0;
  /// With baselines: (name, error over the masked samples) of linear, nearest, MICE.
  std::vector<std::pair<std::string, ImputationError>> baselines;
};

/// The names of the channels of `w` for tables and plots (its channel_names, "ch<c>" where it
/// names none).
std::vector<std::string> channel_labels(const data::Windows& w);

/// Reconstructs windows.window(options.window) with the MAE under one mask of the policy and
/// writes the files atomically (with baselines: their imputations beside the model's).
/// std::invalid_argument for a bad window index or options, std::runtime_error when gnuplot is
/// missing or fails (the CSV is still written).
ReconstructResult reconstruct_window(const ReconstructOptions& options,
                                     const data::Windows& windows, std::ostream& log);

}  // namespace moca::model
