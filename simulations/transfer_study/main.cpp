// transfer_study: the paper's transfer table (Table 2) as one resumable study — named
// checkpoints x named data sets x LP/FT, a supervised baseline and a shuffled-label control;
// see docs/studies.md ("transfer_study").
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "moca/common/output_file.hpp"
#include "run_cli.hpp"
#include "transfer_study.hpp"

int main(int argc, char** argv) {
  moca::sim::TransferStudyOptions o;
  std::vector<std::string> models, data, sets;
  std::string settings = "lp,ft";
  bool no_scratch = false, no_control = false;
  CLI::App app{
      "transfer_study: models pre-trained elsewhere, linear-probed (lp) and fine-tuned (ft) on "
      "named data sets with subject-wise folds (the paper's Table 2); resumable (run the same "
      "command again), --jobs in parallel, --shard K/N for SLURM job arrays, --report rebuilds "
      "report.md/report.json/figures from the ledgers"};
  app.add_option("--out", o.out, "output folder (ledger, units/, report, figures/)")->required();
  app.add_option("--model", models,
                 "NAME=CHECKPOINT, repeatable, in table order (scratch is the supervised "
                 "baseline's name)");
  app.add_option("--data", data,
                 "NAME=SPEC, repeatable: a data set (npy:DIR, hmp:DIR, hapt:DIR, DIR, "
                 "generator:...) in table order");
  app.add_option("--set", sets,
                 "NAME.KEY=VALUE, repeatable: a data set's option; KEY: format, modalities, "
                 "sample-rate, channel-names, segment, keep-classes, npy-layout, "
                 "drop-nonfinite, protocol (auto|random|subject-kfold|loso), folds, "
                 "match-channels (name|position), input-seconds, paper (appendix column)");
  app.add_option("--settings", settings, "comma-separated: lp, ft")->capture_default_str();
  app.add_flag("--no-scratch", no_scratch, "leave out the supervised baseline (scratch)");
  app.add_option("--scratch-preset", o.scratch_preset, "the supervised baseline's architecture")
      ->capture_default_str();
  app.add_flag("--no-control", no_control,
               "leave out the shuffled-label linear probe (first model) per data set");
  app.add_option("--lp-epochs", o.lp_epochs, "linear-probe epochs")->capture_default_str();
  app.add_option("--ft-epochs", o.ft_epochs, "fine-tuning epochs")->capture_default_str();
  app.add_option("--scratch-epochs", o.scratch_epochs, "supervised baseline epochs")
      ->capture_default_str();
  app.add_option("--split-seed", o.split_seed, "seed of the subject folds")->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the heads, batch order and drop path")
      ->capture_default_str();
  app.add_option("--label-fraction", o.label_fraction,
                 "share of each training fold's labels, per class (at least one each)")
      ->capture_default_str();
  app.add_option("--jobs", o.jobs, "units at once (threads are split between them)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "threads in all (0 = cores)")->capture_default_str();
  app.add_option("--max-units", o.max_units,
                 "stop after this many new units (-1 = no limit); run again to resume")
      ->capture_default_str();
  app.add_option("--shard", o.shard,
                 "K/N: run this share of the units (a SLURM array task; default "
                 "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, else 1/1) into "
                 "ledger.shard-K-of-N.jsonl; --report merges the shards");
  app.add_flag("--report", o.report, "only rebuild the report from the ledgers");
  app.add_option("--worker-unit", o.worker_unit)->group("");  // internal
  app.add_option("--worker-threads", o.worker_threads)->group("");
  return moca::tools::run_cli("transfer_study", app, argc, argv, [&] {
    moca::check_writable_folder(o.out, "--out", true);
    for (const std::string& m : models) {
      const auto eq = m.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == m.size())
        throw std::invalid_argument("--model (" + m + ") must be NAME=CHECKPOINT");
      o.models.emplace_back(m.substr(0, eq), m.substr(eq + 1));
    }
    for (const std::string& d : data) o.data.push_back(moca::sim::parse_transfer_data(d));
    moca::sim::apply_data_settings(o.data, sets);
    o.settings.clear();
    std::string item;
    std::istringstream in(settings);
    while (std::getline(in, item, ',')) o.settings.push_back(item);
    o.scratch = !no_scratch;
    o.control = !no_control;
    if (!o.worker_unit.empty()) {
      moca::sim::run_transfer_worker(o, std::cerr);
      return 0;
    }
    moca::sim::run_transfer_study(o, std::cout, std::cerr);
    return 0;
  });
}
