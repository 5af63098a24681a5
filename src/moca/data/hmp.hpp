#pragma once
/// \file hmp.hpp
/// Reader for the UCI "Dataset for ADL Recognition with Wrist-worn Accelerometer" (HMP_Dataset,
/// the paper's ADL transfer set): one folder per activity holding files
/// `Accelerometer-YYYY-MM-DD-HH-MM-SS-<activity>-<volunteer>.txt[.gz]`, each row three integers
/// 0..63 (x y z) sampled at 32 Hz on the right wrist.
///
/// Processing, per file:
///   1. units: g = raw / 63 * 3 - 1.5 (the dataset's coding of -1.5 g .. +1.5 g, as ssl-wearables);
///   2. resampling from 32 Hz to `target_rate_hz` (50 Hz) by linear interpolation on the common
///      time axis: output sample j is at time j / 50 s, i.e. at source position p = j * 32 / 50,
///      x(p) = (1 - f) x[k] + f x[k + 1] with k = floor(p), f = p - k; outputs run while
///      p <= T - 1 (no extrapolation), so M = floor((T - 1) * 50 / 32) + 1 samples;
///   3. windows of `length` samples every `stride` samples from the file's start; a shorter
///      remainder (and a file shorter than one window) gives no window.
/// Activity and volunteer come from the file name (the volunteer's "_1"-style suffix of the
/// *_MODEL folders is dropped). Class ids are the sorted distinct activity names of the files
/// read (class_names), subject ids the sorted distinct volunteer names (subject_names).
/// The *_MODEL folders (140 files, mostly excerpts of trial files) are skipped by default.
#include <string>
#include <vector>

#include "moca/data/windows.hpp"

namespace moca::data {

/// Options of load_hmp_windows.
struct HmpOptions {
  int length = 250;                    ///< samples per window after resampling (>= 1; 250 = 5 s)
  int stride = 0;                      ///< step between window starts (>= 0; 0 means = length)
  double target_rate_hz = 50.0;        ///< output sampling rate (> 0, <= 1000)
  bool include_model_folders = false;  ///< also read the *_MODEL folders
  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
};

/// The HMP coding: 32 Hz, raw value 0..63 -> g.
inline constexpr double kHmpRateHz = 32.0;
/// raw / 63 * 3 - 1.5.
inline double hmp_raw_to_g(double raw) {
  return raw / 63.0 * 3.0 - 1.5;
}

/// One HMP trial file after unit conversion and resampling.
struct HmpRecording {
  std::string activity;   ///< from the file name, e.g. "climb_stairs"
  std::string volunteer;  ///< from the file name, e.g. "f1"
  std::string path;       ///< the file read
  RowMatrixXf signal;     ///< 3 x M, acc_x, acc_y, acc_z in g at the target rate
};

/// Splits an HMP file name into activity and volunteer; false if it does not match
/// `Accelerometer-YYYY-MM-DD-HH-MM-SS-<activity>-<volunteer>.txt[.gz]`.
bool parse_hmp_file_name(const std::string& name, std::string& activity, std::string& volunteer);

/// Linear-interpolation resampling of each row of x (C x T) from `from_hz` to `to_hz` as in step 2
/// above. std::invalid_argument if T < 1 or a rate is not positive.
RowMatrixXf resample_linear(const RowMatrixXf& x, double from_hz, double to_hz);

/// Reads one file: rows of three integers 0..63 (std::invalid_argument naming file and line
/// otherwise; blank lines only at the end), converted to g and resampled to `target_rate_hz`.
HmpRecording read_hmp_file(const std::string& path, double target_rate_hz = 50.0);

/// Reads every trial file under `dir` (the HMP_Dataset folder, or a folder containing it) and
/// cuts windows: 3 channels acc_x..acc_z, labels = activity ids, subjects = volunteer ids.
/// std::runtime_error if no activity folder with matching files is found; std::invalid_argument
/// for malformed files or options.
Windows load_hmp_windows(const std::string& dir, const HmpOptions& options = {});

/// The five ADL activities of the paper's transfer table, in the order of their ids 0..4 after
/// selection (DatasetOptions::keep_classes relabels in list order).
inline constexpr const char* kHmpPaperClasses =
    "climb_stairs,drink_glass,getup_bed,pour_water,walk";

/// The paper's ADL transfer set (`moca linprobe|finetune --protocol adl-loso`) as a data spec and
/// a class selection.
struct AdlTransferData {
  std::string spec;          ///< "hmp:<dir>"
  std::string keep_classes;  ///< for DatasetOptions::keep_classes
};
/// `dir`, or $MOCA_HMP_DIR when `dir` is empty (std::invalid_argument when both are empty).
/// `paper_classes` and an empty `keep_classes` select kHmpPaperClasses; otherwise `keep_classes`
/// is kept as given (empty = all 14 activities).
AdlTransferData adl_transfer_data(const std::string& dir, bool paper_classes,
                                  const std::string& keep_classes = {});

}  // namespace moca::data
