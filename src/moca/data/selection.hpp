#pragma once
/// \file selection.hpp
/// The one data-selection step of the programs that train or evaluate on one data set: which
/// windows (a data spec and the `--data-*` options, the generator's size and seed when no data is
/// named), at which length and rate (the command's, or a checkpoint's), and how they are split
/// into a training and a test part (a seeded random split, subject-wise k folds, or all windows
/// on both sides).
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/mapped_npy.hpp"
#include "moca/data/window_source.hpp"
#include "moca/data/windows.hpp"

namespace moca::data {

/// How the selected windows are split into a training and a test part.
enum class SplitKind {
  kRandom,        ///< a seeded window-level split (train_fraction, split_seed; upstream's 7:3)
  kSubjectKfold,  ///< fold `fold` of `folds` subject-wise folds is the test part (split_seed)
  kAll,           ///< training and test part are every window
  kPredefined,    ///< the data's own split (Windows::parts: a .ts pair's TRAIN and TEST files)
};
inline constexpr EnumName<SplitKind> kSplitKindNames[] = {
    {SplitKind::kRandom, "random"},
    {SplitKind::kSubjectKfold, "subject-kfold"},
    {SplitKind::kAll, "all"},
    {SplitKind::kPredefined, "predefined"}};
inline std::string to_string(SplitKind k) {
  return enum_name(kSplitKindNames, k);
}

/// Which programs take a row of DataOptions::schema.
inline constexpr Scope kDataSourceScope = 1u << 0;  ///< --data and its --data-* options
inline constexpr Scope kGeneratorScope = 1u << 1;   ///< --coupling
inline constexpr Scope kCommandDataScope = 1u
                                           << 2;   ///< moca's: window length, generator size, seed
inline constexpr Scope kSplitSeedScope = 1u << 3;  ///< --split-seed
inline constexpr Scope kSplitScope = 1u << 4;      ///< --split, --train-fraction, --folds, --fold
inline constexpr Scope kStreamScope = 1u << 5;     ///< --stream (the commands that stream)
/// The rows of moca's data commands (with `split`: those that split the windows themselves).
inline constexpr Scope command_data_scope(bool split) {
  return kDataSourceScope | kGeneratorScope | kCommandDataScope |
         (split ? kSplitSeedScope | kSplitScope : 0u);
}

/// What to select and how to split it.
struct DataOptions {
  /// Data spec (open_dataset): hapt:DIR, hmp:DIR, npy:DIR, generator[:...] or a folder; empty =
  /// $MOCA_HAPT_DIR if set (open_dataset reads it), else the built-in generator.
  std::string data;
  /// The --data-* options (format, modalities, input rate, non-finite, classes, layout). Length
  /// and rate are set by select(): the window length at 50 Hz, or a checkpoint's.
  DatasetOptions dataset;
  int window_length = 200;           ///< L samples (4 s at 50 Hz) when no checkpoint fixes it
  int synthetic_windows = 2640;      ///< generator: windows (upstream's HAPT count)
  double coupling = 0.8;             ///< generator: cross-modal coupling in [0, 1]
  std::uint64_t synthetic_seed = 0;  ///< generator seed
  SplitKind split = SplitKind::kRandom;
  double train_fraction = 0.7;      ///< kRandom
  std::uint64_t split_seed = 1004;  ///< kRandom (upstream 1004) and the subject folds
  int folds = 5;                    ///< kSubjectKfold: k
  int fold = 0;                     ///< kSubjectKfold: the test fold, in [0, folds)
  /// Read a .npy folder from disk through memory maps, a batch at a time (mapped_npy.hpp), and
  /// split it without reading a window (select_stream); a sharded folder (X_000.npy, ...) is
  /// always read so.
  bool stream = false;
  /// Throws std::invalid_argument naming the option (`DataOptions::coupling`), its value and the
  /// rule.
  void validate() const;

  /// The options, DatasetOptions' among them (option_schema.hpp; scopes above).
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* kOwner = "DataOptions";
    v(o.data, Option{kOwner, "data", "--data",
                     "data: hapt:DIR | hmp:DIR | npy:DIR | generator[:coupling=0.8,windows=N,...] "
                     "| DIR (format detected); default $MOCA_HAPT_DIR, else the generator",
                     Range::any(), kDataSourceScope, nullptr, Surface::kCommandLine});
    DatasetOptions::schema(o.dataset, v);
    v(o.window_length, Option{kOwner, "window_length", "--window-length",
                              "samples per window at 50 Hz (a checkpoint's own length wins)",
                              Range::at_least(2), kCommandDataScope});
    v(o.synthetic_windows, Option{kOwner, "synthetic_windows", "--synthetic-windows",
                                  "generator: windows", Range::at_least(2), kCommandDataScope});
    v(o.coupling, Option{kOwner, "coupling", "--coupling", "generator: cross-modal coupling",
                         Range::between(0, 1), kGeneratorScope});
    v(o.synthetic_seed, Option{kOwner, "synthetic_seed", "--synthetic-seed", "generator: seed",
                               Range::any(), kCommandDataScope});
    v(o.split,
      Option{kOwner, "split", "--split", "how the windows are split into training and test",
             Range::any(), kSplitScope},
      kSplitKindNames);
    v(o.split_seed, Option{kOwner, "split_seed", "--split-seed",
                           "seed of the split (the random 7:3 split, the subject folds)",
                           Range::any(), kSplitSeedScope});
    v(o.train_fraction,
      Option{kOwner, "train_fraction", "--train-fraction", "random split: training fraction",
             Range::between(0, 1, true, true), kSplitScope});
    v(o.folds,
      Option{kOwner, "folds", "--folds", "subject-kfold: k", Range::at_least(2), kSplitScope});
    v(o.fold, Option{kOwner, "fold", "--fold", "subject-kfold: the test fold", Range::at_least(0),
                     kSplitScope, "in [0, folds)"});
    v(o.stream, Option{kOwner, "stream", "--stream",
                       "read the .npy folder from disk a batch at a time (memory-mapped, float32 "
                       "or float16, as stored) instead of loading it; sharded folders always are",
                       Range::any(), kStreamScope});
  }
};

/// The spec `options` opens, resolved as open_dataset resolves it ($MOCA_HAPT_DIR or the
/// generator for an empty spec, a folder's format from its contents), or nullopt when it cannot
/// be resolved (open_dataset then says why).
std::optional<DataSpec> resolve_spec(const DataOptions& options);

/// The options of `options` that take no effect with its other options, whatever their values
/// (the programs refuse one the user gave and leave the others out of their records; Python
/// refuses a keyword given):
/// - data_format unless the spec is a bare folder (whose format it names);
/// - the options a format alone reads (FormatEntry::own_options) with data of another format
///   (nothing of either when the spec cannot be resolved);
/// - a generator option whose key the spec sets (`generator:coupling=0.5` beside coupling);
/// - with `split_used`: train_fraction unless the split is random, folds and fold unless it is
///   subject-kfold, split_seed when it is all or predefined.
std::vector<UnusedOption> unused_options(const DataOptions& options, bool split_used);

/// Opens the data of `options` (open_dataset) with windows of `length` samples at `rate_hz` (a
/// checkpoint's; 0 = options.window_length at 50 Hz) and the generator's size, coupling and seed.
Dataset select(const DataOptions& options, int length = 0, double rate_hz = 0.0);

/// The training and test windows of `all` under the options' split (fold options.fold of a
/// subject-wise split). std::invalid_argument when a subject-wise split meets windows without
/// subject ids, or the predefined split windows without their own split.
std::pair<Windows, Windows> split(const Windows& all, const DataOptions& options);

/// select(), described on `log` as moca's commands describe their data: the summary, each note
/// and the class counts, one line each ("data: ...").
Dataset select_described(const DataOptions& options, std::ostream& log, int length = 0,
                         double rate_hz = 0.0);

/// The selected windows split into their training and test parts.
struct SplitSelection {
  Windows train, test;
  std::string source;      ///< the resolved spec, e.g. "hapt:<dir>" or "generator:..."
  nlohmann::json dataset;  ///< Dataset::to_json() of the whole selection
  /// `dataset` with the source and the parts' sizes: a results file's "data".
  nlohmann::json to_json() const;
};

/// The first `n` windows of `w` (all of them when n is 0 or at least w.size()): the programs'
/// `--max-windows`.
Windows first_windows(const Windows& w, int n);

/// select_described(), then split(); the split's sizes on `log` ("split: ...").
SplitSelection select_and_split(const DataOptions& options, std::ostream& log, int length = 0,
                                double rate_hz = 0.0);

/// A .npy folder opened for streaming, split without reading a window.
struct StreamSelection {
  std::unique_ptr<MappedNpySource> all;       ///< the folder
  std::unique_ptr<SubsetSource> train, test;  ///< the split's parts (rows of `all`)
  std::string source;                         ///< the resolved spec
  nlohmann::json dataset;                     ///< the folder's description (as Dataset's)
  /// The folder as a Dataset whose windows hold the metadata and every window's label, subject
  /// and part, but no values (x has n rows and no columns): for descriptions.
  Dataset described;
  /// `dataset` with the source and the parts' sizes: a results file's "data".
  nlohmann::json to_json() const;
};

/// True when `options` asks for a streamed run: --stream, or a sharded .npy folder.
bool wants_stream(const DataOptions& options);

/// The streamed form of select_and_split for a .npy folder (npy:DIR or a folder): the windows
/// as stored (their own length, rate, channels and dtype), split by options.split as split()
/// splits windows in memory (the same rows in the same order), described on `log`.
/// std::invalid_argument for data that is not a .npy folder, and for the options that change
/// windows, which a stream does not do (--segment, --keep-classes, --modalities that drop
/// channels, --drop-nonfinite, --labels, --npy-layout beside a sharded folder's own...),
/// naming the option; a `length` or `rate_hz` (a checkpoint's) that the folder's windows do not
/// have is refused too.
StreamSelection select_stream(const DataOptions& options, std::ostream& log, int length = 0,
                              double rate_hz = 0.0);

/// The windows an evaluation command reads (moca embed, moca impute): the first `max_windows` of
/// the test part of a selection (0 = all), held in memory, or rows of a streamed .npy folder read
/// a chunk at a time (for_each_chunk). Not copyable or movable: `windows` refers to the members.
struct TestSelection {
  TestSelection() = default;
  TestSelection(const TestSelection&) = delete;
  TestSelection& operator=(const TestSelection&) = delete;

  Windows held;                             ///< in memory: the evaluated windows
  std::unique_ptr<StreamSelection> stream;  ///< streamed: the folder and its split
  std::unique_ptr<WindowSource> stored;     ///< streamed: the evaluated rows as stored
  std::unique_ptr<WindowSource> windows;    ///< the evaluated windows, either way
  std::string source;                       ///< the resolved spec
  nlohmann::json data;                      ///< a results file's "data" (SplitSelection's)
  bool streamed() const { return stream != nullptr; }
};

/// select_and_split() (or select_stream() when wants_stream(options)), then the first
/// `max_windows` test windows. Streamed, nothing is read yet; windows at another rate or length
/// than `rate_hz` and `length` (a checkpoint's; 0 = as stored) are resampled as they are read
/// (ResampledSource: the values open_dataset gives in memory), and `log` says so.
std::unique_ptr<TestSelection> select_test(const DataOptions& options, std::ostream& log,
                                           int length, double rate_hz, int max_windows);

/// The windows a masking score or a simulation study draws from the selected ones (the paper's
/// simulation data; kcca_score and the studies in simulations/).
struct WindowSample {
  Windows windows;
  /// With transitions: the training windows they were spliced from (the training part of the
  /// options' split); 0 otherwise.
  int train_windows = 0;
  bool subset = false;  ///< without transitions: a random subset of the windows was drawn
};

/// With `transitions` > 0, that many Algorithm-1 synthetic transitions (synthetic_transitions with
/// `seed`) spliced from the training part of `all` under the options' split (split(): the random
/// 7:3 split of options.split_seed by default); else the windows of `all`, a random subset of
/// `cap` of them (the first `cap` rows of numpy_legacy_permutation(n, seed), in their order)
/// when there are more.
WindowSample sample_windows(const Windows& all, const DataOptions& options, int transitions,
                            int cap, std::uint64_t seed);
/// The same sample of a source (the same windows, bit for bit): a source on disk reads only
/// the windows sampled, or with transitions only the rows the splices name.
WindowSample sample_windows(const WindowSource& all, const DataOptions& options, int transitions,
                            int cap, std::uint64_t seed);

}  // namespace moca::data
