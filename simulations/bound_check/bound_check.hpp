#pragma once
/// \file bound_check.hpp
/// Numerical check of the paper's Remark (appendix, "Bound for MAE Reconstruction Loss"): with
/// outputs l2-normalised to norm c, A = E<h(x^U), h_g(x^M)> and
/// eps = E||h_g(x^M) - x^M||^2,
///   L_MAE = 2c^2 - 2A + xi,   |xi| <= eps + 2 sqrt(eps (2c^2 - 2A)).
///
/// On a trained MoCA model and held-out windows, for each masking policy:
/// * h(x^U): the model's reconstruction of the masked samples when the mask's visible tokens
///   are the encoder input (the MAE prediction);
/// * h_g(x^M): the pseudo-autoencoder of Assumption 2 realised by the same network: the masked
///   tokens are given to the encoder as the visible ones (the complement mask) and the decoder's
///   reconstruction of those same tokens is read off. The model is trained with the loss on all
///   patches (paper), so this is the network's own autoencoding of the view;
/// * x^M: the masked samples.
/// Each of the three per-window vectors (over the masked samples) is scaled to norm c
/// (Assumption 1). Then L = mean ||h - x||^2, A = mean <h, h_g>, eps = mean ||h_g - x||^2 are
/// computed on the same windows; the Remark's identity decomposes
/// L = (2c^2 - 2A) + eps + 2 mean <h - h_g, h_g - x> exactly, and the band follows from
/// Cauchy-Schwarz — so the check always holds up to rounding. What the data decide is how
/// large eps is (the pseudo-inverse assumption) and therefore whether the band is narrow enough
/// for the alignment A to pin down the loss L.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "study_data.hpp"

namespace moca::sim {

/// Options of run_bound_check.
struct BoundCheckOptions {
  std::string checkpoint;  ///< pre-trained MoCA MAE (required)
  StudyDataOptions data;   ///< held-out windows: the test part of the split (samples = train size)
  std::vector<std::string> policies = {"cross:ratio=0.75", "sync:ratio=0.75"};  ///< >= 1 specs
  double c = 1.0;          ///< norm of the normalised vectors, > 0
  std::uint64_t seed = 0;  ///< mask seed
  int threads = 0;         ///< torch threads; 0 = default
  std::string json;        ///< output file; empty = none
  /// Throws std::invalid_argument naming the option, its value and the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp): bound_check's flags besides the data group
  /// (add_study_data_flags). --policies keeps each given text whole (list_flags.hpp).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* B = "BoundCheckOptions";
    v(o.checkpoint, Option{B, "checkpoint", "--checkpoint", "pre-trained MoCA checkpoint"});
    v(o.policies, Option{B, "policies", "--policies", "comma-separated policy specs", Range::any(),
                         kEveryScope, nullptr, Surface::kBoth, false});
    v(o.c, Option{B, "c", "--c", "norm of the normalised outputs", Range::above(0)});
    v(o.seed, Option{B, "seed", "--seed", "mask seed"});
    v(o.threads, Option{B, "threads", "--threads", "threads (0 = default)", Range::at_least(0)});
    v(o.json, Option{B, "json", "--json", "write results as JSON to this file"});
  }
};

/// The Remark's quantities for one policy.
struct BoundTerms {
  double loss = 0.0;       ///< L = mean ||h - x||^2 (normalised)
  double alignment = 0.0;  ///< A = mean <h, h_g>
  double eps = 0.0;        ///< mean ||h_g - x||^2
  double gap = 0.0;        ///< 2c^2 - 2A
  double xi = 0.0;         ///< L - (2c^2 - 2A)
  double bound = 0.0;      ///< eps + 2 sqrt(eps * gap)
  bool holds = false;      ///< |xi| <= bound (+ 1e-9 relative rounding)
  long windows = 0;        ///< windows used (all have a non-zero masked view)
};

/// The Remark's terms from per-window vectors (rows): h, hg, x are n x d (d may differ per row
/// via zero padding — zeros do not change norms or inner products). Each row is scaled to norm
/// c; rows where any of the three is zero are skipped. Exposed for tests.
BoundTerms bound_terms(const std::vector<std::vector<double>>& h,
                       const std::vector<std::vector<double>>& hg,
                       const std::vector<std::vector<double>>& x, double c);

/// Runs the check, prints a table, writes JSON when asked and returns it.
nlohmann::json run_bound_check(const BoundCheckOptions& options, std::ostream& out,
                               std::ostream& log);

}  // namespace moca::sim
