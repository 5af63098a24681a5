#pragma once
/// \file splits.hpp
/// Train/test splits of a windowed data set: the paper's seeded random 7:3 window-level split
/// (bit-compatible with the upstream numpy code), subject-wise k-fold and leave-one-subject-out.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

namespace moca::data {

/// Row indices of the training and the test part of one split.
struct Split {
  std::vector<int> train;  ///< training rows
  std::vector<int> test;   ///< test rows
};

/// numpy's legacy `numpy.random.RandomState(seed).permutation(n)`, reimplemented: MT19937 seeded
/// by init_genrand(seed) (what numpy's legacy seeding does for an integer seed; std::mt19937
/// seeds the same way), then for i = n-1 .. 1 swap a[i] with a[j], j = random_interval(i):
/// draw 32-bit outputs masked to the next power of two minus one until <= i. Parity with numpy
/// holds by construction (same algorithm and generator); the tests compare against permutations
/// printed by numpy in public code. Requires n >= 0 and seed <= 2^32 - 1 (numpy's own limit).
std::vector<int> numpy_legacy_permutation(int n, std::uint64_t seed);

/// Random window-level split as in the upstream code: perm = numpy_legacy_permutation(n, seed),
/// train = perm[:int(train_fraction * n)], test = the rest, both in permutation order (not
/// sorted), so with n = 2640 and the defaults train has 1847 rows as upstream. The product is
/// evaluated in double and truncated, like Python's int(0.7 * n). Subjects may appear in both
/// parts. std::invalid_argument if n < 2, train_fraction is not in (0, 1), either part would be
/// empty, or seed > 2^32 - 1.
Split random_split(int n, double train_fraction = 0.7, std::uint64_t seed = 1004);

/// Subject-wise k-fold: the distinct subject ids (sorted) are shuffled with moca::shuffle on
/// Rng(seed) and dealt round-robin into k folds (fold sizes differ by at most one subject).
/// Split f tests on the windows of fold f and trains on all others; rows ascending. Every window is
/// tested exactly once and no subject is in both parts of a split. std::invalid_argument if a
/// subject id is < 0 or k is not in [2, number of distinct subjects].
std::vector<Split> subject_kfold(const Eigen::VectorXi& subjects, int k = 5,
                                 std::uint64_t seed = 0);

/// One split per distinct subject (ascending id): that subject's windows are the test part, all
/// others the training part; rows ascending. std::invalid_argument if a subject id is < 0 or there
/// are fewer than 2 distinct subjects.
std::vector<Split> leave_one_subject_out(const Eigen::VectorXi& subjects);

/// The data's own split (Windows::parts): rows of part 0 train, rows of part 1 test, ascending.
/// std::invalid_argument naming `what` when `parts` is empty (the data states no split) or
/// either part has no window.
Split predefined_split(const Eigen::VectorXi& parts, const std::string& what);

/// The check before a subject-wise split: std::invalid_argument "`what` needs subject ids
/// (pid.npy in a .npy folder); the data has none" when no id of `subjects` is >= 0, adding
/// "(it states its own training and test part: `own_split`)" when `parts` is not empty.
void require_subject_ids(const Eigen::VectorXi& subjects, const Eigen::VectorXi& parts,
                         const std::string& what, const std::string& own_split);

}  // namespace moca::data
