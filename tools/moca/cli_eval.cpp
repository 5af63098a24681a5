// `moca metrics`, `impute`, `embed`, `reconstruct` and `data inspect|export`: flags ->
// commands.hpp.
#include <iostream>
#include <memory>

#include "cli.hpp"
#include "moca/common/error_text.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

namespace moca::tools {

Subcommand add_metrics_cli(CLI::App& app) {
  auto met = std::make_shared<MetricsCommand>();
  auto no_progress = std::make_shared<bool>(false);
  auto* m = app.add_subcommand("metrics", "top-1, macro-F1, balanced accuracy, confusion matrix");
  m->add_option("--predictions", met->predictions, "CSV truth,predicted or fold,truth,predicted")
      ->required();
  m->add_option("--classes", met->classes, "0 = max id + 1")->capture_default_str();
  m->add_option("--json", met->json, "result JSON file");
  add_no_progress(m, *no_progress);
  return {m, [met]() {
            run_metrics(*met, report_stream(met->json));
            return 0;
          }};
}

Subcommand add_predict_cli(CLI::App& app) {
  auto c = std::make_shared<PredictCommand>();
  auto no_progress = std::make_shared<bool>(false);
  auto* p = app.add_subcommand(
      "predict", "apply a kept classifier (linprobe/finetune --save-model) to every window");
  add_data_options(p, c->options.data, /*split=*/false, data::kStreamScope);
  add_runtime_options(p, c->options.runtime);
  add_schema_options(p, c->options, kEveryScope);  // model::PredictOptions::schema
  p->add_option("--out", c->out_csv,
                "CSV window,subject,predicted[,truth][,p_<class>...]; default: stdout");
  p->add_option("--json", c->json, "summary JSON file (metrics when the data has labels)");
  add_no_progress(p, *no_progress);
  return {p, [c]() {
            run_predict(*c, report_stream(c->json), std::cerr);
            return 0;
          }};
}

Subcommand add_export_cli(CLI::App& app) {
  auto c = std::make_shared<ExportCommand>();
  auto no_progress = std::make_shared<bool>(false);
  auto* e = app.add_subcommand(
      "export",
      "a checkpoint as PyTorch weights, .pth or .safetensors (MAE/timm key names; "
      "docs/interop.md)");
  e->add_option("--checkpoint", c->checkpoint, "moca checkpoint (MAE or kept classifier)")
      ->required();
  e->add_option("--out", c->out, "weights file to write (.pth or .safetensors)")->required();
  add_enum_option(e, "--format", c->format, model::kWeightsFormatNames,
                  "auto | pth | safetensors (auto: safetensors for a name ending in "
                  ".safetensors, else pth)");
  add_no_progress(e, *no_progress);
  return {e, [c]() {
            run_export(*c, std::cout);
            return 0;
          }};
}

Subcommand add_import_cli(CLI::App& app) {
  auto c = std::make_shared<ImportCommand>();
  auto no_progress = std::make_shared<bool>(false);
  model::ImportOptions& o = c->options;
  auto* i = app.add_subcommand(
      "import",
      "PyTorch weights (MAE/timm layout; .pth or .safetensors) as a moca checkpoint "
      "(docs/interop.md)");
  i->add_option("--weights,--pth", c->weights,
                "weights file: a torch.save file (bare state dict or {'model': ...}) or a "
                "safetensors file, told apart by their first bytes")
      ->required();
  i->add_option("--out", c->out, "moca checkpoint to write")->required();
  add_schema_options(i, o, kEveryScope);  // model::ImportOptions::schema
  add_no_progress(i, *no_progress);
  return {i, [c]() {
            run_import(*c, std::cout, std::cerr);
            return 0;
          }};
}

Subcommand add_impute_cli(CLI::App& app) {
  auto imp = std::make_shared<ImputeCommand>();
  auto flags = std::make_shared<std::pair<bool, bool>>(false, false);  // no-progress, baselines
  model::ImputeDataOptions& o = imp->options;
  auto* i = app.add_subcommand("impute", "the four imputation tasks: models and baselines");
  add_data_options(i, o.data, true, data::kStreamScope);
  add_runtime_options(i, o.impute.inference.runtime);
  add_schema_options(i, o, kEveryScope);  // model::ImputeDataOptions::schema
  i->add_flag("--no-baselines", flags->second, "skip linear, nearest and MICE");
  i->add_option("--json", imp->json, "result JSON file");
  add_no_progress(i, flags->first);
  return {i, [imp, flags]() {
            imp->options.impute.baselines = !flags->second;
            run_impute(*imp, report_stream(imp->json), std::cerr);
            return 0;
          }};
}

Subcommand add_embed_cli(CLI::App& app) {
  auto emb = std::make_shared<EmbedCommand>();
  auto flags = std::make_shared<std::pair<bool, bool>>(false, false);  // no-progress, no-png
  auto* e = app.add_subcommand(
      "embed", "encoder features of both views (for CCA scoring), or pooled embeddings and maps");
  add_data_options(e, emb->options.data, true, data::kStreamScope);
  add_runtime_options(e, emb->options.inference.runtime);
  add_schema_options(e, emb->options, kEveryScope);  // model::EmbedOptions::schema
  e->add_flag("--no-png", flags->second, "maps: CSV, NPY and the gnuplot script only");
  add_no_progress(e, flags->first);
  after_parse(e, [e, emb] {
    inert_fields(*e, model::unused_options(emb->options));
    if (!emb->options.map) inert_option(*e, "--no-png", "only a --map draws a figure");
  });
  return {e, [emb, flags]() {
            emb->options.png = !flags->second;
            run_embed(*emb, std::cout, std::cerr);
            return 0;
          }};
}

Subcommand add_reconstruct_cli(CLI::App& app) {
  auto rec = std::make_shared<ReconstructCommand>();
  auto flags = std::make_shared<std::pair<bool, bool>>(false, false);  // no-progress, no-png
  model::ReconstructOptions& o = rec->options;
  auto* r = app.add_subcommand("reconstruct", "CSV and PNG of a reconstructed test window");
  add_data_options(r, rec->data);
  add_runtime_options(r, o.inference.runtime);
  add_schema_options(r, o, kEveryScope);  // model::ReconstructOptions::schema
  r->get_option("--checkpoint")->required();
  r->add_flag("--no-png", flags->second, "CSV only");
  add_no_progress(r, flags->first);
  return {r, [rec, flags]() {
            rec->options.png = !flags->second;
            run_reconstruct(*rec, std::cout, std::cerr);
            return 0;
          }};
}

Subcommand add_data_cli(CLI::App& app) {
  auto ins = std::make_shared<DataInspectCommand>();
  auto exp = std::make_shared<DataExportCommand>();
  auto no_progress = std::make_shared<bool>(false);
  auto* dat = app.add_subcommand("data", "inspect or export a data set (any --data source)");
  dat->require_subcommand(1);
  auto* di = dat->add_subcommand("inspect", "what the loader sees and what each program does");
  // (no split flags: inspect describes the split each program makes at its defaults)
  add_data_options(di, ins->data, /*split=*/false);
  di->add_option("--checkpoint", ins->checkpoint, "open at this model's length and rate");
  di->add_option("--json", ins->json, "result JSON file");
  auto* de = dat->add_subcommand("export", "write any source as an ssl-wearables .npy folder");
  add_data_options(de, exp->data, true, data::kStreamScope);
  add_schema_options(de, *exp, kEveryScope);  // data::ExportOptions::schema
  auto win = std::make_shared<DataWindowCommand>();
  auto* dw = dat->add_subcommand(
      "window", "cut continuous labelled recordings (CSV files, per subject) into an .npy folder");
  // data::WindowExportOptions::schema; --groups is the and the field's other name
  add_schema_options(dw, *win, kEveryScope, {{"--modalities", "--groups"}});
  add_no_progress(di, *no_progress);
  add_no_progress(de, *no_progress);
  add_no_progress(dw, *no_progress);
  after_parse(de, [de, exp] { inert_fields(*de, data::unused_options(*exp)); });
  after_parse(dw, [dw, win] { inert_fields(*dw, data::unused_options(*win)); });
  return {dat, [ins, exp, win, di, dw]() {
            if (di->parsed()) {
              run_data_inspect(*ins, report_stream(ins->json), std::cerr);
            } else if (dw->parsed()) {
              run_data_window(*win, std::cout);
            } else {
              run_data_export(*exp, std::cout, std::cerr);
            }
            return 0;
          }};
}

}  // namespace moca::tools
