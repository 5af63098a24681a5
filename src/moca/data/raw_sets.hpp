#pragma once
/// \file raw_sets.hpp
/// The paper's transfer sets read from their downloads, cut as ssl-wearables cuts them (the
/// paper's appendix: the sets are "processed and released by [harnet]", i.e. ssl-wearables'
/// data_parsing scripts; the appendix adds only a later 5-s re-segmentation at 50 Hz).
///
/// **PAMAP2** (UCI "PAMAP2 Physical Activity Monitoring", Reiss & Stricker 2012; readme.pdf):
/// `PAMAP2_Dataset/Protocol/subject101.dat` ... `subject109.dat` and `Optional/subject1NN.dat`,
/// each line 54 blank-separated numbers: 1 timestamp (s), 2 activityID (0 = transient), 3 heart
/// rate (bpm, ~9 Hz: NaN on most rows), then three IMUs at 100 Hz, hand (4-20), chest (21-37)
/// and ankle (38-54), each 17 columns: temperature, 3-D acceleration ±16 g (m/s²), 3-D
/// acceleration ±6 g, gyroscope, magnetometer, 4 orientation values (invalid). Lost packets are
/// NaN cells. ssl-wearables' data_parsing/pamap.py and README: the hand IMU's ±16 g acceleration
/// (columns 5-7); m/s² -> g (/ 9.80665, scipy.constants.g); the 8 activities every subject
/// performs (1 lying, 2 sitting, 3 standing, 4 walking, 12 ascending stairs, 13 descending
/// stairs, 16 vacuum cleaning, 17 ironing); subject 109 left out; 10-s windows (1000 rows).
///
/// **OPPORTUNITY** (UCI "OPPORTUNITY Activity Recognition", Roggen et al. 2010; README and
/// column_names.txt): `OpportunityUCIDataset/dataset/S1-ADL1.dat` ... `S4-Drill.dat`, each line
/// 250 blank-separated numbers at 30 Hz: 1 MILLISEC, body-worn sensors (columns 23-25: the right
/// wrist accelerometer RWR, milli g), ..., 244 Locomotion (0 null, 1 stand, 2 walk, 4 sit,
/// 5 lie), 245-250 other label tracks. ssl-wearables' data_parsing/oppo.py: columns 23-25;
/// milli g -> g (/ 1000); windows of 330 rows every 165 (the script's "10 s at 33 Hz": 11 s at
/// the data's 30 Hz, kept so that the windows are the released ones); label 0 dropped after the
/// vote and lie relabelled 5 -> 3: 4 classes stand, walk, lie, sit; subject = the digit after S.
///
/// **WISDM** (UCI "WISDM Smartphone and Smartwatch Activity and Biometrics", Weiss 2019;
/// WISDM-dataset-description.pdf): `wisdm-dataset/raw/watch/accel/data_16NN_accel_watch.txt`,
/// lines `subject,activity code,timestamp (ns),x,y,z;` at 20 Hz (m/s²), activity codes A-S (no N)
/// for 18 activities. ssl-wearables' data_parsing/make_wisdm.py and README: the watch's
/// accelerometer; each subject's activity stream put on a 20 Hz grid from its first time stamp
/// (every 50 ms up to its last); 10-s windows (200 grid points) every 5 s with no missing point;
/// m/s² -> g (/ 9.81, the script's); resized linearly to 300 samples (30 Hz, the script's
/// utils.resize); subjects 1616, 1618, 1637, 1639 and 1642 left out (README): 46 subjects, 18
/// classes. The grid rule: a grid point takes the sample nearest to it (ties: the earlier) if it
/// lies within half a period (25 ms), else it is missing. (The script asks pandas for
/// `resample().nearest(limit=1)`, which may also reach a sample up to a whole period away across
/// a gap; on the regular 20 Hz streams the two agree.) Duplicate time stamps keep their first
/// sample (the script drops duplicate rows of subject 1629).
///
/// **RealWorld** (HAR; Sztyler & Stuckenschmidt 2016, the data set's website): the download
/// unpacks to `realworld2016_dataset/proband1` ... `proband15`, each with `data/acc_<activity>_
/// csv.zip` for 8 activities (climbingdown, climbingup, jumping, lying, running, sitting,
/// standing, walking): an archive of one CSV per body position (`acc_walking_forearm.csv`:
/// id,attr_time,attr_x,attr_y,attr_z, m/s² at 50 Hz) and a `readMe` whose `> entries: N` lines
/// state each file's rows. An activity recorded in several sessions is an archive of archives
/// (`acc_climbingup_1_csv.zip`, ... one per entry, each with its own files and readMe). moca
/// reads the archives as they are (zip_archive.hpp; nothing is unpacked). ssl-wearables'
/// realworld_raw_preprocess.py and make_realworld.py: per session, the forearm's x, y, z cut to
/// the readMe's shortest entry count; five sessions name their files `acc_<activity>_2_<position>
/// .csv` (probands 4 and 13 walking, 6 and 7 sitting, 8 standing), as the script knows; a session
/// without a forearm file gives no window (the script's NaN); windows of 500 samples (10 s)
/// every 250 from the session's start, whole and without an empty cell; m/s² -> g (/ 9.81, the
/// script's); resized linearly to 300 samples (30 Hz, utils.resize). Classes in the activity
/// order above (also their sorted order), subjects named by proband number.
///
/// **Steps**, PAMAP2 and OPPORTUNITY (the scripts' content2x_and_y and clean_up_label):
///   1. per file, the three acceleration columns, timestamp and label; rows with NaN in any of
///      them dropped (counted; the rows around them are joined, as the scripts join them);
///   2. windows of W rows every W/2 over the file's first floor(R / W) * W rows (the scripts'
///      two grids, the second shifted by half a window), in start order;
///   3. a window with more than half of its rows labelled 0 is dropped; the others take the most
///      frequent label (ties: the smaller id, as scipy.stats.mode);
///   4. units to g, clipped to ±3 g; classes and subjects as above.
/// Windows keep the data's rate; open_dataset resamples them to the model's.
#include <cstdint>
#include <string>

#include "moca/data/windows.hpp"

namespace moca::data {

/// What a raw-set reader dropped, for the notes.
struct RawSetCounts {
  std::int64_t files = 0;
  std::int64_t rows = 0;
  std::int64_t nan_rows = 0;          ///< dropped for NaN in the kept columns
  std::int64_t null_windows = 0;      ///< more than half label 0 (transient / null)
  std::int64_t other_windows = 0;     ///< a label outside the set's classes
  std::int64_t excluded_windows = 0;  ///< of a subject the preparation leaves out
  std::string summary() const;        ///< one line for the notes
};

/// PAMAP2's rate and window rows.
inline constexpr double kPamap2RateHz = 100.0;
inline constexpr int kPamap2WindowRows = 1000;  ///< 10 s

/// The windows of the PAMAP2 folder `dir` (the download's root, `PAMAP2_Dataset/`, or the folder
/// holding `Protocol/`; rules above): 3 channels acc_x, acc_y, acc_z (g), L = 1000 at 100 Hz,
/// subjects named subject101 ... in id order, class names in activity-id order.
/// std::runtime_error for a folder without subject*.dat files; std::invalid_argument naming file
/// and line for a line that is not 54 numbers or an activity id that is not PAMAP2's.
Windows load_pamap2_windows(const std::string& dir, RawSetCounts* counts = nullptr);
/// Whether `dir` holds PAMAP2 ([PAMAP2_Dataset/]Protocol/subject1NN.dat).
bool is_pamap2_folder(const std::string& dir);

/// OPPORTUNITY's rate (its README) and ssl-wearables' window rows.
inline constexpr double kOpportunityRateHz = 30.0;
inline constexpr int kOpportunityWindowRows = 330;

/// The windows of the OPPORTUNITY folder `dir` (the download's root, `OpportunityUCIDataset/`, or
/// the folder holding `dataset/`): 3 channels acc_x, acc_y, acc_z (g), L = 330 at 30 Hz, subjects
/// S1 ... S4, classes stand, walk, lie, sit. Same errors as load_pamap2_windows (250 numbers).
Windows load_opportunity_windows(const std::string& dir, RawSetCounts* counts = nullptr);
/// Whether `dir` holds OPPORTUNITY ([OpportunityUCIDataset/]dataset/S<d>-*.dat).
bool is_opportunity_folder(const std::string& dir);

/// WISDM's grid and ssl-wearables' windows of it.
inline constexpr double kWisdmGridHz = 20.0;
inline constexpr int kWisdmWindowPoints = 200;  ///< 10 s on the grid
inline constexpr int kWisdmLength = 300;        ///< resized: 10 s at 30 Hz

/// The windows of the WISDM folder `dir` (the download's root, `wisdm-dataset/`, or the folder
/// holding `raw/`): 3 channels acc_x, acc_y, acc_z (g), L = 300 at 30 Hz, subjects named by their
/// ids, the 18 activity names in code order. `counts` gets the files and rows read, duplicate
/// time stamps (nan_rows), windows with a missing grid point (null_windows) and of left-out
/// subjects. std::runtime_error for a folder without data_*_accel_watch.txt files;
/// std::invalid_argument naming file and line for a line that is not `id,code,time,x,y,z;`.
Windows load_wisdm_windows(const std::string& dir, RawSetCounts* counts = nullptr);
/// Whether `dir` holds WISDM 2019 ([wisdm-dataset/]raw/watch/accel/data_*_accel_watch.txt).
bool is_wisdm_folder(const std::string& dir);

/// RealWorld's session windows and their resized length.
inline constexpr int kRealWorldWindowRows = 500;  ///< 10 s at 50 Hz
inline constexpr int kRealWorldLength = 300;      ///< resized: 10 s at 30 Hz

/// The windows of the RealWorld folder `dir` (the download's `realworld2016_dataset/`, or the
/// folder above it; rules above): 3 channels acc_x, acc_y, acc_z (g), L = 300 at 30 Hz. `counts`
/// gets the archives read (files), the forearm rows kept (rows), sessions without a forearm file
/// (null_windows) and windows dropped for an empty cell (nan_rows). std::runtime_error for a
/// folder without probandN/data or a proband without one of the 8 archives; std::invalid_argument
/// naming the archive (and entry, line) for a damaged archive, a missing readMe or a malformed
/// CSV.
Windows load_realworld_windows(const std::string& dir, RawSetCounts* counts = nullptr);
/// Whether `dir` holds RealWorld ([realworld2016_dataset/]probandN/data/acc_*_csv.zip).
bool is_realworld_folder(const std::string& dir);

}  // namespace moca::data
