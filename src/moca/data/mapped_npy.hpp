#pragma once
/// \file mapped_npy.hpp
/// A .npy folder's windows read from disk through memory maps, a batch at a time, so that a set
/// larger than memory can be trained on (WindowSource), and the writer of sharded folders.
///
/// **The folder.** Either X.npy, or shards X_000.npy, X_001.npy, ... numbered from 0 without a
/// gap (three digits or more, one width for all). Beside X: the labels Y.npy (or y.npy), the
/// subject ids pid.npy and the split split.npy, as read_windows_npy reads them; a sharded
/// folder has them per shard (Y_000.npy, pid_000.npy, split_000.npy), for every shard or none.
/// meta.json describes the whole folder (its "windows" is the total).
///
/// **X.** 3-d, C order, little-endian float32 ('<f4') or float16 ('<f2', widened to float32 as
/// it is read), NCL or NLC by the layout rule of npy_windows.hpp; every shard has the same dtype
/// and the same channels and length. A Fortran-order X is refused, not copied: a map reads the
/// bytes as they lie, and a copy would hold the whole array in memory (`moca data export` writes a
/// C-order folder).
///
/// **When things are checked.** On opening: every header, shape, dtype, order and label count,
/// and each file's size against its header (a truncated shard is named with both sizes). A
/// window's values are checked as it is read: NaN or Inf is an error naming the shard and row
/// (no window is dropped; read the folder in memory with --drop-nonfinite for that). The files'
/// sizes and modification times are kept: check_unchanged() names a file that changed.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "moca/data/npy_windows.hpp"
#include "moca/data/window_source.hpp"

namespace moca::data {

/// Options of MappedNpySource (the subset of NpyReadOptions a map honours).
struct MappedNpyOptions {
  NpyLayout layout = NpyLayout::kAuto;     ///< axis order of X (kAuto: meta.json, then the rule)
  double sample_rate_hz = 0.0;             ///< > 0 overrides meta.json's
  std::vector<std::string> channel_names;  ///< C names; empty = meta.json's, else ch0..
};

/// One file of X.
struct NpyShard {
  std::string path;
  std::int64_t windows = 0;
  std::int64_t bytes = 0;  ///< the file's size
};

/// The shards of X in `dir`: {dir/X.npy} when it exists, else X_000.npy, X_001.npy, ... in
/// order; empty when there is neither. std::invalid_argument for a gap in the numbers, mixed
/// widths, or both X.npy and shards.
std::vector<std::string> npy_shard_paths(const std::string& dir);

/// True when `dir` holds X_000.npy (a sharded folder).
bool is_sharded_npy_folder(const std::string& dir);

/// A .npy folder read through memory maps.
class MappedNpySource final : public WindowSource {
 public:
  /// Opens and checks the folder (see the file comment). std::runtime_error when there is no X;
  /// std::invalid_argument naming the file for any disagreement. `warnings` (if not null) gets
  /// meta.json's unknown keys.
  explicit MappedNpySource(const std::string& dir, const MappedNpyOptions& options = {},
                           std::vector<std::string>* warnings = nullptr);
  ~MappedNpySource() override;

  const Windows& meta() const override { return meta_; }
  void read(const int* rows, int count, float* out) const override;
  /// madvise(MADV_WILLNEED) on the pages of the rows, adjacent windows merged into one range.
  void will_need(const int* rows, int count) const override;
  StorageLayout storage() const override;
  std::string identity() const override { return identity_; }
  void check_unchanged() const override;
  std::string storage_text() const override;

  const std::vector<NpyShard>& shards() const { return shards_; }
  const std::string& dtype() const { return dtype_; }  ///< "<f4" or "<f2"
  NpyLayout layout() const { return layout_; }         ///< NCL or NLC, resolved
  std::int64_t data_bytes() const;                     ///< bytes of X's windows, all shards

 private:
  /// The shard of row r and its row in the shard; std::out_of_range (naming `who`) outside
  /// [0, n).
  std::pair<size_t, std::int64_t> locate(int r, const char* who) const;
  struct Map;
  std::vector<Map> maps_;
  std::vector<NpyShard> shards_;
  std::vector<std::int64_t> starts_;  ///< first row of each shard, then n
  struct Stamp {
    std::string path;
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
  };
  std::vector<Stamp> stamps_;
  std::string dtype_;
  NpyLayout layout_ = NpyLayout::kChannelsFirst;
  Windows meta_;
  std::string identity_;
};

/// Options of write_npy_shards.
struct ShardWriteOptions {
  /// Bytes of X per shard, at most (rounded down to whole windows, at least one window).
  std::int64_t shard_bytes = std::int64_t{1} << 30;
  bool float16 = false;  ///< X as '<f2' (half the bytes; values rounded to nearest even)
  NpyLayout layout = NpyLayout::kChannelsFirst;  ///< NCL or NLC
  int chunk_windows = 4096;                      ///< windows read from the source at a time
  /// Throws std::invalid_argument naming the field (shard_bytes < 1, layout kAuto, chunk < 1).
  void validate() const;
};

/// Writes `source`'s windows into the existing folder `dir` as shards X_000.npy, ... with
/// Y_k.npy (int64 ids), pid_k.npy (int64), split_k.npy (strings, when the source states a
/// split) and meta.json for the whole folder; X.npy, Y.npy, pid.npy, split.npy and shards of an
/// earlier, longer export are removed after the new ones are in place. Memory holds
/// chunk_windows windows whatever n is. Each file is written atomically; when one fails (a full
/// disk), the shards this call wrote are removed and std::runtime_error names the shard.
/// Returns the shards written.
std::vector<NpyShard> write_npy_shards(const WindowSource& source, const std::string& dir,
                                       const ShardWriteOptions& options = {});

/// Windows that come one at a time, their number not known in advance (moca data window's
/// recordings), written into the existing folder `dir` as write_npy_shards writes a source: X
/// shards of at most shard_bytes (at least one window), then at finish() Y_k.npy, pid_k.npy,
/// split_k.npy and meta.json from the whole set's metadata. Each shard's bytes are gathered in
/// memory (at most shard_bytes, whatever the data's length) and written atomically when full.
/// When a write fails, the files written so far are removed and std::runtime_error names the
/// shard; a sink destroyed before finish() (the producer failed) removes its shards too.
class NpyShardSink {
 public:
  NpyShardSink(std::string dir, int channels, int length, const ShardWriteOptions& options);
  ~NpyShardSink();
  NpyShardSink(const NpyShardSink&) = delete;
  NpyShardSink& operator=(const NpyShardSink&) = delete;
  /// One window: channels * length floats, channel-major (a Windows::x row).
  void put(const float* window);
  /// The last shard, then the companions and meta.json (with the keys of `extra`, as
  /// write_windows_npy_meta). `meta` describes every window put (labels, subjects, and parts
  /// when stated), else std::invalid_argument. Older files the shards replace are removed.
  std::vector<NpyShard> finish(const Windows& meta,
                               const nlohmann::json& extra = nlohmann::json::object());
  std::int64_t windows_per_shard() const { return per_shard_; }

 private:
  void flush();
  std::string dir_;
  int channels_, length_;
  ShardWriteOptions o_;
  std::int64_t row_bytes_ = 0, per_shard_ = 0;
  std::vector<char> buffer_;
  std::vector<std::string> files_;
  std::vector<std::int64_t> counts_;
  bool finished_ = false;
};

/// IEEE 754 binary16 <-> binary32: the widening is exact; the narrowing rounds to nearest even,
/// overflows to Inf and keeps NaN.
float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);

}  // namespace moca::data
