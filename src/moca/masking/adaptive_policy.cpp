#include "moca/masking/adaptive_policy.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"

namespace moca::masking {

void AdaptiveOptions::validate() const {
  if (!(beta >= 0.0) || !std::isfinite(beta))
    throw_invalid("make_policy()", "adaptive beta", format_number(beta), "must be finite and >= 0");
  if (candidates < 1)
    throw_invalid("make_policy()", "adaptive candidates", std::to_string(candidates),
                  "must be >= 1");
  if (pilot < 3)
    throw_invalid("make_policy()", "adaptive pilot", std::to_string(pilot), "must be >= 3");
  if (pca < 1) throw_invalid("make_policy()", "adaptive pca", std::to_string(pca), "must be >= 1");
}

AdaptivePolicy::AdaptivePolicy(std::unique_ptr<MaskPolicy> base, AdaptiveOptions options,
                               const data::Windows& pilot,
                               std::shared_ptr<const FeatureMap> features)
    : base_(std::move(base)), options_(options) {
  if (!base_) throw_invalid("make_policy()", "adaptive needs a base policy");
  options_.validate();
  if (!features) features = std::make_shared<RawFeatureMap>();
  features_name_ = features->name();
  pilot_size_ = std::min(options_.pilot, pilot.size());
  if (pilot_size_ < 3) {
    throw_invalid("make_policy()",
                  "adaptive needs >= 3 pilot windows (" + std::to_string(pilot.size()) + " given)");
  }
  std::vector<int> rows(static_cast<size_t>(pilot_size_));
  std::iota(rows.begin(), rows.end(), 0);
  const data::Windows sample = pilot.subset(rows);
  ScoreOptions so;
  so.estimator = Estimator::kCca;
  so.mask_mode = MaskMode::kShared;
  so.pca = options_.pca;
  PolicyScorer scorer(sample, base_->grid(), features, so);

  Rng rng(derive_seed(options_.seed, 0));
  const int K = options_.candidates;
  for (int k = 0; k < K; ++k) candidates_.push_back(base_->sample(rng, sample.window(0)));
  scores_.assign(static_cast<size_t>(K), 0.0);
  std::vector<std::string> errors(static_cast<size_t>(K));
  const bool parallel = scorer.thread_safe();
#pragma omp parallel for schedule(dynamic) if (parallel)
  for (int k = 0; k < K; ++k) {
    try {
      scores_[static_cast<size_t>(k)] = scorer.score_masks({candidates_[static_cast<size_t>(k)]});
    } catch (const std::exception& e) {
      errors[static_cast<size_t>(k)] = e.what();
    }
  }
  (void)parallel;
  for (const auto& e : errors)
    if (!e.empty()) throw std::runtime_error("adaptive policy: scoring a candidate failed: " + e);
  const double top = *std::max_element(scores_.begin(), scores_.end());
  probabilities_.resize(static_cast<size_t>(K));
  double total = 0.0;
  for (int k = 0; k < K; ++k) {
    probabilities_[static_cast<size_t>(k)] =
        std::exp(options_.beta * (scores_[static_cast<size_t>(k)] - top));
    total += probabilities_[static_cast<size_t>(k)];
  }
  cumulative_.resize(static_cast<size_t>(K));
  double acc = 0.0;
  for (int k = 0; k < K; ++k) {
    probabilities_[static_cast<size_t>(k)] /= total;
    acc += probabilities_[static_cast<size_t>(k)];
    cumulative_[static_cast<size_t>(k)] = acc;
  }
}

std::string AdaptivePolicy::spec() const {
  std::string s = "adaptive:base=" + base_->name() + ",beta=" + format_number(options_.beta) +
                  ",candidates=" + std::to_string(options_.candidates) +
                  ",seed=" + std::to_string(options_.seed) +
                  ",pilot=" + std::to_string(options_.pilot) +
                  ",pca=" + std::to_string(options_.pca) + ",features=" + features_name_;
  const PolicySpec b = parse_policy_spec(base_->spec());
  for (const auto& kv : b.options) s += "," + kv.first + "=" + kv.second;
  return s;
}

Mask AdaptivePolicy::sample(Rng& rng, const WindowRef&) const {
  const double u = uniform01(rng) * cumulative_.back();
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  const size_t k = std::min(static_cast<size_t>(it - cumulative_.begin()), candidates_.size() - 1);
  return candidates_[k];
}

namespace detail {

double get_double(const PolicySpec& spec, const std::string& key, double fallback);
long long get_int(const PolicySpec& spec, const std::string& key, long long fallback);

std::unique_ptr<MaskPolicy> make_adaptive(const PolicySpec& spec, const Grid& grid,
                                          const PolicyContext& context) {
  static const std::vector<std::string> own = {"base",  "beta", "candidates", "seed",
                                               "pilot", "pca",  "features"};
  PolicySpec base_spec;
  const std::string* b = spec.find("base");
  base_spec.name = b ? *b : "cross";
  if (base_spec.name == "adaptive") {
    throw_invalid("make_policy()", "adaptive base must not be adaptive");
  }
  for (const auto& kv : spec.options)
    if (std::find(own.begin(), own.end(), kv.first) == own.end()) base_spec.options.push_back(kv);
  std::unique_ptr<MaskPolicy> base;
  try {
    base = make_policy(format_policy_spec(base_spec), grid);
  } catch (const std::invalid_argument& e) {
    throw_invalid("", std::string(e.what()) +
                          " [adaptive passes keys other than base, beta, candidates, seed, "
                          "pilot, pca, features to its base policy]");
  }
  AdaptiveOptions o;
  o.beta = get_double(spec, "beta", o.beta);
  const long long k = get_int(spec, "candidates", o.candidates);
  const long long seed = get_int(spec, "seed", 0);
  const long long pilot = get_int(spec, "pilot", o.pilot);
  const long long pca = get_int(spec, "pca", o.pca);
  if (seed < 0) {
    throw_invalid("make_policy()", "adaptive seed (" + std::to_string(seed) + ") must be >= 0");
  }
  auto clamp_int = [](long long v) {
    return static_cast<int>(std::max<long long>(std::min<long long>(v, 1 << 30), -1));
  };
  o.candidates = clamp_int(k);
  o.seed = static_cast<std::uint64_t>(seed);
  o.pilot = clamp_int(pilot);
  o.pca = clamp_int(pca);
  o.validate();
  std::shared_ptr<const FeatureMap> features = context.features;
  const std::string* fname = spec.find("features");
  if (fname != nullptr) {
    if (features && features->name() == *fname) {
      // the context's map, named in the spec
    } else if (*fname == "raw" || *fname == "patch-mean") {
      features = make_feature_map(*fname);
    } else {
      throw_invalid("make_policy()", "adaptive features (" + *fname +
                                         ") must be raw, patch-mean or the name of the context's "
                                         "feature map");
    }
  }
  if (context.pilot == nullptr) {
    throw_invalid("make_policy()",
                  "adaptive needs pilot windows (PolicyContext::pilot) to score its "
                  "candidates");
  }
  return std::make_unique<AdaptivePolicy>(std::move(base), o, *context.pilot, features);
}

}  // namespace detail

}  // namespace moca::masking
