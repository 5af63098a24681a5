#pragma once
/// \file reconstruct.hpp
/// Original vs reconstructed signals of one window under one mask: CSV and a gnuplot PNG with
/// the masked patches shaded (torch-free API).
#include <cstdint>
#include <ostream>
#include <string>

#include "moca/data/windows.hpp"
#include "moca/masking/mask.hpp"
#include "moca/model/imputation.hpp"

namespace moca::model {

/// Options of reconstruct_window().
struct ReconstructOptions {
  std::string checkpoint;                   ///< pre-trained MAE (required)
  int window = 0;                           ///< row of the window set (>= 0)
  std::string policy = "cross:ratio=0.75";  ///< mask policy spec
  std::uint64_t seed = 0;              ///< the mask is drawn from Rng(derive_seed(seed, window))
  std::string out = "reconstruction";  ///< writes <out>.csv, <out>.png, <out>.gp
  bool png = true;                     ///< run gnuplot (pngcairo or png terminal)
  InferenceOptions inference;
  void validate() const;
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
};

/// Reconstructs windows.window(options.window) with the MAE under one mask of the policy and
/// writes the files atomically. std::invalid_argument for a bad window index or options,
/// std::runtime_error when gnuplot is missing or fails (the CSV is still written).
ReconstructResult reconstruct_window(const ReconstructOptions& options,
                                     const data::Windows& windows, std::ostream& log);

}  // namespace moca::model
