// mask_dump SPEC SEED DRAW N: the masks that PolicyScorer::draw_masks gives in draw DRAW with
// seed SEED (per-window mode) for the first N generator windows, one line of C*P 0/1 cells per
// window. The C++ side of tests/python/test_masking.py (policies sample the library's masks).
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>

#include "moca/data/synthetic.hpp"
#include "moca/masking/feature_map.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: mask_dump SPEC SEED DRAW N\n";
    return 2;
  }
  try {
    using namespace moca;
    data::SyntheticOptions so;
    so.windows = std::stoi(argv[4]);
    const data::Windows w = data::generate_synthetic(so);
    const masking::Grid grid = masking::make_grid(w.channels, w.length, 20);
    masking::ScoreOptions o;
    o.seed = std::stoull(argv[2]);
    const masking::PolicyScorer scorer(w, grid, masking::make_feature_map("raw"), o);
    const auto policy = masking::make_policy(argv[1], grid);
    for (const auto& m : scorer.draw_masks(*policy, std::stoi(argv[3]))) {
      for (const auto c : m.cells()) std::cout << (c != 0 ? '1' : '0');
      std::cout << '\n';
    }
  } catch (const std::exception& e) {
    std::cerr << "mask_dump: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
