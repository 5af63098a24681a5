// The `kcca` tool: run as a process on files (MOCA_BIN_DIR) and through run_kcca().
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "kcca_tool.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/memory.hpp"
#include "moca/kcca/kcca.hpp"
#include "moca/kcca/kernels.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using moca::kcca::test::gaussian_matrix;

namespace {

fs::path work_dir() {
  const fs::path d = fs::path(MOCA_BINARY_DIR) / "test-kcca-cli";
  fs::create_directories(d);
  return d;
}

std::string bin() {
  const char* env = std::getenv("MOCA_BIN_DIR");
  return (env && *env ? std::string(env) : std::string(MOCA_BINARY_DIR) + "/bin") + "/kcca";
}

struct Run {
  int code = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

Run run(const std::string& args) {
  const fs::path d = work_dir();
  const std::string cmd =
      bin() + " " + args + " > " + (d / "out.txt").string() + " 2> " + (d / "err.txt").string();
  const int status = std::system(cmd.c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(d / "out.txt");
  r.err = slurp(d / "err.txt");
  return r;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("kcca tool: JSON result on CSV and NPY input matches the library") {
  if (!fs::exists(bin())) {
    MESSAGE("kcca binary not found at " << bin() << "; skipping the process test");
    return;
  }
  const fs::path d = work_dir();
  const Eigen::MatrixXd U = gaussian_matrix(60, 3, 1);
  Eigen::MatrixXd M = gaussian_matrix(60, 2, 2);
  M.col(0) += U.col(0).cwiseAbs2();
  moca::write_csv_matrix((d / "u.csv").string(), U, {"a", "b", "c"});
  moca::write_npy((d / "m.npy").string(), {60, 2},
                  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>(M).data());
  const Run r = run("--u " + (d / "u.csv").string() + " --m " + (d / "m.npy").string() +
                    " --kernel rbf --sigma 1.5 --gamma 0.2 --components 3 --json --output " +
                    (d / "res.json").string());
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j == nlohmann::json::parse(slurp(d / "res.json")));
  REQUIRE(j["correlations"].size() == 3);
  CHECK(j["correlations"][0].get<double>() >= j["correlations"][1].get<double>());
  CHECK(j["correlations"][1].get<double>() >= j["correlations"][2].get<double>());
  CHECK(j["status"] == "success");
  // "options": the flags as --print-config writes them (--gamma excludes --gamma-u/-m);
  // "settings": what the analysis ran with.
  CHECK(j["options"]["method"] == "auto");
  CHECK(j["options"]["gamma"] == 0.2);
  CHECK(!j["options"].contains("gamma-u"));
  CHECK(j["options"]["sigma"] == 1.5);
  CHECK(j["settings"]["method"] == "auto");
  CHECK(j["solver"] == "exact");  // n = 60 < 200: auto solves exactly
  CHECK(j["settings"]["gamma_u"] == 0.2);
  CHECK(j["settings"]["center"] == true);
  CHECK(j.contains("seconds"));
  CHECK(j["inputs"]["n"] == 60);
  // Same numbers as the library.
  moca::kcca::KccaOptions o;
  o.gamma_u = o.gamma_m = 0.2;
  o.components = 3;
  const auto lib = moca::kcca::kcca(moca::kcca::gram(U, moca::kcca::Kernel::gaussian(1.5)),
                                    moca::kcca::gram(M, moca::kcca::Kernel::gaussian(1.5)), o);
  for (int i = 0; i < 3; ++i) {
    CHECK(std::abs(j["correlations"][i].get<double>() - lib.correlations(i)) < 1e-12);
  }
  // Linear CCA, text output, iterative and low-rank methods, bootstrap.
  const std::string io = "--u " + (d / "u.csv").string() + " --m " + (d / "m.npy").string();
  const Run cca = run(io + " --cca --components 2");
  // Linear CCA of collinear views (M = U B): rho = 1, Bartlett rejects with p = 0.
  {
    const Eigen::MatrixXd Uc = gaussian_matrix(40, 3, 5);
    Eigen::MatrixXd B(3, 3);
    B << 1, 2, 0, 0, 1, 3, 1, 0, 1;
    moca::write_csv_matrix((d / "uc.csv").string(), Uc, {"a", "b", "c"});
    moca::write_csv_matrix((d / "mc.csv").string(), Uc * B, {"x", "y", "z"});
    const Run col = run("--u " + (d / "uc.csv").string() + " --m " + (d / "mc.csv").string() +
                        " --cca --components 3 --json");
    REQUIRE(col.code == 0);
    const nlohmann::json cj = nlohmann::json::parse(col.out);
    for (int i = 0; i < 3; ++i) CHECK(std::abs(cj["correlations"][i].get<double>() - 1.0) < 1e-9);
    CHECK(cj["bartlett"]["p_value_all_zero"].get<double>() == 0.0);
  }
  CHECK(cca.code == 0);
  CHECK(cca.out.find("correlations:") != std::string::npos);
  CHECK(run(io + " --method iterative --components 2 --no-center").code == 0);
  const Run lr = run(io + " --method lowrank --rank 20 --json");
  REQUIRE(lr.code == 0);
  CHECK(nlohmann::json::parse(lr.out).contains("approximation_bound"));
  const Run bs = run(io + " --bootstrap 20 --seed 4 --json");
  REQUIRE(bs.code == 0);
  const nlohmann::json bj = nlohmann::json::parse(bs.out);
  CHECK(bj["bootstrap"]["lower"].get<double>() <= bj["bootstrap"]["upper"].get<double>());
  CHECK(run(io + " --bootstrap 20 --seed 4 --json").out.substr(0, 200) == bs.out.substr(0, 200));
  // Permutations and a per-component bootstrap of 2 correlations, in the JSON and the text.
  const std::string sig = io + " --components 2 --bootstrap 20 --permutations 19 --seed 4";
  const Run pj = run(sig + " --json");
  REQUIRE(pj.code == 0);
  const nlohmann::json p = nlohmann::json::parse(pj.out);
  REQUIRE(p["permutation"]["p_values"].size() == 2);
  REQUIRE(p["bootstrap"]["intervals"].size() == 2);
  CHECK(p["options"]["permutations"] == 19);
  CHECK(p["settings"]["permutations"] == 19);
  CHECK(p["permutation"]["p_values"][0].get<double>() == doctest::Approx(0.05));  // planted U^2
  for (int k = 0; k < 2; ++k) {
    const double pk = p["permutation"]["p_values"][k].get<double>();
    CHECK(p["permutation"]["p_values_step_down"][k].get<double>() >= pk);
    CHECK(pk * 20.0 == doctest::Approx(std::round(pk * 20.0)));  // (1 + count) / (P + 1)
    CHECK(p["bootstrap"]["intervals"][k][0].get<double>() <=
          p["bootstrap"]["intervals"][k][1].get<double>());
  }
  const Run pt = run(sig);
  REQUIRE(pt.code == 0);
  CHECK(pt.out.find("permutation p-values (19 permutations), per component: 0.05") !=
        std::string::npos);
  CHECK(pt.out.find("95% bootstrap CIs (20 resamples): [") != std::string::npos);
}

TEST_CASE("kcca tool: bad input gives a clear error and exit code 2 or 1") {
  if (!fs::exists(bin())) {
    MESSAGE("kcca binary not found at " << bin() << "; skipping the process test");
    return;
  }
  const fs::path d = work_dir();
  write(d / "good.csv", "1,2\n3,4\n5,7\n6,1\n");
  write(d / "good3.csv", "1\n2\n4\n");
  write(d / "ragged.csv", "1,2\n3\n5,6\n");
  write(d / "text.csv", "1,2\n3,abc\n5,6\n");
  write(d / "nan.csv", "1,2\n3,nan\n5,6\n6,1\n");
  const std::string g = (d / "good.csv").string();
  struct Case {
    std::string args;
    int code;
  };
  const Case cases[] = {
      {"--u " + (d / "ragged.csv").string() + " --m " + g, 2},
      {"--u " + (d / "text.csv").string() + " --m " + g, 2},
      {"--u " + (d / "nan.csv").string() + " --m " + g, 2},
      {"--u " + (d / "good3.csv").string() + " --m " + g, 2},   // row-count mismatch
      {"--u " + g + " --m " + g + " --components 5", 2},        // K > n
      {"--u " + g + " --m " + g + " --cca --components 3", 2},  // K > min(d_u, d_m)
      {"--u " + g + " --m " + g + " --cca --pca 3", 2},
      {"--u " + g + " --m " + g + " --gamma 0", 2},
      {"--u " + g + " --m " + g + " --gamma-u -1", 2},
      {"--u " + g + " --m " + g + " --kernel cosine", 2},
      {"--u " + g + " --m " + g + " --method fast", 2},
      {"--u " + g + " --m " + g + " --sigma -2", 2},
      {"--u " + g + " --m " + g + " --bootstrap 1", 2},
      {"--u " + g + " --m " + g + " --permutations -1", 2},
      {"--u " + g + " --m " + g + " --pca 2", 2},      // --pca without --cca
      {"--u " + g + " --m " + g + " --ridge 0.1", 2},  // --ridge without --cca (issue 38)
      {"--u " + g + " --m " + g + " --frobnicate", 2},
      {"--u " + g, 2},
      {"--u " + (d / "missing.csv").string() + " --m " + g, 1},
  };
  for (const auto& c : cases) {
    const Run r = run(c.args);
    INFO(c.args << " -> " << r.err);
    CHECK(r.code == c.code);
    CHECK(r.err.rfind("kcca: ", 0) == 0);
    CHECK(r.out.empty());
  }
}

TEST_CASE("kcca tool: exact KCCA that cannot fit in memory is refused before allocating") {
  if (!fs::exists(bin())) {
    MESSAGE("kcca binary not found at " << bin() << "; skipping the process test");
    return;
  }
  const std::uint64_t available = moca::available_memory_bytes();
  if (available == 0) {
    MESSAGE("no /proc/meminfo: skipped");
    return;
  }
  // n with 6 n^2 doubles well above the available memory (a few MB of CSV).
  const long n = static_cast<long>(std::sqrt(static_cast<double>(available) / 48.0) * 1.5) + 10;
  const fs::path d = work_dir();
  {
    std::ofstream f(d / "tall.csv");
    for (long i = 0; i < n; ++i) f << (i % 7) << "\n";
  }
  const std::string tall = (d / "tall.csv").string();
  const Run r = run("--u " + tall + " --m " + tall + " --sigma 1 --method exact");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.rfind("kcca: exact KCCA at n = " + std::to_string(n), 0) == 0);
  CHECK(r.err.find("this machine has") != std::string::npos);
  CHECK(r.err.find("use --method lowrank --rank R") != std::string::npos);
  CHECK(r.err.find("bad_alloc") == std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
}

TEST_CASE("kcca tool: run_kcca in process") {
  const fs::path d = work_dir();
  write(d / "a.csv", "x,y\n0,0\n1,0\n2,2\n3,5\n");
  write(d / "b.csv", "0.1,-0.2\n0.9,1.1\n6.2,5.9\n11.9,12.3\n");
  moca::tools::KccaToolOptions o;
  o.u_path = (d / "a.csv").string();
  o.m_path = (d / "b.csv").string();
  o.analysis.kernel = moca::kcca::KernelType::kLinear;
  o.analysis.center = false;
  o.analysis.components = 2;
  std::ostringstream out;
  CHECK(moca::tools::run_kcca(o, out) == 0);
  CHECK(out.str().find("uncentred") != std::string::npos);
  o.analysis.gamma = 0.0;
  CHECK_THROWS_AS(moca::tools::run_kcca(o, out), std::invalid_argument);
}
