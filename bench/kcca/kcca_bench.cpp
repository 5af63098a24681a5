// kcca_bench: wall-clock figures of the four speed targets for moca::kcca.
//
//   kcca_bench [case ...]    cases: exact2000 exact2000coef iterative2000 iterative5000
//                            lowrank100k linear (default: all, in that order)
//   exact2000 is the target (all 2000 correlations); exact2000coef also computes all
//   2000 coefficient pairs alpha, beta (no target, reported beside it).
//
// Every case builds seeded synthetic two-view data (view m a noisy nonlinear function of view u),
// times the whole computation including Gram / factor construction, and prints one line:
//   <case> n=<n> ... seconds=<s> target=<t> rho1=<..> [peak_rss_mib=<..>]
// The peak resident set size is that of the whole process so far, so run lowrank100k alone to
// read its memory figure.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "moca/common/random.hpp"
#include "moca/kcca/kcca.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/kcca/linear_cca.hpp"
#include "run_cli.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

Eigen::MatrixXd normal(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  moca::Rng rng(seed);
  Eigen::MatrixXd A(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j) {
    for (Eigen::Index i = 0; i < rows; ++i) A(i, j) = moca::standard_normal(rng);
  }
  return A;
}

// U: n x d latent-driven features; M: a nonlinear function of U's first columns plus noise.
void two_views(Eigen::Index n, Eigen::Index d, std::uint64_t seed, Eigen::MatrixXd& U,
               Eigen::MatrixXd& M) {
  U = normal(n, d, seed);
  M = 0.5 * normal(n, d, seed + 1);
  for (Eigen::Index j = 0; j < d; ++j) {
    M.col(j) += U.col(j % 3).array().sin().matrix() + 0.3 * U.col((j + 1) % d).cwiseAbs2();
  }
}

void kernel_case(const char* name, Eigen::Index n, moca::kcca::KccaMethod method, int k,
                 double target, bool coefficients = true) {
  using namespace moca::kcca;
  Eigen::MatrixXd U, M;
  two_views(n, 10, 7, U, M);
  const auto t0 = Clock::now();
  const Kernel ku = Kernel::gaussian(median_heuristic_sigma(U, 1));
  const Kernel km = Kernel::gaussian(median_heuristic_sigma(M, 2));
  const Eigen::MatrixXd Ku = gram(U, ku), Km = gram(M, km);
  const double t_gram = seconds_since(t0);
  KccaOptions o;
  o.method = method;
  o.components = k;
  o.gamma_u = o.gamma_m = 0.1;
  o.coefficients = coefficients;
  const KccaResult r = kcca(Ku, Km, o);
  const double t = seconds_since(t0);
  char target_text[32] = "none";
  if (target > 0) std::snprintf(target_text, sizeof target_text, "%.1f", target);
  std::printf(
      "%s n=%ld d=10 kernel=rbf(median) gamma=0.1 centred components=%d coefficients=%s "
      "method=%s seconds=%.3f (gram %.3f) target=%s rho1=%.6f rho%d=%.3g status=%s "
      "iterations=%d\n",
      name, static_cast<long>(n), k, coefficients ? "yes" : "no", to_string(method).c_str(), t,
      t_gram, target_text, r.correlations(0), k, r.correlations(k - 1), to_string(r.status).c_str(),
      r.iterations);
}

void lowrank_case() {
  using namespace moca::kcca;
  const Eigen::Index n = 100000, d = 60;
  Eigen::MatrixXd U, M;
  two_views(n, d, 11, U, M);
  const auto t0 = Clock::now();
  const Kernel ku = Kernel::gaussian(median_heuristic_sigma(U, 1));
  const Kernel km = Kernel::gaussian(median_heuristic_sigma(M, 2));
  KccaOptions o;
  o.method = KccaMethod::kLowRank;
  o.rank = 300;
  o.components = 3;
  o.gamma_u = o.gamma_m = 0.1 * static_cast<double>(n) / 1000.0;
  const KccaResult r = kcca_low_rank(U, M, ku, km, o);
  const double t = seconds_since(t0);
  std::printf(
      "lowrank100k n=%ld d=%ld kernel=rbf(median) rank=300 icd gamma=%.0f centred components=3 "
      "seconds=%.3f target=60 rho1=%.6f bound(rho^2)=%.3g peak_rss_mib=%.0f target_mib=4096\n",
      static_cast<long>(n), static_cast<long>(d), o.gamma_u, t, r.correlations(0),
      r.approximation_bound, peak_rss_mib());
}

double time_linear(const Eigen::MatrixXd& U, const Eigen::MatrixXd& M, int reps,
                   moca::kcca::PcaSolver solver, moca::kcca::LinearCcaResult& r, double& best) {
  moca::kcca::LinearCcaOptions o;
  o.pca = 50;
  o.pca_solver = solver;
  double total = 0.0;
  best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    r = moca::kcca::linear_cca(U, M, o);
    const double t = seconds_since(t0);
    best = std::min(best, t);
    total += t;
  }
  return total / reps;
}

void report(const char* name, const Eigen::MatrixXd& U, const Eigen::MatrixXd& M, int reps) {
  using namespace moca::kcca;
  LinearCcaResult r, rr;
  double best = 0.0, best_r = 0.0;
  const double mean = time_linear(U, M, reps, PcaSolver::kExact, r, best);
  const double mean_r = time_linear(U, M, reps, PcaSolver::kRandomized, rr, best_r);
  std::printf(
      "%s n=1000 p=q=1200 pca=50 exact: seconds(mean of %d)=%.4f min=%.4f sigma1=%.6f "
      "residual=%.1e | randomized: seconds=%.4f min=%.4f sigma1=%.6f residual=%.1e | "
      "target=0.5 (main-job budget 0.12) null=%.4f\n",
      name, reps, mean, best, r.correlations(0), r.pca_residual, mean_r, best_r, rr.correlations(0),
      rr.pca_residual, r.null_level);
}

void linear_case() {
  using namespace moca::kcca;
  const Eigen::Index n = 1000, L = 200, C = 6;
  // (a) IMU-like views: 6 channels x 200 samples of smooth signals (random sinusoids with a
  // shared latent factor) + noise; view u keeps channels 0-2 (3-5 masked to zero: zero-variance
  // columns), view m keeps channels 3-5.
  moca::Rng rng(31);
  Eigen::MatrixXd U = Eigen::MatrixXd::Zero(n, C * L), M = U;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double z = moca::standard_normal(rng);
    for (Eigen::Index c = 0; c < C; ++c) {
      const double f1 = 0.5 + 3.0 * moca::uniform01(rng), ph = 6.283 * moca::uniform01(rng);
      const double a = moca::standard_normal(rng);
      for (Eigen::Index t = 0; t < L; ++t) {
        const double x = a * std::sin(f1 * t * 0.05 + ph) + z * std::cos(0.03 * t + c) +
                         0.1 * moca::standard_normal(rng);
        if (c < 3) U(i, c * L + t) = x;
        if (c >= 3) M(i, c * L + t) = x;
      }
    }
  }
  report("linear(imu-like)", U, M, 20);
  // (b) Worst case for iterative PCA: 20 latent factors + isotropic Gaussian noise, so
  // components 21..50 sit in the noise bulk with tiny eigen-gaps.
  const Eigen::MatrixXd Z = normal(n, 20, 21);
  U = Z * normal(20, C * L, 22) + 2.0 * normal(n, C * L, 23);
  M = Z * normal(20, C * L, 24) + 2.0 * normal(n, C * L, 25);
  U.rightCols(100).setZero();
  report("linear(gaussian-bulk)", U, M, 10);
}

}  // namespace

int main(int argc, char** argv) {
  return moca::tools::run_program("kcca_bench", [&] {
    std::vector<std::string> cases;
    for (int i = 1; i < argc; ++i) cases.emplace_back(argv[i]);
    if (cases.empty())
      cases = {"exact2000",     "exact2000coef", "iterative2000",
               "iterative5000", "lowrank100k",   "linear"};
    using moca::kcca::KccaMethod;
    for (const auto& c : cases) {
      if (c == "exact2000") {
        kernel_case("exact2000", 2000, KccaMethod::kExact, 2000, 4.0, false);
      } else if (c == "exact2000coef") {
        kernel_case("exact2000coef", 2000, KccaMethod::kExact, 2000, 0.0, true);
      } else if (c == "iterative2000") {
        kernel_case("iterative2000", 2000, KccaMethod::kIterative, 3, 1.5);
      } else if (c == "iterative5000") {
        kernel_case("iterative5000", 5000, KccaMethod::kIterative, 3, 10.0);
      } else if (c == "lowrank100k") {
        lowrank_case();
      } else if (c == "linear") {
        linear_case();
      } else {
        std::fprintf(stderr,
                     "kcca_bench: unknown case (%s); valid: exact2000 exact2000coef iterative2000 "
                     "iterative5000 lowrank100k linear\n",
                     c.c_str());
        return 2;
      }
      std::fflush(stdout);
    }
    return 0;
  });
}
