// paper_experiments: the paper's training experiments (Table 1, imputation table, mask-ratio and
// patch-length ablations, reconstruction examples) at CPU scale. See docs/studies.md.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "list_flags.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_spec.hpp"
#include "paper_experiments.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"
#include "study_flags.hpp"

int main(int argc, char** argv) {
  moca::sim::PaperExperimentsOptions o;
  CLI::App app{
      "paper_experiments: Table 1, the imputation table, the mask-ratio, "
      "patch-length and label-fraction ablations, reconstruction examples, attention and embedding "
      "maps at CPU "
      "scale"};
  moca::sim::add_study_data_flags(&app, o.data, "training windows cap (test: 3/7 of it)");
  // PaperExperimentsOptions::schema, around the pre-training rows and --no-png
  moca::sim::add_schema_rows(&app, o, "--out", "--only");
  // --only is one comma-separated text (split below), its default the list of every experiment
  std::string every;
  for (const std::string& e : o.only) every += (every.empty() ? "" : ",") + e;
  app.get_option("--only")->expected(1)->allow_extra_args(false)->default_str(every);
  // the pre-training rows of model::PretrainOptions the studies take (its schema)
  moca::tools::add_schema_options(&app, o.pretrain, moca::model::kStudyScope,
                                  {{"--batch", "--batch-size"}});  // (--batch-size: its old name)
  // the experiments' warm-up is set (default_experiments_pretrain), not moca pretrain's default
  app.get_option("--warmup-epochs")->description("linear warm-up in epochs (in [0, epochs))");
  moca::sim::add_schema_rows(&app, o, "--ratio", "--mice-draws");
  // (not a row: a row on `png` would be --png,--no-png, another name, help and config key)
  bool no_png = false;
  app.add_flag("--no-png", no_png, "skip gnuplot PNGs (reconstructions, attention, maps)");
  moca::sim::add_schema_rows(&app, o, "--seed", "--precision");
  return moca::tools::run_cli("paper_experiments", app, argc, argv, [&] {
    moca::check_writable_folder(o.out, "--out", true);
    moca::check_writable_folder(o.workdir, "--workdir", true);
    o.png = !no_png;
    if (app.count("--only") > 0) o.only = moca::masking::split_spec_list(o.only[0], "--only");
    moca::sim::run_paper_experiments(o, std::cout, std::cerr);
    return 0;
  });
}
