#include "moca/masking/score_data.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/selection.hpp"

namespace moca::masking {

void DataScoreOptions::validate() const {
  scoring.validate();
  check_ranges(*this);
  if (transitions < -1)
    throw_invalid("", "DataScoreOptions::transitions", std::to_string(transitions),
                  "must be >= 0 (0 = the windows)");
  // Against the length the windows are cut to; a stream keeps its folder's own length, which
  // score_windows checks once the folder is read.
  if (!data::wants_stream(data)) check_patch_length(scoring.patch_length, data.window_length);
  data.validate();
  data.dataset.validate();
}

namespace {

/// The windows a run scores and the "data" JSON describing them.
struct LoadedWindows {
  data::Windows windows;
  nlohmann::json data_json;
};

/// Opens options.data and picks the windows scored: Algorithm-1 transitions built from the random
/// 7:3 training split, or the data's windows (a seeded random subset of `samples`).
LoadedWindows load_windows(const DataScoreOptions& options, std::ostream& log) {
  const std::uint64_t data_seed = derive_seed(options.scoring.score.seed, 0x64617461ULL);
  data::DataOptions selection = options.data;
  selection.synthetic_windows = options.samples;
  selection.synthetic_seed = data_seed;
  // A .npy folder streamed (--stream, or a sharded one): only the windows sampled are read.
  data::Dataset ds;
  std::unique_ptr<data::StreamSelection> stream;
  if (data::wants_stream(selection)) {
    data::DataOptions whole = selection;
    whole.split = data::SplitKind::kAll;
    std::ostringstream quiet;
    stream = std::make_unique<data::StreamSelection>(data::select_stream(whole, quiet));
    ds = stream->described;
  } else {
    ds = data::select(selection);
  }
  log << "kcca_score: data: " << ds.summary() << "\n";
  for (const auto& note : ds.notes) log << "kcca_score: data: " << note << "\n";
  const int transitions = options.transitions >= 0 ? options.transitions
                          : data::format_entry(ds.spec.format).transitions_by_default
                              ? options.samples
                              : 0;
  data::WindowSample sample =
      stream
          ? data::sample_windows(*stream->train, selection, transitions, options.samples, data_seed)
          : data::sample_windows(ds.windows, selection, transitions, options.samples, data_seed);
  LoadedWindows out{std::move(sample.windows), stream ? stream->to_json() : ds.to_json()};
  if (transitions > 0) {
    log << "kcca_score: scoring " << out.windows.size()
        << " synthetic transitions (Algorithm 1) from the training split of "
        << sample.train_windows << " windows (random 7:3, seed " << selection.split_seed << ")\n";
    out.data_json["scored"] = "Algorithm-1 transitions";
    out.data_json["train_windows"] = sample.train_windows;
    out.data_json["split"] = "random 7:3";
    out.data_json["split_seed"] = selection.split_seed;
    out.data_json["transitions"] = out.windows.size();
    out.data_json["transition_seed"] = data_seed;
    return out;
  }
  log << "kcca_score: scoring " << out.windows.size() << " of the data's " << ds.windows.size()
      << " windows (" << (sample.subset ? "a seeded random subset" : "all") << ")\n";
  out.data_json["scored"] = "windows";
  out.data_json["scored_windows"] = out.windows.size();
  return out;
}

}  // namespace

DataScore score_data(const DataScoreOptions& options, std::ostream& log) {
  const auto t0 = std::chrono::steady_clock::now();
  options.validate();
  LoadedWindows loaded = load_windows(options, log);
  ScoreProgress progress;
  if (options.progress)
    progress = [&log](const std::string& line) { log << "kcca_score: " << line << "\n"; };
  DataScore out;
  out.run = score_windows(loaded.windows, std::move(loaded.data_json), options.scoring, progress);
  out.json = to_json(out.run);
  out.json["settings"]["samples"] = options.samples;
  out.json["settings"]["coupling"] = options.data.coupling;
  out.json["seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace moca::masking
