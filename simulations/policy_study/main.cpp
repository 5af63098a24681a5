// policy_study: does the score of a masking policy predict what training with it achieves? A
// resumable multi-seed study with a ledger; see docs/studies.md ("policy_study").
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>

#include "data_flags.hpp"
#include "field_flags.hpp"
#include "moca/common/output_file.hpp"
#include "moca/masking/policy_spec.hpp"
#include "policy_study.hpp"
#include "run_cli.hpp"
#include "schema_options.hpp"

namespace {

// The generator size and the windows kept of the split's two parts (the split itself: the data
// flags, --split subject-kfold (default) or random).
void add_split_flags(CLI::App* app, moca::sim::PolicyStudyOptions& o) {
  app->add_option("--generator-windows", o.selection.synthetic_windows,
                  "generator: windows (10 subjects)")
      ->capture_default_str();
  // (library messages and data::unused_options name the field; this program's flag for it)
  moca::tools::add_field_flag("DataOptions::synthetic_windows", "--generator-windows");
  app->add_option("--train-windows", o.train_windows, "training windows kept (0 = all)")
      ->capture_default_str();
  app->add_option("--test-windows", o.test_windows, "held-out windows kept (0 = all)")
      ->capture_default_str();
}

// The policy scores: feature maps (`features`, comma-separated), PCA, draws, reference encoder.
void add_score_flags(CLI::App* app, moca::sim::PolicyStudyOptions& o, std::string& features) {
  app->add_option("--features", features,
                  "score feature maps, comma-separated: raw, patch-mean, encoder (default all)");
  app->add_option("--pca", o.pca, "principal components per view")->capture_default_str();
  app->add_option("--draws", o.draws, "mask draws per score")->capture_default_str();
  app->add_option("--encoder-windows", o.encoder_windows,
                  "encoder map: training windows scored (0 = all)")
      ->capture_default_str();
  app->add_option("--reference-policy", o.reference_policy, "policy of the reference encoder")
      ->capture_default_str();
  app->add_option("--reference-seed", o.reference_seed, "seed of the reference encoder")
      ->capture_default_str();
}

// The training runs' flags: seeds, the pre-training rows of model::PretrainOptions the studies
// take (its schema: --preset, --patch-length, --epochs, --batch, --lr, --warmup-epochs,
// --checkpoint-every) and the probe's epochs.
void add_training_flags(CLI::App* app, moca::sim::PolicyStudyOptions& o) {
  app->add_option("--seeds", o.seeds, "seeds per policy (0 .. N-1)")->capture_default_str();
  moca::tools::add_schema_options(app, o.pretrain,
                                  moca::model::kStudyScope | moca::model::kResumableStudyScope,
                                  {{"--batch", "--batch-size"}});  // (--batch-size: its old name)
  // the study's warm-up is set (default_study_pretrain), not moca pretrain's yielding default
  app->get_option("--warmup-epochs")->description("linear warm-up in epochs (in [0, epochs))");
  app->add_option("--probe-epochs", o.probe_epochs, "linear-probe epochs")->capture_default_str();
}

// Internal: a worker process runs one training (the study starts them itself).
void add_worker_flags(CLI::App* app, moca::sim::PolicyStudyOptions& o) {
  app->add_option("--worker-policy", o.worker_policy)->group("");  // internal
  app->add_option("--worker-seed", o.worker_seed)->group("");
  app->add_flag("--worker-reference", o.worker_reference)->group("");
  app->add_option("--worker-threads", o.worker_threads)->group("");
}

}  // namespace

int main(int argc, char** argv) {
  moca::sim::PolicyStudyOptions o;
  std::string policies, tasks, features;
  CLI::App app{
      "policy_study: a resumable multi-seed study of whether the policy score E_m[Phi(m)] "
      "predicts held-out losses and linear-probe accuracy (ledger in --out; run the same "
      "command again to resume; --report rebuilds the report from the ledger)"};
  app.add_option("--out", o.out, "output folder (ledger.jsonl, runs/, report, figures/)")
      ->required();
  // the data and its split: subject-wise folds (fold --fold of --folds held out) or a random
  // window-level split (--train-fraction); --split-seed also seeds the subsampling
  moca::tools::add_data_flags(
      &app, o.selection,
      moca::data::kDataSourceScope | moca::data::kSplitScope | moca::data::kSplitSeedScope);
  add_split_flags(&app, o);
  app.add_option(
      "--policies", policies,
      "comma-separated policy specs (default: 21 — cross, extrapolation, sync, temporal, "
      "per-modality at 0.5/0.75/0.9, sensor keep 3/2/1, adaptive beta 5/20/50)");
  add_training_flags(&app, o);
  add_score_flags(&app, o, features);
  app.add_option("--tasks", tasks,
                 "common held-out tasks, comma-separated specs (default random 0.7, temporal "
                 "0.7, sensor keep 1, extrapolation 0.7)");
  app.add_option("--seed", o.seed, "base seed (task masks, score draws, bootstrap)")
      ->capture_default_str();
  app.add_option("--resamples", o.resamples, "bootstrap resamples")->capture_default_str();
  app.add_option("--jobs", o.jobs, "trainings at once (threads are split between them)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "threads in all (0 = cores)")->capture_default_str();
  app.add_flag("--report", o.report, "only rebuild the report from the ledger");
  app.add_option("--max-runs", o.max_runs,
                 "stop after this many new runs (-1 = no limit); run again to resume")
      ->capture_default_str();
  app.add_option("--shard", o.shard,
                 "K/N: run this share of the runs (a SLURM array task; default "
                 "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, else 1/1) into "
                 "ledger.shard-K-of-N.jsonl; --report merges the shards");
  add_worker_flags(&app, o);
  return moca::tools::run_cli("policy_study", app, argc, argv, [&] {
    moca::check_writable_folder(o.out, "--out", true);
    if (!policies.empty()) o.policies = moca::masking::split_spec_list(policies, "--policies");
    if (!tasks.empty()) o.tasks = moca::masking::split_spec_list(tasks, "--tasks");
    if (!features.empty()) o.features = moca::masking::split_spec_list(features, "--features");
    if (!o.worker_policy.empty()) {
      moca::sim::run_policy_study_worker(o, std::cerr);
      return 0;
    }
    moca::sim::run_policy_study(o, std::cout, std::cerr);
    return 0;
  });
}
