#pragma once
/// \file adaptive_policy.hpp
/// `adaptive`: the paper's correlation-adaptive masking ("Influence of Masking Schemes": choose
/// P to put larger mass on masks with larger Phi(m), with K_U, K_M estimated from a pilot
/// sample).
///
/// Construction: draw K candidate masks m_1..m_K from the base policy (stream
/// Rng(derive_seed(seed, 0))); score each by Phi(m_k) = sigma_1(Gamma) of linear CCA (PCA to
/// `pca` components) between the two views that the fixed mask m_k makes of every pilot window
/// (the first `pilot` windows of the context), with the context's feature map (raw if none).
/// Sampling: candidate k with probability exp(beta Phi(m_k)) / sum_j exp(beta Phi(m_j)).
/// beta = 0 gives the uniform distribution over the candidates, i.e. the base policy's
/// distribution restricted to (the empirical distribution of) the candidate set; beta -> inf
/// concentrates on the best candidate. The count of every mask is the base policy's count.
///
/// Spec keys: base (cross), beta (20, finite >= 0), candidates (256, >= 1), seed (0), pilot (256,
/// >= 3), pca (20, >= 1), features (raw | patch-mean | the context's callback name); every other
/// key is passed to the base policy (e.g. `adaptive:base=sync,ratio=0.5`). The spec round-trips
/// to an equal policy given the same pilot windows.
#include <memory>
#include <string>
#include <vector>

#include "moca/masking/feature_map.hpp"
#include "moca/masking/policy.hpp"

namespace moca::masking {

/// Options of AdaptivePolicy (the spec keys, see the file comment).
struct AdaptiveOptions {
  double beta = 20.0;      ///< inverse temperature; finite, >= 0
  int candidates = 256;    ///< K candidate masks; >= 1
  std::uint64_t seed = 0;  ///< seed of the candidate draw
  int pilot = 256;         ///< pilot windows used (the first min(pilot, n)); >= 3
  int pca = 20;            ///< principal components per view for Phi; >= 1
  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
};

/// Correlation-adaptive policy over candidates drawn from a base policy.
class AdaptivePolicy : public MaskPolicy {
 public:
  /// \param pilot windows (read during construction only); at least 3 must be used.
  /// \param features null = raw.
  AdaptivePolicy(std::unique_ptr<MaskPolicy> base, AdaptiveOptions options,
                 const data::Windows& pilot, std::shared_ptr<const FeatureMap> features);
  std::string name() const override { return "adaptive"; }
  std::string spec() const override;
  const Grid& grid() const override { return base_->grid(); }
  Mask sample(Rng& rng, const WindowRef& window) const override;

  const MaskPolicy& base() const { return *base_; }
  const AdaptiveOptions& options() const { return options_; }
  const std::vector<Mask>& candidates() const { return candidates_; }
  /// Phi(m_k) of each candidate.
  const std::vector<double>& scores() const { return scores_; }
  /// Sampling probability of each candidate.
  const std::vector<double>& probabilities() const { return probabilities_; }
  /// Pilot windows actually used.
  int pilot_size() const { return pilot_size_; }

 private:
  std::unique_ptr<MaskPolicy> base_;
  AdaptiveOptions options_;
  std::string features_name_;
  std::vector<Mask> candidates_;
  std::vector<double> scores_, probabilities_, cumulative_;
  int pilot_size_ = 0;
};

}  // namespace moca::masking
