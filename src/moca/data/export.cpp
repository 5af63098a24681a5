#include "moca/data/export.hpp"

#include <sstream>
#include <stdexcept>

#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/data/augment.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/windowing.hpp"

namespace moca::data {

void ExportOptions::validate() const {
  if (out_dir.empty()) throw std::invalid_argument("ExportOptions::out_dir is required");
  check_ranges(*this);
  data.validate();
}

std::vector<UnusedOption> unused_options(const ExportOptions& o) {
  if (o.transitions != 0) return {};
  const std::string why =
      "it chooses the ExportOptions::transitions spliced, and without ExportOptions::transitions "
      "every window is exported as it is";
  std::vector<UnusedOption> unused;
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

ExportResult export_selection(const ExportOptions& o, std::ostream& log) {
  o.validate();
  check_writable_folder(o.out_dir, "ExportOptions::out_dir");
  const Dataset d = select_described(o.data, log);
  Windows w = d.windows;
  std::string what = "windows";
  if (o.transitions > 0) {
    w = synthetic_transitions(split(w, o.data).first, o.transitions, o.seed);
    what = "Algorithm-1 transitions (seed " + std::to_string(o.seed) + ")";
    w.modalities = d.windows.modalities;
  }
  export_dataset(w, o.out_dir);
  ExportResult r;
  r.json = d.to_json();
  r.json["command"] = "data export";
  r.json["exported"] = what;
  r.json["exported_windows"] = w.size();
  r.json["out"] = o.out_dir;
  std::ostringstream s;
  s << "export: " << w.size() << " " << what << " of " << d.spec.to_string() << " (" << w.channels
    << " x " << w.length << " at " << w.sample_rate_hz << " Hz, modalities "
    << format_modalities(w.modalities) << ") -> " << o.out_dir
    << "/X.npy, Y.npy, pid.npy, meta.json\n";
  r.summary = s.str();
  return r;
}

ExportResult window_recordings_to_folder(const WindowExportOptions& o) {
  o.validate();
  check_writable_folder(o.out_dir, "WindowExportOptions::out_dir");
  Windows w = window_recordings(o.from, o.windowing);
  w.modalities = groups_from_names(w.channel_names);
  export_dataset(w, o.out_dir);
  ExportResult r;
  r.json = {{"command", "data window"}, {"from", o.from},
            {"windows", w.size()},      {"channels", w.channel_names},
            {"classes", w.class_names}, {"subjects", w.subject_names},
            {"length", w.length},       {"sample_rate_hz", w.sample_rate_hz},
            {"out", o.out_dir}};
  std::ostringstream s;
  s << "window: " << w.size() << " windows of " << w.channels << " x " << w.length << " at "
    << format_number(w.sample_rate_hz, 6) << " Hz from " << w.subject_names.size()
    << " recordings in " << o.from << ", " << w.class_names.size() << " classes -> " << o.out_dir
    << "/X.npy, Y.npy, pid.npy, meta.json\n"
    << class_count_table(w);
  r.summary = s.str();
  return r;
}

}  // namespace moca::data
