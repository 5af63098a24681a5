#pragma once
/// \file npy_windows.hpp
/// Windowed arrays in NumPy .npy files, in the layout of the ssl-wearables benchmark
/// (OxWearables/ssl-wearables; upstream spec §5): a folder with
///   X.npy    windows, N x C x L ("NCL", channels first) or N x L x C ("NLC", channels last),
///            little-endian float32 or float64, C order (other dtypes, Fortran order, object
///            arrays and ranks other than 3 are rejected, naming what was found);
///   Y.npy    (or y.npy) labels, N integers (class ids, -1 = unknown) or N strings ('<U..' /
///            '|S..') mapped to class ids;
///   pid.npy  subject ids, N integers or N strings mapped to ids;
///   split.npy (optional) the data's own split (Windows::parts): N strings 'train'/'test' (or
///            integers 0/1), as a .ts archive set's TRAIN and TEST files give it;
///   meta.json (optional) modalities ({"acc": [0, 1, 2], "gyro": [3, 4, 5]}), sample_rate (or
///            sample_rate_hz), channel_names, class_names, subject_names, layout, description.
/// Y.npy and pid.npy are optional (labels / subjects -1 when absent).
///
/// **Layout rule for kAuto**: meta.json's "layout" when present; otherwise the smaller of the two
/// trailing axes is the channel axis (N x 300 x 3 is NLC, N x 6 x 200 is NCL); equal axes are NCL.
/// **String labels**: class ids follow meta.json's class_names when they name every label,
/// otherwise the sorted distinct strings (byte order) get ids 0..K-1 and become class_names. The
/// same rule maps string subject ids to 0..S-1 with Windows::subject_names.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/data/windows.hpp"

namespace moca::data {

/// Axis order of X.npy.
enum class NpyLayout {
  kAuto,           ///< reading only: decide by the rule above
  kChannelsFirst,  ///< N x C x L ("NCL"; moca's own order)
  kChannelsLast    ///< N x L x C ("NLC"; ssl-wearables)
};

// clang-format off
/// The names of the layouts (`--npy-layout`, meta.json's "layout"); lower case accepted.
inline constexpr EnumName<NpyLayout> kNpyLayoutNames[] = {
    {NpyLayout::kAuto,          "auto"},
    {NpyLayout::kChannelsFirst, "NCL"},
    {NpyLayout::kChannelsLast,  "NLC"},
    {NpyLayout::kChannelsFirst, "ncl"},
    {NpyLayout::kChannelsLast,  "nlc"}};
// clang-format on

/// "auto", "NCL" or "NLC".
std::string to_string(NpyLayout layout);
/// JSON as the name (settings records), read back by name.
void to_json(nlohmann::json& j, NpyLayout layout);
void from_json(const nlohmann::json& j, NpyLayout& layout);

/// Options of read_windows_npy.
struct NpyReadOptions {
  NpyLayout layout = NpyLayout::kAuto;     ///< axis order of X (kAuto: rule above)
  double sample_rate_hz = 0.0;             ///< > 0 overrides; 0 = meta.json's, else 0 (unknown)
  std::vector<std::string> channel_names;  ///< C names; empty = meta.json's, else ch0..ch{C-1}
  /// Windows with a NaN/Inf value are dropped (counted in the description) instead of rejected.
  bool drop_nonfinite = false;
  /// The labels file instead of Y.npy / y.npy: a name in the folder (`Y_walmsley.npy`, as
  /// prepared sets name one file per label scheme) or a path (absolute, or relative to the
  /// working folder when no such file is in the folder). Empty: Y.npy, else y.npy; without
  /// either, a folder holding Y_<scheme>.npy files says so in a warning (no scheme is chosen
  /// for the user).
  std::string labels;
  /// Throws std::invalid_argument for a negative or non-finite sample rate.
  void validate() const;
};

/// Options of write_windows_npy.
struct NpyWriteOptions {
  NpyLayout layout = NpyLayout::kChannelsFirst;  ///< kChannelsFirst or kChannelsLast (not kAuto)
  bool float64 = false;                          ///< X as '<f8' instead of '<f4'
  bool labels_as_strings = false;  ///< Y.npy as '<U..' class names (ssl-wearables style) instead
                                   ///< of int64 ids; needs a class name for every label
  /// Throws std::invalid_argument for layout kAuto.
  void validate() const;
};

/// Reads a folder: X.npy (required), Y.npy or y.npy (or NpyReadOptions::labels), pid.npy,
/// meta.json (optional). A labels file that does not exist is std::invalid_argument naming it
/// (as DatasetOptions::labels, the programs' --labels) and the folder's Y*.npy files.
/// Throws std::runtime_error if X.npy is missing and std::invalid_argument (naming the file) for a
/// malformed .npy, a wrong rank or dtype, Fortran order, non-finite values (their count and the
/// first one's window, channel and sample; unless drop_nonfinite), modalities out of range or
/// overlapping, non-integer numeric labels or subject ids,
/// labels / subjects whose length is not N, or channel_names of the wrong size.
/// `dropped_windows` (if not null) receives the number of windows dropped for non-finite values;
/// `warnings` (if not null) one line per meta.json key this reader does not know (ignored), with
/// the nearest known key (e.g. `classes` -> `class_names`).
Windows read_windows_npy(const std::string& dir, const NpyReadOptions& options = {},
                         std::int64_t* dropped_windows = nullptr,
                         std::vector<std::string>* warnings = nullptr);

/// The meta.json keys read_windows_npy knows (read, or written by write_windows_npy).
const std::vector<std::string>& npy_meta_keys();

/// Reads explicit files: `x_path` required, `y_path` / `pid_path` may be "" (absent). No
/// meta.json is consulted. Same errors as above.
Windows read_windows_npy_files(const std::string& x_path, const std::string& y_path,
                               const std::string& pid_path, const NpyReadOptions& options = {});

/// Writes X.npy, Y.npy (int64 ids or strings), pid.npy (int64), split.npy (strings 'train' and
/// 'test', when the windows state their own split) and meta.json into the existing
/// folder `dir`, each atomically. std::invalid_argument for invalid windows or options (e.g. a
/// label without a class name when labels_as_strings); std::runtime_error on I/O failure.
void write_windows_npy(const Windows& windows, const std::string& dir,
                       const NpyWriteOptions& options = {});

/// What write_windows_npy writes beside X.npy, for an X.npy written otherwise (streamed, with
/// write_npy_rows: `windows.x` is not read, and `windows.labels`/`subjects` give N): Y.npy,
/// pid.npy and meta.json, with the keys of `extra` (an object) added to meta.json; an extra key
/// must be one of npy_meta_keys() (std::logic_error otherwise). Same errors as write_windows_npy.
void write_windows_npy_meta(const Windows& windows, const std::string& dir,
                            const NpyWriteOptions& options = {},
                            const nlohmann::json& extra = nlohmann::json::object());

}  // namespace moca::data
