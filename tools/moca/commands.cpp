#include "commands.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "field_flags.hpp"
#include "moca/common/error_text.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/number_text.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/dataset.hpp"
#include "moca/data/hmp.hpp"
#include "moca/data/splits.hpp"
#include "moca/data/windowing.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/score_data.hpp"
#include "moca/masking/score_run.hpp"
#include "moca/model/dist/distributed.hpp"
#include "moca/model/eval/classifier.hpp"
#include "moca/model/eval/encoder_features.hpp"
#include "moca/model/eval/interop.hpp"
#include "moca/model/eval/metrics.hpp"
#include "moca/model/eval/protocol.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "run_cli.hpp"

namespace moca::tools {

namespace {

/// Records the program's options in `j` (as "options": the keys of --print-config; a library
/// caller has none) and writes `j` to `path` (none when empty).
void write_json(const std::string& path, nlohmann::json& j) {
  record_program_options(j);
  if (!path.empty()) write_output_text(path, j.dump(2) + "\n");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
nlohmann::json run_pretrain(const PretrainCommand& cmd, std::ostream& out,
                            model::RunContext& context, const std::atomic<bool>* stop) {
  cmd.train.validate();
  // Every output can be written, before the data is read and the model trained.
  check_writable(cmd.train.checkpoint, "--checkpoint");
  check_writable(cmd.train.metrics_path(), "--metrics");
  check_writable(cmd.json, "--json");
  if (const std::string note = cmd.train.warmup_note(); !note.empty()) {
    context.log() << "moca pretrain: note: " << with_flag_names(note) << "\n";
  }
  // A .npy folder is streamed with --stream (a sharded one always): read a batch at a time.
  model::PretrainResult r;
  nlohmann::json data_json;
  std::string source;
  int train_windows = 0;
  if (data::wants_stream(cmd.data)) {
    const data::StreamSelection d = data::select_stream(cmd.data, context.log());
    r = model::pretrain(cmd.train, *d.train, context, stop);
    data_json = d.to_json();
    source = d.source;
    train_windows = d.train->size();
  } else {
    const data::SplitSelection d = data::select_and_split(cmd.data, context.log());
    r = model::pretrain(cmd.train, d.train, context, stop);
    data_json = d.to_json();
    source = d.source;
    train_windows = d.train.size();
  }
  nlohmann::json j;
  j["command"] = "pretrain";
  j["data"] = data_json;
  j["settings"] = cmd.train.training_json();
  j["settings"]["checkpoint"] = cmd.train.checkpoint;
  j["settings"]["metrics"] = cmd.train.metrics_path();
  j["model"] = model::to_json(r.model);
  j["device"] = model::to_string(r.device);
  j["threads"] = r.threads;
  j["precision"] = model::to_string(cmd.train.runtime.precision);
  j["iterations"] = r.iterations;
  j["iterations_per_epoch"] = r.iterations_per_epoch;
  j["finished"] = r.finished;
  j["interrupted"] = r.interrupted;
  j["seconds"] = r.seconds;
  j["final_loss"] = r.history.empty() ? nlohmann::json() : nlohmann::json(r.history.back().loss);
  j["world_size"] = r.world_size;
  j["backend"] = enum_name(model::kDistBackendNames, r.backend);
  j["allreduce_seconds"] = r.allreduce_seconds;
  j["loop_seconds"] = r.loop_seconds;
  j["windows_per_s"] = r.loop_seconds > 0 ? static_cast<double>(r.loop_iterations) *
                                                cmd.train.batch_size / r.loop_seconds
                                          : 0.0;
  // This rank's reads (rank 0's: each rank reads its own share).
  j["storage"] = r.storage;
  j["windows_read"] = r.windows_read;
  j["bytes_read"] = r.bytes_read;
  j["read_seconds"] = r.read_seconds;
  j["read_wait_seconds"] = r.read_wait_seconds;
  j["read_windows_per_s"] = r.read_seconds > 0 ? r.windows_read / r.read_seconds : 0.0;
  if (r.rank != 0) return j;  // data-parallel: rank 0 alone reports
  write_json(cmd.json, j);
  out << "pretrain: " << r.history.size() << "/" << cmd.train.epochs << " epochs, " << r.iterations
      << " iterations on " << train_windows << " windows (" << source << "), "
      << model::to_string(r.device) << " x" << r.threads << " threads"
      << (r.world_size > 1 ? " x " + std::to_string(r.world_size) + " ranks (" +
                                 enum_name(model::kDistBackendNames, r.backend) + ")"
                           : std::string())
      << ", " << std::fixed << std::setprecision(1) << r.seconds << " s\n";
  if (!r.history.empty()) {
    out << "final epoch loss " << std::setprecision(5) << r.history.back().loss << "\n";
  }
  out << (r.finished ? "finished" : "interrupted") << "; checkpoint " << r.checkpoint
      << "; metrics " << cmd.train.metrics_path() << "\n";
  return j;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_classify(const ClassifyCommand& cmd, std::ostream& out,
                            model::RunContext& context) {
  cmd.options.validate();
  const bool root = context.is_root();
  if (root) {
    check_writable(cmd.json, "--json");
    check_writable(cmd.predictions, "--predictions");
  }
  const model::DownstreamOptions& d = cmd.options.run.downstream;
  if (const std::string note = d.warmup_note(); !note.empty()) {
    context.log() << "moca " << model::to_string(d.mode) << ": note: " << with_flag_names(note)
                  << "\n";
  }
  model::Classification c = model::classify(cmd.options, context);
  if (!root) return c.json;  // data-parallel: rank 0 alone reports
  out << c.confusion_table();
  write_json(cmd.json, c.json);
  if (!cmd.predictions.empty()) write_output_text(cmd.predictions, c.result.predictions_csv());
  out << c.summary_line() << "\n";
  return c.json;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_metrics(const MetricsCommand& cmd, std::ostream& out) {
  if (cmd.predictions.empty())
    throw std::invalid_argument("run_metrics(): --predictions is required");
  check_writable(cmd.json, "--json");
  const auto pm =
      model::prediction_metrics(model::read_predictions_csv(cmd.predictions), cmd.classes);
  const auto& pooled = pm.pooled;
  nlohmann::json j;
  j["predictions"] = cmd.predictions;
  j["pooled"] = model::to_json(pooled);
  model::FoldScores scores;
  nlohmann::json folds = nlohmann::json::array();
  for (size_t f = 0; f < pm.folds.size(); ++f) {
    scores.add(pm.folds[f]);
    folds.push_back({{"fold", pm.fold_ids[f]}, {"metrics", model::to_json(pm.folds[f])}});
  }
  j["folds"] = folds;
  j["summary"] = scores.summary_json();
  write_json(cmd.json, j);
  out << model::confusion_table(pooled);
  const auto a = model::mean_sd(scores.accuracy), mf = model::mean_sd(scores.macro_f1),
             b = model::mean_sd(scores.balanced_accuracy);
  out << std::fixed << std::setprecision(2) << "pooled: top-1 " << 100 * pooled.accuracy
      << " %, macro-F1 " << 100 * pooled.macro_f1 << " %, balanced accuracy "
      << 100 * pooled.balanced_accuracy << " % (" << pooled.n << " predictions)\n";
  if (a.n > 1) {
    out << "per fold (" << a.n << "): top-1 " << 100 * a.mean << " +- " << 100 * a.sd
        << " %, macro-F1 " << 100 * mf.mean << " +- " << 100 * mf.sd << " %, balanced accuracy "
        << 100 * b.mean << " +- " << 100 * b.sd << " %\n";
  }
  return j;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_predict(const PredictCommand& cmd, std::ostream& out, std::ostream& log) {
  check_writable(cmd.out_csv, "--out");
  check_writable(cmd.json, "--json");
  const bool csv_to_stdout = cmd.out_csv.empty() || writes_standard_output(cmd.out_csv);
  if (csv_to_stdout && writes_standard_output(cmd.json)) {
    throw_invalid("", "--json", cmd.json,
                  "is standard output, which carries the predictions CSV; give --out FILE");
  }
  model::Prediction p = model::predict_data(cmd.options, log);
  if (cmd.out_csv.empty()) {
    out << p.csv;
  } else {
    write_output_text(cmd.out_csv, p.csv);
  }
  (csv_to_stdout ? log : out) << p.report;
  write_json(cmd.json, p.json);
  return p.json;
}

nlohmann::json run_export(const ExportCommand& cmd, std::ostream& out) {
  if (cmd.checkpoint.empty() || cmd.out.empty()) {
    throw std::invalid_argument("run_export(): --checkpoint and --out are required");
  }
  check_writable(cmd.out, "--out");
  const model::WeightsFormat format = model::resolve_weights_format(cmd.out, cmd.format);
  const model::InteropReport r = model::export_pytorch(cmd.checkpoint, cmd.out, format);
  const std::string format_name = enum_name(model::kWeightsFormatNames, format);
  out << "export: " << r.kind << (r.probe ? " (linear probe)" : "") << ", " << r.keys.size()
      << " tensors in the MAE/timm layout -> " << cmd.out << " (" << format_name << ")\n";
  return {{"command", "export"},
          {"kind", r.kind},
          {"keys", r.keys},
          {"out", cmd.out},
          {"format", format_name}};
}

nlohmann::json run_import(const ImportCommand& cmd, std::ostream& out, std::ostream& log) {
  if (cmd.weights.empty() || cmd.out.empty()) {
    throw std::invalid_argument("run_import(): --weights and --out are required");
  }
  check_writable(cmd.out, "--out");
  const model::InteropReport r = model::import_pytorch(cmd.weights, cmd.options, cmd.out);
  for (const auto& n : r.notes) log << "import: " << n << "\n";
  out << "import: " << r.kind << (r.probe ? " (linear probe)" : "") << ", " << r.keys.size()
      << " tensors -> " << cmd.out << "\n";
  return {{"command", "import"}, {"kind", r.kind}, {"notes", r.notes}, {"out", cmd.out}};
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_impute(const ImputeCommand& cmd, std::ostream& out, std::ostream& log) {
  cmd.options.validate();
  check_writable(cmd.json, "--json");
  model::ImputeResult r = model::impute_data(cmd.options, log);
  write_json(cmd.json, r.json);
  out << r.text;
  return r.json;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_embed(const EmbedCommand& cmd, std::ostream& out, std::ostream& log) {
  const std::string& dir = cmd.options.out_dir;
  if (cmd.options.pooled()) {
    nlohmann::json j = model::embed_maps(cmd.options, out, log);
    write_json(dir + "/embed.json", j);
    return j;
  }
  nlohmann::json j = model::embed_views(cmd.options, log);
  write_json(dir + "/embed.json", j);
  out << "embed: " << j.at("windows").get<int>() << " windows x " << j.at("dim").get<int>()
      << " features per view (" << j.at("policy").get<std::string>() << ") -> " << dir
      << "/Z_U.npy, Z_M.npy\n";
  return j;
}

nlohmann::json run_attention(const AttentionCommand& cmd, std::ostream& out, std::ostream& log) {
  nlohmann::json j = model::attention_reports(cmd, out, log);
  write_json(cmd.out_dir + "/attention.json", j);
  return j;
}

// ---------------------------------------------------------------------------------------------
nlohmann::json run_reconstruct(const ReconstructCommand& cmd, std::ostream& out,
                               std::ostream& log) {
  cmd.options.validate();
  check_writable(cmd.options.out, "--out");  // the prefix of <out>.json, .csv and .png
  const ModelGeometry geometry = checkpoint_geometry(cmd.options.checkpoint);
  const data::SplitSelection d =
      data::select_and_split(cmd.data, log, geometry.length, geometry.sample_rate_hz);
  const auto r = model::reconstruct_window(cmd.options, d.test, log);
  nlohmann::json j;
  j["command"] = "reconstruct";
  j["data"] = d.to_json();
  j["window"] = cmd.options.window;
  j["label"] = d.test.labels(cmd.options.window);
  j["policy"] = cmd.options.policy;
  j["mask"] = r.mask.to_string();
  j["mae_masked"] = r.mae_masked;
  j["mse_masked"] = r.mse_masked;
  j["csv"] = r.csv;
  j["png"] = r.png;
  write_json(cmd.options.out + ".json", j);
  out << "reconstruct: test window " << cmd.options.window << " (label "
      << d.test.labels(cmd.options.window) << "), masked MAE " << r.mae_masked << ", MSE "
      << r.mse_masked << "\n"
      << "wrote " << r.csv << (r.png.empty() ? "" : ", " + r.png) << "\n";
  return j;
}

// ---------------------------------------------------------------------------------------------
namespace {

// moca data inspect, the data: shape, channels, modality groups, non-finite windows (counted:
// `refuse_nonfinite` says whether the programs would refuse them), notes, classes, subjects.
void print_data_overview(std::ostream& out, const data::Dataset& d, bool refuse_nonfinite,
                         bool scanned = true) {
  const data::Windows& w = d.windows;
  out << "data: " << d.summary() << "\n";
  out << "windows: N = " << w.size() << ", C = " << w.channels << " channels (";
  for (int c = 0; c < w.channels; ++c)
    out << (c ? ", " : "") << w.channel_names[static_cast<size_t>(c)];
  out << "), L = " << w.length << " samples at " << w.sample_rate_hz
      << " Hz (input: " << d.source_channels << " channels, L = " << d.source_length << " at "
      << d.source_rate_hz << " Hz)\n";
  out << "modality groups (" << w.modalities.size() << "):";
  for (const auto& g : w.modalities) {
    out << "  " << g.name << " = {";
    for (size_t k = 0; k < g.channels.size(); ++k)
      out << (k ? ", " : "") << w.channel_names[static_cast<size_t>(g.channels[k])];
    out << "}";
  }
  out << "\n";
  out << "non-finite values: ";
  if (!scanned) {
    out << "not scanned (a streamed folder is not read here; a window holding NaN/Inf stops the "
           "run that reads it, naming its shard and row)\n";
  } else if (d.dropped_nonfinite == 0) {
    out << "none\n";
  } else {
    out << d.dropped_nonfinite << " windows hold NaN/Inf; "
        << (refuse_nonfinite ? "every program refuses the data unless --drop-nonfinite drops them"
                             : "dropped (--drop-nonfinite)")
        << "\n";
  }
  for (const auto& note : d.notes) {
    // inspect itself dropped them only to count them: that is said on the line above.
    if (refuse_nonfinite && note.rfind("dropped ", 0) == 0) continue;
    out << "note: " << note << "\n";
  }
  out << data::describe_dataset(d);
}

// moca data inspect: what each program does with the data at its default flags (those of the
// option structs), printed and in the JSON ("programs").
struct ProgramUses {
  int windows = 0;
  int classes = 0;           // labelled classes
  int subjects = 0;          // subject ids >= 0 (-1: none)
  bool transitions = false;  // kcca_score scores Algorithm-1 transitions by default
  int samples = masking::DataScoreOptions{}.samples;    // kcca_score's --samples
  int scored = 0;                                       // kcca_score's windows or transitions
  int patch = masking::ScoreRunOptions{}.patch_length;  // kcca_score's --patch-length
  int patches = 0;  // per channel; 0: the patch length does not divide the length
  double train_fraction = data::DataOptions{}.train_fraction;
  std::uint64_t split_seed = data::DataOptions{}.split_seed;
  data::Split random;          // the random split
  long predefined_train = -1;  // the data's own split, when it states one
};

ProgramUses program_uses(const data::Dataset& d) {
  const data::Windows& w = d.windows;
  ProgramUses u;
  u.windows = w.size();
  std::set<int> subjects(w.subjects.data(), w.subjects.data() + w.size());
  subjects.erase(-1);
  std::set<int> classes(w.labels.data(), w.labels.data() + w.size());
  classes.erase(-1);
  u.classes = static_cast<int>(classes.size());
  u.subjects = static_cast<int>(subjects.size());
  u.transitions = data::format_entry(d.spec.format).transitions_by_default;
  u.scored = u.transitions ? u.samples : std::min(w.size(), u.samples);
  u.patches = w.length % u.patch == 0 ? w.length / u.patch : 0;
  u.random = data::random_split(std::max(w.size(), 2), u.train_fraction, u.split_seed);
  if (w.parts.size() != 0)
    u.predefined_train = (w.parts.array() == data::Windows::kTrainPart).count();
  return u;
}

void print_program_uses(std::ostream& out, const data::Dataset& d, const ProgramUses& u) {
  const data::Windows& w = d.windows;
  const bool two_groups = w.modalities.size() >= 2;
  const std::string split = format_number(u.train_fraction * 10, 6) + ":" +
                            format_number((1 - u.train_fraction) * 10, 6);  // 7:3
  out << "what the programs do with it:\n";
  out << "  kcca_score: "
      << (u.transitions
              ? "scores " + std::to_string(u.scored) + " Algorithm-1 transitions from the " +
                    split + " training split (--transitions 0: the windows)"
              : "scores " + std::to_string(u.scored) +
                    " windows (--samples caps them; --transitions N for Algorithm-1 "
                    "transitions)")
      << " on a " << w.channels << " x ";
  if (u.patches > 0) {
    out << u.patches << " grid (--patch-length " << u.patch << ")";
  } else {
    out << "? grid: --patch-length " << u.patch << " does not divide L = " << w.length
        << "; pass one of " << masking::patch_lengths_text(w.length);
  }
  out << (two_groups ? "; --cross-modal: " + w.modalities[0].name + " vs the other groups"
                     : "; --cross-modal, sensor and per-modality need >= 2 modality groups")
      << "\n";
  out << "  moca pretrain / impute / embed / reconstruct: " << w.channels << " x " << w.length
      << " windows, random " << split << " split -> " << u.random.train.size() << " train / "
      << u.random.test.size() << " test"
      << (u.predefined_train >= 0
              ? "; --split predefined -> " + std::to_string(u.predefined_train) + " train / " +
                    std::to_string(u.windows - u.predefined_train) + " test"
              : std::string())
      << "\n";
  out << "  moca linprobe / finetune: ";
  if (u.classes < 2) {
    out << "refused (needs labels of >= 2 classes; the data has " << u.classes << ")\n";
  } else {
    out << u.classes << " classes; --protocol random";
    if (u.predefined_train >= 0) out << ", predefined (the data's own split: one fold)";
    if (u.subjects >= 2) {
      out << ", subject-kfold (--folds <= " << u.subjects << "), loso (" << u.subjects << " folds)";
    } else {
      out << " only (subject-kfold and loso need subject ids of >= 2 subjects)";
    }
    out << "\n";
  }
}

nlohmann::json to_json(const ProgramUses& u) {
  nlohmann::json split = {{"random",
                           {{"train", u.random.train.size()},
                            {"test", u.random.test.size()},
                            {"train_fraction", u.train_fraction},
                            {"seed", u.split_seed}}}};
  if (u.predefined_train >= 0)
    split["predefined"] = {{"train", u.predefined_train}, {"test", u.windows - u.predefined_train}};
  return {{"kcca_score",
           {{"scored", u.transitions ? "Algorithm-1 transitions" : "windows"},
            {"count", u.scored},
            {"patch_length", u.patch},
            {"patches", u.patches > 0 ? nlohmann::json(u.patches) : nlohmann::json(nullptr)}}},
          {"split", split},
          {"classifiers",
           {{"classes", u.classes},
            {"subjects", u.subjects},
            {"refused", u.classes < 2},
            {"subject_protocols", u.classes >= 2 && u.subjects >= 2}}}};
}

// moca data inspect's JSON: the data set's own JSON, non-finite windows, windows per class and
// per subject (with names where the data has them).
nlohmann::json inspect_json(const data::Dataset& d) {
  const data::Windows& w = d.windows;
  nlohmann::json j = d.to_json();
  j["command"] = "data inspect";
  j["nonfinite_windows"] = d.dropped_nonfinite;
  nlohmann::json cls = nlohmann::json::array();
  const auto counts = data::class_counts(w);
  for (size_t k = 0; k < counts.size(); ++k) {
    cls.push_back({{"id", k},
                   {"name", k < w.class_names.size() ? w.class_names[k] : std::to_string(k)},
                   {"windows", counts[k]}});
  }
  j["classes"] = cls;
  std::map<int, int> per_subject;
  for (int i = 0; i < w.size(); ++i) ++per_subject[w.subjects(i)];
  nlohmann::json subj = nlohmann::json::array();
  for (const auto& [id, n] : per_subject) {
    subj.push_back({{"id", id},
                    {"name", id >= 0 && id < static_cast<int>(w.subject_names.size())
                                 ? w.subject_names[static_cast<size_t>(id)]
                                 : std::to_string(id)},
                    {"windows", n}});
  }
  j["subjects_windows"] = subj;
  return j;
}

}  // namespace

nlohmann::json run_data_inspect(const DataInspectCommand& cmd, std::ostream& out,
                                std::ostream& log) {
  check_writable(cmd.json, "--json");
  ModelGeometry geometry{0, 0.0, 0};  // (no checkpoint: the command's length at 50 Hz)
  if (!cmd.checkpoint.empty()) geometry = checkpoint_geometry(cmd.checkpoint);
  DataOptions o = cmd.data;
  const bool refuse_nonfinite = !o.dataset.drop_nonfinite;
  if (data::wants_stream(o)) {  // a sharded folder: described from its headers and labels
    o.split = data::SplitKind::kAll;
    std::ostringstream quiet;
    const data::StreamSelection s =
        data::select_stream(o, quiet, geometry.length, geometry.sample_rate_hz);
    (void)log;
    print_data_overview(out, s.described, refuse_nonfinite, /*scanned=*/false);
    const ProgramUses uses = program_uses(s.described);
    print_program_uses(out, s.described, uses);
    nlohmann::json j = inspect_json(s.described);
    j["programs"] = to_json(uses);
    j["nonfinite_windows"] = nullptr;  // not scanned
    j["storage"] = s.all->storage_text();
    j["shards"] = s.all->shards().size();
    write_json(cmd.json, j);
    return j;
  }
  o.dataset.drop_nonfinite = true;  // inspect counts them instead of failing
  std::ostringstream quiet;
  const data::Dataset d =
      data::select_described(o, quiet, geometry.length, geometry.sample_rate_hz);
  (void)log;
  print_data_overview(out, d, refuse_nonfinite);
  const ProgramUses uses = program_uses(d);
  print_program_uses(out, d, uses);
  nlohmann::json j = inspect_json(d);
  j["programs"] = to_json(uses);
  write_json(cmd.json, j);
  return j;
}

nlohmann::json run_data_export(const DataExportCommand& cmd, std::ostream& out, std::ostream& log) {
  const data::ExportResult r = data::export_selection(cmd, log);
  out << r.summary;
  return r.json;
}

nlohmann::json run_data_window(const DataWindowCommand& cmd, std::ostream& out) {
  const data::ExportResult r = data::window_recordings_to_folder(cmd);
  out << r.summary;
  return r.json;
}

}  // namespace moca::tools
