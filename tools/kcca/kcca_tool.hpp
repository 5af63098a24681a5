#pragma once
/// \file kcca_tool.hpp
/// The body of the `kcca` tool: two-view KCCA or linear CCA of two matrices read from CSV
/// (header optional) or NPY files with the same number of rows.
#include <Eigen/Core>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "moca/kcca/kcca.hpp"
#include "moca/kcca/kernels.hpp"

namespace moca::tools {

/// Options of the `kcca` tool (one field per flag; defaults are the tool's defaults).
struct KccaToolOptions {
  std::string u_path;           ///< --u: view u (n x d_u), CSV or .npy
  std::string m_path;           ///< --m: view m (n x d_m)
  std::string kernel = "rbf";   ///< --kernel linear | rbf | poly | laplacian
  std::string sigma = "auto";   ///< --sigma S (> 0) or auto (median heuristic per view)
  int degree = 2;               ///< --degree: polynomial degree (>= 1)
  double coef0 = 1.0;           ///< --coef0: polynomial offset (>= 0)
  std::optional<double> gamma;  ///< --gamma: both views (> 0); overrides gamma_u/gamma_m
  double gamma_u = 0.1;         ///< --gamma-u (> 0)
  double gamma_m = 0.1;         ///< --gamma-m (> 0)
  bool center = true;           ///< --center / --no-center
  int components = 1;           ///< --components K (1 <= K <= what the data allows)
  std::string method = "auto";  ///< --method auto | exact | iterative | lowrank
  int rank = 300;               ///< --rank R: low-rank factor rank (>= 1)
  bool cca = false;             ///< --cca: linear CCA instead of KCCA
  int pca = 0;                  ///< --pca K: PCA to K components per view first (--cca only)
  double ridge = 0.0;           ///< --ridge: linear CCA ridge (>= 0)
  int bootstrap = 0;     ///< --bootstrap B: percentile CI of each correlation (0 = none, else >= 2)
  int permutations = 0;  ///< --permutations P: permutation p-value of each correlation (0 = none)
  std::uint64_t seed = 0;  ///< --seed: bandwidth subsample, Nyström, bootstrap, permutations
  bool json = false;       ///< --json: JSON on stdout instead of text
  std::string output;      ///< --output FILE: also write the JSON there (atomically)
  /// The program's effective options (tools::config_json: the keys of --print-config), recorded
  /// as the result's "options" by run_kcca; the analysis itself reports "settings".
  nlohmann::json recorded_options;
  /// Library callers (the Python package): also compute the KCCA coefficients alpha, beta
  /// (KccaResult::alpha, beta), or with `cca` the canonical weights. The tool reports
  /// correlations only (false).
  bool coefficients = false;
};

/// An analysis of two in-memory views: the JSON document kcca_analysis() returns (without the
/// "inputs" paths) and, for KCCA, the full solver result and the kernels used (sigma resolved).
struct KccaAnalysis {
  nlohmann::json json;    ///< as kcca_analysis(); "inputs" holds n, d_u, d_m only
  kcca::KccaResult kcca;  ///< KCCA only: correlations, alpha, beta (if options.coefficients)
  kcca::Kernel kernel_u;  ///< KCCA only: the kernel of view u
  kcca::Kernel kernel_m;  ///< KCCA only: the kernel of view m
  /// Linear CCA with options.coefficients: canonical weights (kcca::LinearCcaResult::weights_u,
  /// weights_m); empty otherwise.
  Eigen::MatrixXd cca_weights_u, cca_weights_m;
};

/// Validates every option that does not need the data (throws std::invalid_argument naming the
/// flag, its value and the rule).
void validate_kcca_tool_options(const KccaToolOptions& options);

/// Runs the analysis and returns the JSON document (correlations descending, options, status,
/// timing, inputs). Throws std::invalid_argument for bad options or input (ragged rows,
/// non-numeric cells, NaN, row-count mismatch, components too large) and std::runtime_error for
/// I/O or numerical failure.
nlohmann::json kcca_analysis(const KccaToolOptions& options);

/// kcca_analysis() of views already in memory (U: n x d_u, M: n x d_m); options.u_path and
/// m_path are not read (validation needs them non-empty). Same exceptions except I/O.
KccaAnalysis kcca_analysis(const KccaToolOptions& options, const Eigen::MatrixXd& U,
                           const Eigen::MatrixXd& M);

/// kcca_analysis, then writes text (or JSON with options.json) to `out` and the JSON to
/// options.output if set. Returns 0.
int run_kcca(const KccaToolOptions& options, std::ostream& out);

}  // namespace moca::tools
