#pragma once
/// \file ucihar.hpp
/// The authors' data (upstream spec §3, issue #40): UCI-HAR-style streams, one per subject, cut at
/// their first 17,600 samples into non-overlapping 200-sample windows (88 per subject, 2,640 for
/// 30 subjects), labelled by the 7-class rule of windowing.hpp. Two sources:
///
/// * **HAPT raw files** (`--hapt-windowing uci-har`, uci_har_streams()): UCI-HAR's preprocessing
///   redone on HAPT's RawData. Per experiment recording (the continuous signal as recorded):
///   1. *filter*: a median filter of width 3, then a third-order Butterworth low-pass at 20 Hz
///      (fs 50 Hz), per channel, **causal** (lfilter, zero initial state), over the whole
///      recording before anything is dropped, so no junction or segment edge adds a transient;
///   2. *segments*: maximal runs of samples with one activity id 1..6; unlabelled samples and
///      postural transitions (7..12) are dropped;
///   3. *order*: the segments in **UCI-HAR's file order**: activities in order of first
///      appearance within the experiment (5, 4, 6, 1, 3, 2 in the protocol), each activity's
///      segments in time order (`activity_order = false`: plain time order);
///   4. *coverage*: each segment keeps its first 64·n samples, n = floor((len - 128) / 64) + 1
///      the number of UCI-HAR's 128-sample, 50 %-overlap windows it holds (segments shorter than
///      128 samples drop out): the samples that the first halves of those windows cover
///      (`trim_to_windows = false`: the whole segment).
///   A subject's stream is its experiments' pieces in experiment order.
/// * **UCI-HAR's own Inertial Signals** (`ucihar:DIR`, read_ucihar_streams()): the windows'
///   first halves, in file order per subject, with each window's label on its 64 samples: the
///   same stream as the HAPT path's steps 3-4 (the signals are already filtered by UCI-HAR).
///
/// Steps 3 and 4 are inferred from the authors' label array (spec §3: "per subject, y_all
/// follows 5,4,6,1,3,2 repeated twice"; time order cannot give that) and chosen because they
/// come closest to its class counts; docs/data.md has the variants and their counts.
#include <Eigen/Core>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/data/hapt.hpp"
#include "moca/data/windows.hpp"

namespace moca::data {

/// How HAPT's raw recordings become windows (DatasetOptions::hapt_windowing).
enum class HaptWindowing {
  kRaw,    ///< windows inside every labelled stretch of every experiment (windowing.hpp)
  kUciHar  ///< the authors' UCI-HAR-style streams per subject, cut at 17,600 samples (above)
};
// clang-format off
/// The names of the modes (`--hapt-windowing`, Python's hapt_windowing=).
inline constexpr EnumName<HaptWindowing> kHaptWindowingNames[] = {
    {HaptWindowing::kRaw,    "raw"},
    {HaptWindowing::kUciHar, "uci-har"}};
// clang-format on

/// UCI-HAR's window: 128 samples (2.56 s at 50 Hz) every 64 (50 % overlap).
inline constexpr int kUciHarWindow = 128;
inline constexpr int kUciHarHop = 64;

/// Options of the UCI-HAR-style streams and their windows.
struct UciHarOptions {
  /// Samples kept from the start of each subject's stream (>= length; 17,600 = 352 s, spec §3).
  /// A subject with fewer is an error (never padded, never dropped).
  int cut_samples = 17600;
  int length = 200;                 ///< window length L (1..cut_samples; 200 = 4 s at 50 Hz)
  int transition_min_samples = 60;  ///< the label rule's T (0 <= T < length; windowing.hpp)
  bool filter = true;               ///< HAPT: median 3 + Butterworth (step 1); off for controls
  bool activity_order = true;       ///< HAPT: UCI-HAR's order (step 3); false: time order
  bool trim_to_windows = true;      ///< HAPT: 64·n samples per segment (step 4); false: all
  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
};

/// One subject's stream: C x T samples with a HAPT activity id (1..6) per sample.
struct SubjectStream {
  int subject = 0;
  RowMatrixXf signal;      ///< C x T, rows acc_x, acc_y, acc_z (g), gyro_x, gyro_y, gyro_z (rad/s)
  Eigen::VectorXi labels;  ///< T activity ids 1..6
  int pieces = 0;          ///< segments (HAPT) or runs of overlapping windows (UCI-HAR) stitched
  std::string source;      ///< where it came from, for messages ("HAPT experiments 1, 2")
  int samples() const { return static_cast<int>(signal.cols()); }
};

/// Coefficients of a digital IIR filter, a[0] = 1: y[n] = sum b[k] x[n-k] - sum_{k>=1} a[k] y[n-k].
struct IirFilter {
  std::vector<double> b, a;
};

/// The third-order Butterworth low-pass with cut-off `cutoff_hz` at `rate_hz` (0 < cutoff <
/// rate / 2), by the bilinear transform with the cut-off pre-warped (K = tan(pi cutoff / rate)):
/// H(z) = K^3 (1 + z^-1)^3 / ([(1 + K) + (K - 1) z^-1] [(1 + K + K^2) + 2 (K^2 - 1) z^-1 +
/// (1 - K + K^2) z^-2]), normalised to a[0] = 1 (as scipy.signal.butter(3, cutoff, fs=rate)).
/// std::invalid_argument for a cut-off outside (0, rate/2).
IirFilter butterworth_lowpass3(double cutoff_hz, double rate_hz);

/// Filters each row of `x` causally (direct form II transposed, zero initial state, in double:
/// scipy.signal.lfilter(b, a, row)).
void filter_rows(const IirFilter& f, RowMatrixXf& x);

/// Median of 3 along each row of `x`, the ends padded with one zero (scipy.signal.medfilt(row, 3),
/// MATLAB medfilt1's default).
void median3_rows(RowMatrixXf& x);

/// UCI-HAR's noise filters on a C x T recording at `rate_hz`: median3_rows, then the 20 Hz
/// butterworth_lowpass3 (filter_rows).
void uci_har_filter(RowMatrixXf& x, double rate_hz);

/// The UCI-HAR-style stream of every subject of `recordings` (steps 1-4 above), ascending subject
/// id. std::invalid_argument for invalid options or recordings without 6 channels.
std::vector<SubjectStream> uci_har_streams(const std::vector<Recording>& recordings,
                                           const UciHarOptions& options = {});

/// Each subject's stream as UCI-HAR's Inertial Signals give it. `dir` is the folder holding
/// `UCI HAR Dataset/` or that folder itself; it must hold `train/` and/or `test/`, each with
/// `subject_S.txt`, `y_S.txt` (ids 1..6) and `Inertial Signals/total_acc_{x,y,z}_S.txt`,
/// `body_gyro_{x,y,z}_S.txt` (S = train, test; rows of 128 numbers; plain or .gz). A subject's
/// windows, in file order (train, then test), give their first 64 samples each. Consecutive
/// windows of one subject either overlap (the second's first 64 samples equal the first's last 64
/// in all six channels, to 1e-6 relative: the files' 8 significant digits) and continue a run, or
/// share fewer than half of those 384 values and start a new run (UCI-HAR cuts each activity
/// segment on its own). std::invalid_argument naming the files, subject and windows when they
/// share half or more but not all (misaligned or damaged files), for ragged rows, non-numbers,
/// labels outside 1..6 or files of different row counts; std::runtime_error naming what is
/// missing when the folder or a file is.
std::vector<SubjectStream> read_ucihar_streams(const std::string& dir);

/// Windows from streams: each subject's first `cut_samples` samples in non-overlapping windows
/// of `length` (floor(cut / length) per subject, in time order), labelled by window_class() with
/// `transition_min_samples`; subjects in the given order. std::invalid_argument naming the
/// subject, its sample count and the rule when a stream is shorter than `cut_samples`; `what`
/// starts the message (the option or function that asked).
Windows cut_subject_streams(const std::vector<SubjectStream>& streams, const UciHarOptions& options,
                            const std::string& what);

/// read_hapt_recordings(dir), uci_har_streams, cut_subject_streams.
Windows load_hapt_uci_har_windows(const std::string& dir, const UciHarOptions& options = {});

/// read_ucihar_streams(dir), cut_subject_streams.
Windows load_ucihar_windows(const std::string& dir, const UciHarOptions& options = {});

}  // namespace moca::data
