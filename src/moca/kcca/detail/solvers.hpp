#pragma once
/// \file solvers.hpp
/// Internal (not installed): what the KCCA solver families share. kcca.cpp checks the inputs and
/// dispatches; kcca_exact.cpp (pivoted Cholesky and spectral routes), kcca_iterative.cpp
/// (Arnoldi on the product operator) and kcca_low_rank.cpp (incomplete Cholesky, Nyström) solve.
#include <Eigen/Dense>

#include <chrono>
#include <sstream>
#include <string>

#include "moca/kcca/kcca.hpp"
#include "moca/kcca/linalg.hpp"

namespace moca::kcca::detail {

/// A number for error messages (12 significant digits).
inline std::string num(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

inline double elapsed(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The retained spectrum of one view: K ~ U diag(lambda) Uᵀ with lambda > drop * lambda_max.
struct Spectrum {
  Eigen::MatrixXd U;
  Eigen::VectorXd lambda;
};

/// The leading eigenpairs of `e` with eigenvalue > drop * largest; std::invalid_argument when
/// the largest is not above `zero_scale` (a zero Gram).
Spectrum truncate(const SymmetricEigen& e, double drop, const char* view, double zero_scale);

/// Flips each canonical pair so that the largest-magnitude entry of its u variate is positive.
void fix_signs(const Eigen::MatrixXd& variates_u, Eigen::MatrixXd& alpha, Eigen::MatrixXd& beta);

/// The reduced problem from both views' retained spectra; records the ranks and the wall time.
KccaResult solve_spectra(const Spectrum& su, const Spectrum& sm, const KccaOptions& options,
                         KccaResult res, std::chrono::steady_clock::time_point t0);

/// The exact solver on prepared (symmetric, centred) Grams with zero scales zu, zm: pivoted
/// Cholesky for the paper regulariser with gamma > 0, else eigendecompositions of both Grams.
KccaResult kcca_exact(const Eigen::MatrixXd& Ku, const Eigen::MatrixXd& Km, double zu, double zm,
                      const KccaOptions& options, KccaResult res,
                      std::chrono::steady_clock::time_point t0);

/// The iterative solver on prepared Grams, which it overwrites with the Cholesky factors of
/// K + gamma I.
KccaResult kcca_iterative(Eigen::MatrixXd& lu, Eigen::MatrixXd& lm, double gu, double gm,
                          const KccaOptions& o, KccaResult res);

}  // namespace moca::kcca::detail
