// kcca_fit_timing U.npy M.npy REPEATS [METHOD]: the C++ side of bench/python/bench_kcca_python.py.
// Times the library call that moca.KCCA(kernel="rbf", gamma=0.1, n_components=3).fit makes
// (kcca::kcca_analysis on in-memory views, sigma auto, METHOD (default exact), coefficients on),
// excluding the file reading; prints one wall time in seconds per repeat (the first call of a
// process is cold: thread pool start, first-touch page faults), and rho_1 .. rho_3 of the last.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "moca/common/matrix_io.hpp"
#include "moca/kcca/analysis.hpp"

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: kcca_fit_timing U.npy M.npy REPEATS [exact|iterative|lowrank]\n");
    return 2;
  }
  try {
    const Eigen::MatrixXd U = moca::read_matrix(argv[1]);
    const Eigen::MatrixXd M = moca::read_matrix(argv[2]);
    moca::kcca::AnalysisOptions o;
    o.kernel = moca::kcca::KernelType::kGaussian;
    o.gamma = 0.1;
    o.components = 3;
    o.coefficients = true;
    if (argc == 5) o.method = moca::parse_enum(moca::kcca::kKccaMethodNames, argv[4], "method");
    moca::kcca::AnalysisResult a;
    for (int r = 0; r < std::stoi(argv[3]); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      a = moca::kcca::kcca_analysis(o, U, M);
      std::printf("%.6f\n",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("rho %.12g %.12g %.12g\n", a.kcca.correlations(0), a.kcca.correlations(1),
                a.kcca.correlations(2));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kcca_fit_timing: %s\n", e.what());
    return 1;
  }
  return 0;
}
