// theory_vs_training: does the KCCA/CCA score of a masking policy predict the held-out
// reconstruction loss and linear-probe accuracy of a model trained with it? See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "moca/common/output_file.hpp"
#include "moca/masking/policy_spec.hpp"
#include "run_cli.hpp"
#include "study_flags.hpp"
#include "theory_vs_training.hpp"

int main(int argc, char** argv) {
  moca::sim::TheoryVsTrainingOptions o;
  std::string policies;
  CLI::App app{
      "theory_vs_training: rank correlations between the policy score E_m[Phi(m)] and "
      "what short CPU trainings with each policy achieve"};
  moca::sim::add_study_data_flags(&app, o.data, "training windows (test: 3/7 of that)");
  app.add_option("--policies", policies,
                 "comma-separated policy specs (default: cross 0.25/0.5/0.75/0.9, sync, "
                 "temporal, per-modality, adaptive)");
  app.add_option("--features", o.features, "score feature map: raw | patch-mean")
      ->capture_default_str();
  app.add_option("--pca", o.pca, "principal components per view")->capture_default_str();
  app.add_option("--draws", o.draws, "mask draws of the score")->capture_default_str();
  app.add_option("--eval-policy", o.eval_policy, "common held-out task")->capture_default_str();
  app.add_option("--preset", o.preset, "model preset")->capture_default_str();
  app.add_option("--patch-length", o.patch_length, "samples per patch")->capture_default_str();
  app.add_option("--epochs", o.epochs, "pre-training epochs")->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "pre-training batch size")->capture_default_str();
  app.add_option("--lr", o.lr, "pre-training learning rate")->capture_default_str();
  app.add_option("--warmup-epochs", o.warmup_epochs, "warm-up epochs")->capture_default_str();
  app.add_option("--probe-epochs", o.probe_epochs, "linear-probe epochs")->capture_default_str();
  app.add_option("--workdir", o.workdir, "checkpoint folder")->capture_default_str();
  app.add_option("--resamples", o.resamples, "bootstrap resamples")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of masks, weights and bootstrap")->capture_default_str();
  app.add_option("--threads", o.threads, "threads (0 = default)")->capture_default_str();
  app.add_option("--json", o.json, "write results as JSON to this file");
  return moca::tools::run_cli("theory_vs_training", app, argc, argv, [&] {
    moca::check_writable(o.json, "--json");
    moca::check_writable_folder(o.workdir, "--workdir", true);
    o.recorded_options = moca::tools::config_json(app);
    if (!policies.empty()) o.policies = moca::masking::split_spec_list(policies, "--policies");
    // --json -: standard output carries the JSON alone, the report goes to stderr.
    moca::sim::run_theory_vs_training(o, moca::tools::report_stream(o.json), std::cerr);
    return 0;
  });
}
