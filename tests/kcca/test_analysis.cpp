// kcca::kcca_analysis: the two-view analysis of the kcca tool and the Python estimators, its
// result struct and its JSON.
#include "moca/kcca/analysis.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "moca/common/matrix_io.hpp"
#include "test_util.hpp"

namespace {

using moca::kcca::AnalysisOptions;
using moca::kcca::kcca_analysis;
using moca::kcca::test::gaussian_matrix;

// Two views sharing one latent column (n x 3 and n x 2).
void shared_views(Eigen::Index n, Eigen::MatrixXd& U, Eigen::MatrixXd& M) {
  const Eigen::MatrixXd z = gaussian_matrix(n, 1, 1);
  U = gaussian_matrix(n, 3, 2);
  M = gaussian_matrix(n, 2, 3);
  U.col(0) += 2.0 * z.col(0);
  M.col(1) += 2.0 * z.col(0);
}

}  // namespace

TEST_CASE("kcca_analysis: linear CCA equals the textbook reference, with its JSON") {
  Eigen::MatrixXd U, M;
  shared_views(80, U, M);
  AnalysisOptions o;
  o.cca = true;
  o.components = 2;
  o.coefficients = true;
  const auto r = kcca_analysis(o, U, M);
  const Eigen::VectorXd ref = moca::kcca::test::reference_cca(U, M);
  REQUIRE(r.correlations.size() == 2);
  CHECK((r.correlations - ref.head(2)).cwiseAbs().maxCoeff() < 1e-10);
  CHECK(r.cca.weights_u.rows() == 3);
  CHECK(r.bartlett.has_value());  // no ridge, n > p + q + 2
  CHECK(r.bootstrap.empty());
  CHECK_FALSE(r.permutation.has_value());
  const auto j = moca::kcca::to_json(r);
  CHECK(j["analysis"] == "cca");
  CHECK(j["status"] == "success");
  CHECK(j["inputs"] == nlohmann::json{{"n", 80}, {"d_u", 3}, {"d_m", 2}});  // no paths
  CHECK(j["correlations"][0].get<double>() == r.correlations(0));
  CHECK(j["settings"]["pca"] == 0);
  CHECK_FALSE(j.contains("bootstrap"));
}

TEST_CASE("kcca_analysis: KCCA with resampling fills the result and the JSON alike") {
  Eigen::MatrixXd U, M;
  shared_views(40, U, M);
  AnalysisOptions o;
  o.components = 2;
  o.method = moca::kcca::KccaMethod::kExact;
  o.bootstrap = 4;
  o.permutations = 5;
  o.seed = 7;
  const auto r = kcca_analysis(o, U, M);
  CHECK(r.kcca.status == moca::kcca::SolverStatus::kSuccess);
  CHECK(r.kernel_u.sigma > 0.0);
  CHECK(r.solver.method == moca::kcca::KccaMethod::kExact);
  REQUIRE(r.bootstrap.size() == 2u);
  REQUIRE(r.permutation.has_value());
  CHECK(r.permutation->p_values.size() == 2);
  CHECK(r.kcca.alpha.cols() == 0);  // coefficients off, as the tool
  const auto j = moca::kcca::to_json(r);
  CHECK(j["analysis"] == "kcca");
  CHECK(j["sigma_u"].get<double>() == r.kernel_u.sigma);
  CHECK(j["bootstrap"]["intervals"].size() == 2u);
  CHECK(j["permutation"]["permutations"] == 5);
  CHECK(j["settings"]["method"] == "exact");
  CHECK(j["settings"]["seed"] == 7);
  const auto again = kcca_analysis(o, U, M);  // same seed, same numbers
  CHECK(again.bootstrap[0].lower == r.bootstrap[0].lower);
  CHECK(again.permutation->p_values == r.permutation->p_values);
}

TEST_CASE("kcca_analysis_files: the files' analysis equals the in-memory one and names them") {
  Eigen::MatrixXd U, M;
  shared_views(30, U, M);
  const auto dir = std::filesystem::temp_directory_path() / "moca_test_analysis";
  std::filesystem::create_directories(dir);
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> Ur = U, Mr = M;
  const std::string u = (dir / "u.npy").string(), m = (dir / "m.npy").string();
  moca::write_npy(u, {30, 3}, Ur.data());
  moca::write_npy(m, {30, 2}, Mr.data());
  AnalysisOptions o;
  o.kernel = moca::kcca::KernelType::kLinear;
  const auto f = moca::kcca::kcca_analysis_files(o, u, m);
  CHECK(f.correlations == kcca_analysis(o, U, M).correlations);
  CHECK(f.u_path == u);
  const auto j = moca::kcca::to_json(f);
  CHECK(j["inputs"]["u"] == u);
  CHECK(j["inputs"]["m"] == m);
  CHECK_THROWS_WITH_AS(moca::kcca::kcca_analysis_files(o, "", m),
                       "the files of views u and m are required", std::invalid_argument);
  std::filesystem::remove_all(dir);
}

TEST_CASE("kcca_analysis: every error path names the option") {
  Eigen::MatrixXd U, M;
  shared_views(20, U, M);
  AnalysisOptions o;
  CHECK_THROWS_WITH_AS(
      kcca_analysis(o, U, M.topRows(10)),
      "view u has 20 rows, view m has 10 (the views must have the same number of rows)",
      std::invalid_argument);
  CHECK_THROWS_WITH_AS(kcca_analysis(o, U.topRows(2), M.topRows(2)), "need at least 3 rows (got 2)",
                       std::invalid_argument);
  o.components = 21;
  CHECK_THROWS_WITH_AS(kcca_analysis(o, U, M), "AnalysisOptions::components (21) exceeds n (20)",
                       std::invalid_argument);
  o.components = 1;
  o.pca = 2;
  CHECK_THROWS_WITH_AS(o.validate(), "AnalysisOptions::pca (2) needs AnalysisOptions::cca",
                       std::invalid_argument);
  o.pca = 0;
  o.ridge = 0.1;  // a ridge kernel CCA would not use (issue 38)
  CHECK_THROWS_WITH_AS(o.validate(),
                       "AnalysisOptions::ridge (0.1) needs AnalysisOptions::cca (kernel CCA is "
                       "regularised by AnalysisOptions::gamma_u, AnalysisOptions::gamma_m)",
                       std::invalid_argument);
  o.ridge = 0.0;
  o.cca = true;
  o.pca = 3;
  CHECK_THROWS_WITH_AS(kcca_analysis(o, U, M),
                       "AnalysisOptions::pca (3) exceeds min(d_u, d_m, n - 1) (2)",
                       std::invalid_argument);
  o = AnalysisOptions{};
  o.sigma = "wide";
  CHECK_THROWS_WITH_AS(o.validate(), "AnalysisOptions::sigma (wide) must be a number > 0 or auto",
                       std::invalid_argument);
  o = AnalysisOptions{};
  o.bootstrap = 1;
  CHECK_THROWS_WITH_AS(o.validate(), "AnalysisOptions::bootstrap (1) must be 0 (none) or >= 2",
                       std::invalid_argument);
}
