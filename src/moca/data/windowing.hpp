#pragma once
/// \file windowing.hpp
/// Cutting HAPT recordings into labelled windows for the paper's 7-class task.
///
/// **Unlabelled samples are excluded by cutting windows only inside labelled stretches.** A
/// labelled stretch is a maximal run of consecutive samples whose HAPT id is not 0. Windows of
/// `length` samples start at the first sample of each stretch and every `stride` samples after it,
/// as long as they end inside the stretch; the remainder (< length) at a stretch's end is dropped.
/// So no window contains an unlabelled sample, and no window bridges a gap between two labelled
/// segments (in HAPT such gaps are the unannotated pauses between bouts, 511 gaps, about 187k of
/// 1.12M samples).
///
/// **Label rule** (paper, Dataset appendix; upstream spec §3), with T = transition_min_samples:
/// count the samples of each HAPT id 1..12 in the window;
///   1. if two or more ids each cover more than T samples, the class is 0 (transition);
///   2. otherwise take the id covering most samples (ties: the smallest id); if it is a postural
///      transition (7..12, "the window is mostly a postural transition") the class is 0;
///   3. otherwise the class is that id: 1 walking, 2 upstairs, 3 downstairs, 4 sitting,
///      5 standing, 6 laying.
#include <string>
#include <utility>
#include <vector>

#include "moca/data/hapt.hpp"
#include "moca/data/windows.hpp"

namespace moca::data {

/// How to cut recordings into windows (defaults: the paper's 4 s windows at 50 Hz, no overlap).
struct WindowingOptions {
  int length = 200;                 ///< L samples per window (>= 1; 200 = 4 s at 50 Hz)
  int stride = 200;                 ///< step between window starts (>= 0; 0 means = length)
  int transition_min_samples = 60;  ///< T: an activity "covers" a window when > T samples
                                    ///< (0 <= T < length; 60 = 1.2 s at 50 Hz)
  bool drop_transitions = false;    ///< drop class-0 windows (6-class task) when true

  /// The stride actually used (length when stride == 0).
  int effective_stride() const { return stride == 0 ? length : stride; }
  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
};

/// Names of the 7 classes, index = class id: transition, walking, upstairs, downstairs, sitting,
/// standing, laying.
const std::vector<std::string>& har_class_names();

/// The class (0..6) of a window whose `n` samples carry the HAPT ids `hapt_ids` (each 1..12), by
/// the label rule above. std::invalid_argument if n < 1 or an id is outside 1..12.
int window_class(const int* hapt_ids, int n, int transition_min_samples);

/// Windows of every recording by the rules above, in recording order then time order.
/// X rows are C x L windows of Recording::signal (channel names from the recordings), labels are
/// class ids 0..6, subjects are the HAPT user numbers. std::invalid_argument for invalid options
/// or recordings with differing channel counts.
Windows make_windows(const std::vector<Recording>& recordings, const WindowingOptions& options);

/// read_hapt_recordings(dir) followed by make_windows(…, options).
Windows load_hapt_windows(const std::string& dir, const WindowingOptions& options = {});

/// Sub-windows of `length` samples every `stride` samples (both >= 1, length <= the windows'),
/// starting at sample 0 of each window: window i gives floor((L - length) / stride) + 1
/// sub-windows, in order, each keeping its label and subject (rows i*k .. i*k + k - 1). The tail
/// rule: samples after the last whole sub-window are dropped (none when stride divides
/// L - length). std::invalid_argument naming `length`/`stride` otherwise.
Windows segment_windows(const Windows& windows, int length, int stride);

/// "SECONDS[:STRIDE]" (e.g. "5" or "5:2.5", seconds > 0) as sub-window length and stride in
/// samples at `rate_hz` (rounded to the nearest sample; stride defaults to the length).
/// std::invalid_argument naming `what`, the text and the rule.
std::pair<int, int> parse_segment(const std::string& text, double rate_hz, const std::string& what);

/// Number of windows per class id 0..K-1 (K = max(class_names.size(), max label + 1)); labels
/// < 0 are not counted.
std::vector<long> class_counts(const Windows& windows);

/// A readable table: one line per class "id name count percent", a line for windows with label
/// -1 (if any, not counted in the total), then the total and the number of subjects (ids >= 0;
/// -1 is no subject).
std::string class_count_table(const Windows& windows);

}  // namespace moca::data
