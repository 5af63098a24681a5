#pragma once
/// \file augment.hpp
/// The paper's Algorithm 1 ("Mixup-based augmentation for multivariate time series"), exactly as
/// stated there, and the "synthetic transitions" built from it (Demonstration with Synthetic Data):
///
///   1. sample x1, x2 from the data set (independently, uniformly, with replacement; x1 == x2 is
///      possible, as in the algorithm);
///   2. lambda ~ U(ceil(0.2 L), floor(0.5 L))     (discrete uniform, closed range);
///   3. s1, s2 ~ U(0, L - lambda), independently;
///   4. e1 = s1 + lambda, e2 = s2 + lambda;
///   5. joint splice across all modalities: x1[:, s1:e1] = x2[:, s2:e2]  (half-open ranges);
///   6. return x1.
///
/// **The label (and subject) of the result stay x1's**: the algorithm defines no label, and for
/// pre-training none is needed; a classifier using augmented windows sees x1's label.
/// ceil(0.2 L) and floor(0.5 L) are evaluated in integers ((L + 4) / 5 and L / 2), so they are
/// exact; L must be >= 2 for the range to be non-empty.
///
/// The upstream code's mix-up (one shared cut point, lambda ~ U(0, 0.5), channel axis under
/// --alt; upstream spec §3) is NOT this algorithm and is not reproduced.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "moca/common/random.hpp"
#include "moca/data/windows.hpp"

namespace moca::data {

/// The random parameters of one splice: segment length lambda and starts s1 (in x1), s2 (in x2).
struct SpliceDraw {
  int lambda = 0;  ///< segment length, ceil(0.2 L) <= lambda <= floor(0.5 L)
  int s1 = 0;      ///< start in x1, 0 <= s1 <= L - lambda
  int s2 = 0;      ///< start in x2, 0 <= s2 <= L - lambda
};

/// Smallest and largest segment length for windows of length L: {ceil(0.2 L), floor(0.5 L)}.
/// std::invalid_argument if L < 2 (the range would be empty).
std::pair<int, int> splice_length_range(int length);

/// Draws Algorithm 1 steps 2-3 for windows of length L: lambda, then s1, then s2, each with
/// moca::uniform_int on `rng` (in that order).
SpliceDraw draw_splice(int length, Rng& rng);

/// Step 5: x1[:, s1 : s1 + lambda] = x2[:, s2 : s2 + lambda] for every channel (x1, x2: C x L).
/// std::invalid_argument if the shapes differ or the draw does not fit the length.
void splice(Eigen::Ref<RowMatrixXf> x1, const Eigen::Ref<const RowMatrixXf>& x2,
            const SpliceDraw& draw);

/// Draws and applies one splice (steps 2-5) to x1 with segment from x2; returns the draw.
SpliceDraw splice(Eigen::Ref<RowMatrixXf> x1, const Eigen::Ref<const RowMatrixXf>& x2, Rng& rng);

/// Provenance of one synthetic transition: rows of the base set and the splice parameters.
struct SpliceRecord {
  int first = 0;    ///< row of x1 in the base set (label and subject come from it)
  int second = 0;   ///< row of x2 in the base set
  SpliceDraw draw;  ///< lambda, s1, s2
};

/// "Synthetic transitions": n windows, each Algorithm 1 applied to x1 = base row `first`, x2 =
/// base row `second`, drawn in this order per window from one Rng(seed): first, second (each
/// uniform over the n_base rows, independently, as Algorithm 1 samples x1, x2 ~ X: a pair may
/// share its activity, and first == second has probability 1/n_base), lambda, s1, s2. Labels and
/// subjects are x1's; metadata is base's, with the description extended. If `records` is not
/// null it receives the n records. The simulation study uses n = 1000 from the training split.
/// std::invalid_argument if n < 1, base has fewer than 2 windows or its length is < 2.
Windows synthetic_transitions(const Windows& base, int n, std::uint64_t seed,
                              std::vector<SpliceRecord>* records = nullptr);

/// synthetic_transitions' windows from its draws `records` (rows of `base`): x1 spliced with
/// x2, x1's label and subject, no part of a split, the description naming n and `seed`.
Windows apply_transitions(const Windows& base, const std::vector<SpliceRecord>& records,
                          std::uint64_t seed);

/// The draws of synthetic_transitions(base, n, seed) for a base of `base_size` windows of length
/// L, without reading a window (a base read from disk reads only the rows they name). The same
/// std::invalid_argument as synthetic_transitions for n < 1, a base of < 2 windows or L < 2.
std::vector<SpliceRecord> draw_transitions(int base_size, int length, int n, std::uint64_t seed);

/// One row's draws in augment_batch: whether it is spliced, the pool row x2 and the splice.
struct BatchSplice {
  bool spliced = false;
  int second = 0;  ///< pool row of x2
  SpliceDraw draw;
};

/// The draws of augment_batch for a batch of `rows` rows and a pool of `pool_size` windows of
/// length L, in augment_batch's order, without reading a window: a trainer that holds part of
/// the batch, or reads x2 from disk, draws with this and splices what it holds. The same
/// std::invalid_argument as augment_batch for an empty pool, L < 2 or a probability outside
/// [0, 1].
std::vector<BatchSplice> draw_batch_splices(int rows, int pool_size, int length, Rng& rng,
                                            double probability = 1.0);

/// On-the-fly form for a trainer: each row of `batch` (B x C*L, a window per row as in
/// Windows::x) is, with probability `probability`, replaced by Algorithm 1 with x1 = that row and
/// x2 = a uniformly drawn row of `pool`. Draws per row, in order: the Bernoulli (uniform01 <
/// probability; skipped when probability == 1), then x2's row, lambda, s1, s2. Returns how many
/// rows were spliced. Labels are unchanged (they stay x1's). std::invalid_argument if the batch's
/// column count differs from pool's C*L, pool is empty, or probability is not in [0, 1].
int augment_batch(Eigen::Ref<RowMatrixXf> batch, const Windows& pool, Rng& rng,
                  double probability = 1.0);

/// Offline form: writes synthetic_transitions(base, n, seed) to `dir` with write_windows_npy
/// (X.npy as N x C x L float32, y.npy, pid.npy, meta.json) plus `splices.csv` (one row per window:
/// index, first, second, lambda, s1, s2), so the augmented set can be reproduced and audited.
/// Creates `dir` if needed. Returns the windows written.
Windows write_synthetic_transitions(const Windows& base, int n, std::uint64_t seed,
                                    const std::string& dir);

}  // namespace moca::data
