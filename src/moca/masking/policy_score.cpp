#include "moca/masking/policy_score.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"
#include "moca/data/dataset.hpp"
#include "moca/kcca/kcca.hpp"
#include "moca/kcca/linear_cca.hpp"
#include "moca/masking/detail/token_grams.hpp"
#include "moca/masking/policies.hpp"
#include "moca/masking/policy_spec.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace moca::masking {

std::string to_string(Estimator e) {
  return enum_name(kEstimatorNames, e);
}
std::string to_string(MaskMode m) {
  return enum_name(kMaskModeNames, m);
}

std::vector<UnusedOption> unused_options(const ScoreOptions& o) {
  std::vector<UnusedOption> out;
  const std::string is = "; the estimator is " + to_string(o.estimator);
  if (o.estimator == Estimator::kCca) {
    for (const char* key : {"kernel", "gamma", "sigma"}) {
      out.push_back({std::string("ScoreOptions::") + key, "only the kcca estimator uses it" + is});
    }
    return out;
  }
  for (const char* key : {"pca", "ridge"}) {
    out.push_back({std::string("ScoreOptions::") + key, "only the cca estimator uses it" + is});
  }
  if (o.kernel != kcca::KernelType::kGaussian && o.kernel != kcca::KernelType::kLaplacian) {
    out.push_back({"ScoreOptions::sigma",
                   "only the rbf and laplacian kernels have a bandwidth; "
                   "the kernel is " +
                       enum_name(kcca::kKernelTypeNames, o.kernel)});
  }
  return out;
}

void ScoreOptions::validate() const {
  check_ranges(*this);
}

namespace {
// The cca estimator's options: k = pca components per view, the ridge, sigma_1 only.
kcca::LinearCcaOptions linear_cca_options(const ScoreOptions& options) {
  kcca::LinearCcaOptions o;
  o.pca = options.pca;
  o.ridge = options.ridge;
  o.components = 1;
  return o;
}

Eigen::MatrixXd restrict_columns(Eigen::MatrixXd X, const std::vector<int>& cols) {
  if (cols.empty()) return X;
  Eigen::MatrixXd out(X.rows(), static_cast<Eigen::Index>(cols.size()));
  for (size_t j = 0; j < cols.size(); ++j) out.col(static_cast<Eigen::Index>(j)) = X.col(cols[j]);
  return out;
}
}  // namespace

MeanInterval mean_interval(const std::vector<double>& v) {
  const int R = static_cast<int>(v.size());
  if (R < 2) {
    throw_invalid("mean_interval()", std::to_string(R) + " values; a standard error needs >= 2");
  }
  MeanInterval out;
  for (double x : v) out.mean += x;
  out.mean /= R;
  double ss = 0.0;
  for (double x : v) ss += (x - out.mean) * (x - out.mean);
  out.std_error = std::sqrt(ss / (R - 1) / R);
  const double t =
      boost::math::quantile(boost::math::students_t_distribution<double>(R - 1), 0.975);
  out.ci_low = out.mean - t * out.std_error;
  out.ci_high = out.mean + t * out.std_error;
  return out;
}

PolicyScorer::PolicyScorer(const data::Windows& windows, const Grid& grid,
                           std::shared_ptr<const FeatureMap> features, ScoreOptions options)
    : windows_(windows),
      grid_(grid),
      features_(features ? std::move(features) : std::make_shared<RawFeatureMap>()),
      options_(options) {
  options_.validate();
  featurizer_ = features_->prepare(windows_, grid_);
  auto columns_of = [&](const std::vector<int>& channels, const char* what) {
    std::vector<int> cols;
    if (channels.empty()) return cols;
    const auto owner = featurizer_->column_channels();
    if (owner.empty()) {
      throw_invalid("", std::string("PolicyScorer(): ") + what + " needs a feature " +
                            "map with per-channel columns (raw, patch-mean), not " +
                            features_->name());
    }
    for (int c : channels) {
      if (c < 0 || c >= grid_.channels) {
        throw_invalid("", std::string("PolicyScorer(): ") + what + " channel (" +
                              std::to_string(c) + ") out of range [0, " +
                              std::to_string(grid_.channels) + ")");
      }
    }
    for (size_t j = 0; j < owner.size(); ++j)
      if (std::find(channels.begin(), channels.end(), owner[j]) != channels.end())
        cols.push_back(static_cast<int>(j));
    return cols;
  };
  columns_u_ = columns_of(options_.unmasked_channels, "unmasked_channels");
  columns_m_ = columns_of(options_.masked_channels, "masked_channels");
  if (options_.estimator == Estimator::kCca && windows_.size() < 3) {
    throw_invalid("PolicyScorer()",
                  "cca needs >= 3 windows (" + std::to_string(windows_.size()) + ")");
  }
}

std::vector<Mask> PolicyScorer::draw_masks(const MaskPolicy& policy, int r) const {
  if (!(policy.grid() == grid_)) {
    throw_invalid("", "PolicyScorer: policy " + policy.spec() + " was made for another grid");
  }
  Rng rng(derive_seed(options_.seed, static_cast<std::uint64_t>(r)));
  std::vector<Mask> masks;
  if (options_.mask_mode == MaskMode::kShared) {
    masks.push_back(policy.sample(rng, windows_.window(0)));
  } else {
    masks.reserve(static_cast<size_t>(windows_.size()));
    for (int i = 0; i < windows_.size(); ++i)
      masks.push_back(policy.sample(rng, windows_.window(i)));
  }
  return masks;
}

double PolicyScorer::score_masks(const std::vector<Mask>& masks, double* null_level,
                                 std::string* warning, std::uint64_t null_seed) const {
  const Eigen::MatrixXd U =
      restrict_columns(featurizer_->features(masks, ViewSide::kUnmasked), columns_u_);
  const Eigen::MatrixXd M =
      restrict_columns(featurizer_->features(masks, ViewSide::kMasked), columns_m_);
  if (options_.estimator == Estimator::kCca) {
    const auto res = kcca::linear_cca(U, M, linear_cca_options(options_));
    if (null_level) *null_level = res.null_level;
    if (warning) *warning = res.warning;
    return res.correlations(0);
  }
  // kcca: Grams of the view features, centred regularised KCCA.
  auto make_kernel = [&](const Eigen::MatrixXd& X, std::uint64_t s) {
    kcca::Kernel k;
    k.type = options_.kernel;
    if (k.type == kcca::KernelType::kGaussian || k.type == kcca::KernelType::kLaplacian) {
      k.sigma = options_.sigma > 0 ? options_.sigma : kcca::median_heuristic_sigma(X, s, 1000);
    }
    return k;
  };
  kcca::check_dense_kcca_memory(
      U.rows(), kcca::KccaMethod::kExact,
      "use the cca estimator (ScoreOptions::estimator cca) or fewer samples");
  const Eigen::MatrixXd Ku = kcca::gram(U, make_kernel(U, null_seed));
  const Eigen::MatrixXd Km = kcca::gram(M, make_kernel(M, null_seed + 1));
  kcca::KccaOptions ko;
  ko.gamma_u = ko.gamma_m = options_.gamma;
  ko.center = true;
  ko.coefficients = false;  // sigma_1 only
  const auto res = kcca::kcca(Ku, Km, ko);
  if (warning) {
    *warning = res.status == kcca::SolverStatus::kSuccess ? "" : res.message;
  }
  if (null_level) {
    // Permute the masked view's samples: same Gram spectra, pairing broken.
    const int n = static_cast<int>(Km.rows());
    std::vector<int> perm(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
    Rng rng(null_seed);
    shuffle(perm, rng);
    Eigen::MatrixXd Kp(n, n);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        Kp(i, j) = Km(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
    *null_level = kcca::kcca(Ku, Kp, ko).correlations(0);
  }
  return res.correlations(0);
}

// One score() call's per-draw results; draw r writes only its own slots, so draws may run
// in parallel. A draw that throws leaves its message in errors[r].
struct PolicyScorer::Draws {
  explicit Draws(int R)
      : values(static_cast<size_t>(R), 0.0),
        null_values(static_cast<size_t>(R), 0.0),
        fractions(static_cast<size_t>(R), 0.0),
        warnings(static_cast<size_t>(R)),
        errors(static_cast<size_t>(R)) {}
  std::vector<double> values, null_values, fractions;
  std::vector<std::string> warnings, errors;

  // The score of all draws: mean, interval, mean null level and masked fraction, the distinct
  // warnings; throws std::runtime_error with the first draw's error if any draw failed.
  PolicyScore summary(const MaskPolicy& policy) {
    PolicyScore out;
    out.scheme = policy.name();
    out.spec = policy.spec();
    const int R = static_cast<int>(values.size());
    out.draws = R;
    for (const auto& e : errors) {
      if (!e.empty()) throw std::runtime_error("score(" + out.spec + "): " + e);
    }
    out.values = std::move(values);
    out.null_values = std::move(null_values);
    const auto mi = mean_interval(out.values);
    out.mean = mi.mean;
    out.std_error = mi.std_error;
    out.ci_low = mi.ci_low;
    out.ci_high = mi.ci_high;
    for (double z : out.null_values) out.null_level += z / R;
    for (double f : fractions) out.mean_masked_fraction += f / R;
    for (const auto& w : warnings) {
      if (!w.empty() && out.warning.find(w) == std::string::npos) {
        out.warning += (out.warning.empty() ? "" : "; ") + w;
      }
    }
    return out;
  }
};

// The DrawCallback, called from one thread at a time with the count of finished draws.
class PolicyScorer::Progress {
 public:
  Progress(const DrawCallback& on_draw, int total) : on_draw_(on_draw), total_(total) {}
  void draw_done() {
    if (!on_draw_) return;
#ifdef _OPENMP
#pragma omp critical(moca_policy_score_progress)
#endif
    on_draw_(++done_, total_);
  }

 private:
  const DrawCallback& on_draw_;
  int total_;
  int done_ = 0;
};

namespace {

int score_threads(const ScoreOptions& options) {
#ifdef _OPENMP
  return options.threads > 0 ? options.threads : omp_get_max_threads();
#else
  (void)options;
  return 1;
#endif
}

double mean_masked_fraction(const std::vector<Mask>& masks) {
  double frac = 0.0;
  for (const auto& m : masks) frac += m.ratio();
  return frac / static_cast<double>(masks.size());
}

// Columns of a view's features: all of the token blocks Z, or the kept ones.
Eigen::Index view_width(const std::vector<int>& cols, const Eigen::MatrixXd* Z) {
  return cols.empty() ? (Z ? Z->cols() : 0) : static_cast<Eigen::Index>(cols.size());
}

// Tokens a view may use (token blocks of w columns): all, or those whose columns the channel
// restriction keeps.
std::vector<char> kept_tokens(const std::vector<int>& cols, int tokens, Eigen::Index w) {
  std::vector<char> keep(static_cast<size_t>(tokens), cols.empty() ? 1 : 0);
  for (int c : cols) keep[static_cast<size_t>(c / w)] = 1;
  return keep;
}

// Draws per batch of the Gram route: the batch's 2 n x n Grams per draw within ~256 MiB, at
// least one draw per thread, batches of near-equal size.
int draws_per_batch(int draws, Eigen::Index n, int threads) {
  const double per_draw = 16.0 * static_cast<double>(n) * static_cast<double>(n);
  const int cap = std::max(threads, static_cast<int>(256.0 * 1024 * 1024 / per_draw));
  const int batches = (draws + cap - 1) / cap;
  return (draws + batches - 1) / batches;
}

// One draw's token indicators (n x T): au(i, t) = 1 where token t of window i is visible and
// kept in the unmasked view, am(i, t) = 1 where it is masked and kept in the masked view.
void view_indicators(const std::vector<Mask>& masks, const std::vector<char>& keep_u,
                     const std::vector<char>& keep_m, Eigen::MatrixXd& au, Eigen::MatrixXd& am) {
  const int T = static_cast<int>(au.cols());
  for (Eigen::Index i = 0; i < au.rows(); ++i) {
    const Mask& m = masks.size() == 1 ? masks[0] : masks[static_cast<size_t>(i)];
    for (int t = 0; t < T; ++t) {
      const bool masked = m.masked(t);
      au(i, t) = !masked && keep_u[static_cast<size_t>(t)] ? 1.0 : 0.0;
      am(i, t) = masked && keep_m[static_cast<size_t>(t)] ? 1.0 : 0.0;
    }
  }
}

}  // namespace

// cca on a token-block map (raw) with both views at least n wide: the views' centred Grams
// from per-token products shared by a batch of draws (detail/token_grams.hpp), then the PCA
// route of linear_cca on them; the same scores as score_masks() up to rounding, without the
// n x d feature matrices and their n² d Grams (80 of them in kcca_score's default run).
bool PolicyScorer::uses_token_grams() const {
  const Eigen::MatrixXd* Z = featurizer_->token_blocks();
  const Eigen::Index n = windows_.size();
  return options_.estimator == Estimator::kCca && Z != nullptr && featurizer_->thread_safe() &&
         Z->cols() % grid_.tokens() == 0 && Z->rows() == n && view_width(columns_u_, Z) >= n &&
         view_width(columns_m_, Z) >= n;
}

void PolicyScorer::score_by_token_grams(const MaskPolicy& policy, int threads, Draws& draws,
                                        Progress& progress) const {
  const Eigen::MatrixXd* Z = featurizer_->token_blocks();
  const int T = grid_.tokens();
  const Eigen::Index n = windows_.size();
  const auto keep_u = kept_tokens(columns_u_, T, Z->cols() / T);
  const auto keep_m = kept_tokens(columns_m_, T, Z->cols() / T);
  const int R = options_.draws;
  const int batch = draws_per_batch(R, n, threads);
  const kcca::LinearCcaOptions lo = linear_cca_options(options_);
  std::vector<Eigen::MatrixXd> in_view, grams;
  for (int r0 = 0; r0 < R; r0 += batch) {
    const int nb = std::min(batch, R - r0);
    in_view.resize(static_cast<size_t>(2 * nb));
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) num_threads(threads)
#endif
    for (int b = 0; b < nb; ++b) {
      const size_t r = static_cast<size_t>(r0 + b);
      Eigen::MatrixXd& au = in_view[static_cast<size_t>(2 * b)];
      Eigen::MatrixXd& am = in_view[static_cast<size_t>(2 * b + 1)];
      au.setZero(n, T);
      am.setZero(n, T);
      try {
        const auto masks = draw_masks(policy, static_cast<int>(r));
        draws.fractions[r] = mean_masked_fraction(masks);
        view_indicators(masks, keep_u, keep_m, au, am);
      } catch (const std::exception& e) {
        draws.errors[r] = e.what();
      }
    }
    detail::token_masked_grams(*Z, T, in_view, threads, grams);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) num_threads(threads)
#endif
    for (int b = 0; b < nb; ++b) {
      const size_t r = static_cast<size_t>(r0 + b);
      if (draws.errors[r].empty()) {
        try {
          const auto res = kcca::linear_cca_from_grams(
              grams[static_cast<size_t>(2 * b)], grams[static_cast<size_t>(2 * b + 1)],
              view_width(columns_u_, Z), view_width(columns_m_, Z), lo);
          draws.values[r] = res.correlations(0);
          draws.null_values[r] = res.null_level;
          draws.warnings[r] = res.warning;
        } catch (const std::exception& e) {
          draws.errors[r] = e.what();
        }
      }
      progress.draw_done();
    }
  }
}

void PolicyScorer::score_by_features(const MaskPolicy& policy, int threads, Draws& draws,
                                     Progress& progress) const {
  const bool parallel = featurizer_->thread_safe();
  (void)parallel;
  (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic) num_threads(threads) if (parallel)
#endif
  for (int r = 0; r < options_.draws; ++r) {
    const size_t k = static_cast<size_t>(r);
    try {
      const auto masks = draw_masks(policy, r);
      draws.fractions[k] = mean_masked_fraction(masks);
      draws.values[k] =
          score_masks(masks, &draws.null_values[k], &draws.warnings[k],
                      derive_seed(options_.seed ^ 0x6e756c6cULL, static_cast<std::uint64_t>(r)));
    } catch (const std::exception& e) {
      draws.errors[k] = e.what();
    }
    progress.draw_done();
  }
}

PolicyScore PolicyScorer::score(const MaskPolicy& policy, const DrawCallback& on_draw) const {
  const auto t0 = std::chrono::steady_clock::now();
  Draws draws(options_.draws);
  Progress progress(on_draw, options_.draws);
  const int threads = score_threads(options_);
  if (uses_token_grams()) {
    score_by_token_grams(policy, threads, draws, progress);
  } else {
    score_by_features(policy, threads, draws, progress);
  }
  PolicyScore out = draws.summary(policy);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

void use_cross_modal_views(ScoreOptions& options, const data::Windows& windows,
                           const std::string& what) {
  const std::vector<std::vector<int>> groups = windows.modalities.empty()
                                                   ? default_modality_groups(windows.channels)
                                                   : data::require_modalities(windows, what);
  options.unmasked_channels = groups[0];
  options.masked_channels.clear();
  for (size_t g = 1; g < groups.size(); ++g)
    options.masked_channels.insert(options.masked_channels.end(), groups[g].begin(),
                                   groups[g].end());
}

PairedComparison compare_scores(const PolicyScore& a, const PolicyScore& b) {
  if (a.values.size() != b.values.size() || a.values.size() < 2) {
    throw_invalid("compare_scores()", "draw counts (" + std::to_string(a.values.size()) + ", " +
                                          std::to_string(b.values.size()) +
                                          ") must be equal and >= 2");
  }
  const int R = static_cast<int>(a.values.size());
  std::vector<double> d(static_cast<size_t>(R));
  for (int r = 0; r < R; ++r)
    d[static_cast<size_t>(r)] = a.values[static_cast<size_t>(r)] - b.values[static_cast<size_t>(r)];
  const auto mi = mean_interval(d);
  PairedComparison out;
  out.a = a.spec;
  out.b = b.spec;
  out.difference = mi.mean;
  out.std_error = mi.std_error;
  out.ci_low = mi.ci_low;
  out.ci_high = mi.ci_high;
  out.draws = R;
  const double scale = std::max(1.0, std::abs(mi.mean));
  if (mi.std_error <= 1e-15 * scale) {
    out.p_value = std::abs(mi.mean) <= 1e-15 * scale ? 1.0 : 0.0;
  } else {
    const double t = mi.mean / mi.std_error;
    out.p_value = 2.0 * boost::math::cdf(boost::math::complement(
                            boost::math::students_t_distribution<double>(R - 1), std::abs(t)));
  }
  return out;
}

}  // namespace moca::masking
