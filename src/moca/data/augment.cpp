#include "moca/data/augment.hpp"

#include <algorithm>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/data/npy_windows.hpp"

namespace moca::data {

std::pair<int, int> splice_length_range(int length) {
  if (length < 2) {
    throw_invalid(
        "splice_length_range()",
        "length (" + std::to_string(length) + ") must be >= 2 so that ceil(0.2 L) <= floor(0.5 L)");
  }
  return {(length + 4) / 5, length / 2};
}

SpliceDraw draw_splice(int length, Rng& rng) {
  const auto [lo, hi] = splice_length_range(length);
  SpliceDraw d;
  d.lambda = static_cast<int>(uniform_int(rng, lo, hi));
  d.s1 = static_cast<int>(uniform_int(rng, 0, length - d.lambda));
  d.s2 = static_cast<int>(uniform_int(rng, 0, length - d.lambda));
  return d;
}

void splice(Eigen::Ref<RowMatrixXf> x1, const Eigen::Ref<const RowMatrixXf>& x2,
            const SpliceDraw& d) {
  if (x1.rows() != x2.rows() || x1.cols() != x2.cols()) {
    throw_invalid("splice()", "x1 is " + std::to_string(x1.rows()) + " x " +
                                  std::to_string(x1.cols()) + " but x2 is " +
                                  std::to_string(x2.rows()) + " x " + std::to_string(x2.cols()) +
                                  " (same C and L required)");
  }
  const Eigen::Index len = x1.cols();
  if (d.lambda < 0 || d.s1 < 0 || d.s2 < 0 || d.s1 + d.lambda > len || d.s2 + d.lambda > len) {
    throw_invalid("splice()", "draw (lambda " + std::to_string(d.lambda) + ", s1 " +
                                  std::to_string(d.s1) + ", s2 " + std::to_string(d.s2) +
                                  ") does not fit length " + std::to_string(len));
  }
  // x2 may alias x1 (x1 == x2 is allowed by Algorithm 1): copy the segment first.
  const RowMatrixXf seg = x2.middleCols(d.s2, d.lambda);
  x1.middleCols(d.s1, d.lambda) = seg;
}

SpliceDraw splice(Eigen::Ref<RowMatrixXf> x1, const Eigen::Ref<const RowMatrixXf>& x2, Rng& rng) {
  const SpliceDraw d = draw_splice(static_cast<int>(x1.cols()), rng);
  splice(x1, x2, d);
  return d;
}

namespace {
void check_base(const Windows& base, const std::string& who) {
  if (base.size() < 1) throw_invalid("", who + "the base set is empty");
  if (base.channels < 1 ||
      base.x.cols() != static_cast<Eigen::Index>(base.channels) * base.length) {
    throw_invalid("",
                  who + "the base set's x has " + std::to_string(base.x.cols()) +
                      " columns, expected C*L = " + std::to_string(base.channels * base.length));
  }
  splice_length_range(base.length);
}
}  // namespace

std::vector<SpliceRecord> draw_transitions(int base_size, int length, int n, std::uint64_t seed) {
  const std::string who = "synthetic_transitions(): ";
  if (n < 1) throw_invalid("", who + "n (" + std::to_string(n) + ") must be >= 1");
  splice_length_range(length);
  // One window would only be spliced with itself: no transition at all.
  if (base_size < 2) {
    throw_invalid("", who + "the base set has " + std::to_string(base_size) +
                          " window, a transition splices two (needs >= 2 windows)");
  }
  Rng rng(seed);
  std::vector<SpliceRecord> out(static_cast<size_t>(n));
  for (auto& r : out) {
    r.first = static_cast<int>(uniform_int(rng, 0, base_size - 1));
    r.second = static_cast<int>(uniform_int(rng, 0, base_size - 1));
    r.draw = draw_splice(length, rng);
  }
  return out;
}

Windows apply_transitions(const Windows& base, const std::vector<SpliceRecord>& records,
                          std::uint64_t seed) {
  const int n = static_cast<int>(records.size());
  Windows out = base.subset(std::vector<int>(records.size()));  // metadata; rows filled below
  out.parts.resize(0);  // spliced windows are in neither part of the data's split
  for (int k = 0; k < n; ++k) {
    const SpliceRecord& r = records[static_cast<size_t>(k)];
    out.x.row(k) = base.x.row(r.first);
    splice(out.window(k), base.window(r.second), r.draw);
    out.labels(k) = base.labels.size() ? base.labels(r.first) : -1;
    out.subjects(k) = base.subjects.size() ? base.subjects(r.first) : -1;
  }
  out.description = "synthetic transitions (Algorithm 1 splices, n=" + std::to_string(n) +
                    ", seed=" + std::to_string(seed) + ", labels of x1) from: " + base.description;
  return out;
}

Windows synthetic_transitions(const Windows& base, int n, std::uint64_t seed,
                              std::vector<SpliceRecord>* records) {
  const std::string who = "synthetic_transitions(): ";
  if (n < 1) throw_invalid("", who + "n (" + std::to_string(n) + ") must be >= 1");
  check_base(base, who);
  const std::vector<SpliceRecord> rec = draw_transitions(base.size(), base.length, n, seed);
  if (records) *records = rec;
  return apply_transitions(base, rec, seed);
}

std::vector<BatchSplice> draw_batch_splices(int rows, int pool_size, int length, Rng& rng,
                                            double probability) {
  const std::string who = "augment_batch(): ";
  if (pool_size < 1) throw_invalid("", who + "the base set is empty");
  splice_length_range(length);
  if (!(probability >= 0.0 && probability <= 1.0)) {
    throw_invalid("", who + "probability (" + std::to_string(probability) + ") must be in [0, 1]");
  }
  std::vector<BatchSplice> out(static_cast<size_t>(std::max(rows, 0)));
  for (auto& d : out) {
    if (probability < 1.0 && !(uniform01(rng) < probability)) continue;
    d.spliced = true;
    d.second = static_cast<int>(uniform_int(rng, 0, pool_size - 1));
    d.draw = draw_splice(length, rng);
  }
  return out;
}

int augment_batch(Eigen::Ref<RowMatrixXf> batch, const Windows& pool, Rng& rng,
                  double probability) {
  const std::string who = "augment_batch(): ";
  check_base(pool, who);
  if (batch.cols() != pool.x.cols()) {
    throw_invalid("",
                  who + "batch has " + std::to_string(batch.cols()) +
                      " columns, the pool's windows have C*L = " + std::to_string(pool.x.cols()));
  }
  const auto draws = draw_batch_splices(static_cast<int>(batch.rows()), pool.size(), pool.length,
                                        rng, probability);
  int spliced = 0;
  for (Eigen::Index i = 0; i < batch.rows(); ++i) {
    const BatchSplice& d = draws[static_cast<size_t>(i)];
    if (!d.spliced) continue;
    Eigen::Map<RowMatrixXf> x1(batch.row(i).data(), pool.channels, pool.length);
    splice(x1, pool.window(d.second), d.draw);
    ++spliced;
  }
  return spliced;
}

Windows write_synthetic_transitions(const Windows& base, int n, std::uint64_t seed,
                                    const std::string& dir) {
  std::vector<SpliceRecord> rec;
  Windows w = synthetic_transitions(base, n, seed, &rec);
  create_output_folder(dir);
  NpyWriteOptions o;
  write_windows_npy(w, dir, o);
  std::string csv = "index,first,second,lambda,s1,s2\n";
  for (size_t k = 0; k < rec.size(); ++k) {
    csv += std::to_string(k) + "," + std::to_string(rec[k].first) + "," +
           std::to_string(rec[k].second) + "," + std::to_string(rec[k].draw.lambda) + "," +
           std::to_string(rec[k].draw.s1) + "," + std::to_string(rec[k].draw.s2) + "\n";
  }
  write_output_text(dir + "/splices.csv", csv);
  return w;
}

}  // namespace moca::data
