#include "paper_experiments.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

#include "moca/common/file_lock.hpp"
#include "moca/common/output_file.hpp"
#include "moca/embed/map_figure.hpp"
#include "moca/embed/umap.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/model/eval/attention_report.hpp"
#include "moca/model/eval/downstream.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/eval/inspect.hpp"
#include "moca/model/eval/protocol.hpp"
#include "moca/model/eval/reconstruct.hpp"
#include "moca/model/train/pretrain.hpp"
#include "run_cli.hpp"
#include "study_training.hpp"

namespace moca::sim {

namespace {
const std::vector<std::string> kExperiments = {"table1",       "imputation",     "mask_ratio",
                                               "patch_length", "label_fraction", "input_length",
                                               "input_shape",  "reconstruct",    "inspect"};
using masking::format_number;
}  // namespace

model::PretrainOptions default_experiments_pretrain() {
  model::PretrainOptions p;
  p.preset = "cpu-small";
  p.patch_length = 20;
  p.epochs = 20;
  p.batch_size = 50;
  p.lr = 5e-4;
  p.warmup_epochs = 2.0;
  return p;
}

void PaperExperimentsOptions::validate() const {
  // Messages name the fields (PaperExperimentsOptions::name); the program names its flags.
  const std::string f = "PaperExperimentsOptions::";
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(f + what);
  };
  data.validate();
  need(!out.empty(), "out is empty");
  need(!only.empty(), "only is empty");
  for (const auto& e : only) {
    need(std::find(kExperiments.begin(), kExperiments.end(), e) != kExperiments.end(),
         "only (" + e +
             ") is not one of table1, imputation, mask_ratio, patch_length, label_fraction, "
             "input_length, input_shape, reconstruct, inspect");
  }
  check_ranges(*this);  // the rows' ranges: ratio, the epochs, MICE, threads
  pretrain.validate();  // the pre-training rows, named by their flags (PretrainOptions::epochs)
  for (double r : mask_ratios)
    need(r > 0 && r < 1, "mask_ratios value (" + format_number(r) + ") must be in (0, 1)");
  for (int lp : patch_lengths) {
    need(lp >= 1, "patch_lengths value (" + std::to_string(lp) + ") must be >= 1");
  }
  for (double f : label_fractions) {
    need(f > 0.0 && f <= 1.0, "label_fractions (" + format_number(f) + ") must be in (0, 1]");
  }
  for (double sec : input_seconds) {
    need(sec > 0.0 && std::isfinite(sec), "input_seconds (" + format_number(sec) + ") must be > 0");
  }
}

namespace {

using nlohmann::json;

struct Runner {
  const PaperExperimentsOptions& o;
  const data::Windows& train;
  const data::Windows& test;
  std::string workdir;
  std::ostream& log;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::map<std::string, json> pretrained{};  // checkpoint path -> pretrain summary
  std::map<std::string, json> finetunes{};   // kept classifier path -> fine-tune summary

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  std::string name_of(const std::string& policy, int lp, bool augment,
                      model::TokenLayout layout = model::TokenLayout::kModality) const {
    std::string s = policy + "_lp" + std::to_string(lp) + (augment ? "_aug" : "") +
                    (layout == model::TokenLayout::kStacked ? "_stacked" : "");
    for (char& ch : s) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_') ch = '_';
    }
    return s;
  }

  /// Pre-trains (once per configuration) and returns the checkpoint path.
  std::string pretrain(const std::string& policy, int lp, bool augment,
                       model::TokenLayout layout = model::TokenLayout::kModality) {
    const std::string ckpt = workdir + "/" + name_of(policy, lp, augment, layout) + ".pt";
    if (pretrained.count(ckpt)) return ckpt;
    model::PretrainOptions po = study_pretrain_options(o.pretrain, policy, train.size());
    po.patch_length = lp;
    po.layout = layout;
    po.augment = augment;
    po.checkpoint = ckpt;
    po.checkpoint_every = o.pretrain.epochs;
    po.seed = o.seed;
    po.runtime.threads = o.threads;
    po.runtime.device = o.device;
    po.runtime.precision = o.precision;
    std::ostringstream plog;
    const model::PretrainResult r = model::pretrain(po, train, plog);
    pretrained[ckpt] = {{"policy", policy},
                        {"patch_length", lp},
                        {"augment", augment},
                        {"layout", model::to_string(layout)},
                        {"final_train_loss", r.history.empty() ? 0.0 : r.history.back().loss},
                        {"iterations", r.iterations},
                        {"seconds", r.seconds}};
    log << "paper_experiments: pre-trained " << policy << " Lp " << lp << (augment ? " +aug" : "")
        << " in " << r.seconds << " s (total " << elapsed() << " s)\n";
    return ckpt;
  }

  json classify(model::DownstreamMode mode, const std::string& ckpt, int lp,
                const std::string& save = "", const data::Windows* train_part = nullptr,
                const data::Windows* test_part = nullptr) {
    const data::Windows& train = train_part != nullptr ? *train_part : this->train;
    const data::Windows& test = test_part != nullptr ? *test_part : this->test;
    model::DownstreamOptions d = model::downstream_defaults(mode);
    d.checkpoint = ckpt;
    d.save_model = save;
    d.patch_length = lp;
    d.preset = o.pretrain.preset;
    d.epochs = mode == model::DownstreamMode::kLinearProbe ? o.probe_epochs : o.finetune_epochs;
    d.warmup_epochs = std::min(d.warmup_epochs.value_or(d.default_warmup_epochs()), d.epochs / 2.0);
    d.batch_size = std::min(d.batch_size, train.size());
    d.seed = o.seed;
    d.runtime.device = o.device;
    d.runtime.precision = o.precision;
    d.runtime.threads = o.threads;
    d.progress = false;
    std::ostringstream dlog;
    const model::DownstreamResult r = model::train_classifier(d, train, test, dlog);
    json cm = json::array();
    for (int i = 0; i < r.test.confusion.rows(); ++i) {
      json row = json::array();
      for (int j = 0; j < r.test.confusion.cols(); ++j) row.push_back(r.test.confusion(i, j));
      cm.push_back(row);
    }
    log << "paper_experiments: " << model::to_string(mode) << " " << ckpt << ": " << r.test.accuracy
        << " (total " << elapsed() << " s)\n";
    return {{"mode", model::to_string(mode)},
            {"accuracy", r.test.accuracy},
            {"macro_f1", r.test.macro_f1},
            {"balanced_accuracy", r.test.balanced_accuracy},
            {"epochs", d.epochs},
            {"confusion", cm},
            {"seconds", r.seconds}};
  }

  /// The fine-tuned classifier of `policy`'s pre-trained model (empty policy: the supervised
  /// model from random initialisation) at options.patch_length without augmentation, trained
  /// once and kept as a checkpoint; returns its path (its summary is finetunes[path]).
  std::string finetuned(const std::string& policy) {
    const int lp = o.pretrain.patch_length;
    const std::string path =
        workdir + "/finetuned_" + (policy.empty() ? "scratch" : name_of(policy, lp, false)) + ".pt";
    if (finetunes.count(path)) return path;
    finetunes[path] = policy.empty() ? classify(model::DownstreamMode::kScratch, "", lp, path)
                                     : classify(model::DownstreamMode::kFinetune,
                                                pretrain(policy, lp, false), lp, path);
    return path;
  }
};

json common_json(const PaperExperimentsOptions& o, const json& data) {
  json doc = {{"data", data},
              {"setting",
               {{"preset", o.pretrain.preset},
                {"epochs", o.pretrain.epochs},
                {"batch_size", o.pretrain.batch_size},
                {"lr", o.pretrain.lr},
                {"warmup_epochs", o.pretrain.effective_warmup_epochs()},
                {"probe_epochs", o.probe_epochs},
                {"finetune_epochs", o.finetune_epochs},
                {"patch_length", o.pretrain.patch_length},
                {"ratio", o.ratio},
                {"device", model::to_string(o.device)},
                {"precision", model::to_string(o.precision)}}},
              {"seed", o.seed}};
  tools::record_program_options(doc);
  return doc;
}

/// The study's two pre-training policies at options.ratio.
std::string cross_policy(const PaperExperimentsOptions& o) {
  return "cross:ratio=" + format_number(o.ratio);
}
std::string sync_policy(const PaperExperimentsOptions& o) {
  return "sync:ratio=" + format_number(o.ratio);
}

/// Table 1's text: fine-tuning and linear-probe accuracy beside the paper's.
void print_table1(const json& rows, std::ostream& out) {
  char buf[512];
  out << "Table 1                                   FT acc   LP acc   | paper FT  LP\n";
  for (const auto& r : rows) {
    std::snprintf(
        buf, sizeof buf, "%-40s  %.4f   %s   | %.3f  %s\n", r["model"].get<std::string>().c_str(),
        r["finetune"]["accuracy"].get<double>(),
        r.contains("linear_probe")
            ? std::to_string(r["linear_probe"]["accuracy"].get<double>()).substr(0, 6).c_str()
            : "  /   ",
        r["paper"]["finetune"].get<double>(),
        r["paper"]["linear_probe"].get<double>() < 0
            ? "/"
            : format_number(r["paper"]["linear_probe"].get<double>()).c_str());
    out << buf;
  }
}

/// Table 1: a supervised model from scratch, then sync and cross pre-training (with and
/// without augmentation), each probed and fine-tuned. Writes table1.json.
std::string table1(Runner& run, const json& description, std::ostream& out) {
  const PaperExperimentsOptions& o = run.o;
  const int lp = o.pretrain.patch_length;
  json rows = json::array();
  auto add = [&](const std::string& model, const std::string& policy, bool aug, double paper_ft,
                 double paper_lp) {
    json row = {{"model", model}, {"policy", policy}, {"augment", aug}};
    if (policy.empty()) {
      row["finetune"] = run.finetunes[run.finetuned("")];
    } else {
      const std::string ckpt = run.pretrain(policy, lp, aug);
      row["pretrain"] = run.pretrained[ckpt];
      row["linear_probe"] = run.classify(model::DownstreamMode::kLinearProbe, ckpt, lp);
      row["finetune"] = aug ? run.classify(model::DownstreamMode::kFinetune, ckpt, lp)
                            : run.finetunes[run.finetuned(policy)];
    }
    row["paper"] = {{"finetune", paper_ft}, {"linear_probe", paper_lp}};
    rows.push_back(row);
  };
  add("ViT (supervised, random init)", "", false, 0.914, -1);
  add("MAE synchronised masking (w/o aug.)", sync_policy(o), false, 0.917, 0.863);
  add("MoCA cross masking (w/o aug.)", cross_policy(o), false, 0.948, 0.924);
  if (o.augment) {
    add("MAE synchronised masking (w/ aug.)", sync_policy(o), true, 0.913, 0.884);
    add("MoCA cross masking (w/ aug.)", cross_policy(o), true, 0.966, 0.931);
  }
  json doc = common_json(o, description);
  doc["experiment"] = "table1";
  doc["protocol"] = "random 7:3 window split; accuracy of the final epoch on the test part";
  doc["paper_note"] =
      "paper: ViT-Base, 4000 pre-training epochs, 50 downstream epochs, GPU; "
      "linear_probe -1 = not applicable";
  doc["rows"] = rows;
  write_json(o.out + "/table1.json", doc);
  print_table1(rows, out);
  return "table1.json";
}

/// Table 3: imputation of the cross and sync models against the baselines on the four tasks.
/// Writes imputation.json.
std::string imputation(Runner& run, const StudySplit& split, std::ostream& out) {
  const PaperExperimentsOptions& o = run.o;
  const int lp = o.pretrain.patch_length;
  model::ImputeOptions io;
  io.checkpoints = {run.pretrain(cross_policy(o), lp, false),
                    run.pretrain(sync_policy(o), lp, false)};
  io.labels = {"MoCA cross (w/o aug.)", "MAE sync (w/o aug.)"};
  io.patch_length = lp;
  io.seed = o.seed;
  io.mice.iterations = o.mice_iterations;
  io.mice.draws = o.mice_draws;
  io.inference.runtime.threads = o.threads;
  io.inference.runtime.device = o.device;
  const model::ImputeTable t = model::evaluate_imputation(io, split.test, run.log);
  json doc = common_json(o, split.description);
  doc["experiment"] = "imputation";
  doc["table"] = t.to_json();
  doc["mice"] = {{"iterations", o.mice_iterations}, {"draws", o.mice_draws}};
  // Paper Table 3 (MAE, MSE per task: random, temporal, sensor, extrapolation).
  doc["paper"] = {
      {"Linear Interpolation", {0.587, 0.689, 0.546, 0.634, 0.252, 0.189, 0.600, 0.635}},
      {"Nearest Neighbor Imputation", {0.341, 0.284, 0.240, 0.180, 0.412, 0.377, 0.211, 0.158}},
      {"MICE", {0.289, 0.251, 0.410, 0.375, 0.210, 0.158, 0.211, 0.158}},
      {"MAE Synchronized Masking (w/o aug.)",
       {0.275, 0.162, 0.262, 0.191, 0.288, 0.170, 0.266, 0.194}},
      {"MoCA (w/o aug.)", {0.086, 0.043, 0.112, 0.059, 0.160, 0.089, 0.111, 0.059}}};
  doc["paper_columns"] = {"random MAE", "random MSE", "temporal MAE",      "temporal MSE",
                          "sensor MAE", "sensor MSE", "extrapolation MAE", "extrapolation MSE"};
  write_json(o.out + "/imputation.json", doc);
  out << t.to_text();
  return "imputation.json";
}

/// An ablation: for each value, the checkpoint and patch length `pretrain_of(value)` gives,
/// probed (and fine-tuned with finetune_ablations); one line per value to `out`.
json ablation(Runner& run, const std::string& name, const json& values,
              const std::function<std::pair<std::string, int>(const json&)>& pretrain_of,
              std::ostream& out) {
  json rows = json::array();
  char buf[512];
  for (const auto& v : values) {
    const auto [ckpt, plp] = pretrain_of(v);
    json row = {{"value", v}, {"pretrain", run.pretrained[ckpt]}};
    row["linear_probe"] = run.classify(model::DownstreamMode::kLinearProbe, ckpt, plp);
    if (run.o.finetune_ablations) {
      row["finetune"] = run.classify(model::DownstreamMode::kFinetune, ckpt, plp);
    }
    rows.push_back(row);
    std::snprintf(buf, sizeof buf, "%s %s: LP %.4f\n", name.c_str(), v.dump().c_str(),
                  row["linear_probe"]["accuracy"].get<double>());
    out << buf;
  }
  return rows;
}

/// The mask-ratio ablation (cross masking at each of options.mask_ratios).
std::string mask_ratio_ablation(Runner& run, const json& description, std::ostream& out) {
  const PaperExperimentsOptions& o = run.o;
  const json rows = ablation(
      run, "mask ratio", o.mask_ratios,
      [&](const json& v) {
        return std::make_pair(run.pretrain("cross:ratio=" + format_number(v.get<double>()),
                                           o.pretrain.patch_length, false),
                              o.pretrain.patch_length);
      },
      out);
  json doc = common_json(o, description);
  doc["experiment"] = "ablation_mask_ratio";
  doc["rows"] = rows;
  doc["paper"] = {{"summary",
                   "best at 0.45/0.55/0.75: FT 94.8-95.0%, LP 92.4-93.9%; at 0.95: FT 90.8%, "
                   "LP 84.9%; drops quickly above 0.75"}};
  write_json(o.out + "/ablation_mask_ratio.json", doc);
  return "ablation_mask_ratio.json";
}

/// The label-fraction ablation: the cross and sync models of table 1 probed on a class-stratified
/// share of the training windows (model::label_subset, seeded), the test part whole.
std::string label_fraction_ablation(Runner& run, const json& description, std::ostream& out) {
  const PaperExperimentsOptions& o = run.o;
  const std::string cross = run.pretrain(cross_policy(o), o.pretrain.patch_length, false);
  const std::string sync = run.pretrain(sync_policy(o), o.pretrain.patch_length, false);
  json rows = json::array();
  char buf[256];
  for (double f : o.label_fractions) {
    const data::Windows part = run.train.subset(model::label_subset(run.train, f, o.seed));
    json row = {{"value", f}, {"train_windows", part.size()}};
    row["cross"] = run.classify(model::DownstreamMode::kLinearProbe, cross, o.pretrain.patch_length,
                                "", &part);
    row["sync"] =
        run.classify(model::DownstreamMode::kLinearProbe, sync, o.pretrain.patch_length, "", &part);
    rows.push_back(row);
    std::snprintf(buf, sizeof buf, "label fraction %g (%d windows): LP cross %.4f, sync %.4f\n", f,
                  part.size(), row["cross"]["accuracy"].get<double>(),
                  row["sync"]["accuracy"].get<double>());
    out << buf;
  }
  json doc = common_json(o, description);
  doc["experiment"] = "ablation_label_fraction";
  doc["rule"] = "per class round(f n_c) training windows, at least one; seed = --seed";
  doc["rows"] = rows;
  doc["paper"] = {{"summary",
                   "not in the paper: MAE-style pre-training is expected to help most "
                   "when labels are scarce"}};
  write_json(o.out + "/ablation_label_fraction.json", doc);
  return "ablation_label_fraction.json";
}

/// The input-length ablation, as the transfer study evaluates a model at another length: the
/// cross model of table 1 (pre-trained on the study's windows) linear-probed on windows of each
/// of options.input_seconds — the same source and split seed, cut at that length
/// (model::geometry_at_seconds: whole patches; positions at the new patch indices). The paper
/// pre-trains one model per length instead (L = 100 ... 1600 with 10 patches per modality).
std::string input_length_ablation(Runner& run, const json& description, std::ostream& out) {
  const PaperExperimentsOptions& o = run.o;
  const std::string cross = run.pretrain(cross_policy(o), o.pretrain.patch_length, false);
  const model::ModelGeometry own = model::checkpoint_geometry(cross);
  json rows = json::array();
  char buf[256];
  for (double sec : o.input_seconds) {
    const model::ModelGeometry g = model::geometry_at_seconds(own, sec, "input_seconds");
    StudyDataOptions d = o.data;
    d.selection.window_length = g.length;
    const StudySplit split = train_test_windows(d);
    json row = {{"value", sec},
                {"length", g.length},
                {"patches_per_modality", g.length / g.patch_length},
                {"train_windows", split.train.size()},
                {"test_windows", split.test.size()}};
    row["cross"] = run.classify(model::DownstreamMode::kLinearProbe, cross, o.pretrain.patch_length,
                                "", &split.train, &split.test);
    rows.push_back(row);
    std::snprintf(buf, sizeof buf, "input %g s (%d samples, %d+%d windows): LP cross %.4f\n", sec,
                  g.length, split.train.size(), split.test.size(),
                  row["cross"]["accuracy"].get<double>());
    out << buf;
  }
  json doc = common_json(o, description);
  doc["experiment"] = "ablation_input_length";
  doc["model_length"] = own.length;
  doc["sample_rate_hz"] = own.sample_rate_hz;
  doc["rule"] =
      "one model pre-trained at model_length, probed at each length: round(s x rate) samples "
      "rounded down to whole patches, every token at the position the model was trained with "
      "(model::options_at_length)";
  doc["rows"] = rows;
  doc["paper"] = {{"summary",
                   "one model pre-trained per length (L = 100, 200, 400, 800, 1600; 10 patches "
                   "per modality): best at L = 200 (4 s), FT and LP decline above"}};
  write_json(o.out + "/ablation_input_length.json", doc);
  return "ablation_input_length.json";
}

/// The input-shape table (the paper's Table "Input shape ablation"): MAE Original — the stacked
/// token layout, one token of all C channels per time patch, [1, L, C] — with synchronized
/// masking (the only masks whole time columns allow), beside the table-1 models of the
/// per-modality layout [C, L, 1]: synchronized masking and MoCA's cross masking. Each row is
/// probed and fine-tuned. The paper's "MAE Stacked Inputs [6, 200, 6]" row has no layout here
/// (each of six token rows carrying all six signals) and is reported as not run.
std::string input_shape(Runner& run, const json& description, std::ostream& out) {
  const PaperExperimentsOptions& o = run.o;
  const int lp = o.pretrain.patch_length;
  json rows = json::array();
  char buf[256];
  auto add = [&](const std::string& model, const std::string& shape, const std::string& policy,
                 model::TokenLayout layout, double paper_ft, double paper_lp) {
    const std::string ckpt = run.pretrain(policy, lp, false, layout);
    json row = {{"model", model},
                {"input_shape", shape},
                {"policy", policy},
                {"layout", model::to_string(layout)},
                {"pretrain", run.pretrained[ckpt]},
                {"paper", {{"finetune", paper_ft}, {"linear_probe", paper_lp}}}};
    row["linear_probe"] = run.classify(model::DownstreamMode::kLinearProbe, ckpt, lp);
    row["finetune"] = layout == model::TokenLayout::kModality
                          ? run.finetunes[run.finetuned(policy)]
                          : run.classify(model::DownstreamMode::kFinetune, ckpt, lp);
    std::snprintf(buf, sizeof buf, "%-34s %-12s FT %.4f  LP %.4f | paper %.3f %.3f\n",
                  model.c_str(), shape.c_str(), row["finetune"]["accuracy"].get<double>(),
                  row["linear_probe"]["accuracy"].get<double>(), paper_ft, paper_lp);
    out << buf;
    rows.push_back(row);
  };
  const std::string c = std::to_string(run.train.channels), l = std::to_string(run.train.length);
  add("MAE Original", "[1, " + l + ", " + c + "]", sync_policy(o), model::TokenLayout::kStacked,
      0.927, 0.904);
  add("MAE Synchronized Masking", "[" + c + ", " + l + ", 1]", sync_policy(o),
      model::TokenLayout::kModality, 0.917, 0.863);
  add("MoCA (w/o aug.)", "[" + c + ", " + l + ", 1]", cross_policy(o),
      model::TokenLayout::kModality, 0.948, 0.924);
  json doc = common_json(o, description);
  doc["experiment"] = "input_shape";
  doc["rows"] = rows;
  doc["not_run"] = {
      {{"model", "MAE Stacked Inputs"},
       {"input_shape", "[6, 200, 6]"},
       {"paper", {{"finetune", 0.856}, {"linear_probe", 0.508}}},
       {"why",
        "moca's token layouts are one modality's patch per token (modality) or every channel's "
        "patch in one token (stacked); six token rows each carrying all six signals is neither"}}};
  write_json(o.out + "/input_shape.json", doc);
  return "input_shape.json";
}

/// The patch-length ablation (cross masking with each of options.patch_lengths).
std::string patch_length_ablation(Runner& run, const json& description, std::ostream& out) {
  const PaperExperimentsOptions& o = run.o;
  const json rows = ablation(
      run, "patch length", o.patch_lengths,
      [&](const json& v) {
        const int plp = v.get<int>();
        return std::make_pair(run.pretrain(cross_policy(o), plp, false), plp);
      },
      out);
  json doc = common_json(o, description);
  doc["experiment"] = "ablation_patch_length";
  doc["rows"] = rows;
  doc["paper"] = {{"finetune", {{"5", 0.948}, {"10", 0.945}, {"20", 0.948}}},
                  {"linear_probe", {{"5", 0.933}, {"10", 0.928}, {"20", 0.924}}},
                  {"summary", "performance degrades as the patch length grows beyond 20"}};
  write_json(o.out + "/ablation_patch_length.json", doc);
  return "ablation_patch_length.json";
}

/// Reconstructions of the first test window by the cross model under the four tasks (CSV and,
/// with png, a figure each). Writes reconstructions.json.
std::string reconstructions(Runner& run, const StudySplit& split) {
  const PaperExperimentsOptions& o = run.o;
  const std::string ckpt = run.pretrain(cross_policy(o), o.pretrain.patch_length, false);
  std::filesystem::create_directories(o.out + "/reconstructions");
  json rows = json::array();
  const std::vector<std::pair<std::string, std::string>> tasks = {
      {"random", "random:ratio=0.7"},
      {"temporal", "temporal:ratio=0.7"},
      {"sensor", "sensor:keep=1"},
      {"extrapolation", "extrapolation:ratio=0.7"}};
  for (const auto& [name, spec] : tasks) {
    model::ReconstructOptions ro;
    ro.checkpoint = ckpt;
    ro.window = 0;
    ro.policy = spec;
    ro.seed = o.seed;
    ro.out = o.out + "/reconstructions/" + name;
    ro.png = o.png;
    ro.baselines = true;
    ro.mice.iterations = o.mice_iterations;
    ro.mice.draws = o.mice_draws;
    ro.inference.runtime.threads = o.threads;
    ro.inference.runtime.device = o.device;
    std::ostringstream rlog;
    const model::ReconstructResult r = model::reconstruct_window(ro, split.test, rlog);
    json baselines = json::object();
    for (const auto& [method, e] : r.baselines)
      baselines[method] = {{"mae_masked", e.mae}, {"mse_masked", e.mse}};
    rows.push_back({{"baselines", baselines},
                    {"task", name},
                    {"policy", spec},
                    {"csv", "reconstructions/" + name + ".csv"},
                    {"png", o.png ? "reconstructions/" + name + ".png" : ""},
                    {"mask", r.mask.to_string()},
                    {"mae_masked", r.mae_masked},
                    {"mse_masked", r.mse_masked}});
  }
  json doc = common_json(o, split.description);
  doc["experiment"] = "reconstructions";
  doc["checkpoint"] = ckpt;
  doc["rows"] = rows;
  write_json(o.out + "/reconstructions.json", doc);
  return "reconstructions.json";
}

/// The first test window of each class in `names` (classes the data lacks are skipped).
std::vector<int> first_of_classes(const data::Windows& w, const std::vector<std::string>& names) {
  std::vector<int> rows;
  for (const auto& n : names) {
    const auto it = std::find(w.class_names.begin(), w.class_names.end(), n);
    if (it == w.class_names.end()) continue;
    const int id = static_cast<int>(it - w.class_names.begin());
    for (int i = 0; i < w.size(); ++i) {
      if (w.labels(i) == id) {
        rows.push_back(i);
        break;
      }
    }
  }
  if (rows.empty()) rows.push_back(0);
  return rows;
}

/// What the fine-tuned cross, sync and from-scratch models learned: attention maps of a walking
/// and a laying test window (inspect/attention_<model>/window_<i>*), and a UMAP map of their
/// class-token embeddings of the test windows side by side (inspect/class_token_umap.png).
/// Writes inspect.json.
std::string inspect(Runner& run, const StudySplit& split) {
  const PaperExperimentsOptions& o = run.o;
  const std::string dir = o.out + "/inspect";
  std::filesystem::create_directories(dir);
  const std::vector<std::pair<std::string, std::string>> models = {
      {"cross", run.finetuned(cross_policy(o))},
      {"sync", run.finetuned(sync_policy(o))},
      {"scratch", run.finetuned("")}};
  const std::vector<int> windows = first_of_classes(split.test, {"walking", "laying"});
  data::Windows test = split.test;
  if (test.size() > embed::kUmapMaxPoints) {
    std::vector<int> rows(static_cast<size_t>(embed::kUmapMaxPoints));
    for (int i = 0; i < embed::kUmapMaxPoints; ++i) rows[static_cast<size_t>(i)] = i;
    test = test.subset(rows);
  }
  std::vector<std::string> classes;
  for (int i = 0; i < test.size(); ++i) classes.push_back(model::class_label(test, i));
  model::InferenceOptions io;
  io.runtime.threads = o.threads;
  io.runtime.device = o.device;
  embed::UmapOptions uo;
  uo.neighbors = std::max(2, std::min(uo.neighbors, test.size()));  // tiny (smoke) test sets
  uo.seed = o.seed;
  uo.threads = o.threads;
  json rows = json::array();
  std::vector<embed::MapPanel> panels;
  for (const auto& [name, ckpt] : models) {
    const model::EncoderInspector ins(ckpt, io);
    const std::string adir = dir + "/attention_" + name;
    std::filesystem::create_directories(adir);
    json att = json::array();
    for (int w : windows) {
      const std::string title = name + " (fine-tuned), test window " + std::to_string(w) + " - " +
                                model::class_label(split.test, w);
      json a = model::write_attention_report(ins.attention(split.test, w), split.test, w,
                                             adir + "/window_" + std::to_string(w), title, o.png);
      for (auto& f : a["files"]) f = f.get<std::string>().substr(o.out.size() + 1);  // relative
      a["window"] = w;
      a["class"] = model::class_label(split.test, w);
      att.push_back(a);
    }
    const Eigen::MatrixXd z = ins.embed(test, model::Pool::kCls);
    const Eigen::MatrixXd y = embed::umap_layout(z, uo);
    std::ostringstream csv;
    csv.precision(17);
    csv << "window,label,class,x,y\n";
    for (int i = 0; i < test.size(); ++i) {
      csv << i << "," << test.labels(i) << "," << classes[static_cast<size_t>(i)] << "," << y(i, 0)
          << "," << y(i, 1) << "\n";
    }
    write_output_text(dir + "/class_token_umap_" + name + ".csv", csv.str());
    panels.push_back({name, y, classes});
    rows.push_back({{"model", name},
                    {"checkpoint", ckpt},
                    {"finetune", run.finetunes[ckpt]},
                    {"attention", att},
                    {"map", "inspect/class_token_umap_" + name + ".csv"}});
    run.log << "paper_experiments: inspected " << name << " (total " << run.elapsed() << " s)\n";
  }
  embed::write_map_figure(panels, dir + "/class_token_umap",
                          "UMAP of class-token embeddings of the fine-tuned encoders (" +
                              std::to_string(test.size()) + " test windows, seed " +
                              std::to_string(o.seed) + ")",
                          o.png);
  json doc = common_json(o, split.description);
  doc["experiment"] = "inspect";
  doc["windows"] = windows;
  doc["rows"] = rows;
  doc["map"] = {
      {"png", o.png ? "inspect/class_token_umap.png" : ""},
      {"script", "inspect/class_token_umap.gp"},
      {"umap", {{"neighbors", uo.neighbors}, {"min_dist", uo.min_dist}, {"seed", uo.seed}}}};
  doc["definitions"] =
      "attention: per layer/head softmax(q k^T / sqrt(d)) of an explicit inspection pass, every "
      "token visible; heat maps shade each patch by the cls row of the attention rollout "
      "(Abnar & Zuidema 2020); map: UMAP of the cls row of the final norm";
  write_json(o.out + "/inspect.json", doc);
  return "inspect.json";
}

}  // namespace

json run_paper_experiments(const PaperExperimentsOptions& options, std::ostream& out,
                           std::ostream& log) {
  options.validate();
  const StudySplit split = train_test_windows(options.data);
  std::filesystem::create_directories(options.out);
  // One study per output folder at a time (its checkpoints are locked one by one as well).
  const FileLock lock(lock_path_for_folder(options.out), "output folder " + options.out);
  Runner run{options, split.train, split.test,
             options.workdir.empty() ? options.out + "/checkpoints" : options.workdir, log};
  std::filesystem::create_directories(run.workdir);
  log << "paper_experiments: " << split.train.size() << " training, " << split.test.size()
      << " test windows\n";
  auto wants = [&](const std::string& e) {
    return std::find(options.only.begin(), options.only.end(), e) != options.only.end();
  };
  json files = json::array();
  if (wants("table1")) files.push_back(table1(run, split.description, out));
  if (wants("imputation")) files.push_back(imputation(run, split, out));
  if (wants("mask_ratio")) files.push_back(mask_ratio_ablation(run, split.description, out));
  if (wants("patch_length")) files.push_back(patch_length_ablation(run, split.description, out));
  if (wants("label_fraction")) {
    files.push_back(label_fraction_ablation(run, split.description, out));
  }
  if (wants("input_length")) {
    files.push_back(input_length_ablation(run, split.description, out));
  }
  if (wants("input_shape")) files.push_back(input_shape(run, split.description, out));
  if (wants("reconstruct")) files.push_back(reconstructions(run, split));
  if (wants("inspect")) files.push_back(inspect(run, split));
  return {{"files", files}, {"seconds", run.elapsed()}};
}

}  // namespace moca::sim
