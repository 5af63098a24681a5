#pragma once
/// \file recordings.hpp
/// Continuous labelled recordings -> windows: CSV (or .csv.gz) files with a header row, a label
/// column, optionally a time-stamp column, and one numeric column per channel (Capture-24 style:
/// `time,x,y,z,annotation`). `moca data window` writes the windows as an ssl-wearables folder
/// (X.npy, Y.npy, pid.npy, meta.json), streaming: memory does not grow with a recording's length.
///
/// **Files and subjects** (find_recordings): `--from` is a folder or a glob.
/// - A folder: its `*.csv` / `*.csv.gz` files, each a subject named after the file without its
///   extension; and its sub-folders that hold such files, each a subject named after the
///   sub-folder (one folder per subject: every file in it is a recording of that subject).
/// - A glob (`raw/S*/imu.csv.gz`, `*` `?` `[...]`; a path with one of them): the files it
///   matches, sorted; the subject is the path component that the pattern's first wildcard
///   component matches (`S07` above; for `raw/*.csv` the file name without .csv/.csv.gz).
/// A window never spans two files.
///
/// **Channels and groups**: every column but the label and time columns is a channel, or those
/// `--channels` names (in that order; each file must have them, in any column order).
/// `--modalities acc=ax,ay,az;gyro=gx,gy,gz` (alias `--groups`; names or indices, as
/// `--modalities` elsewhere) groups them; channels no group names are dropped. Without it the
/// groups come from the names' prefixes (acc_x -> acc). `--scale acc=0.101972` multiplies a
/// group's channels (unit conversion; m/s^2 -> g), recorded in meta.json's "recordings".
///
/// **Gaps**: a missing cell is empty, `NA`, `NaN` (any case) or `null`; a labelled row with one
/// is a gap sample, and a run of them is a gap. (Unlabelled rows are in no window and are not
/// checked for gaps.) `--missing error` (the default) refuses them, naming the first and counting
/// the file's gaps; `drop` ends the labelled stretch at a gap (no window spans it); `interpolate:S`
/// fills each missing cell linearly between its channel's values on the nearest complete rows
/// before and after a gap of at most S seconds, and drops longer gaps and gaps at a file's
/// start or end. Gaps are counted and reported in every case. Any other non-number is an error.
///
/// **Label map**: `--label-map FILE[:COLUMN]` reads a CSV dictionary (Capture-24's
/// annotation-label-dictionary.csv): its first column is the raw label (or a column named
/// `annotation`), COLUMN the mapped one (a name, or `label:NAME` found as NAME, e.g.
/// `Walmsley2020`); without COLUMN the file must have two columns. A label the map lacks is
/// refused with its count (`--unmapped error`, the default) or its samples become unlabelled
/// (`drop`), counted in either case; a label mapped to "" is unlabelled.
///
/// **Windows** are cut inside labelled stretches (maximal runs of samples with a non-empty
/// label and no dropped gap), starting at each stretch's first sample and every stride after it,
/// as long as they end inside the stretch; the remainder at a stretch's end is dropped (HAPT's
/// rule, windowing.hpp).
/// **Label rules:** `majority` gives a window the label most of its samples carry (ties: the
/// label first in sorted order); `transition` (the paper's HAPT rule, generalised) gives it
/// `transition` when two or more labels each cover more than `transition_seconds` of it, else the
/// majority label.
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"
#include "moca/data/windows.hpp"

namespace moca::data {

/// How a window's label is chosen from its samples' labels.
enum class LabelRule { kMajority, kTransition };
inline constexpr EnumName<LabelRule> kLabelRuleNames[] = {{LabelRule::kMajority, "majority"},
                                                          {LabelRule::kTransition, "transition"}};

/// What `--missing` does with a gap (file comment).
enum class MissingRule { kError, kDrop, kInterpolate };
/// What `--unmapped` does with a label the label map lacks.
enum class UnmappedRule { kError, kDrop };
inline constexpr EnumName<UnmappedRule> kUnmappedRuleNames[] = {{UnmappedRule::kError, "error"},
                                                                {UnmappedRule::kDrop, "drop"}};

/// A parsed `--missing` value.
struct GapRule {
  MissingRule rule = MissingRule::kError;
  double max_seconds = 0.0;  ///< kInterpolate: the longest gap filled (> 0)
};
/// Parses `error`, `drop` or `interpolate:SECONDS` (SECONDS > 0). std::invalid_argument naming
/// RecordingWindowOptions::missing, the value and the rule otherwise.
GapRule parse_gap_rule(const std::string& text);

/// Options of window_recordings.
struct RecordingWindowOptions {
  double sample_rate_hz = 0.0;       ///< the recordings' rate (> 0; required: never assumed)
  double window_seconds = 10.0;      ///< window length (> 0; round(seconds * rate) samples)
  double stride_seconds = 0.0;       ///< step between windows (0 = window_seconds)
  std::string label_column;          ///< "" = `annotation`, else `label`, whichever the header has
  std::string time_column = "time";  ///< dropped when present (not a channel)
  LabelRule rule = LabelRule::kMajority;
  double transition_seconds = 1.2;  ///< kTransition: "covers" = more than this many seconds
  /// --channels: the channel columns, by name and in this order (empty: every column but the
  /// label and time columns).
  std::vector<std::string> channels;
  /// --modalities (alias --groups): groups of the channels by name or index, e.g.
  /// acc=ax,ay,az;gyro=gx,gy,gz (parse_modalities); channels no group names are dropped. Empty:
  /// groups from the names' prefixes.
  std::string modalities;
  /// --scale: GROUP=FACTOR[,GROUP=FACTOR...] (';' also separates): the group's channels are
  /// multiplied by FACTOR (finite, non-zero).
  std::string scale;
  std::string missing = "error";  ///< --missing: error | drop | interpolate:SECONDS (GapRule)
  std::string label_map;          ///< --label-map FILE[:COLUMN] (file comment)
  UnmappedRule unmapped = UnmappedRule::kError;  ///< --unmapped: error | drop
  /// Throws std::invalid_argument naming the field (`RecordingWindowOptions::window_seconds`),
  /// its value and the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp): `moca data window`'s flags.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* R = "RecordingWindowOptions";
    v(o.sample_rate_hz, Option{R, "sample_rate_hz", "--sample-rate",
                               "the recordings' rate in Hz (required)", Range::above(0)});
    v(o.window_seconds,
      Option{R, "window_seconds", "--window-seconds", "window length", Range::above(0)});
    v(o.stride_seconds, Option{R, "stride_seconds", "--stride-seconds",
                               "step between windows (0 = the window length)", Range::at_least(0)});
    v(o.label_column, Option{R, "label_column", "--label-column",
                             "label column (default: annotation, else label)"});
    v(o.time_column,
      Option{R, "time_column", "--time-column", "time-stamp column, dropped if present"});
    v(o.rule,
      Option{R, "rule", "--label-rule",
             "majority | transition (two labels each over --transition-seconds -> 'transition')"},
      kLabelRuleNames);
    v(o.transition_seconds,
      Option{R, "transition_seconds", "--transition-seconds",
             "transition rule: a label covers a window above this many seconds", Range::above(0)});
    v(o.channels, Option{R, "channels", "--channels",
                         "the channel columns by name, in order (default: all but the label and "
                         "time columns)"});
    v(o.modalities, Option{R, "modalities", "--modalities",
                           "modality groups by channel name or index, e.g. "
                           "acc=ax,ay,az;gyro=gx,gy,gz (channels not named are dropped; default: "
                           "by channel-name prefix)"});
    v(o.scale, Option{R, "scale", "--scale",
                      "multiply a group's channels, e.g. acc=0.101972 (m/s^2 -> g); recorded in "
                      "meta.json"});
    v(o.missing, Option{R, "missing", "--missing",
                        "gaps (empty, NA, NaN, null cells): error | drop (no window spans one) | "
                        "interpolate:SECONDS (linear, gaps up to SECONDS; longer ones dropped)"});
    v(o.label_map, Option{R, "label_map", "--label-map",
                          "FILE[:COLUMN]: a CSV label dictionary, raw label in the first column "
                          "(e.g. annotation-label-dictionary.csv:Walmsley2020)"});
    v(o.unmapped,
      Option{R, "unmapped", "--unmapped",
             "labels the label map lacks: error | drop (their samples become unlabelled)"},
      kUnmappedRuleNames);
  }
};

/// The options that the others leave without effect: transition_seconds beside the majority
/// rule, unmapped without a label map.
std::vector<UnusedOption> unused_options(const RecordingWindowOptions& options);

/// One recording file and the subject it belongs to.
struct RecordingFile {
  std::string path;
  std::string subject;
};
/// The files of `from` (a folder or a glob) and their subjects (file comment).
/// std::invalid_argument naming WindowExportOptions::from for a glob that matches no file;
/// std::runtime_error for a folder that does not exist or holds no recordings.
std::vector<RecordingFile> find_recordings(const std::string& from);

/// What window_recordings met on the way: counted in every case, reported by `moca data window`
/// and in meta.json's "recordings".
struct RecordingStats {
  std::int64_t files = 0;
  std::int64_t rows = 0;               ///< data rows read
  std::int64_t labelled_rows = 0;      ///< rows with a label (after the label map)
  std::int64_t gaps = 0;               ///< runs of labelled rows with a missing cell
  std::int64_t gap_rows = 0;           ///< rows in them
  std::int64_t interpolated_gaps = 0;  ///< filled (interpolate)
  std::int64_t interpolated_rows = 0;
  std::int64_t unmapped_rows = 0;  ///< rows whose label the map lacks (made unlabelled by drop)
  std::vector<std::string> unmapped_labels;  ///< those labels, sorted
  nlohmann::json to_json() const;
};

/// The windows as they stream out of window_recordings_stream: everything but the samples.
struct RecordingWindows {
  Windows meta;  ///< channels, groups, rate, length, labels, subjects, names; x has no columns
  RecordingStats stats;
  nlohmann::json record;  ///< meta.json's "recordings": from, options, stats
};

/// The recordings of `from` (file comment), opened: the constructor finds the files, reads
/// every header (and the label map) and settles channels, groups and scales, so that usage
/// errors come before any data is read; windows() then streams them, once.
/// std::invalid_argument naming file, line and column for bad input (a missing label or channel
/// column, a channel name not in a file, unknown or overlapping groups, a scale for an unknown
/// group, a non-number, a gap under `error`, a label the map lacks under `error`, a ragged row,
/// files whose channel columns differ); std::runtime_error for files that cannot be read.
class RecordingSource {
 public:
  RecordingSource(const std::string& from, const RecordingWindowOptions& options);
  ~RecordingSource();
  RecordingSource(const RecordingSource&) = delete;
  RecordingSource& operator=(const RecordingSource&) = delete;
  int channels() const;  ///< C of every window (the kept channels)
  int length() const;    ///< L of every window, in samples
  /// Streams the windows: `sink(x)` gets each window's C x L samples (channel-major, as a
  /// Windows row) in order; the labels, subjects and names are returned. Memory holds one window
  /// and one gap (interpolate), not a recording.
  RecordingWindows windows(const std::function<void(const float* x)>& sink);

 private:
  struct Plan;
  std::unique_ptr<Plan> plan_;
};

/// The same, collected in memory as Windows (`stats` and `record`, if not null, receive the
/// counts and meta.json's "recordings").
Windows window_recordings(const std::string& from, const RecordingWindowOptions& options,
                          RecordingStats* stats = nullptr, nlohmann::json* record = nullptr);

}  // namespace moca::data
