// bench_kcca_score: times the default kcca_score run (generator, 1000 windows, raw features,
// PCA 50, 20 per-window draws, schemes cross and sync) end to end, and its parts: data
// generation, feature preparation, one draw's masks + features, and one linear CCA.
// Usage: bench_kcca_score [repeats=3] [threads=0] [hapt_dir]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "kcca_score.hpp"
#include "moca/data/augment.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/windowing.hpp"
#include "moca/kcca/linear_cca.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"
#include "run_cli.hpp"

namespace {
using namespace moca;

template <typename F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The parts of one default run on generated data, and the same draw on UCI HAPT synthetic
/// transitions when `hapt_dir` is given.
void time_parts(const char* hapt_dir) {
  data::SyntheticOptions so;
  data::Windows w;
  std::cout << "generate_synthetic(1000 windows): "
            << seconds([&] { w = data::generate_synthetic(so); }) << " s\n";
  const auto grid = masking::make_grid(w.channels, w.length, 20);
  auto raw = masking::make_feature_map("raw");
  std::unique_ptr<masking::ViewFeaturizer> f;
  std::cout << "raw prepare: " << seconds([&] { f = raw->prepare(w, grid); }) << " s\n";
  masking::ScoreOptions opt;
  masking::PolicyScorer scorer(w, grid, raw, opt);
  auto cross = masking::make_policy("cross", grid);
  std::vector<masking::Mask> masks;
  Eigen::MatrixXd U, M;
  std::cout << "one draw of 1000 cross masks: "
            << seconds([&] { masks = scorer.draw_masks(*cross, 0); }) << " s\n";
  std::cout << "raw features of both views: " << seconds([&] {
    U = f->features(masks, masking::ViewSide::kUnmasked);
    M = f->features(masks, masking::ViewSide::kMasked);
  }) << " s\n";
  kcca::LinearCcaOptions lo;
  lo.pca = 50;
  double rho = 0;
  std::cout << "linear_cca(1000 x 1200, 1000 x 1200, pca 50): "
            << seconds([&] { rho = kcca::linear_cca(U, M, lo).correlations(0); }) << " s (rho "
            << rho << ")\n";
  if (hapt_dir == nullptr) return;
  data::Windows all, trans;
  std::cout << "load_hapt_windows: " << seconds([&] { all = data::load_hapt_windows(hapt_dir); })
            << " s\n";
  const auto split = data::random_split(all.size(), 0.7, 1004);
  trans = data::synthetic_transitions(all.subset(split.train), 1000, 0);
  auto fh = raw->prepare(trans, grid);
  masking::PolicyScorer hs(trans, grid, raw, opt);
  const auto hm = hs.draw_masks(*cross, 0);
  const Eigen::MatrixXd HU = fh->features(hm, masking::ViewSide::kUnmasked);
  const Eigen::MatrixXd HM = fh->features(hm, masking::ViewSide::kMasked);
  std::cout << "linear_cca on HAPT transitions (pca 50): "
            << seconds([&] { rho = kcca::linear_cca(HU, HM, lo).correlations(0); }) << " s (rho "
            << rho << ")\n";
}

/// `repeats` default kcca_score runs end to end: each run's time, the best and the mean.
void time_default_runs(int repeats, int threads) {
  tools::KccaScoreOptions ko;
  ko.progress = false;
  ko.scoring.score.threads = threads;
  double best = 1e30, total = 0;
  for (int r = 0; r < repeats; ++r) {
    std::ostringstream out, log;
    const double s = seconds([&] { tools::run_kcca_score(ko, out, log); });
    best = std::min(best, s);
    total += s;
    std::cout << "run " << r + 1 << ": kcca_score --scheme cross,sync (defaults): " << s << " s\n";
  }
  std::cout << "default kcca_score run: best " << best << " s, mean " << total / repeats
            << " s (target < 10 s on 2 cores)\n";
}
}  // namespace

int main(int argc, char** argv) {
  return moca::tools::run_program("bench_kcca_score", [&] {
    const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
    const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
    std::cout << "bench_kcca_score: repeats " << repeats << ", threads " << threads
              << " (0 = OpenMP default)\n";
    time_parts(argc > 3 ? argv[3] : nullptr);
    time_default_runs(repeats, threads);
    return 0;
  });
}
