// moca: pre-train MoCA masked autoencoders with any masking policy, probe and fine-tune them,
// impute missing data, and export the encoder as a feature map. See docs/model.md.
// The subcommands and their flags are in cli_*.cpp (cli.hpp); their bodies in commands.cpp.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "cli.hpp"
#include "run_cli.hpp"

int main(int argc, char** argv) {
  // libgomp reads OMP_WAIT_POLICY when it is loaded, before main. Its default (spin, then
  // sleep) makes idle pool threads compete with the working ones — ~40 % slower CPU training
  // steps measured (docs/benchmarks/model.md) — so without an explicit choice the tool restarts
  // itself once with passive waiting. A failed exec just continues.
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("OMP_WAIT_POLICY", "passive", 1);
    execv("/proc/self/exe", argv);
  }
  using namespace moca::tools;
  CLI::App app{
      "moca: MoCA masked autoencoders for multi-modal wearable time series\n"
      "(runs with OMP_WAIT_POLICY=passive unless the environment sets it)"};
  app.require_subcommand(1);
  const std::vector<Subcommand> subs = {
      add_pretrain_cli(app),       add_launch_cli(app),      add_classify_cli(app, false),
      add_classify_cli(app, true), add_metrics_cli(app),     add_predict_cli(app),
      add_export_cli(app),         add_import_cli(app),      add_impute_cli(app),
      add_embed_cli(app),          add_reconstruct_cli(app), add_data_cli(app),
      add_attention_cli(app)};
  return run_cli("moca", app, argc, argv, [&] { return run_parsed(subs); });
}
