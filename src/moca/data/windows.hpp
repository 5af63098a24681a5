#pragma once
/// \file windows.hpp
/// The windowed data set every moca layer exchanges: n windows of C channels x L samples.
#include <Eigen/Core>
#include <string>
#include <vector>

namespace moca::data {

/// Row-major float matrix: one window per row, element (c, t) of window i at column c * L + t.
using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Class ids of the paper's 7-class UCI-HAR task.
enum class ActivityClass : int {
  kTransition = 0,
  kWalking = 1,
  kUpstairs = 2,
  kDownstairs = 3,
  kSitting = 4,
  kStanding = 5,
  kLaying = 6
};

/// A modality (sensor) group: MoCA's cross-modal policies mask and score across groups, e.g.
/// acc = channels 0-2, gyro = channels 3-5.
struct ModalityGroup {
  std::string name;           ///< e.g. "acc"
  std::vector<int> channels;  ///< channel indices, ascending, disjoint from other groups
  bool operator==(const ModalityGroup& o) const { return name == o.name && channels == o.channels; }
};

/// A windowed data set: X (n x C x L), labels, subject ids, and the metadata that says what the
/// numbers mean. Channel order is always stated in `channel_names` (never implied).
struct Windows {
  int channels = 0;                        ///< C (>= 1)
  int length = 0;                          ///< L samples per window (>= 1)
  double sample_rate_hz = 50.0;            ///< sampling rate of the windows
  std::vector<std::string> channel_names;  ///< C names, e.g. acc_x ... gyro_z
  std::vector<std::string> class_names;    ///< names of label ids 0..K-1 (may be empty)
  RowMatrixXf x;                           ///< n x (C * L), row i = window i, col c*L + t
  Eigen::VectorXi labels;                  ///< n class ids (-1 = unknown)
  Eigen::VectorXi subjects;                ///< n subject ids (-1 = unknown)
  /// Optional names of subject ids: id s is named subject_names[s] when 0 <= s < size (e.g. "f1"
  /// for the HMP volunteers, or string pids read from .npy). Empty: the ids are the names (e.g.
  /// HAPT user numbers 1..30).
  std::vector<std::string> subject_names;
  std::string description;  ///< where the windows came from (for JSON output)
  /// Modality groups (disjoint, in channel order); empty = not stated (callers then treat the
  /// two channel halves as the modalities, the pre-dataset behaviour).
  std::vector<ModalityGroup> modalities;
  /// The data's own split into a training and a test part (a `.ts` archive set's TRAIN and TEST
  /// files, a .npy folder's split.npy): empty = none stated; else n entries, kTrainPart or
  /// kTestPart. `subset` carries it; the `predefined` split kind and protocol read it.
  Eigen::VectorXi parts;
  static constexpr int kTrainPart = 0;
  static constexpr int kTestPart = 1;

  /// The channel lists of `modalities` (empty when none are stated).
  std::vector<std::vector<int>> modality_channels() const;

  /// Number of windows n.
  int size() const { return static_cast<int>(x.rows()); }
  /// Window i as a C x L row-major map (no copy).
  Eigen::Map<const RowMatrixXf> window(int i) const {
    return Eigen::Map<const RowMatrixXf>(x.row(i).data(), channels, length);
  }
  /// Mutable window i as a C x L row-major map.
  Eigen::Map<RowMatrixXf> window(int i) {
    return Eigen::Map<RowMatrixXf>(x.row(i).data(), channels, length);
  }
  /// The windows with the given row indices (labels and subjects follow), same metadata.
  Windows subset(const std::vector<int>& rows) const;
  /// Throws std::invalid_argument if shapes disagree (x cols != C*L, labels/subjects length
  /// != n, channel_names size != C, parts neither empty nor n entries of 0/1) or if x holds
  /// NaN/Inf; `what` names the caller.
  void validate(const std::string& what) const;
};

/// A fingerprint of the numbers of a data set: 64-bit FNV-1a over C, L, every sample of x (its
/// float32 bytes, row-major), the labels and the subject ids, as 16 hex digits. Equal data give
/// equal fingerprints whatever their source or path; a changed sample, label or subject, or a
/// reordering of the windows, changes it (with chance 1 - 2^-64 for an accidental change; not a
/// cryptographic hash). Checkpoints record their training data's, and --resume compares them.
std::string fingerprint(const Windows& w);

}  // namespace moca::data
