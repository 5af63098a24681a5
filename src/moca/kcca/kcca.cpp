// KCCA: input checks, Gram preparation and the dispatch to the solver families
// (kcca_exact.cpp, kcca_iterative.cpp, kcca_low_rank.cpp); options and enum names.
#include "moca/kcca/kcca.hpp"
#include "moca/common/error_text.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "moca/common/enum_names.hpp"
#include "moca/common/memory.hpp"
#include "moca/kcca/detail/solvers.hpp"

namespace moca::kcca {

using detail::elapsed;
using detail::num;

namespace {

// Visits the pairs (K(i, j), K(j, i)), i >= j, in square tiles so that both the column and the
// transposed row stay in cache (no n x n temporary).
template <typename F>
void for_each_symmetric_pair(Eigen::Index n, F&& f) {
  constexpr Eigen::Index kTile = 64;
  for (Eigen::Index jb = 0; jb < n; jb += kTile) {
    const Eigen::Index je = std::min(n, jb + kTile);
    for (Eigen::Index ib = jb; ib < n; ib += kTile) {
      const Eigen::Index ie = std::min(n, ib + kTile);
      for (Eigen::Index j = jb; j < je; ++j) {
        for (Eigen::Index i = std::max(ib, j); i < ie; ++i) f(i, j);
      }
    }
  }
}

// Checks that K is square, finite and symmetric to 1e-8 relative; returns max |K_ij|.
double check_gram(const Eigen::MatrixXd& K, const char* view) {
  if (K.rows() != K.cols()) {
    throw_invalid("", std::string("kcca(): K_") + view + " is " + std::to_string(K.rows()) + " x " +
                          std::to_string(K.cols()) + " (must be square)");
  }
  if (!K.allFinite()) {
    throw_invalid("", std::string("kcca(): K_") + view + " contains NaN or Inf");
  }
  double scale = 0.0, asym = 0.0;
  for_each_symmetric_pair(K.rows(), [&](Eigen::Index i, Eigen::Index j) {
    const double a = K(i, j), b = K(j, i);
    scale = std::max(scale, std::max(std::abs(a), std::abs(b)));
    asym = std::max(asym, std::abs(a - b));
  });
  if (asym > 1e-8 * std::max(scale, 1e-300)) {
    throw_invalid("", std::string("kcca(): K_") + view +
                          " is not symmetric (max |K - Kᵀ| = " + num(asym) + ")");
  }
  return scale;
}

// K <- (K + Kᵀ) / 2, then centred (H K H, H = I - 11ᵀ/n) when `center`; exactly symmetric.
void symmetrize_in_place(Eigen::MatrixXd& S, bool center) {
  const Eigen::Index n = S.rows();
  for_each_symmetric_pair(n, [&](Eigen::Index i, Eigen::Index j) {
    const double v = 0.5 * (S(i, j) + S(j, i));
    S(i, j) = v;
    S(j, i) = v;
  });
  if (!center) return;
  // Row means equal column means for the symmetric S.
  const Eigen::VectorXd m = S.colwise().mean().transpose();
  const double g = m.mean();
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) S(i, j) -= (m(i) + m(j)) - g;
  }
}

// Shared input checks of both kcca() overloads; returns max |K_u|, max |K_m|.
std::pair<double, double> check_inputs(const Eigen::MatrixXd& Ku, const Eigen::MatrixXd& Km,
                                       const KccaOptions& options) {
  options.validate();
  const double scale_u = check_gram(Ku, "u");
  const double scale_m = check_gram(Km, "m");
  if (Ku.rows() != Km.rows()) {
    throw_invalid("kcca()", "K_u is " + std::to_string(Ku.rows()) + " x " +
                                std::to_string(Ku.rows()) + ", K_m is " +
                                std::to_string(Km.rows()) + " x " + std::to_string(Km.rows()) +
                                " (sample counts must match)");
  }
  const Eigen::Index n = Ku.rows();
  if (n < 2) {
    throw_invalid("kcca()", "n (" + std::to_string(n) + ") must be >= 2");
  }
  if (options.components > n) {
    throw_invalid("kcca()", "components (" + std::to_string(options.components) +
                                ") must be <= n (" + std::to_string(n) + ")");
  }
  if (options.method == KccaMethod::kLowRank) {
    throw_invalid("kcca()",
                  "method lowrank needs the data, not Gram matrices; call kcca_low_rank()");
  }
  check_dense_kcca_memory(n, options.method);
  return {scale_u, scale_m};
}

// The solver that options.method stands for at n samples: kAuto takes the iterative route
// where it is the faster one and applies; the crossover is measured in docs/kcca.md
// ("Choosing a solver").
KccaMethod resolve_method(const KccaOptions& options, Eigen::Index n, double gamma_u,
                          double gamma_m) {
  if (options.method != KccaMethod::kAuto) return options.method;
  const bool iterative = n >= 200 && options.components <= n / 10 && gamma_u > 0.0 && gamma_m > 0.0;
  return iterative ? KccaMethod::kIterative : KccaMethod::kExact;
}

// Undoes the iterative solver's in-place factorisation of K + gamma I: LAPACK dpotrf("L") and
// Eigen's in-place LLT write only the lower triangle, so the strict upper triangle still holds
// the prepared Gram; the diagonal comes from `diagonal`, saved before.
void restore_from_upper(Eigen::MatrixXd& S, const Eigen::VectorXd& diagonal) {
  for_each_symmetric_pair(S.rows(), [&](Eigen::Index i, Eigen::Index j) {
    if (i != j) S(i, j) = S(j, i);
  });
  S.diagonal() = diagonal;
}

// kAuto's iterative attempt on the prepared Grams. Returns true with `res` filled when it
// succeeded; otherwise restores Ku, Km for the exact solver and says why in `why`.
bool try_iterative(Eigen::MatrixXd& Ku, Eigen::MatrixXd& Km, const KccaOptions& options,
                   KccaResult& res, std::string& why) {
  const Eigen::VectorXd du = Ku.diagonal(), dm = Km.diagonal();
  try {
    KccaResult it = detail::kcca_iterative(Ku, Km, res.gamma_u, res.gamma_m, options, res);
    if (it.status == SolverStatus::kSuccess) {
      res = std::move(it);
      return true;
    }
    why = it.message;
  } catch (const std::invalid_argument& e) {
    why = e.what();
  }
  restore_from_upper(Ku, du);
  restore_from_upper(Km, dm);
  return false;
}

// Both overloads after check_inputs: Ku, Km are the caller's Grams (copies or moved-in),
// overwritten here.
KccaResult kcca_checked(Eigen::MatrixXd& Ku, Eigen::MatrixXd& Km, double scale_u, double scale_m,
                        const KccaOptions& options, std::chrono::steady_clock::time_point t0) {
  const Eigen::Index n = Ku.rows();
  KccaResult res;
  res.n = n;
  res.centered = options.center;
  res.regularizer = options.regularizer;
  res.gamma_u = options.effective_gamma_u(n);
  res.gamma_m = options.effective_gamma_m(n);
  res.method = resolve_method(options, n, res.gamma_u, res.gamma_m);
  symmetrize_in_place(Ku, options.center);
  symmetrize_in_place(Km, options.center);
  // A Gram whose largest eigenvalue is at rounding level of its entries is zero.
  const double zu = 1e-12 * static_cast<double>(n) * scale_u;
  const double zm = 1e-12 * static_cast<double>(n) * scale_m;
  if (res.method == KccaMethod::kIterative) {
    // Zero-Gram check without a decomposition: the trace bounds the largest eigenvalue.
    if (!(Ku.trace() > zu) || !(Km.trace() > zm)) {
      throw_invalid("", std::string("kcca(): the Gram matrix of view ") +
                            (Ku.trace() > zu ? "m" : "u") +
                            " is zero; a constant view has no canonical direction, in "
                            "particular after centring");
    }
    if (options.method == KccaMethod::kIterative) {
      res = detail::kcca_iterative(Ku, Km, res.gamma_u, res.gamma_m, options, res);
      res.seconds = elapsed(t0);
      return res;
    }
    std::string why;
    if (try_iterative(Ku, Km, options, res, why)) {
      res.seconds = elapsed(t0);
      return res;
    }
    res.method = KccaMethod::kExact;
    KccaResult exact = detail::kcca_exact(Ku, Km, zu, zm, options, res, t0);
    if (exact.message.empty())
      exact.message = "auto: the iterative solver failed (" + why + "); solved exactly";
    return exact;
  }
  return detail::kcca_exact(Ku, Km, zu, zm, options, res, t0);
}

}  // namespace

// clang-format off
constexpr EnumName<KccaRegularizer> kRegularizerNames[] = {
    {KccaRegularizer::kPaper, "paper"},
    {KccaRegularizer::kBachJordan, "bach-jordan"}};
constexpr EnumName<LowRankMethod> kLowRankNames[] = {
    {LowRankMethod::kIncompleteCholesky, "icd"},
    {LowRankMethod::kNystrom, "nystrom"}};
constexpr EnumName<SolverStatus> kSolverStatusNames[] = {
    {SolverStatus::kSuccess, "success"},
    {SolverStatus::kNotConverged, "not-converged"},
    {SolverStatus::kNumericalIssue, "numerical-issue"}};
// clang-format on

std::string to_string(KccaMethod method) {
  return enum_name(kKccaMethodNames, method);
}

std::string to_string(KccaRegularizer regularizer) {
  return enum_name(kRegularizerNames, regularizer);
}

std::string to_string(LowRankMethod method) {
  return enum_name(kLowRankNames, method);
}

std::string to_string(SolverStatus status) {
  return enum_name(kSolverStatusNames, status);
}

void KccaOptions::validate() const {
  auto nonneg = [](double v, const char* name) {
    if (!(std::isfinite(v) && v >= 0.0)) {
      throw_invalid("", std::string("KccaOptions::validate(): ") + name + " (" + num(v) +
                            ") must be finite and >= 0");
    }
  };
  nonneg(gamma_u, "gamma_u");
  nonneg(gamma_m, "gamma_m");
  nonneg(epsilon_u, "epsilon_u");
  nonneg(epsilon_m, "epsilon_m");
  if (components < 1) {
    throw_invalid("KccaOptions::validate()",
                  "components (" + std::to_string(components) + ") must be >= 1");
  }
  if (rank < 1) {
    throw_invalid("KccaOptions::validate()", "rank (" + std::to_string(rank) + ") must be >= 1");
  }
  if (!(std::isfinite(tolerance) && tolerance > 0.0)) {
    throw_invalid("KccaOptions::validate()",
                  "tolerance (" + num(tolerance) + ") must be finite and > 0");
  }
  if (max_iterations < 1) {
    throw_invalid("KccaOptions::validate()",
                  "max_iterations (" + std::to_string(max_iterations) + ") must be >= 1");
  }
  if (!(drop_tolerance >= 0.0 && drop_tolerance < 1.0)) {
    throw_invalid("KccaOptions::validate()",
                  "drop_tolerance (" + num(drop_tolerance) + ") must be in [0, 1)");
  }
}

double KccaOptions::effective_gamma_u(Eigen::Index n) const {
  return epsilon_u > 0.0 ? static_cast<double>(n) * epsilon_u : gamma_u;
}
double KccaOptions::effective_gamma_m(Eigen::Index n) const {
  return epsilon_m > 0.0 ? static_cast<double>(n) * epsilon_m : gamma_m;
}

double dense_kcca_bytes(Eigen::Index n) {
  return 6.0 * static_cast<double>(n) * static_cast<double>(n) * sizeof(double);
}

void check_dense_kcca_memory(Eigen::Index n, KccaMethod method, const std::string& alternative) {
  require_memory(dense_kcca_bytes(n),
                 to_string(method) + " KCCA at n = " + std::to_string(n) +
                     " (two n x n Grams and the solver's n x n copies)",
                 alternative);
}

KccaResult kcca(const Eigen::MatrixXd& Ku_in, const Eigen::MatrixXd& Km_in,
                const KccaOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto [scale_u, scale_m] = check_inputs(Ku_in, Km_in, options);
  Eigen::MatrixXd Ku = Ku_in, Km = Km_in;
  return kcca_checked(Ku, Km, scale_u, scale_m, options, t0);
}

KccaResult kcca(Eigen::MatrixXd&& Ku, Eigen::MatrixXd&& Km, const KccaOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto [scale_u, scale_m] = check_inputs(Ku, Km, options);
  Eigen::MatrixXd u = std::move(Ku), m = std::move(Km);
  return kcca_checked(u, m, scale_u, scale_m, options, t0);
}

}  // namespace moca::kcca
