#pragma once
/// \file commands.hpp
/// The bodies of the `moca` tool's subcommands. main() only parses flags into these structs and
/// calls run_*(); tests call the same functions. Every run_* prints a readable report to `out`,
/// progress and notes to `log`, writes JSON when asked, and returns the JSON document. They throw
/// std::invalid_argument for bad options or data (exit 2) and std::runtime_error for I/O and
/// numerical failures (exit 1).
#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "moca/data/dataset.hpp"
#include "moca/data/export.hpp"
#include "moca/data/selection.hpp"
#include "moca/data/windows.hpp"
#include "moca/model/dist/run_context.hpp"
#include "moca/model/eval/attention_report.hpp"
#include "moca/model/eval/classify.hpp"
#include "moca/model/eval/downstream.hpp"
#include "moca/model/eval/embed_views.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/eval/impute_data.hpp"
#include "moca/model/eval/interop.hpp"
#include "moca/model/eval/predict.hpp"
#include "moca/model/eval/protocol.hpp"
#include "moca/model/eval/reconstruct.hpp"
#include "moca/model/train/pretrain.hpp"

namespace moca::tools {

/// Where the windows come from and which part of them a command uses.
/// The data selection of the commands (src/moca/data/selection.hpp).
using data::DataOptions;

/// The geometry a checkpoint expects: its window length L and sample rate (the rate recorded by
/// pre-training; 50 Hz for checkpoints that predate it).
using model::checkpoint_geometry;
using model::ModelGeometry;

/// moca pretrain
struct PretrainCommand {
  DataOptions data;
  model::PretrainOptions train;
  std::string json;  ///< summary JSON file; empty = none
};
/// On the ranks of `context` (its log: data notes and progress; rank 0 alone reports on `out`
/// and writes --json).
nlohmann::json run_pretrain(const PretrainCommand& cmd, std::ostream& out,
                            model::RunContext& context, const std::atomic<bool>* stop = nullptr);

/// moca linprobe | finetune (classification under a protocol): model::classify() and its
/// outputs.
struct ClassifyCommand {
  model::ClassifyOptions options;
  std::string json;         ///< result JSON; empty = none
  std::string predictions;  ///< CSV of fold,truth,predicted for `moca metrics`; empty = none
};
/// On the ranks of `context` (its log: data notes and progress; rank 0 alone reports on `out`
/// and writes the files).
nlohmann::json run_classify(const ClassifyCommand& cmd, std::ostream& out,
                            model::RunContext& context);

/// moca metrics: metrics of a predictions CSV (columns truth,predicted, optional fold first).
struct MetricsCommand {
  std::string predictions;
  int classes = 0;  ///< 0 = max id + 1
  std::string json;
};
nlohmann::json run_metrics(const MetricsCommand& cmd, std::ostream& out);

/// moca predict: model::predict_data and its outputs.
struct PredictCommand {
  model::PredictOptions options;
  /// CSV window,subject,predicted[,truth][,p_<class>...]; empty = on `out` (the report then
  /// goes to `log`).
  std::string out_csv;
  std::string json;  ///< summary JSON; empty = none
};
nlohmann::json run_predict(const PredictCommand& cmd, std::ostream& out, std::ostream& log);

/// moca export: a checkpoint (MAE or classifier) as PyTorch weights in the MAE/timm layout, a
/// torch.save file or a safetensors file (model::export_pytorch; load either with
/// moca.torch_model in Python).
struct ExportCommand {
  std::string checkpoint;
  std::string out;
  model::WeightsFormat format = model::WeightsFormat::kAuto;
};
nlohmann::json run_export(const ExportCommand& cmd, std::ostream& out);

/// moca import: PyTorch weights (a torch.save file holding a bare state dict or {'model': ...},
/// or a safetensors file) as a moca checkpoint (model::import_pytorch).
struct ImportCommand {
  std::string weights;
  std::string out;
  model::ImportOptions options;
};
nlohmann::json run_import(const ImportCommand& cmd, std::ostream& out, std::ostream& log);

/// moca impute
struct ImputeCommand {
  model::ImputeDataOptions options;
  std::string json;
};
nlohmann::json run_impute(const ImputeCommand& cmd, std::ostream& out, std::ostream& log);

/// moca embed: encoder features of both views of the test windows (model::embed_views: Z_U.npy,
/// Z_M.npy, masks.txt, labels.npy) for the policy scorer or any CCA tool, and embed.json.
struct EmbedCommand {
  model::EmbedOptions options;
};
/// The views' features (model::embed_views) or, with --pool/--map, the pooled embeddings and
/// their maps (model::embed_maps); embed.json beside them.
nlohmann::json run_embed(const EmbedCommand& cmd, std::ostream& out, std::ostream& log);

/// moca attention: model::attention_reports, and attention.json beside the reports.
using AttentionCommand = model::AttentionOptions;
nlohmann::json run_attention(const AttentionCommand& cmd, std::ostream& out, std::ostream& log);

/// moca reconstruct (on the test part)
struct ReconstructCommand {
  DataOptions data;
  model::ReconstructOptions options;
};
nlohmann::json run_reconstruct(const ReconstructCommand& cmd, std::ostream& out, std::ostream& log);

/// moca data inspect: what the loader sees and what each program will do with it.
struct DataInspectCommand {
  DataOptions data;
  std::string checkpoint;  ///< optional: open at this model's length and rate
  std::string json;
};
nlohmann::json run_data_inspect(const DataInspectCommand& cmd, std::ostream& out,
                                std::ostream& log);

/// moca data export: any source as an ssl-wearables folder (data::export_selection).
using DataExportCommand = data::ExportOptions;
nlohmann::json run_data_export(const DataExportCommand& cmd, std::ostream& out, std::ostream& log);

/// moca data window: continuous labelled recordings (one CSV / .csv.gz per subject) cut into
/// windows and written as an ssl-wearables folder (data::window_recordings_to_folder).
using DataWindowCommand = data::WindowExportOptions;
nlohmann::json run_data_window(const DataWindowCommand& cmd, std::ostream& out);

}  // namespace moca::tools
