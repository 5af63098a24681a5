#include "moca/data/export.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "moca/common/matrix_io.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/data/augment.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/detail/text_parse.hpp"
#include "moca/data/mapped_npy.hpp"
#include "moca/data/selection.hpp"
#include "moca/data/window_source.hpp"
#include "moca/data/windowing.hpp"

namespace moca::data {

void ExportOptions::validate() const {
  if (out_dir.empty()) throw std::invalid_argument("ExportOptions::out_dir is required");
  check_ranges(*this);
  data.validate();
}

namespace {
UnusedOption float16_unused() {
  return {"ShardOptions::float16", "only shards (ShardOptions::shard_mb) hold float16"};
}

/// "N shards X_000.npy, ... (float32), Y_k, pid_k, meta.json": a summary's file list.
std::string shard_files(size_t shards, const ShardOptions& o) {
  return std::to_string(shards) + " shards X_000.npy, ... (" + (o.float16 ? "float16" : "float32") +
         "), Y_k, pid_k, meta.json";
}
}  // namespace

ShardWriteOptions ShardOptions::write_options() const {
  ShardWriteOptions so;
  so.shard_bytes = std::max<std::int64_t>(1, static_cast<std::int64_t>(shard_mb * 1048576.0));
  so.float16 = float16;
  return so;
}

std::vector<UnusedOption> unused_options(const WindowExportOptions& o) {
  std::vector<UnusedOption> unused = unused_options(o.windowing);
  if (o.shards.shard_mb == 0) unused.push_back(float16_unused());
  return unused;
}

std::vector<UnusedOption> unused_options(const ExportOptions& o) {
  std::vector<UnusedOption> unused;
  if (o.shards.shard_mb == 0) unused.push_back(float16_unused());
  if (o.transitions != 0) return unused;
  const std::string why =
      "it chooses the ExportOptions::transitions spliced, and without ExportOptions::transitions "
      "every window is exported as it is";
  for (const Option& row : option_rows<DataOptions>()) {
    if (row.scope == kSplitScope || row.scope == kSplitSeedScope) {
      unused.push_back({row.field(), why});
    }
  }
  unused.push_back({"ExportOptions::seed", why});
  return unused;
}

void WindowExportOptions::validate() const {
  if (from.empty()) throw std::invalid_argument("WindowExportOptions::from is required");
  if (out_dir.empty()) throw std::invalid_argument("WindowExportOptions::out_dir is required");
  windowing.validate();
}

namespace {
/// Shards of `source` into o.out_dir; the summary's file list.
std::string write_shards(const WindowSource& source, const ExportOptions& o) {
  create_output_folder(o.out_dir);
  return shard_files(write_npy_shards(source, o.out_dir, o.shards.write_options()).size(),
                     o.shards);
}
}  // namespace

ExportResult export_selection(const ExportOptions& o, std::ostream& log) {
  o.validate();
  check_writable_folder(o.out_dir, "ExportOptions::out_dir");
  if (o.data.stream) {
    // Read and written a chunk at a time: memory does not grow with the data.
    if (o.shards.shard_mb == 0) {
      throw_invalid("", "ShardOptions::shard_mb", "0",
                    "must be > 0 to export a streamed folder (it is written as shards, a chunk "
                    "at a time)");
    }
    if (o.transitions > 0) {
      throw_invalid("", "ExportOptions::transitions", std::to_string(o.transitions),
                    "needs the windows in memory; drop DataOptions::stream");
    }
    DataOptions all = o.data;
    all.split = SplitKind::kAll;
    const StreamSelection sel = select_stream(all, log);
    const std::string files = write_shards(*sel.train, o);
    ExportResult r;
    r.json = sel.to_json();
    r.json["command"] = "data export";
    r.json["exported"] = "windows";
    r.json["exported_windows"] = sel.train->size();
    r.json["out"] = o.out_dir;
    r.summary = "export: " + std::to_string(sel.train->size()) + " windows of " + sel.source +
                " (streamed) -> " + o.out_dir + "/" + files + "\n";
    return r;
  }
  const Dataset d = select_described(o.data, log);
  Windows w = d.windows;
  std::string what = "windows";
  if (o.transitions > 0) {
    w = synthetic_transitions(split(w, o.data).first, o.transitions, o.seed);
    what = "Algorithm-1 transitions (seed " + std::to_string(o.seed) + ")";
    w.modalities = d.windows.modalities;
  }
  std::string files = "X.npy, Y.npy, pid.npy, meta.json";
  if (o.shards.shard_mb > 0) {
    files = write_shards(InMemorySource(w), o);
  } else {
    export_dataset(w, o.out_dir);
  }
  ExportResult r;
  r.json = d.to_json();
  r.json["command"] = "data export";
  r.json["exported"] = what;
  r.json["exported_windows"] = w.size();
  r.json["out"] = o.out_dir;
  std::ostringstream s;
  s << "export: " << w.size() << " " << what << " of " << d.spec.to_string() << " (" << w.channels
    << " x " << w.length << " at " << w.sample_rate_hz << " Hz, modalities "
    << format_modalities(w.modalities) << ") -> " << o.out_dir << "/" << files << "\n";
  r.summary = s.str();
  return r;
}

ExportResult window_recordings_to_folder(const WindowExportOptions& o) {
  o.validate();
  check_writable_folder(o.out_dir, "WindowExportOptions::out_dir");
  RecordingSource source(o.from, o.windowing);  // every usage error before anything is written
  const bool existed = detail::path_exists(o.out_dir);
  create_output_folder(o.out_dir);
  RecordingWindows r;
  std::string files = "X.npy, Y.npy, pid.npy, meta.json";
  try {
    if (o.shards.shard_mb > 0) {
      // Each shard is written when full; Y_k, pid_k and meta.json once the labels are known.
      NpyShardSink sink(o.out_dir, source.channels(), source.length(), o.shards.write_options());
      r = source.windows([&](const float* window) { sink.put(window); });
      files = shard_files(sink.finish(r.meta, {{"recordings", r.record}}).size(), o.shards);
    } else {
      write_npy_rows(
          o.out_dir + "/X.npy", {source.channels(), source.length()},
          [&](const std::function<void(const float*)>& put) { r = source.windows(put); });
      NpyWriteOptions no;
      no.labels_as_strings = true;
      write_windows_npy_meta(r.meta, o.out_dir, no, {{"recordings", r.record}});
    }
  } catch (...) {
    if (!existed) {
      std::error_code ec;  // the X.npy of a failed write is gone already; the folder is ours
      std::filesystem::remove_all(o.out_dir, ec);
    }
    throw;
  }
  const Windows& w = r.meta;
  const RecordingStats& st = r.stats;
  ExportResult res;
  res.json = {{"command", "data window"},
              {"from", o.from},
              {"windows", w.size()},
              {"channels", w.channel_names},
              {"classes", w.class_names},
              {"subjects", w.subject_names},
              {"length", w.length},
              {"sample_rate_hz", w.sample_rate_hz},
              {"modalities", format_modalities(w.modalities)},
              {"recordings", r.record},
              {"out", o.out_dir}};
  std::ostringstream s;
  s << "window: " << w.size() << " windows of " << w.channels << " x " << w.length << " at "
    << format_number(w.sample_rate_hz, 6) << " Hz (modalities " << format_modalities(w.modalities)
    << ") from " << st.files << " files of " << w.subject_names.size() << " subjects in " << o.from
    << ", " << w.class_names.size() << " classes -> " << o.out_dir << "/" << files << "\n";
  s << "gaps: " << st.gaps << " (" << st.gap_rows << " of " << st.labelled_rows
    << " labelled rows), " << st.interpolated_gaps << " interpolated (" << st.interpolated_rows
    << " rows), " << st.gaps - st.interpolated_gaps << " dropped\n";
  if (!o.windowing.label_map.empty()) {
    s << "label map: " << st.unmapped_rows << " rows with " << st.unmapped_labels.size()
      << " labels the map lacks"
      << (st.unmapped_rows > 0 ? " (made unlabelled: --unmapped drop)" : "") << "\n";
  }
  s << class_count_table(w);
  res.summary = s.str();
  return res;
}

}  // namespace moca::data
