// transfer_study: the paper's transfer table (Table 2) as one resumable study — named
// checkpoints x named data sets x LP/FT, a supervised baseline and a shuffled-label control;
// see docs/studies.md ("transfer_study").
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "list_flags.hpp"
#include "moca/common/output_file.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"
#include "transfer_study.hpp"

int main(int argc, char** argv) {
  moca::sim::TransferStudyOptions o;
  std::vector<std::string> models, data, sets;
  bool no_scratch = false, no_control = false;
  CLI::App app{
      "transfer_study: models pre-trained elsewhere, linear-probed (lp) and fine-tuned (ft) on "
      "named data sets with subject-wise folds (the paper's Table 2); resumable (run the same "
      "command again), --jobs in parallel, --shard K/N for SLURM job arrays, --report rebuilds "
      "report.md/report.json/figures from the ledgers"};
  // Locals, parsed after the parse: --model into `models` (NAME, CHECKPOINT), --data and --set
  // into `data` (TransferDataSet; the --set keys are DatasetOptions' and TransferDataSet's rows).
  app.add_option("--model", models,
                 "NAME=CHECKPOINT, repeatable, in table order (scratch is the supervised "
                 "baseline's name)");
  app.add_option("--data", data,
                 "NAME=SPEC, repeatable: a data set (npy:DIR, hmp:DIR, hapt:DIR, pamap2:DIR, "
                 "opportunity:DIR, wisdm:DIR, realworld:DIR, ts:DIR, DIR, generator:...) in table "
                 "order");
  app.add_option("--set", sets,
                 "NAME.KEY=VALUE, repeatable: a data set's option; KEY: format, modalities, "
                 "sample-rate, channel-names, segment, keep-classes, npy-layout, "
                 "drop-nonfinite, protocol (auto|random|subject-kfold|loso|predefined; auto: "
                 "predefined for data with its own split, else subject-kfold above 5 "
                 "subjects, else loso), folds, "
                 "match-channels (name|position), input-seconds, paper (appendix column)");
  moca::tools::add_schema_options(&app, o, moca::kEveryScope);  // TransferStudyOptions::schema
  app.get_option("--out")->required();
  moca::sim::show_list_default(app, "--settings", o.settings);
  // Locals: a row on scratch or control would add --scratch / --control beside the --no- switch
  // (--x,!--no-x) and say its help the other way round.
  app.add_flag("--no-scratch", no_scratch, "leave out the supervised baseline (scratch)");
  app.add_flag("--no-control", no_control,
               "leave out the shuffled-label linear probe (first model) per data set");
  // internal (the study's worker processes), hidden: no rows
  app.add_option("--worker-unit", o.worker_unit)->group("");
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
    // the given texts, split at each comma as the flag always did (list_flags.hpp)
    std::istringstream in(moca::sim::join_list(o.settings));
    o.settings.clear();
    for (std::string item; std::getline(in, item, ',');) o.settings.push_back(item);
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
