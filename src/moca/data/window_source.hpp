#pragma once
/// \file window_source.hpp
/// Windows read as they are needed: one interface for a set held in memory (data::Windows) and a
/// set read from disk a batch at a time (a memory-mapped .npy folder, mapped_npy.hpp), so that
/// pre-training, and what reads windows in batches, need not hold the whole set.
///
/// A source knows its metadata (channels, length, rate, names, modality groups, and the n labels,
/// subject ids and parts, which are small) without reading a window. Windows are read by row,
/// into a caller's buffer, from any thread.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"

namespace moca::data {

/// Windows and bytes a source has read (this process, every thread).
struct ReadCounters {
  std::int64_t windows = 0;
  std::int64_t bytes = 0;  ///< bytes read from the storage's representation (float16 counts 2)
};

/// Where a source's windows lie: `order` lists the n rows in the order they are stored, and
/// `runs` cuts that list into runs stored together (a sharded folder's shards); the runs' sizes
/// sum to n. The block shuffle (block_shuffle_order) cuts blocks along it.
struct StorageLayout {
  std::vector<int> order;
  std::vector<int> runs;
};

/// The interface. Implementations are immutable after construction (read() is const and
/// thread-safe) apart from their read counters.
class WindowSource {
 public:
  virtual ~WindowSource() = default;
  WindowSource() = default;
  WindowSource(const WindowSource&) = delete;
  WindowSource& operator=(const WindowSource&) = delete;

  /// The metadata: every field of Windows except `x`, which has no rows; labels, subjects (and
  /// parts when stated) have n entries.
  virtual const Windows& meta() const = 0;
  /// Number of windows n.
  int size() const { return static_cast<int>(meta().labels.size()); }
  /// Floats per window, C * L.
  Eigen::Index row_size() const {
    return static_cast<Eigen::Index>(meta().channels) * meta().length;
  }
  /// Copies the windows `rows[0..count)` into `out`, count rows of C*L floats, row-major as
  /// Windows::x. Thread-safe. std::out_of_range for a row outside [0, n); std::runtime_error for
  /// a window holding NaN/Inf, naming where it is stored.
  virtual void read(const int* rows, int count, float* out) const = 0;
  /// A hint that `rows[0..count)` will be read soon: a source on disk asks the kernel to read
  /// their pages ahead (madvise MADV_WILLNEED, asynchronous), so that scattered reads overlap
  /// instead of waiting one by one; nothing is copied or counted. Held in memory: nothing.
  /// std::out_of_range for a row outside [0, n).
  virtual void will_need(const int* rows, int count) const;
  /// Where the windows lie (default: in row order, one run).
  virtual StorageLayout storage() const;
  /// The windows when they are held in memory (then pre-training keeps the in-memory path's
  /// numbers and pilot), else nullptr.
  virtual const Windows* in_memory() const { return nullptr; }
  /// What identifies the data for a resume check: in memory, fingerprint() of the numbers; read
  /// from disk, a digest of the files' names, sizes and modification times and of the rows
  /// selected (reading every window to hash it would cost a pass over the data).
  virtual std::string identity() const = 0;
  /// Throws std::runtime_error naming the file when the storage changed (size or modification
  /// time) since the source was opened; nothing for windows in memory.
  virtual void check_unchanged() const {}
  /// Reads so far, every thread together (a subset: its windows, and the bytes its base read).
  virtual ReadCounters counters() const { return {windows_.load(), bytes_.load()}; }
  /// A short description of the storage (for logs): "in memory", "12 shards, 8.1 GB, float32".
  virtual std::string storage_text() const = 0;

 protected:
  void count_read(std::int64_t windows, std::int64_t bytes) const {
    windows_ += windows;
    bytes_ += bytes;
  }

 private:
  mutable std::atomic<std::int64_t> windows_{0}, bytes_{0};
};

/// A Windows held in memory, not copied: `windows` must outlive the source.
class InMemorySource final : public WindowSource {
 public:
  explicit InMemorySource(const Windows& windows);
  const Windows& meta() const override { return meta_; }
  void read(const int* rows, int count, float* out) const override;
  const Windows* in_memory() const override { return &w_; }
  std::string identity() const override;
  std::string storage_text() const override { return "in memory"; }

 private:
  const Windows& w_;
  Windows meta_;
};

/// The rows `rows` of `base` (in that order; labels, subjects and parts follow), as
/// Windows::subset selects them, without reading a window: a split's training part of a set on
/// disk. `base` must outlive the subset. `metadata`, when given, replaces the base's description
/// of the windows (channel names, rate, modality groups, class and subject names, description;
/// as a program settles them), not the per-window labels. std::invalid_argument for a row
/// outside [0, n), or metadata of another shape.
class SubsetSource final : public WindowSource {
 public:
  SubsetSource(const WindowSource& base, std::vector<int> rows, const Windows* metadata = nullptr);
  const Windows& meta() const override { return meta_; }
  void read(const int* rows, int count, float* out) const override;
  void will_need(const int* rows, int count) const override;
  /// The subset's rows in the base's storage order, cut where the base's runs are.
  StorageLayout storage() const override;
  std::string identity() const override;
  void check_unchanged() const override { base_.check_unchanged(); }
  std::string storage_text() const override { return base_.storage_text(); }
  ReadCounters counters() const override {
    return {WindowSource::counters().windows, base_.counters().bytes};
  }

 private:
  /// The base's rows of `rows` (std::out_of_range naming `who` for one outside [0, n)).
  std::vector<int> base_rows(const int* rows, int count, const char* who) const;
  const WindowSource& base_;
  std::vector<int> rows_;
  Windows meta_;
};

/// The windows of `base` resampled to `rate_hz` and fitted to `length` samples as they are read
/// (resample_windows, resample.hpp: each window on its own, so the values are those of the same
/// windows resampled in memory, as open_dataset fits a set to a model). For a checkpoint's
/// geometry on a streamed folder (moca embed, impute). `base` must outlive it.
/// std::invalid_argument for a rate that is not positive or a length < 1.
class ResampledSource final : public WindowSource {
 public:
  ResampledSource(const WindowSource& base, double rate_hz, int length);
  const Windows& meta() const override { return meta_; }
  void read(const int* rows, int count, float* out) const override;
  void will_need(const int* rows, int count) const override { base_.will_need(rows, count); }
  StorageLayout storage() const override { return base_.storage(); }
  std::string identity() const override;
  void check_unchanged() const override { base_.check_unchanged(); }
  std::string storage_text() const override;
  ReadCounters counters() const override {
    return {WindowSource::counters().windows, base_.counters().bytes};
  }

 private:
  const WindowSource& base_;
  Windows meta_;
};

/// A ResampledSource over `base` when its windows are not at `rate_hz` x `length` (0 keeps the
/// stored rate or length), else nullptr (read `base` itself). When it resamples, a line on `log`
/// (if given) says from which geometry to which.
std::unique_ptr<ResampledSource> resampled_to(const WindowSource& base, double rate_hz, int length,
                                              std::ostream* log = nullptr);

/// The metadata of `w` (Windows::x without rows).
Windows metadata_of(const Windows& w);

/// Reads every window of `source` into memory (Windows with x filled): for the small sets and
/// the paths that need the whole matrix.
Windows materialize(const WindowSource& source);

/// Windows an evaluation on a source on disk reads at a time (embed, impute, predict).
constexpr int kEvalChunk = 1024;

/// Visits the windows of `source` in row order, a chunk at a time: fn(first, windows) for rows
/// [first, first + windows.size()). A source held in memory is one call with its windows, not
/// copied (so a whole-set computation keeps its numbers); a source on disk is read `chunk`
/// windows at a time, and only one chunk is held. std::invalid_argument for chunk < 1.
void for_each_chunk(const WindowSource& source, int chunk,
                    const std::function<void(int first, const Windows& windows)>& fn);

/// The order of one epoch's windows under the block shuffle, from one Rng(seed):
/// 1. the rows in storage order (layout.order) are cut into blocks of `block` consecutive rows,
///    never across a run (the last block of a run may be shorter);
/// 2. with a single block, the order is a Fisher-Yates shuffle of 0..n-1 (moca::shuffle), the
///    full shuffle of the in-memory path (model::epoch_order); otherwise
/// 3. the blocks are shuffled, taken `pool` at a time in that order, and the rows of each pool
///    of blocks are shuffled together.
/// So the reads of a pool touch `pool` runs of `block` stored windows, and a window's place is
/// random within its pool. `block` 0 is the full shuffle whatever the runs. std::invalid_argument
/// for block < 0, pool < 1 or runs that do not sum to n.
std::vector<int> block_shuffle_order(const StorageLayout& layout, int block, int pool,
                                     std::uint64_t seed);

}  // namespace moca::data
