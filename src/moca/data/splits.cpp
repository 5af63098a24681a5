#include "moca/data/splits.hpp"

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>
#include <string>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"

namespace moca::data {

std::vector<int> numpy_legacy_permutation(int n, std::uint64_t seed) {
  if (n < 0) {
    throw_invalid("numpy_legacy_permutation()", "n (" + std::to_string(n) + ") must be >= 0");
  }
  if (seed > 0xFFFFFFFFULL) {
    throw_invalid("numpy_legacy_permutation()",
                  "seed (" + std::to_string(seed) + ") must be <= 2^32 - 1 (numpy legacy seeding)");
  }
  // std::mt19937 is MT19937 with init_genrand seeding and 32-bit tempered output, i.e. numpy's
  // legacy mt19937_seed + mt19937_next32.
  std::mt19937 gen(static_cast<std::mt19937::result_type>(seed));
  std::vector<int> a(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) a[static_cast<size_t>(i)] = i;
  for (int i = n - 1; i > 0; --i) {
    // numpy random_interval(max = i): mask = smallest 2^k - 1 >= i, rejection sampling.
    std::uint32_t mask = static_cast<std::uint32_t>(i);
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    std::uint32_t v;
    do {
      v = static_cast<std::uint32_t>(gen()) & mask;
    } while (v > static_cast<std::uint32_t>(i));
    std::swap(a[static_cast<size_t>(i)], a[v]);
  }
  return a;
}

Split random_split(int n, double train_fraction, std::uint64_t seed) {
  const std::string f = "random_split(): ";
  if (n < 2) throw_invalid("", f + "n (" + std::to_string(n) + ") must be >= 2");
  if (!(train_fraction > 0.0 && train_fraction < 1.0)) {
    throw_invalid("",
                  f + "train_fraction (" + std::to_string(train_fraction) + ") must be in (0, 1)");
  }
  const int n_train = static_cast<int>(train_fraction * static_cast<double>(n));
  if (n_train < 1 || n_train >= n) {
    throw_invalid("", f + "train_fraction (" + std::to_string(train_fraction) + ") * n (" +
                          std::to_string(n) + ") gives " + std::to_string(n_train) +
                          " training rows; both parts must be "
                          "non-empty");
  }
  const auto perm = numpy_legacy_permutation(n, seed);
  Split s;
  s.train.assign(perm.begin(), perm.begin() + n_train);
  s.test.assign(perm.begin() + n_train, perm.end());
  return s;
}

namespace {
std::vector<int> distinct_subjects(const Eigen::VectorXi& subjects, const std::string& who) {
  std::vector<int> ids;
  for (Eigen::Index i = 0; i < subjects.size(); ++i) {
    if (subjects(i) < 0) {
      throw_invalid("", who + "subject of row " + std::to_string(i) + " is " +
                            std::to_string(subjects(i)) + " (unknown); ids must be >= 0");
    }
    ids.push_back(subjects(i));
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// Splits with test = rows whose subject is in fold f (fold_of maps subject -> fold).
std::vector<Split> by_folds(const Eigen::VectorXi& subjects, const std::map<int, int>& fold_of,
                            int k) {
  std::vector<Split> splits(static_cast<size_t>(k));
  for (Eigen::Index i = 0; i < subjects.size(); ++i) {
    const int f = fold_of.at(subjects(i));
    for (int s = 0; s < k; ++s) {
      (s == f ? splits[static_cast<size_t>(s)].test : splits[static_cast<size_t>(s)].train)
          .push_back(static_cast<int>(i));
    }
  }
  return splits;
}
}  // namespace

std::vector<Split> subject_kfold(const Eigen::VectorXi& subjects, int k, std::uint64_t seed) {
  const std::string f = "subject_kfold(): ";
  auto ids = distinct_subjects(subjects, f);
  if (k < 2 || k > static_cast<int>(ids.size())) {
    throw_invalid("", f + "k (" + std::to_string(k) + ") must be in [2, " +
                          std::to_string(ids.size()) + "] (the number of distinct subjects)");
  }
  Rng rng(seed);
  shuffle(ids, rng);
  std::map<int, int> fold_of;
  for (size_t j = 0; j < ids.size(); ++j) fold_of[ids[j]] = static_cast<int>(j % k);
  return by_folds(subjects, fold_of, k);
}

std::vector<Split> leave_one_subject_out(const Eigen::VectorXi& subjects) {
  const std::string f = "leave_one_subject_out(): ";
  const auto ids = distinct_subjects(subjects, f);
  if (ids.size() < 2) {
    throw_invalid("", f + "needs >= 2 distinct subjects, got " + std::to_string(ids.size()));
  }
  std::map<int, int> fold_of;
  for (size_t j = 0; j < ids.size(); ++j) fold_of[ids[j]] = static_cast<int>(j);
  return by_folds(subjects, fold_of, static_cast<int>(ids.size()));
}

void require_subject_ids(const Eigen::VectorXi& subjects, const Eigen::VectorXi& parts,
                         const std::string& what, const std::string& own_split) {
  if ((subjects.array() >= 0).any()) return;
  throw_invalid(
      "", what + " needs subject ids (pid.npy in a .npy folder); the data has none" +
              (parts.size() != 0 ? " (it states its own training and test part: " + own_split + ")"
                                 : std::string()));
}

Split predefined_split(const Eigen::VectorXi& parts, const std::string& what) {
  if (parts.size() == 0) {
    throw_invalid("", what +
                          " needs the data's own split (a .ts folder's NAME_TRAIN.ts and "
                          "NAME_TEST.ts, or split.npy in a .npy folder); the data states none");
  }
  Split s;
  for (Eigen::Index i = 0; i < parts.size(); ++i)
    (parts(i) == 0 ? s.train : s.test).push_back(static_cast<int>(i));
  if (s.train.empty() || s.test.empty()) {
    throw_invalid("", what + ": the data's own split has " + std::to_string(s.train.size()) +
                          " training and " + std::to_string(s.test.size()) +
                          " test windows (both parts must hold windows)");
  }
  return s;
}

}  // namespace moca::data
