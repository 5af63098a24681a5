#pragma once
/// \file cli.hpp
/// The `moca` tool's command line: one function per subcommand adds the subcommand and its
/// flags to the app and returns the callback that runs it (the flags land in a command struct
/// of commands.hpp that the callback owns). main() only collects these and runs the parsed one.
#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "commands.hpp"

namespace moca::tools {

// Flag groups several subcommands share (cli_flags.cpp).
/// --data and --data-*, --split*, --train-fraction, --folds, --fold (without `split`: none of
/// these five, for a command on every window), --window-length and the generator's flags;
/// `extra`: the rows of more scopes (moca pretrain: data::kStreamScope, --stream).
void add_data_options(CLI::App* app, DataOptions& d, bool split = true, Scope extra = 0);
/// The rows of model::RuntimeOptions::schema in `scope` (--device, --threads, --tf32; training:
/// --precision, --cuda-graphs; pre-training: --batch-shards), and the refusal of the CUDA-only
/// switches beside --device cpu.
void add_runtime_options(CLI::App* app, model::RuntimeOptions& r,
                         Scope scope = model::RuntimeOptions::kInferenceRuntimeScope);
/// --backend, --dist-timeout.
void add_dist_options(CLI::App* app, model::DistOptions& d);
/// --no-progress (every subcommand accepts it).
void add_no_progress(CLI::App* app, bool& no_progress);

/// A subcommand and what to run when it was parsed (returns the exit status), given the
/// program's effective options (config_json) that a command's JSON records as "options".
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Subcommand add_pretrain_cli(CLI::App& app);
Subcommand add_launch_cli(CLI::App& app);
/// linprobe (finetune = false) or finetune.
Subcommand add_classify_cli(CLI::App& app, bool finetune);
Subcommand add_metrics_cli(CLI::App& app);
Subcommand add_predict_cli(CLI::App& app);
Subcommand add_export_cli(CLI::App& app);
Subcommand add_import_cli(CLI::App& app);
Subcommand add_impute_cli(CLI::App& app);
Subcommand add_embed_cli(CLI::App& app);
Subcommand add_reconstruct_cli(CLI::App& app);
/// data inspect | data export.
Subcommand add_data_cli(CLI::App& app);
/// attention (cli_inspect.cpp).
Subcommand add_attention_cli(CLI::App& app);

/// Runs the first parsed subcommand of `subs` (0 when none was).
int run_parsed(const std::vector<Subcommand>& subs);

}  // namespace moca::tools
