#include "moca/data/window_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/fingerprint.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/random.hpp"
#include "moca/data/resample.hpp"

namespace moca::data {

StorageLayout WindowSource::storage() const {
  StorageLayout s;
  s.order.resize(static_cast<size_t>(size()));
  std::iota(s.order.begin(), s.order.end(), 0);
  s.runs = {size()};
  return s;
}

Windows metadata_of(const Windows& w) {
  Windows m = w.subset({});  // every field but the windows
  const Eigen::Index n = w.x.rows();
  m.labels = w.labels.size() == n ? w.labels : Eigen::VectorXi::Constant(n, -1);
  m.subjects = w.subjects.size() == n ? w.subjects : Eigen::VectorXi::Constant(n, -1);
  m.parts = w.parts;
  return m;
}

namespace {
[[noreturn]] void row_out_of_range(int row, int n, const char* who) {
  throw std::out_of_range(std::string(who) + ": row " + std::to_string(row) + " out of range [0, " +
                          std::to_string(n) + ")");
}
}  // namespace

void WindowSource::will_need(const int* rows, int count) const {
  for (int k = 0; k < count; ++k)
    if (rows[k] < 0 || rows[k] >= size()) row_out_of_range(rows[k], size(), "will_need()");
}

InMemorySource::InMemorySource(const Windows& windows) : w_(windows), meta_(metadata_of(windows)) {}

void InMemorySource::read(const int* rows, int count, float* out) const {
  const Eigen::Index cols = w_.x.cols();
  for (int k = 0; k < count; ++k) {
    const int r = rows[k];
    if (r < 0 || r >= w_.size()) row_out_of_range(r, w_.size(), "InMemorySource::read()");
    std::memcpy(out + k * cols, w_.x.row(r).data(), static_cast<size_t>(cols) * sizeof(float));
  }
  count_read(count, static_cast<std::int64_t>(count) * cols * static_cast<int>(sizeof(float)));
}

std::string InMemorySource::identity() const {
  return fingerprint(w_);
}

SubsetSource::SubsetSource(const WindowSource& base, std::vector<int> rows, const Windows* metadata)
    : base_(base), rows_(std::move(rows)) {
  const Windows& b = base_.meta();
  const int n = base_.size();
  meta_ = b;  // metadata; labels, subjects and parts re-selected below
  if (metadata != nullptr) {
    if (metadata->channels != b.channels || metadata->length != b.length ||
        metadata->channel_names.size() != static_cast<size_t>(b.channels)) {
      throw_invalid("SubsetSource", "metadata of " + std::to_string(metadata->channels) + " x " +
                                        std::to_string(metadata->length) + " windows for " +
                                        std::to_string(b.channels) + " x " +
                                        std::to_string(b.length));
    }
    meta_.channel_names = metadata->channel_names;
    meta_.sample_rate_hz = metadata->sample_rate_hz;
    meta_.modalities = metadata->modalities;
    meta_.class_names = metadata->class_names;
    meta_.subject_names = metadata->subject_names;
    meta_.description = metadata->description;
  }
  const auto m = static_cast<Eigen::Index>(rows_.size());
  meta_.labels.resize(m);
  meta_.subjects.resize(m);
  if (b.parts.size() != 0) meta_.parts.resize(m);
  for (Eigen::Index k = 0; k < m; ++k) {
    const int r = rows_[static_cast<size_t>(k)];
    if (r < 0 || r >= n) {
      throw_invalid("SubsetSource",
                    "row " + std::to_string(r) + " out of range [0, " + std::to_string(n) + ")");
    }
    meta_.labels(k) = b.labels(r);
    meta_.subjects(k) = b.subjects(r);
    if (b.parts.size() != 0) meta_.parts(k) = b.parts(r);
  }
}

std::vector<int> SubsetSource::base_rows(const int* rows, int count, const char* who) const {
  std::vector<int> base(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    const int r = rows[k];
    if (r < 0 || r >= size()) row_out_of_range(r, size(), who);
    base[static_cast<size_t>(k)] = rows_[static_cast<size_t>(r)];
  }
  return base;
}

void SubsetSource::read(const int* rows, int count, float* out) const {
  base_.read(base_rows(rows, count, "SubsetSource::read()").data(), count, out);
  count_read(count, 0);  // the base counts the bytes
}

void SubsetSource::will_need(const int* rows, int count) const {
  base_.will_need(base_rows(rows, count, "SubsetSource::will_need()").data(), count);
}

StorageLayout SubsetSource::storage() const {
  const StorageLayout b = base_.storage();
  const size_t nb = b.order.size();
  // Each base row's place in the base's storage order and the run it lies in.
  std::vector<std::int64_t> place(nb);
  std::vector<int> run_of(nb);
  size_t at = 0;
  for (size_t r = 0; r < b.runs.size(); ++r) {
    for (int k = 0; k < b.runs[r]; ++k, ++at) {
      place[static_cast<size_t>(b.order[at])] = static_cast<std::int64_t>(at);
      run_of[static_cast<size_t>(b.order[at])] = static_cast<int>(r);
    }
  }
  StorageLayout s;
  s.order.resize(rows_.size());
  std::iota(s.order.begin(), s.order.end(), 0);
  std::stable_sort(s.order.begin(), s.order.end(), [&](int a, int c) {
    return place[static_cast<size_t>(rows_[static_cast<size_t>(a)])] <
           place[static_cast<size_t>(rows_[static_cast<size_t>(c)])];
  });
  int last = -1;
  for (const int i : s.order) {
    const int run = run_of[static_cast<size_t>(rows_[static_cast<size_t>(i)])];
    if (s.runs.empty() || run != last) s.runs.push_back(0);
    ++s.runs.back();
    last = run;
  }
  return s;
}

std::string SubsetSource::identity() const {
  const std::string base = base_.identity();
  std::uint64_t h = fnv1a64(base.data(), base.size());
  h = fnv1a64(rows_.data(), rows_.size() * sizeof(int), h);
  return hex64(h);
}

ResampledSource::ResampledSource(const WindowSource& base, double rate_hz, int length)
    : base_(base), meta_(base.meta()) {
  if (!(rate_hz > 0.0) || !std::isfinite(rate_hz)) {
    throw_invalid("ResampledSource", "rate_hz", std::to_string(rate_hz), "must be > 0");
  }
  if (length < 1) throw_invalid("ResampledSource", "length", std::to_string(length), ">= 1");
  meta_.sample_rate_hz = rate_hz;
  meta_.length = length;
}

void ResampledSource::read(const int* rows, int count, float* out) const {
  Windows w = base_.meta().subset({});
  w.x.resize(count, base_.row_size());
  if (count > 0) base_.read(rows, count, w.x.data());
  w.labels = Eigen::VectorXi::Zero(count);  // (the values alone are wanted)
  w.subjects = Eigen::VectorXi::Zero(count);
  const Windows r = resample_windows(w, meta_.sample_rate_hz, meta_.length);
  std::memcpy(out, r.x.data(), static_cast<size_t>(r.x.size()) * sizeof(float));
  count_read(count, 0);  // the base counts the bytes
}

std::string ResampledSource::identity() const {
  const std::string base = base_.identity() + "|resampled " + std::to_string(meta_.sample_rate_hz) +
                           " Hz x " + std::to_string(meta_.length);
  return hex64(fnv1a64(base.data(), base.size()));
}

std::string ResampledSource::storage_text() const {
  return base_.storage_text() + ", resampled as read to " + format_number(meta_.sample_rate_hz, 6) +
         " Hz x " + std::to_string(meta_.length);
}

std::unique_ptr<ResampledSource> resampled_to(const WindowSource& base, double rate_hz, int length,
                                              std::ostream* log) {
  const Windows& m = base.meta();
  const double rate = rate_hz > 0.0 ? rate_hz : m.sample_rate_hz;
  const int len = length > 0 ? length : m.length;
  if (rate == m.sample_rate_hz && len == m.length) return nullptr;
  if (log) {
    *log << "data: " << format_number(m.sample_rate_hz, 6) << " Hz x " << m.length
         << " windows resampled as they are read to " << format_number(rate, 6) << " Hz x " << len
         << " (the model's)\n";
  }
  return std::make_unique<ResampledSource>(base, rate, len);
}

Windows materialize(const WindowSource& source) {
  if (const Windows* w = source.in_memory()) return *w;
  Windows w = source.meta();
  w.x.resize(source.size(), source.row_size());
  std::vector<int> rows(static_cast<size_t>(source.size()));
  std::iota(rows.begin(), rows.end(), 0);
  if (!rows.empty()) source.read(rows.data(), source.size(), w.x.data());
  return w;
}

void for_each_chunk(const WindowSource& source, int chunk,
                    const std::function<void(int first, const Windows& windows)>& fn) {
  if (chunk < 1) throw_invalid("for_each_chunk()", "chunk", std::to_string(chunk), ">= 1");
  if (const Windows* w = source.in_memory()) {
    fn(0, *w);
    return;
  }
  const int n = source.size();
  for (int first = 0; first < n; first += chunk) {
    std::vector<int> rows(static_cast<size_t>(std::min(chunk, n - first)));
    std::iota(rows.begin(), rows.end(), first);
    fn(first, materialize(SubsetSource(source, rows)));
  }
}

std::vector<int> block_shuffle_order(const StorageLayout& layout, int block, int pool,
                                     std::uint64_t seed) {
  if (block < 0) throw_invalid("block_shuffle_order()", "block", std::to_string(block), ">= 0");
  if (pool < 1) throw_invalid("block_shuffle_order()", "pool", std::to_string(pool), ">= 1");
  const auto n = static_cast<std::int64_t>(layout.order.size());
  if (std::accumulate(layout.runs.begin(), layout.runs.end(), std::int64_t{0}) != n) {
    throw_invalid("block_shuffle_order()",
                  "the storage runs do not sum to the " + std::to_string(n) + " rows");
  }
  // Blocks as [begin, end) ranges of layout.order.
  std::vector<std::pair<int, int>> blocks;
  int at = 0;
  for (const int run : layout.runs) {
    for (int b = 0; b < run && block > 0; b += block) {
      blocks.emplace_back(at + b, at + std::min(run, b + block));
    }
    at += run;
  }
  Rng rng(seed);
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  if (blocks.size() <= 1) {  // block 0, or one block: the full shuffle
    order.resize(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    shuffle(order, rng);
    return order;
  }
  shuffle(blocks, rng);
  std::vector<int> pooled;
  for (size_t p = 0; p < blocks.size(); p += static_cast<size_t>(pool)) {
    pooled.clear();
    for (size_t k = p; k < std::min(blocks.size(), p + static_cast<size_t>(pool)); ++k) {
      for (int i = blocks[k].first; i < blocks[k].second; ++i) {
        pooled.push_back(layout.order[static_cast<size_t>(i)]);
      }
    }
    shuffle(pooled, rng);
    order.insert(order.end(), pooled.begin(), pooled.end());
  }
  return order;
}

}  // namespace moca::data
