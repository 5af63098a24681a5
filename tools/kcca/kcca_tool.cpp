#include "kcca_tool.hpp"

#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/kcca/inference.hpp"
#include "moca/kcca/kcca.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/kcca/linear_cca.hpp"

namespace moca::tools {

namespace {

bool sigma_auto(const KccaToolOptions& o) {
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
    throw_invalid("", "--sigma", s, "must be a number > 0 or auto");
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

}  // namespace

void validate_kcca_tool_options(const KccaToolOptions& o) {
  if (o.u_path.empty() || o.m_path.empty()) throw_invalid("", "--u and --m are required");
  kcca::parse_kernel_type(o.kernel);
  if (!sigma_auto(o)) parse_sigma(o.sigma);
  if (o.degree < 1) throw_invalid("", "--degree", std::to_string(o.degree), "must be >= 1");
  if (!(std::isfinite(o.coef0) && o.coef0 >= 0.0)) {
    throw_invalid("", "--coef0", format_number(o.coef0, 12), "must be >= 0");
  }
  if (o.gamma && !(std::isfinite(*o.gamma) && *o.gamma > 0.0)) {
    throw_invalid("", "--gamma", format_number(*o.gamma, 12), "must be > 0");
  }
  if (!(std::isfinite(o.gamma_u) && o.gamma_u > 0.0)) {
    throw_invalid("", "--gamma-u", format_number(o.gamma_u, 12), "must be > 0");
  }
  if (!(std::isfinite(o.gamma_m) && o.gamma_m > 0.0)) {
    throw_invalid("", "--gamma-m", format_number(o.gamma_m, 12), "must be > 0");
  }
  if (o.components < 1) {
    throw_invalid("", "--components", std::to_string(o.components), "must be >= 1");
  }
  try {
    kcca::parse_kcca_method(o.method);
  } catch (const std::invalid_argument&) {
    throw_invalid("", "--method", o.method, "must be one of auto, exact, iterative, lowrank");
  }
  if (o.rank < 1) throw_invalid("", "--rank", std::to_string(o.rank), "must be >= 1");
  if (o.pca < 0) throw_invalid("", "--pca", std::to_string(o.pca), "must be >= 0");
  if (o.pca > 0 && !o.cca) throw_invalid("", "--pca", std::to_string(o.pca), "needs --cca");
  if (!(std::isfinite(o.ridge) && o.ridge >= 0.0)) {
    throw_invalid("", "--ridge", format_number(o.ridge, 12), "must be >= 0");
  }
  if (o.bootstrap < 0 || o.bootstrap == 1) {
    throw_invalid("", "--bootstrap", std::to_string(o.bootstrap), "must be 0 (none) or >= 2");
  }
  if (o.permutations < 0) {
    throw_invalid("", "--permutations", std::to_string(o.permutations), "must be >= 0");
  }
}

nlohmann::json kcca_analysis(const KccaToolOptions& o) {
  validate_kcca_tool_options(o);
  const auto t0 = std::chrono::steady_clock::now();
  const Eigen::MatrixXd U = read_matrix(o.u_path);
  const Eigen::MatrixXd M = read_matrix(o.m_path);
  nlohmann::json j = kcca_analysis(o, U, M).json;
  j["inputs"]["u"] = o.u_path;
  j["inputs"]["m"] = o.m_path;
  j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return j;
}

namespace {

using nlohmann::json;

/// The views' row counts agree and there are at least 3 rows.
void check_views(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M) {
  if (U.rows() != M.rows()) {
    throw_invalid("", "--u has " + std::to_string(U.rows()) + " rows, --m has " +
                          std::to_string(M.rows()) +
                          " (the views must have the same number of rows)");
  }
  if (U.rows() < 3)
    throw_invalid("", "need at least 3 rows (got " + std::to_string(U.rows()) + ")");
}

/// The "bootstrap" JSON object: 95% percentile CIs of the correlations `stat` returns over
/// `o.bootstrap` resamples ("lower", "upper", "std_error": rho_1's; "intervals", "std_errors":
/// every correlation's).
json bootstrap_json(Eigen::Index n, const kcca::RowStatistics& stat, const KccaToolOptions& o) {
  const std::vector<kcca::BootstrapResult> b =
      kcca::bootstrap_each(n, stat, o.bootstrap, 0.95, derive_seed(o.seed, 2));
  json intervals = json::array();
  json errors = json::array();
  for (const kcca::BootstrapResult& r : b) {
    intervals.push_back({r.lower, r.upper});
    errors.push_back(r.std_error);
  }
  return {{"resamples", o.bootstrap},
          {"level", 0.95},
          {"lower", b.front().lower},
          {"upper", b.front().upper},
          {"std_error", b.front().std_error},
          {"intervals", intervals},
          {"std_errors", errors}};
}

/// The "permutation" JSON object: `o.permutations` permutations of the rows of view m, each
/// correlation's p-value against its permutation distribution ("p_values", per component) and
/// the family-wise step-down max-statistic adjustment ("p_values_step_down").
json permutation_json(Eigen::Index n, const kcca::RowStatistics& stat, const KccaToolOptions& o) {
  const kcca::PermutationTestEach p =
      kcca::permutation_test_each(n, stat, o.permutations, derive_seed(o.seed, 3));
  return {{"permutations", o.permutations},
          {"p_values", to_vector(p.p_values)},
          {"p_values_step_down", to_vector(p.p_values_step_down)}};
}

/// Linear CCA (--cca): checks --pca and --components against the views, solves, fills the
/// result's JSON, `settings` and the weights in `out`; returns the correlations.
Eigen::VectorXd linear_cca_part(const KccaToolOptions& o, const Eigen::MatrixXd& U,
                                const Eigen::MatrixXd& M, KccaAnalysis& out, json& settings) {
  const Eigen::Index n = U.rows();
  kcca::LinearCcaOptions lo;
  lo.pca = o.pca;
  lo.ridge = o.ridge;
  lo.components = o.components;
  lo.weights = o.coefficients;
  const Eigen::Index limit_u = o.pca > 0 ? std::min<Eigen::Index>(o.pca, U.cols()) : U.cols();
  const Eigen::Index limit_m = o.pca > 0 ? std::min<Eigen::Index>(o.pca, M.cols()) : M.cols();
  if (o.pca > std::min(U.cols(), M.cols()) || o.pca > n - 1) {
    throw_invalid("", "--pca", std::to_string(o.pca),
                  "exceeds min(d_u, d_m, n - 1) (" +
                      std::to_string(std::min({U.cols(), M.cols(), n - 1})) + ")");
  }
  if (o.components > std::min(limit_u, limit_m)) {
    throw_invalid("", "--components", std::to_string(o.components),
                  "exceeds the " + std::to_string(std::min(limit_u, limit_m)) +
                      " canonical correlations linear CCA of these views has");
  }
  const kcca::LinearCcaResult r = kcca::linear_cca(U, M, lo);
  out.cca_weights_u = r.weights_u;
  out.cca_weights_m = r.weights_m;
  json& j = out.json;
  j["analysis"] = "cca";
  settings["pca"] = o.pca;
  settings["ridge"] = o.ridge;
  j["status"] = "success";
  j["null_level"] = r.null_level;
  j["warning"] = r.warning;
  j["p"] = r.p;
  j["q"] = r.q;
  if (o.pca > 0) {
    j["explained_variance_u"] = to_vector(r.explained_variance_u);
    j["explained_variance_m"] = to_vector(r.explained_variance_m);
  }
  if (o.ridge == 0.0 && r.n > r.p + r.q + 2) {
    const kcca::BartlettResult b = kcca::bartlett_test(
        r.correlations.head(std::min<Eigen::Index>(r.correlations.size(), std::min(r.p, r.q))), r.n,
        r.p, r.q);
    j["bartlett"] = {{"nonzero", b.nonzero}, {"p_value_all_zero", b.steps.front().p_value}};
  }
  kcca::LinearCcaOptions b = lo;  // the resampled statistic: the correlations only
  b.weights = false;
  if (o.bootstrap > 0) {
    const kcca::RowStatistics stat = [&](const std::vector<Eigen::Index>& rows) {
      return kcca::linear_cca(rows_of(U, rows), rows_of(M, rows), b).correlations;
    };
    j["bootstrap"] = bootstrap_json(n, stat, o);
  }
  if (o.permutations > 0) {
    const kcca::RowStatistics stat = [&](const std::vector<Eigen::Index>& rows) {
      return kcca::linear_cca(U, rows_of(M, rows), b).correlations;
    };
    j["permutation"] = permutation_json(n, stat, o);
  }
  return r.correlations;
}

/// The kernel of one view: --kernel, --degree, --coef0 and the bandwidth (--sigma or the median
/// heuristic of the view, seeded by derive_seed(seed, view)).
kcca::Kernel view_kernel(const KccaToolOptions& o, const Eigen::MatrixXd& X, std::uint64_t view) {
  kcca::Kernel k;
  k.type = kcca::parse_kernel_type(o.kernel);
  k.degree = o.degree;
  k.coef0 = o.coef0;
  if (k.type == kcca::KernelType::kGaussian || k.type == kcca::KernelType::kLaplacian) {
    k.sigma = sigma_auto(o) ? kcca::median_heuristic_sigma(X, derive_seed(o.seed, view))
                            : parse_sigma(o.sigma);
  }
  return k;
}

/// The solver options of KCCA; checks --components against --method iterative.
kcca::KccaOptions kcca_options(const KccaToolOptions& o, Eigen::Index n) {
  kcca::KccaOptions ko;
  ko.gamma_u = o.gamma ? *o.gamma : o.gamma_u;
  ko.gamma_m = o.gamma ? *o.gamma : o.gamma_m;
  ko.center = o.center;
  ko.components = o.components;
  ko.method = kcca::parse_kcca_method(o.method);
  ko.rank = o.rank;
  ko.seed = o.seed;
  ko.coefficients = o.coefficients;  // the tool reports correlations only
  if (ko.method == kcca::KccaMethod::kIterative && o.components > n - 3) {
    throw_invalid("", "--components", std::to_string(o.components),
                  "must be <= n - 3 for --method iterative");
  }
  if (ko.method == kcca::KccaMethod::kLowRank) ko.tolerance = 1e-12;
  return ko;
}

/// The KCCA entries of the "settings" object (and the bandwidths used, into `j`).
void kcca_settings_json(const KccaToolOptions& o, const kcca::Kernel& ku, const kcca::Kernel& km,
                        const kcca::KccaOptions& ko, json& settings, json& j) {
  settings["kernel"] = kcca::kernel_type_name(ku.type);
  if (ku.type == kcca::KernelType::kGaussian || ku.type == kcca::KernelType::kLaplacian) {
    settings["sigma"] = o.sigma;
    j["sigma_u"] = ku.sigma;
    j["sigma_m"] = km.sigma;
  }
  if (ku.type == kcca::KernelType::kPolynomial) {
    settings["degree"] = o.degree;
    settings["coef0"] = o.coef0;
  }
  settings["gamma_u"] = ko.gamma_u;
  settings["gamma_m"] = ko.gamma_m;
  settings["center"] = o.center;
  settings["method"] = kcca::to_string(ko.method);  // as asked; "solver" says which one ran
  settings["regularizer"] = "paper";
  if (ko.method == kcca::KccaMethod::kLowRank) settings["rank"] = o.rank;
}

/// Solves KCCA (low-rank, or dense on the n x n Grams) and, with --bootstrap or --permutations,
/// resamples or permutes the rows (into j["bootstrap"], j["permutation"]) while the Grams are
/// still held.
kcca::KccaResult solve_kcca(const KccaToolOptions& o, const Eigen::MatrixXd& U,
                            const Eigen::MatrixXd& M, const kcca::Kernel& ku,
                            const kcca::Kernel& km, const kcca::KccaOptions& ko, json& j) {
  const Eigen::Index n = U.rows();
  kcca::KccaOptions b = ko;  // the resampled statistic: the correlations only
  b.coefficients = false;
  if (ko.method == kcca::KccaMethod::kLowRank) {
    kcca::KccaResult r = kcca::kcca_low_rank(U, M, ku, km, ko);
    j["approximation_bound"] = r.approximation_bound;
    if (o.bootstrap > 0) {
      const kcca::RowStatistics stat = [&](const std::vector<Eigen::Index>& rows) {
        return kcca::kcca_low_rank(rows_of(U, rows), rows_of(M, rows), ku, km, b).correlations;
      };
      j["bootstrap"] = bootstrap_json(n, stat, o);
    }
    if (o.permutations > 0) {
      const kcca::RowStatistics stat = [&](const std::vector<Eigen::Index>& rows) {
        return kcca::kcca_low_rank(U, rows_of(M, rows), ku, km, b).correlations;
      };
      j["permutation"] = permutation_json(n, stat, o);
    }
    return r;
  }
  kcca::check_dense_kcca_memory(n, ko.method);  // before the n x n Grams
  Eigen::MatrixXd Ku = kcca::gram(U, ku);
  Eigen::MatrixXd Km = kcca::gram(M, km);
  if (o.bootstrap == 0 && o.permutations == 0) {
    return kcca::kcca(std::move(Ku), std::move(Km), ko);  // no n x n copies
  }
  kcca::KccaResult r = kcca::kcca(Ku, Km, ko);  // the resamples read Ku, Km
  if (o.bootstrap > 0) {
    const kcca::RowStatistics stat = [&](const std::vector<Eigen::Index>& rows) {
      kcca::KccaOptions s = b;
      if (s.method == kcca::KccaMethod::kIterative &&
          static_cast<Eigen::Index>(rows.size()) < s.components + 3) {
        s.method = kcca::KccaMethod::kExact;
      }
      return kcca::kcca(sub_gram(Ku, rows), sub_gram(Km, rows), s).correlations;
    };
    j["bootstrap"] = bootstrap_json(n, stat, o);
  }
  if (o.permutations > 0) {  // permuting the rows of M permutes both axes of its Gram
    const kcca::RowStatistics stat = [&](const std::vector<Eigen::Index>& rows) {
      return kcca::kcca(Ku, sub_gram(Km, rows), b).correlations;
    };
    j["permutation"] = permutation_json(n, stat, o);
  }
  return r;
}

/// KCCA: kernels, solver options, the solve; fills the result's JSON, `settings` and `out`'s
/// solver result and kernels; returns the correlations.
Eigen::VectorXd kernel_cca_part(const KccaToolOptions& o, const Eigen::MatrixXd& U,
                                const Eigen::MatrixXd& M, KccaAnalysis& out, json& settings) {
  const Eigen::Index n = U.rows();
  if (o.components > n) {
    throw_invalid("", "--components", std::to_string(o.components),
                  "exceeds n (" + std::to_string(n) + ")");
  }
  const kcca::Kernel ku = view_kernel(o, U, 0);
  const kcca::Kernel km = view_kernel(o, M, 1);
  const kcca::KccaOptions ko = kcca_options(o, n);
  json& j = out.json;
  j["analysis"] = "kcca";
  kcca_settings_json(o, ku, km, ko, settings, j);
  const kcca::KccaResult r = solve_kcca(o, U, M, ku, km, ko, j);
  out.kcca = r;
  out.kernel_u = ku;
  out.kernel_m = km;
  j["solver"] = kcca::to_string(r.method);
  j["status"] = kcca::to_string(r.status);
  if (!r.message.empty()) j["message"] = r.message;
  j["iterations"] = r.iterations;
  j["centered"] = r.centered;
  j["rank_u"] = r.rank_u;
  j["rank_m"] = r.rank_m;
  return r.correlations;
}

}  // namespace

KccaAnalysis kcca_analysis(const KccaToolOptions& o, const Eigen::MatrixXd& U,
                           const Eigen::MatrixXd& M) {
  validate_kcca_tool_options(o);
  const auto t0 = std::chrono::steady_clock::now();
  check_views(U, M);
  KccaAnalysis out;
  json& j = out.json;
  j["tool"] = "kcca";
  j["inputs"] = {{"n", U.rows()}, {"d_u", U.cols()}, {"d_m", M.cols()}};
  json settings = {{"components", o.components},
                   {"seed", o.seed},
                   {"bootstrap", o.bootstrap},
                   {"permutations", o.permutations}};
  const Eigen::VectorXd correlations =
      o.cca ? linear_cca_part(o, U, M, out, settings) : kernel_cca_part(o, U, M, out, settings);
  j["correlations"] = to_vector(correlations);
  j["settings"] = settings;
  j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

int run_kcca(const KccaToolOptions& options, std::ostream& out) {
  nlohmann::json j = kcca_analysis(options);
  if (!options.recorded_options.empty()) j["options"] = options.recorded_options;
  if (!options.output.empty()) write_output_text(options.output, j.dump(2) + "\n");
  if (options.json) {
    out << j.dump(2) << "\n";
    return 0;
  }
  out << "kcca: " << j["analysis"].get<std::string>() << " of " << options.u_path << " ("
      << j["inputs"]["d_u"] << " columns) and " << options.m_path << " (" << j["inputs"]["d_m"]
      << " columns), n = " << j["inputs"]["n"] << "\n";
  if (j["analysis"] == "kcca") {
    out << "kernel " << j["settings"]["kernel"].get<std::string>();
    if (j.contains("sigma_u")) out << " sigma_u " << j["sigma_u"] << " sigma_m " << j["sigma_m"];
    out << ", gamma_u " << j["settings"]["gamma_u"] << " gamma_m " << j["settings"]["gamma_m"]
        << ", " << (j["centered"].get<bool>() ? "centred" : "uncentred") << ", method "
        << j["settings"]["method"].get<std::string>();
    if (j["settings"]["method"] != j["solver"])
      out << " (" << j["solver"].get<std::string>() << ")";
    out << ", status " << j["status"].get<std::string>() << "\n";
    if (j.contains("message")) out << "solver: " << j["message"].get<std::string>() << "\n";
    if (j.contains("approximation_bound")) {
      out << "low-rank bound on |rho^2 - rho~^2|: " << j["approximation_bound"] << "\n";
    }
  } else {
    out << "pca " << j["settings"]["pca"] << ", ridge " << j["settings"]["ridge"] << ", p "
        << j["p"] << ", q " << j["q"] << ", null level (Wachter edge) " << j["null_level"] << "\n";
    if (!j["warning"].get<std::string>().empty()) {
      out << "warning: " << j["warning"].get<std::string>() << "\n";
    }
  }
  out << "correlations:";
  for (const auto& v : j["correlations"]) out << " " << format_number(v.get<double>(), 12);
  out << "\n";
  if (j.contains("bootstrap")) {
    out << "95% bootstrap CIs (" << j["bootstrap"]["resamples"] << " resamples):";
    for (const auto& ci : j["bootstrap"]["intervals"]) {
      out << " [" << format_number(ci[0].get<double>(), 12) << ", "
          << format_number(ci[1].get<double>(), 12) << "]";
    }
    out << "\n";
  }
  if (j.contains("permutation")) {
    out << "permutation p-values (" << j["permutation"]["permutations"]
        << " permutations), per component:";
    for (const auto& p : j["permutation"]["p_values"])
      out << " " << format_number(p.get<double>(), 6);
    out << "; step-down (family-wise):";
    for (const auto& p : j["permutation"]["p_values_step_down"]) {
      out << " " << format_number(p.get<double>(), 6);
    }
    out << "\n";
  }
  return 0;
}

}  // namespace moca::tools
