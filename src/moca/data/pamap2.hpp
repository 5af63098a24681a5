#pragma once
/// \file pamap2.hpp
/// Reader for PAMAP2 (UCI "PAMAP2 Physical Activity Monitoring", Reiss & Stricker 2012) as it
/// downloads: `PAMAP2_Dataset/Protocol/subject101.dat` ... `subject109.dat` and
/// `PAMAP2_Dataset/Optional/subject1NN.dat`. Each line is 54 blank-separated numbers (the
/// dataset's readme.pdf): 1 timestamp (s), 2 activityID (0 = transient), 3 heart rate (bpm,
/// ~9 Hz: NaN on most rows), then three IMUs at 100 Hz, hand (4-20), chest (21-37) and ankle
/// (38-54), each 17 columns: temperature, 3-D acceleration ±16 g (m/s²), 3-D acceleration ±6 g,
/// 3-D gyroscope, 3-D magnetometer, 4 orientation values (invalid). Dropped wireless packets are
/// `NaN` cells.
///
/// Processing (the paper's transfer set is ssl-wearables' preparation, data_parsing/pamap.py,
/// and its README; the paper's appendix adds only the later 5-s re-segmentation and 50 Hz):
///   1. per file, the hand IMU's ±16 g acceleration (columns 5-7) with the timestamp and label;
///      rows with NaN in any of them are dropped (counted; the rows around them are joined, as
///      ssl-wearables joins them);
///   2. windows of 10 s (1000 rows) every 5 s over the file's first floor(R / 1000) * 1000 rows
///      (ssl-wearables' two 10-s grids, the second shifted by 5 s, in start order);
///   3. a window with more than half of its rows transient (activity 0) is dropped; the others
///      take the most frequent activity (ties: the smaller id, as scipy.stats.mode);
///   4. m/s² -> g (/ 9.80665, scipy.constants.g), clipped to ±3 g;
///   5. only the 8 activities every subject performs are kept (1 lying, 2 sitting, 3 standing,
///      4 walking, 12 ascending stairs, 13 descending stairs, 16 vacuum cleaning, 17 ironing),
///      and subject 109 (who lacks some) is left out: 8 subjects, 8 classes, as the paper's
///      Table 4 and ssl-wearables' README.
/// Windows stay at 100 Hz; open_dataset resamples them to the model's rate.
#include <cstdint>
#include <string>

#include "moca/data/windows.hpp"

namespace moca::data {

/// PAMAP2's rate and the windows ssl-wearables cuts from it.
inline constexpr double kPamap2RateHz = 100.0;
inline constexpr int kPamap2WindowRows = 1000;  ///< 10 s
inline constexpr int kPamap2StrideRows = 500;   ///< 5 s

/// What load_pamap2_windows dropped, for the notes.
struct Pamap2Counts {
  std::int64_t files = 0;
  std::int64_t rows = 0;
  std::int64_t nan_rows = 0;           ///< dropped for NaN in the kept columns
  std::int64_t transient_windows = 0;  ///< more than half activity 0
  std::int64_t other_windows = 0;      ///< an activity outside the 8
  std::int64_t excluded_windows = 0;   ///< of subject 109
};

/// The windows of the PAMAP2 folder `dir` (the download's root, `PAMAP2_Dataset/`, or the folder
/// holding `Protocol/`; rules above): 3 channels acc_x, acc_y, acc_z (g), L = 1000 at 100 Hz,
/// subjects named subject101 ... in id order, class names in activity-id order.
/// std::runtime_error for a folder without subject*.dat files; std::invalid_argument naming file
/// and line for a line that is not 54 numbers.
Windows load_pamap2_windows(const std::string& dir, Pamap2Counts* counts = nullptr);

/// Whether `dir` holds PAMAP2 (Protocol/subject1NN.dat, under PAMAP2_Dataset/ or not).
bool is_pamap2_folder(const std::string& dir);

}  // namespace moca::data
