// policy_study: does the score of a masking policy predict what training with it achieves? A
// resumable multi-seed study with a ledger; see docs/studies.md ("policy_study").
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "data_flags.hpp"
#include "field_flags.hpp"
#include "list_flags.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_spec.hpp"
#include "policy_study.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

namespace {

// --policies, --tasks and --features are each one comma-separated text (a second one is an
// error), split after the parse (split_spec_list); no default shown: the help says it.
void one_text(CLI::App& app, const std::string& flag) {
  app.get_option(flag)->expected(1)->allow_extra_args(false)->default_str("");
}

// The list of `flag` as given: its text split, "" = the default `keep`.
void split_given(const CLI::App& app, const std::string& flag, std::vector<std::string>& list,
                 const std::vector<std::string>& keep) {
  if (app.count(flag) == 0) return;
  const std::string text = list.at(0);
  list = text.empty() ? keep : moca::masking::split_spec_list(text, flag);
}

}  // namespace

int main(int argc, char** argv) {
  moca::sim::PolicyStudyOptions o;
  const moca::sim::PolicyStudyOptions defaults;
  CLI::App app{
      "policy_study: a resumable multi-seed study of whether the policy score E_m[Phi(m)] "
      "predicts held-out losses and linear-probe accuracy (ledger in --out; run the same "
      "command again to resume; --report rebuilds the report from the ledger)"};
  // PolicyStudyOptions::schema, around the data group and the pre-training rows
  moca::sim::add_schema_rows(&app, o, "--out", "--out");
  app.get_option("--out")->required();
  // the data and its split: subject-wise folds (fold --fold of --folds held out) or a random
  // window-level split (--train-fraction); --split-seed also seeds the subsampling
  moca::tools::add_data_flags(
      &app, o.selection,
      moca::data::kDataSourceScope | moca::data::kSplitScope | moca::data::kSplitSeedScope);
  // the generator size (its row names PolicyStudyOptions::generator_windows), the windows kept,
  // the policies and the seeds
  moca::sim::add_schema_rows(&app, o, "--generator-windows", "--seeds");
  // (library messages and data::unused_options name the field; this program's flag for it)
  moca::tools::add_field_flag("DataOptions::synthetic_windows", "--generator-windows");
  // the pre-training rows of model::PretrainOptions the studies take (its schema: --preset,
  // --patch-length, --epochs, --batch, --lr, --warmup-epochs, --checkpoint-every)
  moca::tools::add_schema_options(&app, o.pretrain,
                                  moca::model::kStudyScope | moca::model::kResumableStudyScope,
                                  {{"--batch", "--batch-size"}});  // (--batch-size: its old name)
  // the study's warm-up is set (default_study_pretrain), not moca pretrain's yielding default
  app.get_option("--warmup-epochs")->description("linear warm-up in epochs (in [0, epochs))");
  moca::sim::add_schema_rows(&app, o, "--probe-epochs", "--shard");
  for (const char* flag : {"--policies", "--tasks", "--features"}) one_text(app, flag);
  // Internal, not user options (so not rows): a worker process runs one training (the study
  // starts them itself).
  app.add_option("--worker-policy", o.worker_policy)->group("");
  app.add_option("--worker-seed", o.worker_seed)->group("");
  app.add_flag("--worker-reference", o.worker_reference)->group("");
  app.add_option("--worker-threads", o.worker_threads)->group("");
  return moca::tools::run_cli("policy_study", app, argc, argv, [&] {
    moca::check_writable_folder(o.out, "--out", true);
    split_given(app, "--policies", o.policies, defaults.policies);
    split_given(app, "--tasks", o.tasks, defaults.tasks);
    split_given(app, "--features", o.features, defaults.features);
    if (!o.worker_policy.empty()) {
      moca::sim::run_policy_study_worker(o, std::cerr);
      return 0;
    }
    moca::sim::run_policy_study(o, std::cout, std::cerr);
    return 0;
  });
}
