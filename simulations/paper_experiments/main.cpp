// paper_experiments: the paper's training experiments (Table 1, imputation table, mask-ratio and
// patch-length ablations, reconstruction examples) at CPU scale. See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>

#include "enum_option.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_spec.hpp"
#include "paper_experiments.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"
#include "study_flags.hpp"

int main(int argc, char** argv) {
  moca::sim::PaperExperimentsOptions o;
  std::string only;  // the default: every experiment, as PaperExperimentsOptions lists them
  for (const std::string& e : o.only) only += (only.empty() ? "" : ",") + e;
  CLI::App app{
      "paper_experiments: Table 1, the imputation table, the mask-ratio, "
      "patch-length and label-fraction ablations, reconstruction examples, attention and embedding "
      "maps at CPU "
      "scale"};
  moca::sim::add_study_data_flags(&app, o.data, "training windows cap (test: 3/7 of it)");
  app.add_option("--out", o.out, "output folder")->capture_default_str();
  app.add_option("--workdir", o.workdir, "checkpoint folder (default <out>/checkpoints)");
  app.add_option("--only", only, "comma-separated experiments")->capture_default_str();
  // the pre-training rows of model::PretrainOptions the studies take (its schema)
  moca::tools::add_schema_options(&app, o.pretrain, moca::model::kStudyScope,
                                  {{"--batch", "--batch-size"}});  // (--batch-size: its old name)
  // the experiments' warm-up is set (default_experiments_pretrain), not moca pretrain's default
  app.get_option("--warmup-epochs")->description("linear warm-up in epochs (in [0, epochs))");
  app.add_option("--ratio", o.ratio, "mask ratio")->capture_default_str();
  app.add_option("--probe-epochs", o.probe_epochs, "linear-probe epochs")->capture_default_str();
  app.add_option("--finetune-epochs", o.finetune_epochs, "fine-tune epochs")->capture_default_str();
  app.add_flag("--augment", o.augment, "table 1: also the w/ aug. rows");
  app.add_flag("--finetune-ablations", o.finetune_ablations, "ablations: also fine-tune");
  app.add_option("--label-fractions", o.label_fractions,
                 "label-fraction ablation: shares of the training windows (per class)")
      ->capture_default_str();
  app.add_option("--input-seconds", o.input_seconds,
                 "input-length ablation: seconds of input the cross model is probed at")
      ->capture_default_str();
  app.add_option("--mask-ratios", o.mask_ratios, "mask-ratio ablation values")
      ->capture_default_str();
  app.add_option("--patch-lengths", o.patch_lengths, "patch-length ablation values")
      ->capture_default_str();
  app.add_option("--mice-iterations", o.mice_iterations, "MICE sweeps")->capture_default_str();
  app.add_option("--mice-draws", o.mice_draws, "MICE chains")->capture_default_str();
  bool no_png = false;
  app.add_flag("--no-png", no_png, "skip gnuplot PNGs (reconstructions, attention, maps)");
  app.add_option("--seed", o.seed, "seed")->capture_default_str();
  app.add_option("--threads", o.threads, "threads (0 = default)")->capture_default_str();
  moca::tools::add_enum_option(&app, "--device", o.device, moca::model::kDeviceNames,
                               "auto | cpu | cuda: where every model trains and runs");
  moca::tools::add_enum_option(&app, "--precision", o.precision, moca::model::kPrecisionNames,
                               "fp32 | bf16 (autocast of the training forward passes)");
  return moca::tools::run_cli("paper_experiments", app, argc, argv, [&] {
    moca::check_writable_folder(o.out, "--out", true);
    moca::check_writable_folder(o.workdir, "--workdir", true);
    o.png = !no_png;
    o.only = moca::masking::split_spec_list(only, "--only");
    moca::sim::run_paper_experiments(o, std::cout, std::cerr);
    return 0;
  });
}
