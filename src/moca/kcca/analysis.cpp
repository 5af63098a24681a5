#include "moca/kcca/analysis.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/random.hpp"

namespace moca::kcca {

namespace {

using nlohmann::json;

bool sigma_auto(const AnalysisOptions& o) {
  return o.sigma == "auto";
}

double parse_sigma(const std::string& s) {
  size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || !(std::isfinite(v) && v > 0.0)) {
    throw_invalid("", "AnalysisOptions::sigma", s, "must be a number > 0 or auto");
  }
  return v;
}

std::vector<double> to_vector(const Eigen::VectorXd& v) {
  return std::vector<double>(v.data(), v.data() + v.size());
}

Eigen::MatrixXd rows_of(const Eigen::MatrixXd& X, const std::vector<Eigen::Index>& rows) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows.size()), X.cols());
  for (size_t i = 0; i < rows.size(); ++i) out.row(static_cast<Eigen::Index>(i)) = X.row(rows[i]);
  return out;
}

Eigen::MatrixXd sub_gram(const Eigen::MatrixXd& K, const std::vector<Eigen::Index>& rows) {
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd out(n, n);
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) {
      out(i, j) = K(rows[static_cast<size_t>(i)], rows[static_cast<size_t>(j)]);
    }
  }
  return out;
}

/// The views' row counts agree and there are at least 3 rows.
void check_views(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M) {
  if (U.rows() != M.rows()) {
    throw_invalid("", "view u has " + std::to_string(U.rows()) + " rows, view m has " +
                          std::to_string(M.rows()) +
                          " (the views must have the same number of rows)");
  }
  if (U.rows() < 3)
    throw_invalid("", "need at least 3 rows (got " + std::to_string(U.rows()) + ")");
}

/// 95% percentile intervals of the correlations `stat` returns over `o.bootstrap` resamples and
/// the p-values of `o.permutations` permutations of view m's rows, into `out`.
void resample(Eigen::Index n, const RowStatistics& resampled, const RowStatistics& permuted,
              AnalysisResult& out) {
  const AnalysisOptions& o = out.options;
  if (o.bootstrap > 0) {
    out.bootstrap =
        bootstrap_each(n, resampled, o.bootstrap, kAnalysisBootstrapLevel, derive_seed(o.seed, 2));
  }
  if (o.permutations > 0) {
    out.permutation = permutation_test_each(n, permuted, o.permutations, derive_seed(o.seed, 3));
  }
}

/// Linear CCA: checks pca and components against the views, solves, fills `out`.
void linear_cca_part(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M, AnalysisResult& out) {
  const AnalysisOptions& o = out.options;
  const Eigen::Index n = U.rows();
  LinearCcaOptions lo;
  lo.pca = o.pca;
  lo.ridge = o.ridge;
  lo.components = o.components;
  lo.weights = o.coefficients;
  const Eigen::Index limit_u = o.pca > 0 ? std::min<Eigen::Index>(o.pca, U.cols()) : U.cols();
  const Eigen::Index limit_m = o.pca > 0 ? std::min<Eigen::Index>(o.pca, M.cols()) : M.cols();
  if (o.pca > std::min(U.cols(), M.cols()) || o.pca > n - 1) {
    throw_invalid("", "AnalysisOptions::pca", std::to_string(o.pca),
                  "exceeds min(d_u, d_m, n - 1) (" +
                      std::to_string(std::min({U.cols(), M.cols(), n - 1})) + ")");
  }
  if (o.components > std::min(limit_u, limit_m)) {
    throw_invalid("", "AnalysisOptions::components", std::to_string(o.components),
                  "exceeds the " + std::to_string(std::min(limit_u, limit_m)) +
                      " canonical correlations linear CCA of these views has");
  }
  out.cca = linear_cca(U, M, lo);
  const LinearCcaResult& r = out.cca;
  if (o.ridge == 0.0 && r.n > r.p + r.q + 2) {
    out.bartlett = bartlett_test(
        r.correlations.head(std::min<Eigen::Index>(r.correlations.size(), std::min(r.p, r.q))), r.n,
        r.p, r.q);
  }
  LinearCcaOptions b = lo;  // the resampled statistic: the correlations only
  b.weights = false;
  resample(
      n,
      [&](const std::vector<Eigen::Index>& rows) {
        return linear_cca(rows_of(U, rows), rows_of(M, rows), b).correlations;
      },
      [&](const std::vector<Eigen::Index>& rows) {
        return linear_cca(U, rows_of(M, rows), b).correlations;
      },
      out);
  out.correlations = r.correlations;
}

/// The kernel of one view: kernel, degree, coef0 and the bandwidth (sigma or the median
/// heuristic of the view, seeded by derive_seed(seed, view)).
Kernel view_kernel(const AnalysisOptions& o, const Eigen::MatrixXd& X, std::uint64_t view) {
  Kernel k;
  k.type = o.kernel;
  k.degree = o.degree;
  k.coef0 = o.coef0;
  if (k.type == KernelType::kGaussian || k.type == KernelType::kLaplacian) {
    k.sigma =
        sigma_auto(o) ? median_heuristic_sigma(X, derive_seed(o.seed, view)) : parse_sigma(o.sigma);
  }
  return k;
}

/// The solver options of KCCA; checks components against the iterative method.
KccaOptions solver_options(const AnalysisOptions& o, Eigen::Index n) {
  KccaOptions ko;
  ko.gamma_u = o.gamma ? *o.gamma : o.gamma_u;
  ko.gamma_m = o.gamma ? *o.gamma : o.gamma_m;
  ko.center = o.center;
  ko.components = o.components;
  ko.method = o.method;
  ko.rank = o.rank;
  ko.seed = o.seed;
  ko.coefficients = o.coefficients;
  if (ko.method == KccaMethod::kIterative && o.components > n - 3) {
    throw_invalid("", "AnalysisOptions::components", std::to_string(o.components),
                  "must be <= n - 3 for AnalysisOptions::method iterative");
  }
  if (ko.method == KccaMethod::kLowRank) ko.tolerance = 1e-12;
  return ko;
}

/// Solves KCCA (low-rank, or dense on the n x n Grams) and resamples or permutes the rows while
/// the Grams are still held.
KccaResult solve_kcca(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M, AnalysisResult& out) {
  const AnalysisOptions& o = out.options;
  const Kernel& ku = out.kernel_u;
  const Kernel& km = out.kernel_m;
  const KccaOptions& ko = out.solver;
  const Eigen::Index n = U.rows();
  KccaOptions b = ko;  // the resampled statistic: the correlations only
  b.coefficients = false;
  if (ko.method == KccaMethod::kLowRank) {
    KccaResult r = kcca_low_rank(U, M, ku, km, ko);
    resample(
        n,
        [&](const std::vector<Eigen::Index>& rows) {
          return kcca_low_rank(rows_of(U, rows), rows_of(M, rows), ku, km, b).correlations;
        },
        [&](const std::vector<Eigen::Index>& rows) {
          return kcca_low_rank(U, rows_of(M, rows), ku, km, b).correlations;
        },
        out);
    return r;
  }
  check_dense_kcca_memory(n, ko.method);  // before the n x n Grams
  Eigen::MatrixXd Ku = gram(U, ku);
  Eigen::MatrixXd Km = gram(M, km);
  if (o.bootstrap == 0 && o.permutations == 0) {
    return kcca(std::move(Ku), std::move(Km), ko);  // no n x n copies
  }
  KccaResult r = kcca(Ku, Km, ko);  // the resamples read Ku, Km
  resample(
      n,
      [&](const std::vector<Eigen::Index>& rows) {
        KccaOptions s = b;
        if (s.method == KccaMethod::kIterative &&
            static_cast<Eigen::Index>(rows.size()) < s.components + 3) {
          s.method = KccaMethod::kExact;
        }
        return kcca(sub_gram(Ku, rows), sub_gram(Km, rows), s).correlations;
      },
      // permuting the rows of M permutes both axes of its Gram
      [&](const std::vector<Eigen::Index>& rows) {
        return kcca(Ku, sub_gram(Km, rows), b).correlations;
      },
      out);
  return r;
}

/// KCCA: kernels, solver options, the solve; fills `out`.
void kernel_cca_part(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M, AnalysisResult& out) {
  const AnalysisOptions& o = out.options;
  const Eigen::Index n = U.rows();
  if (o.components > n) {
    throw_invalid("", "AnalysisOptions::components", std::to_string(o.components),
                  "exceeds n (" + std::to_string(n) + ")");
  }
  out.kernel_u = view_kernel(o, U, 0);
  out.kernel_m = view_kernel(o, M, 1);
  out.solver = solver_options(o, n);
  out.kcca = solve_kcca(U, M, out);
  out.correlations = out.kcca.correlations;
}

bool has_bandwidth(const Kernel& k) {
  return k.type == KernelType::kGaussian || k.type == KernelType::kLaplacian;
}

/// The KCCA entries of the document and of its "settings".
void kcca_json(const AnalysisResult& a, json& settings, json& j) {
  const AnalysisOptions& o = a.options;
  const KccaOptions& ko = a.solver;
  const KccaResult& r = a.kcca;
  settings["kernel"] = kernel_type_name(a.kernel_u.type);
  if (has_bandwidth(a.kernel_u)) {
    settings["sigma"] = o.sigma;
    j["sigma_u"] = a.kernel_u.sigma;
    j["sigma_m"] = a.kernel_m.sigma;
  }
  if (a.kernel_u.type == KernelType::kPolynomial) {
    settings["degree"] = o.degree;
    settings["coef0"] = o.coef0;
  }
  settings["gamma_u"] = ko.gamma_u;
  settings["gamma_m"] = ko.gamma_m;
  settings["center"] = o.center;
  settings["method"] = to_string(ko.method);  // as asked; "solver" says which one ran
  settings["regularizer"] = "paper";
  if (ko.method == KccaMethod::kLowRank) {
    settings["rank"] = o.rank;
    j["approximation_bound"] = r.approximation_bound;
  }
  j["analysis"] = "kcca";
  j["solver"] = to_string(r.method);
  j["status"] = to_string(r.status);
  if (!r.message.empty()) j["message"] = r.message;
  j["iterations"] = r.iterations;
  j["centered"] = r.centered;
  j["rank_u"] = r.rank_u;
  j["rank_m"] = r.rank_m;
}

/// The linear CCA entries of the document and of its "settings".
void cca_json(const AnalysisResult& a, json& settings, json& j) {
  const LinearCcaResult& r = a.cca;
  settings["pca"] = a.options.pca;
  settings["ridge"] = a.options.ridge;
  j["analysis"] = "cca";
  j["status"] = "success";
  j["null_level"] = r.null_level;
  j["warning"] = r.warning;
  j["p"] = r.p;
  j["q"] = r.q;
  if (a.options.pca > 0) {
    j["explained_variance_u"] = to_vector(r.explained_variance_u);
    j["explained_variance_m"] = to_vector(r.explained_variance_m);
  }
  if (a.bartlett) {
    j["bartlett"] = {{"nonzero", a.bartlett->nonzero},
                     {"p_value_all_zero", a.bartlett->steps.front().p_value}};
  }
}

/// "bootstrap" ("lower", "upper", "std_error": rho_1's; "intervals", "std_errors": every
/// correlation's) and "permutation" (per-component and step-down p-values), when computed.
void resampling_json(const AnalysisResult& a, json& j) {
  if (!a.bootstrap.empty()) {
    json intervals = json::array();
    json errors = json::array();
    for (const BootstrapResult& r : a.bootstrap) {
      intervals.push_back({r.lower, r.upper});
      errors.push_back(r.std_error);
    }
    j["bootstrap"] = {{"resamples", a.options.bootstrap},
                      {"level", kAnalysisBootstrapLevel},
                      {"lower", a.bootstrap.front().lower},
                      {"upper", a.bootstrap.front().upper},
                      {"std_error", a.bootstrap.front().std_error},
                      {"intervals", intervals},
                      {"std_errors", errors}};
  }
  if (a.permutation) {
    j["permutation"] = {{"permutations", a.options.permutations},
                        {"p_values", to_vector(a.permutation->p_values)},
                        {"p_values_step_down", to_vector(a.permutation->p_values_step_down)}};
  }
}

}  // namespace

std::vector<UnusedOption> unused_options(const AnalysisOptions& o) {
  std::vector<UnusedOption> out;
  auto add = [&out](const char* key, const std::string& why) {
    out.push_back({std::string("AnalysisOptions::") + key, why});
  };
  if (o.cca) {
    for (const char* key : {"kernel", "sigma", "degree", "coef0", "gamma", "gamma_u", "gamma_m",
                            "center", "method", "rank"}) {
      add(key, "only kernel CCA uses it; cca asks for linear CCA");
    }
    return out;
  }
  for (const char* key : {"pca", "ridge"}) add(key, "only linear CCA (cca) uses it");
  const std::string kernel = "; the kernel is " + enum_name(kKernelTypeNames, o.kernel);
  if (o.kernel != KernelType::kPolynomial) {
    for (const char* key : {"degree", "coef0"}) add(key, "only the poly kernel uses it" + kernel);
  }
  if (o.kernel != KernelType::kGaussian && o.kernel != KernelType::kLaplacian) {
    add("sigma", "only the rbf and laplacian kernels have a bandwidth" + kernel);
  }
  if (o.method != KccaMethod::kLowRank) {
    add("rank",
        "only the lowrank method uses it; the method is " + enum_name(kKccaMethodNames, o.method));
  }
  return out;
}

void AnalysisOptions::validate() const {
  if (!sigma_auto(*this)) parse_sigma(sigma);
  check_ranges(*this);  // the rows' ranges (schema): degree, coef0, the gammas, components, ...
  if (pca > 0 && !cca)
    throw_invalid("", "AnalysisOptions::pca", std::to_string(pca), "needs AnalysisOptions::cca");
  // KCCA regularises with gamma_u / gamma_m; a ridge it would not use is refused, as pca is.
  if (ridge > 0.0 && !cca) {
    throw_invalid("", "AnalysisOptions::ridge", format_number(ridge, 12),
                  "needs AnalysisOptions::cca (kernel CCA is regularised by "
                  "AnalysisOptions::gamma_u, AnalysisOptions::gamma_m)");
  }
  if (bootstrap < 0 || bootstrap == 1) {
    throw_invalid("", "AnalysisOptions::bootstrap", std::to_string(bootstrap),
                  "must be 0 (none) or >= 2");
  }
}

AnalysisResult kcca_analysis(const AnalysisOptions& options, const Eigen::MatrixXd& U,
                             const Eigen::MatrixXd& M) {
  options.validate();
  const auto t0 = std::chrono::steady_clock::now();
  check_views(U, M);
  AnalysisResult out;
  out.options = options;
  out.n = U.rows();
  out.d_u = U.cols();
  out.d_m = M.cols();
  if (options.cca) {
    linear_cca_part(U, M, out);
  } else {
    kernel_cca_part(U, M, out);
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

AnalysisResult kcca_analysis_files(const AnalysisOptions& options, const std::string& u_path,
                                   const std::string& m_path) {
  if (u_path.empty() || m_path.empty()) {
    throw_invalid("", "the files of views u and m are required");
  }
  options.validate();
  const auto t0 = std::chrono::steady_clock::now();
  const Eigen::MatrixXd U = read_matrix(u_path);
  const Eigen::MatrixXd M = read_matrix(m_path);
  AnalysisResult out = kcca_analysis(options, U, M);
  out.u_path = u_path;
  out.m_path = m_path;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

nlohmann::json to_json(const AnalysisResult& a) {
  json j;
  j["tool"] = "kcca";
  j["inputs"] = {{"n", a.n}, {"d_u", a.d_u}, {"d_m", a.d_m}};
  if (!a.u_path.empty()) j["inputs"]["u"] = a.u_path;
  if (!a.m_path.empty()) j["inputs"]["m"] = a.m_path;
  json settings = {{"components", a.options.components},
                   {"seed", a.options.seed},
                   {"bootstrap", a.options.bootstrap},
                   {"permutations", a.options.permutations}};
  if (a.options.cca) {
    cca_json(a, settings, j);
  } else {
    kcca_json(a, settings, j);
  }
  resampling_json(a, j);
  j["correlations"] = to_vector(a.correlations);
  j["settings"] = settings;
  j["seconds"] = a.seconds;
  return j;
}

}  // namespace moca::kcca
