#pragma once
/// \file recordings.hpp
/// Continuous labelled recordings -> windows: one CSV (or .csv.gz) file per subject with a
/// header row, a label column, optionally a time-stamp column, and one numeric column per
/// channel (Capture-24 style: `time,x,y,z,annotation`). `moca data window` writes the windows as
/// an ssl-wearables folder (X.npy, Y.npy, pid.npy, meta.json).
///
/// **Windows** are cut inside labelled stretches (maximal runs of samples with a non-empty
/// label), starting at each stretch's first sample and every stride after it, as long as they end
/// inside the stretch; the remainder at a stretch's end is dropped (HAPT's rule, windowing.hpp).
/// **Label rules:** `majority` gives a window the label most of its samples carry (ties: the
/// label first in sorted order); `transition` (the paper's HAPT rule, generalised) gives it
/// `transition` when two or more labels each cover more than `transition_seconds` of it, else the
/// majority label.
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

/// Options of window_recordings.
struct RecordingWindowOptions {
  double sample_rate_hz = 0.0;       ///< the recordings' rate (> 0; required: never assumed)
  double window_seconds = 10.0;      ///< window length (> 0; round(seconds * rate) samples)
  double stride_seconds = 0.0;       ///< step between windows (0 = window_seconds)
  std::string label_column;          ///< "" = `annotation`, else `label`, whichever the header has
  std::string time_column = "time";  ///< dropped when present (not a channel)
  LabelRule rule = LabelRule::kMajority;
  double transition_seconds = 1.2;  ///< kTransition: "covers" = more than this many seconds
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
  }
};

/// The options that the others leave without effect: transition_seconds beside the majority rule.
std::vector<UnusedOption> unused_options(const RecordingWindowOptions& options);

/// The windows of every `*.csv` / `*.csv.gz` file of `dir` (sorted by name; subject i is file i,
/// named after the file without its extension), channels named after their columns, labels
/// named by the distinct window labels (sorted). std::invalid_argument naming file, line and
/// column for a missing label column, a non-numeric or non-finite channel value, a ragged row, or
/// files whose channel columns differ; std::runtime_error for a folder without such files.
Windows window_recordings(const std::string& dir, const RecordingWindowOptions& options);

}  // namespace moca::data
