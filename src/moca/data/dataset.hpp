#pragma once
/// \file dataset.hpp
/// The one entry point every program uses to get windows: open_dataset(spec, options).
///
/// **Spec** (`--data`): `hapt:DIR` (UCI HAPT raw recordings), `hmp:DIR` (UCI ADL / HMP wrist
/// accelerometer), `npy:DIR` (an ssl-wearables folder: X.npy, Y.npy or y.npy, pid.npy,
/// meta.json; see npy_windows.hpp), `generator[:windows=N,coupling=C,noise=S,subjects=K,seed=S]`
/// (the built-in synthetic IMU generator), `ucihar:DIR` (UCI-HAR's Inertial Signals; ucihar.hpp),
/// `pamap2:DIR`, `opportunity:DIR`, `wisdm:DIR`, `realworld:DIR` (PAMAP2, OPPORTUNITY, WISDM
/// 2019, RealWorld as downloaded, ssl-wearables' windows; raw_sets.hpp), `ts:FILE.ts` or `ts:DIR`
/// (the UEA/UCR archive's format, a folder's NAME_TRAIN.ts/NAME_TEST.ts pair as its own split;
/// ts.hpp), or a bare DIR whose format is detected from its contents: X.npy -> npy; RawData/ or
/// labels.txt with acc_exp*_user*.txt[.gz] -> hapt; [UCI HAR Dataset/]train/ or test/ with Inertial
/// Signals/
/// -> ucihar; HMP_Dataset/ or activity folders of Accelerometer-*.txt -> hmp;
/// [PAMAP2_Dataset/]Protocol/subject1NN.dat -> pamap2; [OpportunityUCIDataset/]dataset/S1-ADL1.dat
/// -> opportunity; [wisdm-dataset/]raw/watch/accel/data_*_accel_watch.txt -> wisdm;
/// [realworld2016_dataset/]probandN/data/acc_*_csv.zip -> realworld; a .ts file, or
/// a folder with NAME_TRAIN.ts or NAME_TEST.ts -> ts. `--data-format` forces one.
/// An empty spec is $MOCA_HAPT_DIR (as hapt) when set and allowed, else the generator. The
/// resolved spec prints back (DataSpec::to_string) and parses to the same data.
///
/// **Modality groups**: `--modalities acc=0-2,gyro=3-5` (ranges and '+' lists, any number of
/// groups) overrides meta.json's "modalities"; channels that no group names are dropped (so
/// `acc=0-2` on HAPT is "acc only"). Without either, channels named prefix_suffix (acc_x, ...)
/// are grouped by prefix, otherwise all channels form one group.
///
/// **Rate and length**: the input's rate is `--sample-rate`, else meta.json's, else the format's
/// own (HAPT 50 Hz; HMP is resampled by its reader), else (a .npy folder that states none) the
/// model's rate, with a note. Windows at another rate are resampled band-limited to the model's
/// rate, then cropped (centre) or edge-padded to the model's L (resample.hpp), with a note.
///
/// **Order of the steps**: read -> modality groups -> class selection (`keep_classes`) ->
/// resampling -> crop/pad -> validation. Every step that changes the data adds a note.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"
#include "moca/data/npy_windows.hpp"
#include "moca/data/synthetic.hpp"
#include "moca/data/ts.hpp"
#include "moca/data/ucihar.hpp"
#include "moca/data/windows.hpp"

namespace moca::data {

/// The kinds of sources.
enum class DataFormat {
  kAuto,  ///< detect a folder's format from its contents (an option only; never a parsed spec's)
  kHapt,
  kHmp,
  kNpy,
  kGenerator,
  kUciHar,       ///< UCI-HAR's Inertial Signals (ucihar.hpp)
  kPamap2,       ///< PAMAP2 as downloaded (raw_sets.hpp)
  kOpportunity,  ///< OPPORTUNITY as downloaded (raw_sets.hpp)
  kWisdm,        ///< WISDM 2019 as downloaded (raw_sets.hpp)
  kRealWorld,    ///< RealWorld (HAR) as downloaded (raw_sets.hpp)
  kTs            ///< the UEA/UCR archive's .ts files (ts.hpp)
};
// clang-format off
/// The names of the formats (`--data-format`, spec prefixes, results); "adl" is hmp.
inline constexpr EnumName<DataFormat> kDataFormatNames[] = {
    {DataFormat::kAuto,      "auto"},
    {DataFormat::kHapt,      "hapt"},
    {DataFormat::kHmp,       "hmp"},
    {DataFormat::kHmp,       "adl"},
    {DataFormat::kNpy,       "npy"},
    {DataFormat::kGenerator, "generator"},
    {DataFormat::kUciHar,    "ucihar"},
    {DataFormat::kUciHar,    "uci-har"},
    {DataFormat::kPamap2,    "pamap2"},
    {DataFormat::kOpportunity, "opportunity"},
    {DataFormat::kOpportunity, "oppo"},
    {DataFormat::kWisdm,     "wisdm"},
    {DataFormat::kRealWorld, "realworld"},
    {DataFormat::kTs,        "ts"}};
// clang-format on
/// "auto", "hapt", "hmp", "npy", "generator", "ucihar", "pamap2", "opportunity", "wisdm",
/// "realworld", "ts".
std::string to_string(DataFormat format);
/// JSON as the name (settings records), read back by name.
void to_json(nlohmann::json& j, DataFormat format);
void from_json(const nlohmann::json& j, DataFormat& format);

/// A parsed data spec.
struct DataSpec {
  DataFormat format = DataFormat::kGenerator;
  std::string path;  ///< the folder (a .ts file for ts; empty for the generator)
  /// Generator keys as given (windows, coupling, noise, subjects, seed).
  std::vector<std::pair<std::string, std::string>> params;
  /// `hapt:DIR`, `generator:windows=...` etc.
  std::string to_string() const;
};

/// The format of the folder `dir` by its contents (rule above; a file: a .ts file).
/// std::runtime_error if nothing is there; std::invalid_argument naming what was looked for if
/// nothing matches.
DataFormat detect_format(const std::string& dir);

/// Parses a spec (rule above); `format` is kAuto or a format that overrides a bare folder's
/// detection (and must agree with an explicit prefix). std::invalid_argument for an unknown
/// prefix or generator key.
DataSpec parse_data_spec(const std::string& text, DataFormat format = DataFormat::kAuto);

/// Parses `acc=0-2,gyro=3-5` (also `a=0+2+4`, `b=1`) for `channels` channels. A channel may also
/// be given by its name in `names` (the data's channel names; a name is looked up before the text
/// is read as an index or range): `acc=ax+ay+az,gyro=gx+gy+gz`, or with ';' between groups and ','
/// within them, `acc=ax,ay,az;gyro=gx,gy,gz`. std::invalid_argument for a malformed item, an empty
/// or repeated name, a channel out of [0, channels) or in two groups, or (with `names`) a token
/// that is neither a channel name nor an index.
std::vector<ModalityGroup> parse_modalities(const std::string& text, int channels,
                                            const std::vector<std::string>& names = {});
/// Groups from channel names `prefix_suffix` by prefix (acc_x, acc_y, gyro_x -> acc=0-1,
/// gyro=2); one group `all` of every channel when a name has no such prefix.
std::vector<ModalityGroup> groups_from_names(const std::vector<std::string>& names);
/// Canonical text of groups (`acc=0-2,gyro=3-5`), parsed back by parse_modalities().
std::string format_modalities(const std::vector<ModalityGroup>& groups);

/// Options of open_dataset (the shared `--data-*` flags, plus what the program fixes).
struct DatasetOptions {
  /// --data-format: auto | hapt | hmp | npy | ucihar | pamap2 | opportunity | wisdm |
  /// realworld | ts
  DataFormat format = DataFormat::kAuto;
  std::string modalities;        ///< --modalities: e.g. acc=0-2,gyro=3-5 (empty: meta.json/names)
  double sample_rate_hz = 0.0;   ///< --sample-rate: the input's rate (0 = meta.json / format's)
  double target_rate_hz = 50.0;  ///< the model's rate
  int length = 200;              ///< the model's L (>= 2)
  bool drop_nonfinite = false;   ///< --drop-nonfinite: drop windows with NaN/Inf instead of failing
  /// --keep-classes: comma-separated class names to keep, relabelled 0.. in this order (empty =
  /// all).
  std::string keep_classes;
  NpyLayout npy_layout = NpyLayout::kAuto;  ///< --npy-layout: auto | NCL | NLC
  /// --labels: a .npy folder's labels file instead of Y.npy (e.g. Y_walmsley.npy;
  /// NpyReadOptions::labels). Empty: Y.npy, else y.npy.
  std::string labels;
  /// --hapt-windowing: raw (windows inside every labelled stretch, windowing.hpp) | uci-har (the
  /// authors' per-subject UCI-HAR-style streams cut at 17,600 samples, ucihar.hpp). HAPT only.
  HaptWindowing hapt_windowing = HaptWindowing::kRaw;
  /// --channel-names: the input's C channel names in order (any source; distinct; before
  /// --modalities selects). Empty: the source's (meta.json's for .npy); a .npy folder without
  /// names gets them from its modality groups (group acc of 3 channels: acc_x, acc_y, acc_z,
  /// otherwise acc_0, acc_1, ...), else ch0, ch1, ...
  std::vector<std::string> channel_names;
  /// --segment SECONDS[:STRIDE]: cut each window into sub-windows of SECONDS every STRIDE
  /// seconds (default SECONDS) at the input's rate, before resampling to the model's; each keeps
  /// the window's label and subject; samples after the last whole sub-window are dropped. Empty
  /// = whole windows.
  std::string segment;
  /// --ts-unequal: .ts cases of different lengths are refused (error), padded with their last
  /// sample to the longest (pad) or cut to the shortest (truncate).
  TsUnequal ts_unequal = TsUnequal::kError;
  bool use_env = true;  ///< an empty spec reads $MOCA_HAPT_DIR when set
  /// Keep a .npy folder's windows at their own rate and length (no resampling, cropping or
  /// padding; an unknown rate stays the model's rate). The Python package's default: NumPy users
  /// see the windows as stored. Other sources are cut at the model's rate and length as always.
  bool keep_rate_and_length = false;
  /// Generator defaults; the spec's keys override windows, coupling, noise, subjects and seed;
  /// length and rate are the model's.
  SyntheticOptions generator;
  bool hmp_include_model_folders = false;  ///< HMP: also the *_MODEL folders
  /// Throws std::invalid_argument naming the option (`DatasetOptions::sample_rate`; the programs
  /// print its flag, Python its keyword), its value and the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp); the rest are the program's. Two keys are the
  /// Python keywords, not the fields' names: data_format (format), sample_rate (sample_rate_hz).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* kOwner = "DatasetOptions";
    v(o.format,
      Option{kOwner, "data_format", "--data-format",
             "force the format of --data DIR: hapt | hmp | npy | ucihar | pamap2 | opportunity | "
             "wisdm | realworld | ts"},
      kDataFormatNames);
    v(o.modalities,
      Option{kOwner, "modalities", "--modalities",
             "modality groups by channel index or name, e.g. acc=0-2,gyro=3-5 or "
             "acc=ax,ay,az;gyro=gx,gy,gz (channels not named are dropped; default: meta.json, "
             "else by channel-name prefix)"});
    v(o.sample_rate_hz,
      Option{kOwner, "sample_rate", "--sample-rate",
             ".npy or .ts input rate in Hz (0 = meta.json's sample_rate); resampled to the "
             "model's rate",
             Range::at_least(0)});
    v(o.drop_nonfinite,
      Option{kOwner, "drop_nonfinite", "--drop-nonfinite",
             "drop windows holding NaN/Inf, or a .ts case's missing values (and say how many) "
             "instead of failing"});
    v(o.keep_classes,
      Option{kOwner, "keep_classes", "--keep-classes",
             "keep only these classes, comma-separated names, relabelled in that order"});
    v(o.channel_names,
      Option{kOwner, "channel_names", "--channel-names",
             "the input's channel names in order, comma-separated (default: meta.json's; a .npy "
             "folder without names is named from its modality groups: acc_x, acc_y, ...)"});
    v(o.segment, Option{kOwner, "segment", "--segment",
                        "SECONDS[:STRIDE]: cut each window into sub-windows (label and subject "
                        "kept; samples after the last whole one dropped), e.g. 5 for 10-s "
                        "windows -> two"});
    v(o.npy_layout,
      Option{kOwner, "npy_layout", "--npy-layout", "X.npy axis order: auto | NCL | NLC"},
      kNpyLayoutNames);
    v(o.labels, Option{kOwner, "labels", "--labels",
                       ".npy folder: the labels file instead of Y.npy, e.g. Y_walmsley.npy (a "
                       "name in the folder, or a path)"});
    v(o.hapt_windowing,
      Option{kOwner, "hapt_windowing", "--hapt-windowing",
             "HAPT windows: raw (every labelled stretch) | uci-har (the authors' data: activities "
             "1-6 stitched per subject in UCI-HAR's order, filtered, first 17600 samples, 88 "
             "windows per subject)"},
      kHaptWindowingNames);
    v(o.ts_unequal,
      Option{kOwner, "ts_unequal", "--ts-unequal",
             ".ts cases of different lengths: error | pad (repeat each case's last sample to "
             "the longest) | truncate (cut every case to the shortest)"},
      kTsUnequalNames);
  }
};

/// Windows as a program sees them, with where they came from and what was done to them.
struct Dataset {
  Windows windows;
  DataSpec spec;                       ///< resolved (generator keys filled in)
  std::string origin;                  ///< "given", "$MOCA_HAPT_DIR" or "default"
  double source_rate_hz = 0.0;         ///< the input's rate (0 = unknown)
  int source_length = 0;               ///< the input's window length
  int source_channels = 0;             ///< the input's channel count
  std::int64_t dropped_nonfinite = 0;  ///< windows dropped for NaN/Inf (--drop-nonfinite)
  std::vector<std::string> notes;      ///< every step that changed the data, readable
  /// One line: "built-in synthetic IMU generator (SPEC)" or "SPEC (from ORIGIN)", then N windows,
  /// C x L at R Hz, the modality groups, classes and subjects.
  std::string summary() const;
  /// JSON description for results files (spec, format, sizes, groups, classes, notes).
  nlohmann::json to_json() const;
};

/// One row of the data-format registry (format_registry() below):
/// everything the toolkit asks of a format. Behaviour is asked of the row, never of a format's
/// name; adding a format is its reader (in its own file) plus one row.
struct FormatEntry {
  DataFormat format;  ///< its name is kDataFormatNames' (--data-format, FORMAT:DIR, results)
  /// Whether the folder `dir` holds this format (null: never detected; the generator).
  /// Detection asks the rows in registry order.
  bool (*detect)(const std::string& dir);
  const char* looks_for;  ///< what detect() looks for, for messages
  /// The windows as the reader gives them (before rate, modality and length fixes); may add
  /// notes to `d`.
  Windows (*read)(Dataset& d, const DatasetOptions& o);
  const char* env;  ///< the environment variable that names its folder, or null
  /// An empty --data reads this format's folder from `env` when it is set (hapt), else the
  /// generator.
  bool default_source;
  /// Windows stored as given (a .npy folder, .ts files): the rate is the data's own
  /// (--sample-rate may state it), unnamed channels are named from their groups,
  /// keep_rate_and_length applies.
  bool windows_as_given;
  /// Cut from continuous recordings: kcca_score and the studies score Algorithm-1 synthetic
  /// transitions of its training split by default (HAPT, as the paper does).
  bool transitions_by_default;
  /// The key under which the studies' results record its window count (kept for readers of
  /// older results), or null.
  const char* study_windows_key;
  /// The options only this format (and others that list them) reads, as `Owner::key` fields of
  /// the data option schemas, comma-separated: with data of a format that does not list them
  /// they take no effect (unused_options in selection.hpp).
  const char* own_options;
};

/// Each format's detection and reader, defined in its own file (hapt.cpp, hmp.cpp,
/// npy_windows.cpp; the generator's in dataset.cpp beside the spec grammar).
bool is_npy_folder(const std::string& dir);
Windows open_npy_source(Dataset& d, const DatasetOptions& o);
bool is_hapt_folder(const std::string& dir);
Windows open_hapt_source(Dataset& d, const DatasetOptions& o);
/// HAPT under DatasetOptions::hapt_windowing uci-har (ucihar.cpp; open_hapt_source calls it).
Windows open_hapt_uci_har(Dataset& d, const DatasetOptions& o);
bool is_ucihar_folder(const std::string& dir);
Windows open_ucihar_source(Dataset& d, const DatasetOptions& o);
bool is_hmp_folder(const std::string& dir);
Windows open_hmp_source(Dataset& d, const DatasetOptions& o);
bool is_pamap2_folder(const std::string& dir);
Windows open_pamap2_source(Dataset& d, const DatasetOptions& o);
bool is_opportunity_folder(const std::string& dir);
Windows open_opportunity_source(Dataset& d, const DatasetOptions& o);
bool is_wisdm_folder(const std::string& dir);
Windows open_wisdm_source(Dataset& d, const DatasetOptions& o);
bool is_realworld_folder(const std::string& dir);
Windows open_realworld_source(Dataset& d, const DatasetOptions& o);
Windows open_ts_source(Dataset& d, const DatasetOptions& o);
Windows open_generator_source(Dataset& d, const DatasetOptions& o);

/// The registry, in detection order: a format is its reader (in its own file) plus its
/// DataFormat value and name (above) and one row here.
// clang-format off
inline const std::vector<FormatEntry>& format_registry() {
  //  format                 detect          looks for                    reader
  //                          env              default  as given  transitions  study key
  //                          own options
  static const std::vector<FormatEntry> rows = {
      {DataFormat::kNpy,       is_npy_folder,  "X.npy",                     open_npy_source,
                               nullptr,         false,   true,     false,       nullptr,
                               "DatasetOptions::sample_rate,DatasetOptions::npy_layout,"
                               "DatasetOptions::labels"},
      {DataFormat::kHapt,      is_hapt_folder, "RawData/ or labels.txt",    open_hapt_source,
                               "MOCA_HAPT_DIR", true,    false,    true,        "hapt_windows",
                               "DatasetOptions::hapt_windowing"},
      {DataFormat::kUciHar,    is_ucihar_folder, "[UCI HAR Dataset/]train/ or test/ with Inertial "
                               "Signals/",                                  open_ucihar_source,
                               nullptr,         false,   false,    true,        nullptr,
                               ""},
      {DataFormat::kHmp,       is_hmp_folder,  "HMP_Dataset/ or folders of Accelerometer-*.txt",
                                                                            open_hmp_source,
                               "MOCA_HMP_DIR",  false,   false,    false,       nullptr,
                               ""},
      {DataFormat::kPamap2,    is_pamap2_folder, "[PAMAP2_Dataset/]Protocol/subject1NN.dat",
                                                                            open_pamap2_source,
                               nullptr,         false,   false,    false,       nullptr,
                               ""},
      {DataFormat::kOpportunity, is_opportunity_folder, "[OpportunityUCIDataset/]dataset/S<n>-*.dat",
                                                                            open_opportunity_source,
                               nullptr,         false,   false,    false,       nullptr,
                               ""},
      {DataFormat::kWisdm,     is_wisdm_folder, "[wisdm-dataset/]raw/watch/accel/data_*_accel_watch.txt",
                                                                            open_wisdm_source,
                               nullptr,         false,   false,    false,       nullptr,
                               ""},
      {DataFormat::kRealWorld, is_realworld_folder, "[realworld2016_dataset/]probandN/data/acc_*_csv.zip",
                                                                            open_realworld_source,
                               nullptr,         false,   false,    false,       nullptr,
                               ""},
      {DataFormat::kTs,        is_ts_source,   "a .ts file, or NAME_TRAIN.ts / NAME_TEST.ts",
                                                                            open_ts_source,
                               nullptr,         false,   true,     false,       nullptr,
                               "DatasetOptions::sample_rate,DatasetOptions::ts_unequal"},
      {DataFormat::kGenerator, nullptr,        "",                          open_generator_source,
                               nullptr,         false,   false,    false,       nullptr,
                               "DataOptions::synthetic_windows,DataOptions::coupling,"
                               "DataOptions::synthetic_seed"}};
  return rows;
}
// clang-format on

/// The row of `format` (kAuto has none: std::logic_error).
const FormatEntry& format_entry(DataFormat format);

/// The folder that `format`'s environment variable names ($MOCA_HAPT_DIR, $MOCA_HMP_DIR), or ""
/// when it has none or it is unset. The one place the data environment variables are read.
std::string folder_from_environment(DataFormat format);

/// The spec an empty `--data` stands for: FORMAT:$VAR for the default_source row when `use_env`
/// and its variable is set, else "generator".
std::string default_data_spec(bool use_env = true);

/// Opens `spec` with `options` (rules above). std::invalid_argument for bad specs, options or
/// data (naming the file and the rule); std::runtime_error for missing files or I/O failures.
Dataset open_dataset(const std::string& spec, const DatasetOptions& options = {});

/// Windows per class id (names) and per subject, readable: what `moca data inspect` prints after
/// the summary. `nonfinite_windows` is reported as the count of windows with NaN/Inf.
std::string describe_dataset(const Dataset& d);

/// Writes windows as an ssl-wearables folder (created if missing): X.npy float32 N x C x L,
/// Y.npy class names as strings when every label has one (else int64 ids), pid.npy int64 ids,
/// meta.json with modalities, sample_rate, channel/class/subject names. Reading the folder back
/// with open_dataset (at the same rate and length) gives the same windows bit for bit.
void export_dataset(const Windows& windows, const std::string& dir);

/// Settles the modality groups of `w` as `--data` does for every source: `modalities` (the
/// --modalities text, parse_modalities(); the channels it does not name are dropped), else the
/// groups `w` already states, else groups from its channel names (the prefix before the last
/// '_': acc_x, acc_y -> acc; if any name has none, one group "all"). Returns the notes --data
/// records. The programs' open_dataset() and Python's moca.score call it; std::invalid_argument
/// for bad `modalities` text.
std::vector<std::string> settle_modalities(Windows& w, const std::string& modalities);

/// The modality groups of `w` as channel lists; groups must number >= 2 for `what` (a policy or
/// score that works across modalities): std::invalid_argument naming `what` and the groups
/// otherwise.
std::vector<std::vector<int>> require_modalities(const Windows& w, const std::string& what);

}  // namespace moca::data
