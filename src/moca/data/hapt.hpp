#pragma once
/// \file hapt.hpp
/// Reader for the raw part of UCI HAPT ("Smartphone-Based Recognition of Human Activities and
/// Postural Transitions", v2.1): per experiment one 6 x T recording (waist smartphone, 50 Hz)
/// with per-sample activity ids from RawData/labels.txt. Files are read in place, plain or .gz.
///
/// Layout (the UCI archive): `<dir>/RawData/acc_expXX_userYY.txt`, `gyro_expXX_userYY.txt` (three
/// space-separated numbers per row, no header: acc in g, gyro in rad/s) and `labels.txt` (rows
/// `experiment user activity start end`). `<dir>` may also be the RawData folder itself.
///
/// **labels.txt indices are 1-based and inclusive**: a row `e u a s t` labels rows s..t of the
/// experiment's files counting the first row as 1, i.e. 0-based samples s-1 .. t-1 of
/// `Recording`. This is the MATLAB convention of the data set's authors (downstream MATLAB code
/// reads `acc(start:end, :)`); it is consistent with the file: consecutive segments abut with
/// `end + 1 == next start`, no index is 0, and every end is <= the row count. The README does not
/// say it, so it is a stated convention; a 0-based reading would shift every label by one sample.
#include <Eigen/Core>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"

namespace moca::data {

/// Number of HAPT channels (acc x, y, z then gyro x, y, z).
inline constexpr int kHaptChannels = 6;
/// Number of HAPT activity ids (1..12; 7..12 are postural transitions).
inline constexpr int kHaptActivities = 12;

/// Channel names in signal row order: acc_x, acc_y, acc_z, gyro_x, gyro_y, gyro_z.
const std::vector<std::string>& hapt_channel_names();
/// Names of HAPT activity ids, index = id: [0] "UNLABELLED", [1] "WALKING", ..., [6] "LAYING",
/// [7] "STAND_TO_SIT", [8] "SIT_TO_STAND", [9] "SIT_TO_LIE", [10] "LIE_TO_SIT",
/// [11] "STAND_TO_LIE", [12] "LIE_TO_STAND" (as in activity_labels.txt).
const std::vector<std::string>& hapt_activity_names();

/// One row of RawData/labels.txt, exactly as written in the file (start/end 1-based inclusive).
struct HaptLabelSegment {
  int experiment = 0;  ///< experiment number (the XX of acc_expXX_...)
  int user = 0;        ///< user (subject) number 1..30
  int activity = 0;    ///< HAPT activity id 1..12
  long start = 0;      ///< first labelled row, 1-based (>= 1)
  long end = 0;        ///< last labelled row, 1-based, inclusive (>= start)
  long line = 0;       ///< line number in labels.txt (for error messages)
};

/// Reads labels.txt (plain or .gz). Each non-empty line must hold exactly five integers with
/// activity in 1..12, start >= 1 and start <= end; otherwise std::invalid_argument naming the
/// file and line. std::runtime_error if the file cannot be opened or read.
std::vector<HaptLabelSegment> read_hapt_labels(const std::string& path);

/// One HAPT experiment: a continuous 6 x T recording with per-sample activity ids.
struct Recording {
  int experiment = 0;            ///< experiment number 1..61
  int subject = 0;               ///< user number 1..30
  double sample_rate_hz = 50.0;  ///< sampling rate (50 Hz for HAPT)
  RowMatrixXf signal;  ///< C x T, rows acc_x,acc_y,acc_z (g), gyro_x,gyro_y,gyro_z (rad/s)
  Eigen::VectorXi sample_labels;           ///< T HAPT activity ids 1..12; 0 = unlabelled
  std::vector<std::string> channel_names;  ///< C names (hapt_channel_names())
  std::string acc_path;                    ///< the accelerometer file actually read
  std::string gyro_path;                   ///< the gyroscope file actually read

  /// Number of samples T.
  int samples() const { return static_cast<int>(signal.cols()); }
};

/// Reads one acc/gyro pair into a Recording whose labels are all 0 (unlabelled).
/// Every non-empty row must hold exactly three finite numbers; blank lines are allowed only at the
/// end. Throws std::invalid_argument naming file and line for a ragged, non-numeric, non-finite or
/// empty file, and naming both files when their row counts differ; std::runtime_error when a file
/// cannot be opened or is a truncated gzip stream.
Recording read_hapt_recording(const std::string& acc_path, const std::string& gyro_path,
                              int experiment, int subject);

/// Writes the segments of `segments` that belong to `rec.experiment` into `rec.sample_labels`
/// (1-based inclusive -> 0-based samples start-1 .. end-1). std::invalid_argument naming
/// `labels_path` and the line when a segment's user differs from rec.subject, its end exceeds the
/// recording's T, or it overlaps an earlier segment of the same experiment.
void apply_hapt_labels(Recording& rec, const std::vector<HaptLabelSegment>& segments,
                       const std::string& labels_path);

/// Reads every experiment of a HAPT folder (`dir` = the archive root holding RawData/, or RawData
/// itself), sorted by experiment number, with labels applied. Files are read in parallel (OpenMP).
/// Throws std::runtime_error when the folder, labels.txt or the gyro partner of an acc file is
/// missing, or no acc_expXX_userYY.txt[.gz] file is found; std::invalid_argument for malformed
/// content (see read_hapt_recording, read_hapt_labels, apply_hapt_labels) and for a labels.txt
/// row naming an experiment that has no files.
std::vector<Recording> read_hapt_recordings(const std::string& dir);

}  // namespace moca::data
