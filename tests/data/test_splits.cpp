#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>

#include "moca/data/splits.hpp"
#include "test_util.hpp"

using namespace moca::data;

namespace {

std::vector<int> prefix(const std::vector<int>& v, size_t n) {
  return std::vector<int>(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
}

void check_partition(const Split& s, int n) {
  std::vector<int> all = s.train;
  all.insert(all.end(), s.test.begin(), s.test.end());
  std::sort(all.begin(), all.end());
  REQUIRE(static_cast<int>(all.size()) == n);
  for (int i = 0; i < n; ++i) CHECK(all[static_cast<size_t>(i)] == i);  // disjoint and covering
}

Eigen::VectorXi make_subjects(int n, int n_subjects) {
  Eigen::VectorXi s(n);
  for (int i = 0; i < n; ++i)
    s(i) = 100 + (i * 13 + i / 5) % n_subjects;  // ids need not start at 0
  return s;
}

}  // namespace

TEST_CASE("splits: std::mt19937 is MT19937 with init_genrand seeding") {
  // The C++ standard fixes the 10000th output of a default-constructed mt19937 (seed 5489).
  std::mt19937 g(5489u);
  g.discard(9999);
  CHECK(g() == 4123659995u);
}

TEST_CASE("splits: numpy legacy permutation matches permutations printed by numpy") {
  // np.random.seed(s); np.random.permutation(n) (equivalently RandomState(s).permutation(n)),
  // values quoted in public test suites that ran numpy (known answers from numpy itself).
  CHECK(numpy_legacy_permutation(10, 0) == std::vector<int>{2, 8, 4, 9, 1, 6, 7, 3, 0, 5});
  CHECK(numpy_legacy_permutation(5, 1) == std::vector<int>{2, 1, 4, 0, 3});
  CHECK(numpy_legacy_permutation(12, 42) == std::vector<int>{10, 9, 0, 8, 5, 2, 1, 11, 4, 7, 3, 6});
  CHECK(prefix(numpy_legacy_permutation(100, 42), 8) ==
        std::vector<int>{83, 53, 70, 45, 44, 39, 22, 80});
  CHECK(prefix(numpy_legacy_permutation(1000, 3), 8) ==
        std::vector<int>{642, 762, 909, 199, 586, 797, 652, 755});
  CHECK(numpy_legacy_permutation(0, 1).empty());
  CHECK(numpy_legacy_permutation(1, 1) == std::vector<int>{0});
  CHECK_THROWS_AS(numpy_legacy_permutation(-1, 1), std::invalid_argument);
  CHECK_THROWS_AS(numpy_legacy_permutation(3, 1ULL << 32), std::invalid_argument);
  CHECK_NOTHROW(numpy_legacy_permutation(3, 0xFFFFFFFFULL));
}

TEST_CASE("splits: random_split sizes, order, coverage and seeds") {
  const Split s = random_split(2640);  // the upstream split: int(0.7 * 2640) = 1847
  CHECK(s.train.size() == 1847);
  CHECK(s.test.size() == 793);
  check_partition(s, 2640);
  const auto perm = numpy_legacy_permutation(2640, 1004);
  CHECK(s.train == prefix(perm, 1847));  // permutation order is kept (train first)
  CHECK(s.test.front() == perm[1847]);
  for (int n : {2, 3, 10, 101, 1000}) {
    for (double f : {0.5, 0.7, 0.9}) {
      const int n_train = static_cast<int>(f * n);
      if (n_train < 1 || n_train >= n) {
        CHECK_THROWS_AS(random_split(n, f, 5), std::invalid_argument);
        continue;
      }
      const Split a = random_split(n, f, 5);
      CHECK(static_cast<int>(a.train.size()) == n_train);
      check_partition(a, n);
      const Split b = random_split(n, f, 5);
      CHECK(a.train == b.train);  // same seed, same split
    }
  }
  CHECK(random_split(1000, 0.7, 1).train != random_split(1000, 0.7, 2).train);
  CHECK_THROWS_AS(random_split(1), std::invalid_argument);
  CHECK_THROWS_AS(random_split(10, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(random_split(10, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(random_split(10, 0.05), std::invalid_argument);  // 0 training rows
  CHECK_THROWS_AS(random_split(10, 0.7, 1ULL << 33), std::invalid_argument);
}

TEST_CASE("splits: subject k-fold is subject-disjoint and tests every window once") {
  for (int n_subjects : {5, 7, 30}) {
    const Eigen::VectorXi subj = make_subjects(997, n_subjects);
    for (int k : {2, 5}) {
      if (k > n_subjects) continue;
      const auto folds = subject_kfold(subj, k, 11);
      REQUIRE(static_cast<int>(folds.size()) == k);
      std::vector<int> tested;
      std::vector<int> subjects_per_fold;
      for (const auto& f : folds) {
        check_partition(f, 997);
        CHECK(std::is_sorted(f.train.begin(), f.train.end()));
        CHECK(std::is_sorted(f.test.begin(), f.test.end()));
        std::set<int> tr, te;
        for (int i : f.train) tr.insert(subj(i));
        for (int i : f.test) te.insert(subj(i));
        for (int s : te) CHECK(tr.count(s) == 0);
        subjects_per_fold.push_back(static_cast<int>(te.size()));
        tested.insert(tested.end(), f.test.begin(), f.test.end());
      }
      std::sort(tested.begin(), tested.end());
      REQUIRE(tested.size() == 997);
      for (int i = 0; i < 997; ++i) CHECK(tested[static_cast<size_t>(i)] == i);
      const auto [lo, hi] = std::minmax_element(subjects_per_fold.begin(), subjects_per_fold.end());
      CHECK(*hi - *lo <= 1);  // balanced in subjects
      const auto again = subject_kfold(subj, k, 11);
      for (int f = 0; f < k; ++f) CHECK(again[f].test == folds[f].test);
    }
  }
  const Eigen::VectorXi subj = make_subjects(500, 30);
  bool differs = false;
  const auto a = subject_kfold(subj, 5, 1), b = subject_kfold(subj, 5, 2);
  for (int f = 0; f < 5; ++f) differs = differs || a[f].test != b[f].test;
  CHECK(differs);
  CHECK_THROWS_AS(subject_kfold(subj, 1), std::invalid_argument);
  CHECK_THROWS_AS(subject_kfold(subj, 31), std::invalid_argument);
  Eigen::VectorXi bad = subj;
  bad(3) = -1;
  CHECK_THROWS_AS(subject_kfold(bad, 5), std::invalid_argument);
}

TEST_CASE("splits: leave-one-subject-out") {
  const Eigen::VectorXi subj = make_subjects(200, 7);
  const auto splits = leave_one_subject_out(subj);
  REQUIRE(splits.size() == 7);
  for (size_t k = 0; k < splits.size(); ++k) {
    check_partition(splits[k], 200);
    for (int i : splits[k].test) CHECK(subj(i) == 100 + static_cast<int>(k));  // ascending ids
    for (int i : splits[k].train) CHECK(subj(i) != 100 + static_cast<int>(k));
  }
  CHECK_THROWS_AS(leave_one_subject_out(Eigen::VectorXi::Constant(5, 3)), std::invalid_argument);
  CHECK_THROWS_AS(leave_one_subject_out(Eigen::VectorXi::Constant(5, -1)), std::invalid_argument);
}
