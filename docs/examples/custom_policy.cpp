#include <iostream>

#include "moca/data/synthetic.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policies.hpp"
#include "moca/masking/policy_score.hpp"
using namespace moca;
using namespace moca::masking;

int main() {
  const data::Windows w = data::generate_synthetic({});   // 1000 windows, coupling 0.8
  const Grid grid = make_grid(w.channels, w.length, 20);  // 6 channels x 10 patches of 20
  FunctionPolicy staggered("staggered", grid, [grid](Rng& rng, const WindowRef&) {
    Mask m(grid.channels, grid.patches);       // per channel, 7 patches in a row
    for (int c = 0; c < grid.channels; ++c) {  // from a start drawn per channel
      const int start = static_cast<int>(uniform_int(rng, 0, grid.patches - 7));
      for (int p = start; p < start + 7; ++p) m.set(c, p, true);
    }
    return m;
  });
  PolicyScorer scorer(w, grid, make_feature_map("raw"), ScoreOptions{});  // PCA 50, 20 draws
  const PolicyScore mine = scorer.score(staggered);
  for (const char* spec : {"cross:ratio=0.7", "sync:ratio=0.7"}) {  // 42 cells each
    const PolicyScore other = scorer.score(*make_policy(spec, grid));
    const PairedComparison d = compare_scores(mine, other);  // same draws
    std::cout << "staggered " << mine.mean << " vs " << other.spec << " " << other.mean
              << ": difference " << d.difference << " [" << d.ci_low << ", " << d.ci_high
              << "], p = " << d.p_value << "\n";
  }
}
