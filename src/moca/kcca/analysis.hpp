#pragma once
/// \file analysis.hpp
/// A two-view analysis as the `kcca` tool and the Python estimators run it: regularised KCCA
/// (one kernel for both views, the bandwidth given or the median heuristic per view, any
/// solver) or linear CCA (optional PCA, ridge), with optional bootstrap intervals and permutation
/// p-values of every correlation. The result is a struct; to_json() is its one JSON shape.
#include <Eigen/Core>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/kcca/inference.hpp"
#include "moca/kcca/kcca.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/kcca/linear_cca.hpp"

namespace moca::kcca {

/// Options of kcca_analysis() (the `kcca` tool's flags; defaults are its defaults). Messages of
/// validate() name the fields (`AnalysisOptions::sigma`; the `kcca` tool prints its flags).
struct AnalysisOptions {
  KernelType kernel =
      KernelType::kGaussian;    ///< linear | rbf | poly | laplacian (kKernelTypeNames)
  std::string sigma = "auto";   ///< bandwidth S (> 0) or auto (median heuristic per view)
  int degree = 2;               ///< polynomial degree (>= 1)
  double coef0 = 1.0;           ///< polynomial offset (>= 0)
  std::optional<double> gamma;  ///< regularisation of both views (> 0); overrides gamma_u/gamma_m
  double gamma_u = 0.1;         ///< regularisation of view u (> 0)
  double gamma_m = 0.1;         ///< regularisation of view m (> 0)
  bool center = true;           ///< centre the Grams in feature space
  int components = 1;           ///< correlations K (1 <= K <= what the data allows)
  KccaMethod method = KccaMethod::kAuto;  ///< auto | exact | iterative | lowrank (kKccaMethodNames)
  int rank = 300;                         ///< low-rank factor rank (>= 1)
  bool cca = false;                       ///< linear CCA instead of KCCA
  int pca = 0;           ///< linear CCA: PCA to this many components per view (0 = none)
  double ridge = 0.0;    ///< linear CCA: ridge added to both covariances (>= 0)
  int bootstrap = 0;     ///< resamples of a 95% percentile CI per correlation (0 = none, else >= 2)
  int permutations = 0;  ///< permutations of view m's rows for p-values (0 = none)
  std::uint64_t seed = 0;  ///< bandwidth subsample, Nystrom landmarks, bootstrap, permutations
  /// Also compute the KCCA coefficients alpha, beta (KccaResult::alpha, beta), or with `cca` the
  /// canonical weights. The `kcca` tool reports correlations only (false).
  bool coefficients = false;
  /// Throws std::invalid_argument naming the field, its value and the rule, for every option
  /// that does not need the data.
  void validate() const;

  /// Every option, declared once (option_schema.hpp): the `kcca` tool's flags and their help,
  /// the range checks of validate() and their messages, Python's keywords. `coefficients` is
  /// Python's alone (the tool reports correlations).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* A = "AnalysisOptions";
    const Range any = Range::any();
    v(o.kernel, Option{A, "kernel", "--kernel", "linear | rbf | poly | laplacian"},
      kKernelTypeNames);
    v(o.sigma, Option{A, "sigma", "--sigma", "bandwidth, or auto (median heuristic per view)", any,
                      kEveryScope, "> 0 or auto"});
    v(o.degree,
      Option{A, "degree", "--degree", "polynomial degree (poly kernel)", Range::at_least(1)});
    v(o.coef0,
      Option{A, "coef0", "--coef0", "polynomial offset (poly kernel)", Range::at_least(0)});
    v(o.gamma, Option{A, "gamma", "--gamma", "regularisation of both views", Range::above(0)});
    v(o.gamma_u, Option{A, "gamma_u", "--gamma-u", "regularisation of view u", Range::above(0)});
    v(o.gamma_m, Option{A, "gamma_m", "--gamma-m", "regularisation of view m", Range::above(0)});
    v(o.center, Option{A, "center", "--center",
                       "centre the kernels in feature space (default) or not (--no-center)"});
    v(o.components, Option{A, "components", "--components", "canonical correlations to report",
                           Range::at_least(1)});
    v(o.method,
      Option{A, "method", "--method",
             "auto (iterative for few components, else exact) | exact | iterative | lowrank"},
      kKccaMethodNames);
    v(o.rank, Option{A, "rank", "--rank", "rank of the low-rank factors (lowrank method)",
                     Range::at_least(1)});
    v(o.cca, Option{A, "cca", "--cca", "linear CCA of the (optionally PCA-reduced) columns"});
    v(o.pca, Option{A, "pca", "--pca", "with --cca: principal components per view (0 = none)",
                    Range::at_least(0)});
    v(o.ridge, Option{A, "ridge", "--ridge", "with --cca: ridge added to both covariances",
                      Range::at_least(0)});
    v(o.bootstrap, Option{A, "bootstrap", "--bootstrap",
                          "bootstrap resamples for a 95% percentile CI of each correlation", any,
                          kEveryScope, "0 (none) or >= 2"});
    v(o.permutations,
      Option{A, "permutations", "--permutations",
             "permutations of view m's rows for each correlation's p-value, per component and "
             "step-down family-wise (0 = none)",
             Range::at_least(0)});
    v(o.seed,
      Option{A, "seed", "--seed", "seed (bandwidth subsample, Nystrom, bootstrap, permutations)"});
    v(o.coefficients, Option{A, "coefficients", "--coefficients",
                             "also the KCCA coefficients alpha, beta (CCA: the canonical weights)",
                             any, kEveryScope, nullptr, Surface::kPython});
  }
};

/// The options `o` leaves without effect (the `kcca` tool refuses the flag stated): the kernel
/// CCA rows (kernel, sigma, degree, coef0, gamma, gamma_u, gamma_m, center, method, rank) with
/// `cca`; pca and ridge without it; degree and coef0 but for the poly kernel; sigma but for the
/// rbf and laplacian kernels; rank but for the lowrank method.
std::vector<UnusedOption> unused_options(const AnalysisOptions& o);

/// The level of the bootstrap intervals.
inline constexpr double kAnalysisBootstrapLevel = 0.95;

/// What kcca_analysis() found, with the options that produced it.
struct AnalysisResult {
  AnalysisOptions options;       ///< as given
  std::string u_path;            ///< kcca_analysis_files(): the file of view u; else empty
  std::string m_path;            ///< kcca_analysis_files(): the file of view m; else empty
  Eigen::Index n = 0;            ///< rows of both views
  Eigen::Index d_u = 0;          ///< columns of view u
  Eigen::Index d_m = 0;          ///< columns of view m
  Eigen::VectorXd correlations;  ///< `components` canonical correlations, descending
  /// KCCA: the solver's result (alpha, beta only with options.coefficients), the kernels of
  /// both views (bandwidth resolved) and the solver options used.
  KccaResult kcca;
  Kernel kernel_u;
  Kernel kernel_m;
  KccaOptions solver;
  /// Linear CCA: the result (weights only with options.coefficients) and, without a ridge and
  /// with n > p + q + 2, Bartlett's test.
  LinearCcaResult cca;
  std::optional<BartlettResult> bartlett;
  /// options.bootstrap > 0: one interval per correlation (level kAnalysisBootstrapLevel).
  std::vector<BootstrapResult> bootstrap;
  std::optional<PermutationTestEach> permutation;  ///< options.permutations > 0
  double seconds = 0.0;  ///< wall time (with kcca_analysis_files(), reading the files too)
};

/// The analysis of two views in memory (U: n x d_u, M: n x d_m, n >= 3). Throws
/// std::invalid_argument for bad options or views (row-count mismatch, components beyond what
/// the data allows) and std::runtime_error for numerical failure (e.g. memory for the dense
/// solvers).
AnalysisResult kcca_analysis(const AnalysisOptions& options, const Eigen::MatrixXd& U,
                             const Eigen::MatrixXd& M);

/// kcca_analysis() of two matrices read from CSV (header optional) or .npy files
/// (moca/common/matrix_io.hpp); the result records the paths. Also throws std::invalid_argument
/// for empty paths, ragged rows, non-numeric cells or NaN, and std::runtime_error for I/O.
AnalysisResult kcca_analysis_files(const AnalysisOptions& options, const std::string& u_path,
                                   const std::string& m_path);

/// {"tool": "kcca", "analysis": "kcca" | "cca", "inputs": {n, d_u, d_m[, u, m]}, "settings",
/// "correlations", "status", "seconds", ...}: KCCA adds solver, iterations, centered, rank_u,
/// rank_m, message, sigma_u/sigma_m (rbf, laplacian) and approximation_bound (lowrank); linear
/// CCA adds null_level, warning, p, q, explained_variance_u/_m (PCA) and bartlett; either adds
/// "bootstrap" and "permutation" when asked for. docs/kcca.md lists the fields.
nlohmann::json to_json(const AnalysisResult& result);

}  // namespace moca::kcca
