#pragma once
/// \file policy_score.hpp
/// Scoring masking policies by the canonical correlation between the views they create
/// (paper, "Influence of Masking Schemes"): E_m[Phi(m)] estimated over R mask draws, with a
/// standard error, a 95% confidence interval and the null level, and paired comparisons of
/// two policies with common random numbers.
///
/// One draw r: a mask per window (or one mask shared by all windows) from a policy with the
/// draw's own stream Rng(derive_seed(seed, r)); both views' features Z_U, Z_M (n x d) from the
/// feature map; then
/// * `cca`: PCA of each view to k components and sigma_1(Gamma) (kcca::linear_cca); the null
///   level is the Wachter edge for (k, k, n) — sigma_1 of independent views of that size;
/// * `kcca`: Gram matrices of the views' features under a kernel (Gaussian with the median
///   bandwidth by default; with the linear kernel on `patch-mean` features this is the paper's
///   mean-embedding view kernel with a linear patch kernel) and the regularised, centred KCCA
///   rho_1 (kcca::kcca, gamma_u = gamma_m = gamma); the null level is rho_1 of the same Grams
///   with the rows of the masked view permuted (seeded), i.e. the selection-bias level.
/// Every policy compared sees the same windows and the same per-draw streams, so the draws of
/// two policies are paired.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/masking/feature_map.hpp"
#include "moca/masking/policy.hpp"

namespace moca::masking {

/// The canonical-correlation estimator.
enum class Estimator {
  kCca,   ///< PCA(k) + sigma_1(Gamma)
  kKcca,  ///< kernel Grams + regularised centred KCCA rho_1
};
/// How masks are drawn in one draw.
enum class MaskMode {
  kPerWindow,  ///< an independent mask for every window (the paper's m_i ~ P(. | x_i))
  kShared,     ///< one mask for all windows of the draw
};

inline constexpr EnumName<Estimator> kEstimatorNames[] = {{Estimator::kCca, "cca"},
                                                          {Estimator::kKcca, "kcca"}};
inline constexpr EnumName<MaskMode> kMaskModeNames[] = {{MaskMode::kPerWindow, "per-window"},
                                                        {MaskMode::kShared, "shared"}};

std::string to_string(Estimator estimator);
std::string to_string(MaskMode mode);

/// Options of PolicyScorer.
struct ScoreOptions {
  Estimator estimator = Estimator::kCca;      ///< default cca
  MaskMode mask_mode = MaskMode::kPerWindow;  ///< default per-window
  int draws = 20;                             ///< mask draws R; >= 2 (a standard error needs two)
  int pca = 50;        ///< cca: principal components per view k; >= 1 (paper: 50)
  double ridge = 0.0;  ///< cca: ridge added to both views' covariances; >= 0
  /// kcca: kernel on the view features; rbf (default), linear, laplacian or poly.
  kcca::KernelType kernel = kcca::KernelType::kGaussian;
  /// kcca: bandwidth of rbf / laplacian; 0 (default) = median heuristic per view and draw.
  double sigma = 0.0;
  double gamma = 0.1;      ///< kcca: regularisation gamma_u = gamma_m; > 0 (default 0.1)
  std::uint64_t seed = 0;  ///< seed of the mask draws (and of the kcca null permutation)
  int threads = 0;         ///< OpenMP threads across draws; 0 = OpenMP's default
  /// Channels kept in the unmasked view's features (empty = all). With unmasked_channels =
  /// acc and masked_channels = gyro the score is the cross-modal part: how well the visible
  /// accelerometer cells predict the masked gyroscope cells. Needs a feature map whose columns
  /// belong to single channels (raw, patch-mean).
  std::vector<int> unmasked_channels;
  std::vector<int> masked_channels;  ///< channels kept in the masked view's features (empty = all)
  /// Throws std::invalid_argument naming the option (`ScoreOptions::draws`), its value and the
  /// rule (the rows' ranges).
  void validate() const;

  /// The options a user sets (option_schema.hpp): kcca_score's flags, moca.score's keywords.
  /// mask_mode and the view channels are set by the scoring run (ScoreRunOptions).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* kOwner = "ScoreOptions";
    v(o.estimator,
      Option{kOwner, "estimator", "--estimator",
             "cca (PCA + sigma_1 of Gamma) | kcca (kernel CCA, --kernel, --gamma, --sigma)"},
      kEstimatorNames);
    v(o.draws, Option{kOwner, "draws", "--draws", "mask draws", Range::at_least(2)});
    v(o.pca,
      Option{kOwner, "pca", "--pca", "cca: principal components per view", Range::at_least(1)});
    v(o.ridge, Option{kOwner, "ridge", "--ridge", "cca: ridge added to both views' covariances",
                      Range::at_least(0)});
    v(o.kernel, Option{kOwner, "kernel", "--kernel", "kcca: rbf | linear | laplacian | poly"},
      kcca::kKernelTypeNames);
    v(o.gamma, Option{kOwner, "gamma", "--gamma", "kcca: regularisation", Range::above(0)});
    v(o.sigma, Option{kOwner, "sigma", "--sigma", "kcca: bandwidth (0 = median heuristic)",
                      Range::at_least(0)});
    v(o.seed, Option{kOwner, "seed", "--seed", "seed of the mask draws (and of the data sample)"});
    v(o.threads,
      Option{kOwner, "threads", "--threads", "OpenMP threads (0 = default)", Range::at_least(0)});
  }
};

/// The options `o`'s estimator and kernel leave without effect: kernel, gamma and sigma for the
/// cca estimator; pca and ridge for kcca; sigma for the linear and poly kernels (the programs
/// refuse the flag stated, Python the keyword given).
std::vector<UnusedOption> unused_options(const ScoreOptions& o);

/// Restricts `options` to the cross-modal part: the unmasked view keeps the first modality group
/// of `windows`, the masked view the other groups (data::require_modalities, naming `what` in
/// its error); windows that state no groups are split into channel halves
/// (default_modality_groups). Needs a feature map with per-channel columns (raw, patch-mean).
void use_cross_modal_views(ScoreOptions& options, const data::Windows& windows,
                           const std::string& what);

/// E_m[Phi(m)] of one policy.
struct PolicyScore {
  std::string scheme;      ///< policy name, e.g. "cross"
  std::string spec;        ///< canonical spec, e.g. "cross:ratio=0.75"
  double mean = 0.0;       ///< mean of the per-draw values
  double std_error = 0.0;  ///< sd of the per-draw values / sqrt(R)
  double ci_low = 0.0;     ///< 95% CI: mean -+ t_{0.975, R-1} * std_error (Student t)
  double ci_high = 0.0;
  double null_level = 0.0;            ///< mean null level over the draws (see the file comment)
  int draws = 0;                      ///< R
  std::vector<double> values;         ///< Phi per draw
  std::vector<double> null_values;    ///< null level per draw
  double mean_masked_fraction = 0.0;  ///< average fraction of masked cells in the drawn masks
  std::string warning;                ///< estimator warnings (first distinct ones), empty if none
  double seconds = 0.0;               ///< wall time
};

/// Paired comparison of two scores computed by the same scorer (same windows and streams).
struct PairedComparison {
  std::string a, b;         ///< the two policies' canonical specs (PolicyScore::spec)
  double difference = 0.0;  ///< mean over draws of (Phi_a - Phi_b)
  double std_error = 0.0;   ///< sd of the differences / sqrt(R)
  double ci_low = 0.0;      ///< 95% CI from Student t with R-1 df
  double ci_high = 0.0;
  /// Two-sided p-value of the paired t-test (H0: mean difference 0), Boost.Math students_t
  /// with R-1 df. When every difference is equal the test is degenerate: p = 1 if they are 0,
  /// else 0.
  double p_value = 1.0;
  int draws = 0;
};

/// Scores policies on one window set: prepares the feature map once, then draws masks.
class PolicyScorer {
 public:
  /// \param windows must outlive the scorer; \param features null = raw.
  /// Throws std::invalid_argument on bad options or windows that do not fit the grid.
  PolicyScorer(const data::Windows& windows, const Grid& grid,
               std::shared_ptr<const FeatureMap> features, ScoreOptions options);

  /// Phi for one fixed assignment of masks (1 shared mask or one per window); also returns the
  /// null level through `null_level` when not null. This is one draw's value.
  double score_masks(const std::vector<Mask>& masks, double* null_level = nullptr,
                     std::string* warning = nullptr, std::uint64_t null_seed = 0) const;

  /// The masks of draw r (r-th stream) for `policy`.
  std::vector<Mask> draw_masks(const MaskPolicy& policy, int r) const;

  /// Called after each finished draw with (draws done, R), from one thread at a time.
  using DrawCallback = std::function<void(int done, int total)>;

  /// R draws of `policy` (in parallel across draws where the feature map allows).
  PolicyScore score(const MaskPolicy& policy, const DrawCallback& on_draw = {}) const;

  const ScoreOptions& options() const { return options_; }
  const Grid& grid() const { return grid_; }
  int size() const { return windows_.size(); }
  const FeatureMap& feature_map() const { return *features_; }
  /// Whether score_masks() may run on several threads at once (the feature map's property).
  bool thread_safe() const { return featurizer_->thread_safe(); }

 private:
  const data::Windows& windows_;
  Grid grid_;
  std::shared_ptr<const FeatureMap> features_;
  ScoreOptions options_;
  std::unique_ptr<ViewFeaturizer> featurizer_;
  std::vector<int> columns_u_, columns_m_;  // kept feature columns (empty = all)

  // score()'s parts (policy_score.cpp): the per-draw results, the progress callback, and the
  // two ways to fill the draws: feature matrices (score_masks) or per-token Grams.
  struct Draws;
  class Progress;
  bool uses_token_grams() const;
  void score_by_features(const MaskPolicy& policy, int threads, Draws& draws,
                         Progress& progress) const;
  void score_by_token_grams(const MaskPolicy& policy, int threads, Draws& draws,
                            Progress& progress) const;
};

/// Paired comparison of a against b (same draws); throws std::invalid_argument if the draw
/// counts differ or are < 2.
PairedComparison compare_scores(const PolicyScore& a, const PolicyScore& b);

/// Mean, standard error and 95% Student-t interval of values (R >= 2).
struct MeanInterval {
  double mean = 0.0, std_error = 0.0, ci_low = 0.0, ci_high = 0.0;
};
MeanInterval mean_interval(const std::vector<double>& values);

}  // namespace moca::masking
