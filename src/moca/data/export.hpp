#pragma once
/// \file export.hpp
/// `moca data export` and `moca data window` as library calls: a data selection (or
/// Algorithm-1 transitions made from its training part), or continuous recordings cut into
/// windows, written as an ssl-wearables folder (X.npy, Y.npy, pid.npy, meta.json; export_dataset).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/data/mapped_npy.hpp"
#include "moca/data/recordings.hpp"
#include "moca/data/selection.hpp"

namespace moca::data {

/// How moca data export and moca data window write the windows: one X.npy, or shards.
struct ShardOptions {
  /// > 0: X as shards X_000.npy, ... of at most this many MiB each, with Y_k.npy, pid_k.npy
  /// (and split_k.npy); 0: one X.npy.
  double shard_mb = 0.0;
  bool float16 = false;  ///< shards' X as float16 (needs shard_mb)
  /// The library's form (bytes), float32 or float16, NCL.
  ShardWriteOptions write_options() const;

  /// The options a user sets (option_schema.hpp).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* S = "ShardOptions";
    v(o.shard_mb, Option{S, "shard_mb", "--shard-mb",
                         "write X as shards X_000.npy, ... of at most this many MiB (0: one X.npy)",
                         Range::at_least(0)});
    v(o.float16, Option{S, "float16", "--float16", "shards hold X as float16"});
  }
};

/// What export_selection() writes.
struct ExportOptions {
  DataOptions data;     ///< the windows (all of them, unless transitions > 0)
  std::string out_dir;  ///< created with the folders above it (required)
  /// > 0: this many Algorithm-1 synthetic transitions made from the training part of the split
  /// `data` selects (by default the random 7:3 split) instead of the windows.
  int transitions = 0;
  std::uint64_t seed = 0;  ///< seed of the transitions
  /// Shards (write_npy_shards) are written a chunk at a time; with DataOptions::stream the
  /// input .npy folder is read a chunk at a time too, so memory does not grow with the data
  /// (without it, any input, a sharded folder too, is read into memory first). One X.npy
  /// refuses DataOptions::stream.
  ShardOptions shards;
  /// std::invalid_argument naming the field (`ExportOptions::transitions`), its value and the
  /// rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* E = "ExportOptions";
    v(o.out_dir, Option{E, "out_dir", "--out", "output folder (created)"});
    v(o.transitions, Option{E, "transitions", "--transitions",
                            "export N Algorithm-1 transitions from the training part of the "
                            "split (--split, default random 7:3) instead",
                            Range::at_least(0)});
    v(o.seed, Option{E, "seed", "--seed", "seed of the transitions"});
    ShardOptions::schema(o.shards, v);
  }
};

/// Without transitions, the split's options and the seed take no effect (every window is
/// exported as it is); without shard_mb, float16.
std::vector<UnusedOption> unused_options(const ExportOptions& options);

/// What `moca data window` cuts and where it writes it.
struct WindowExportOptions {
  std::string from;  ///< folder of recordings or a glob (required; find_recordings)
  RecordingWindowOptions windowing;
  std::string out_dir;  ///< created with the folders above it (required)
  /// Shards are written as the windows are cut (NpyShardSink: memory holds one shard at most,
  /// whatever the recordings' length); one X.npy is written a window at a time.
  ShardOptions shards;
  void validate() const;

  /// The options a user sets (option_schema.hpp).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* W = "WindowExportOptions";
    v(o.from, Option{W, "from", "--from",
                     "recordings: a folder of .csv/.csv.gz files (one per subject) or of one "
                     "folder per subject, or a glob (subject: the part its first wildcard "
                     "matches); a header row, a label column, one numeric column per channel"});
    RecordingWindowOptions::schema(o.windowing, v);
    v(o.out_dir, Option{W, "out_dir", "--out", "output folder (created)"});
    ShardOptions::schema(o.shards, v);
  }
};

/// The windowing's unused options (recordings.hpp), and float16 without shards.
std::vector<UnusedOption> unused_options(const WindowExportOptions& options);

/// What was written: the run's description and one line (then the windows per class, for
/// window_recordings_to_folder) for a person.
struct ExportResult {
  nlohmann::json json;
  std::string summary;
};

/// Opens the selection (described on `log`) and writes its windows, or transitions made from its
/// training part, to out_dir. std::invalid_argument for bad options or data, std::runtime_error
/// for I/O failures.
ExportResult export_selection(const ExportOptions& options, std::ostream& log);

/// Cuts the recordings of `from` into windows (window_recordings; modality groups from the
/// channel names) and writes them to out_dir.
ExportResult window_recordings_to_folder(const WindowExportOptions& options);

}  // namespace moca::data
