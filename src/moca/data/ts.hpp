#pragma once
/// \file ts.hpp
/// The UEA/UCR time-series archive's `.ts` format (timeseriesclassification.com; the format
/// sktime's `load_from_tsfile_to_dataframe` and aeon's `load_from_tsfile` read).
///
/// **Header** (before `@data`; keys case-insensitive, `#` lines are comments): `@problemName
/// NAME`, `@timeStamps true|false`, `@missing true|false`, `@univariate true|false`,
/// `@dimensions D`, `@equalLength true|false`, `@seriesLength L`, `@classLabel true|false
/// [LABEL ...]`, `@targetLabel true|false`. A boolean other than true/false, a number that is
/// not a positive integer, `@classLabel true` without labels, or `@data` with a value is refused.
/// Other keys are kept out and named in a note. `@timeStamps true` (cases of `(t,value)` pairs)
/// and `@targetLabel true` (regression) are refused: moca reads classification cases.
///
/// **Cases**: one per line, the D dimensions separated by ':', values by ',', then the class
/// label (with `@classLabel true`). `?` (or NaN) is a missing value. Every case must have the
/// header's D (`@dimensions`, else the first case's; 1 with `@univariate true`), a declared
/// label, and within a case one length for every dimension. With `@equalLength true` (the
/// default) every case has one length, `@seriesLength`'s when stated; otherwise lengths may
/// differ and TsUnequal decides. A missing value with `@missing false` (the default) is refused;
/// with `@missing true` it is NaN, and DatasetOptions::drop_nonfinite decides (windows dropped
/// and counted, else refused naming the case). Every refusal names the file and line.
///
/// **Sources**: `ts:FILE.ts` is one file (no split); `ts:DIR` is the folder's NAME_TRAIN.ts and
/// NAME_TEST.ts pair (exactly one), read as the archive's own split (Windows::parts). The two
/// files must agree on D and the class labels (names in TRAIN's declared order). Channels are
/// named dim_0, dim_1, ... (sktime's names) unless DatasetOptions::channel_names names them;
/// the archive states no rate and no subjects.
#include <cstdint>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/data/windows.hpp"

namespace moca::data {

/// What to do with cases of different lengths (`@equalLength false`).
enum class TsUnequal {
  kError,     ///< refuse, naming the shortest and longest case
  kPad,       ///< repeat each case's last sample up to the longest case's length
  kTruncate,  ///< cut every case to the shortest case's length (its first samples)
};
inline constexpr EnumName<TsUnequal> kTsUnequalNames[] = {
    {TsUnequal::kError, "error"}, {TsUnequal::kPad, "pad"}, {TsUnequal::kTruncate, "truncate"}};

/// A `.ts` file's header.
struct TsHeader {
  std::string problem_name;
  /// The format's defaults; `univariate` is true only where the header states it.
  bool timestamps = false, missing = false, univariate = false, equal_length = true;
  bool class_label = false, target_label = false;
  int dimensions = 0;                     ///< 0 = not stated
  int series_length = 0;                  ///< 0 = not stated
  std::vector<std::string> class_values;  ///< declared labels, in order
};

/// One file's cases, as read (before the length rule).
struct TsCases {
  TsHeader header;
  int dimensions = 0;
  std::vector<std::vector<float>> values;  ///< per case: D x len row-major (dimension-major)
  std::vector<int> lengths;                ///< per case
  std::vector<int> labels;                 ///< per case: index in header.class_values, or -1
  std::vector<int> lines;                  ///< per case: its line number in the file
  std::vector<std::string> notes;          ///< header keys left out
};

/// Reads one `.ts` file (rules above). std::runtime_error if it cannot be opened;
/// std::invalid_argument naming `path:line` and the rule for anything else.
TsCases read_ts_cases(const std::string& path);

/// Whether `path` is a `.ts` file or a folder holding a NAME_TRAIN.ts / NAME_TEST.ts file.
bool is_ts_source(const std::string& path);

/// The windows of `path` (a file or a folder's pair; rules above) under `unequal`;
/// `drop_missing` drops cases with a missing value
/// (counted in `dropped`) instead of refusing them. Notes for what was left out or changed go
/// to `notes`. The sample rate is 0 (unknown); subjects are -1.
Windows read_ts(const std::string& path, TsUnequal unequal, bool drop_missing,
                std::vector<std::string>* notes = nullptr, std::int64_t* dropped = nullptr);

}  // namespace moca::data
