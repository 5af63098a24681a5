#include "theory_vs_training.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "moca/common/file_lock.hpp"
#include "moca/common/random.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_score.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/masking/score_json.hpp"
#include "moca/model/eval/downstream.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/train/pretrain.hpp"
#include "rank_correlation.hpp"
#include "study_training.hpp"

namespace moca::sim {

void TheoryVsTrainingOptions::validate() const {
  // Messages name the fields (TheoryVsTrainingOptions::name); the program names its flags.
  const std::string f = "TheoryVsTrainingOptions::";
  auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument(f + what);
  };
  data.validate();
  need(policies.size() >= 3, "policies has " + std::to_string(policies.size()) +
                                 " specs; rank correlations need at least 3");
  need(features == "raw" || features == "patch-mean",
       "features (" + features + ") is not one of raw, patch-mean");
  need(pca >= 1, "pca (" + std::to_string(pca) + ") must be >= 1");
  need(draws >= 2, "draws (" + std::to_string(draws) + ") must be >= 2");
  need(epochs >= 1, "epochs (" + std::to_string(epochs) + ") must be >= 1");
  need(batch_size >= 1, "batch_size (" + std::to_string(batch_size) + ") must be >= 1");
  need(lr > 0, "lr (" + masking::format_number(lr) + ") must be > 0");
  need(warmup_epochs >= 0 && warmup_epochs < epochs,
       "warmup_epochs (" + masking::format_number(warmup_epochs) +
           ") must be in [0, TheoryVsTrainingOptions::epochs)");
  need(probe_epochs >= 1, "probe_epochs (" + std::to_string(probe_epochs) + ") must be >= 1");
  need(threads >= 0, "threads (" + std::to_string(threads) + ") must be >= 0");
  need(resamples >= 100, "resamples (" + std::to_string(resamples) + ") must be >= 100");
  need(!workdir.empty(), "workdir is empty");
}

namespace {

/// Rank correlations of (x, y) as JSON; when either variable is constant over the policies
/// there is no ordering to correlate: {"degenerate": true, "reason": ...} without values.
nlohmann::json rank_json_of(const std::vector<double>& x, const std::vector<double>& y,
                            int resamples, std::uint64_t seed, RankCorrelations* out) {
  bool degenerate = false;
  spearman(x, y, &degenerate);
  if (degenerate) {
    return {{"degenerate", true},
            {"reason", "the score or the outcome is constant over the policies"}};
  }
  *out = rank_correlations(x, y, resamples, seed);
  const RankCorrelations& r = *out;
  return {
      {"spearman", {{"value", r.spearman.value}, {"ci", {r.spearman.ci_low, r.spearman.ci_high}}}},
      {"kendall", {{"value", r.kendall.value}, {"ci", {r.kendall.ci_low, r.kendall.ci_high}}}},
      {"resamples", r.spearman.resamples},
      {"degenerate", false}};
}

/// Pre-training with one policy (canonical spec): the same preset, epochs and seed for every
/// policy, one checkpoint per policy in options.workdir.
model::PretrainOptions policy_pretrain_options(const TheoryVsTrainingOptions& options,
                                               const std::string& spec, int train_windows) {
  model::PretrainOptions po = study_pretrain_options(options, spec, train_windows);
  po.checkpoint = options.workdir + "/" + safe_name(spec) + ".pt";
  po.checkpoint_every = options.epochs;
  po.seed = options.seed;
  po.runtime.threads = options.threads;
  return po;
}

/// The linear probe of a pre-trained checkpoint (train part -> held-out part).
model::DownstreamResult probe(const TheoryVsTrainingOptions& options, const std::string& checkpoint,
                              const StudySplit& split) {
  model::DownstreamOptions dopt = model::downstream_defaults(model::DownstreamMode::kLinearProbe);
  dopt.checkpoint = checkpoint;
  dopt.epochs = options.probe_epochs;
  dopt.warmup_epochs = std::min(dopt.warmup_epochs.value_or(dopt.default_warmup_epochs()),
                                options.probe_epochs / 2.0);
  dopt.batch_size = std::min(dopt.batch_size, split.train.size());
  dopt.seed = options.seed;
  dopt.runtime.device = model::Device::kCpu;
  dopt.runtime.threads = options.threads;
  dopt.progress = false;
  std::ostringstream dlog;
  return model::train_classifier(dopt, split.train, split.test, dlog);
}

/// One policy's outcomes (the rank correlations' inputs) and its row of the JSON document.
struct PolicyResult {
  double score = 0.0, own_mse = 0.0, common_mse = 0.0, accuracy = 0.0;
  nlohmann::json row;
};

/// Trains with policy number k (scored `s`) and evaluates the model on the held-out windows:
/// reconstruction under its own masks and under the common `eval_masks`, and the linear probe.
PolicyResult train_and_evaluate(const TheoryVsTrainingOptions& options,
                                const masking::MaskPolicy& policy, const masking::PolicyScore& s,
                                size_t k, const StudySplit& split,
                                const masking::MaskPolicy& eval_policy,
                                const std::vector<masking::Mask>& eval_masks) {
  const data::Windows& test = split.test;
  const model::PretrainOptions po =
      policy_pretrain_options(options, policy.spec(), split.train.size());
  std::ostringstream plog;
  const model::PretrainResult pr = model::pretrain(po, split.train, plog);
  const auto own_masks = masking::window_masks(policy, test, derive_seed(options.seed, 78 + k));
  const model::ImputationError own = heldout_error(po.checkpoint, test, own_masks, options.threads);
  const model::ImputationError common =
      heldout_error(po.checkpoint, test, eval_masks, options.threads);
  const model::DownstreamResult dr = probe(options, po.checkpoint, split);

  PolicyResult r;
  r.score = s.mean;
  r.own_mse = own.mse;
  r.common_mse = common.mse;
  r.accuracy = dr.test.accuracy;
  r.row = {{"policy", policy.spec()},
           {"score", masking::to_json(s)},
           {"pretrain",
            {{"final_train_loss", pr.history.empty() ? 0.0 : pr.history.back().loss},
             {"iterations", pr.iterations},
             {"seconds", pr.seconds},
             {"checkpoint", po.checkpoint}}},
           {"heldout_own", {{"mse", own.mse}, {"mae", own.mae}, {"samples", own.count}}},
           {"heldout_common",
            {{"policy", eval_policy.spec()},
             {"mse", common.mse},
             {"mae", common.mae},
             {"samples", common.count}}},
           {"linear_probe",
            {{"accuracy", dr.test.accuracy},
             {"macro_f1", dr.test.macro_f1},
             {"balanced_accuracy", dr.test.balanced_accuracy},
             {"epochs", options.probe_epochs}}}};
  return r;
}

/// Score vs one outcome: the rank correlations and their JSON.
struct Association {
  RankCorrelations r;
  nlohmann::json json;
};

/// Score vs own MSE, common MSE and probe accuracy over the policies (bootstrap seeds
/// derive_seed(seed, 99) + 0, 1, 2).
std::vector<Association> associations(const std::vector<PolicyResult>& results,
                                      const TheoryVsTrainingOptions& options) {
  std::vector<double> score, own, common, accuracy;
  for (const PolicyResult& r : results) {
    score.push_back(r.score);
    own.push_back(r.own_mse);
    common.push_back(r.common_mse);
    accuracy.push_back(r.accuracy);
  }
  const std::uint64_t bseed = derive_seed(options.seed, 99);
  std::vector<Association> a(3);
  a[0].json = rank_json_of(score, own, options.resamples, bseed, &a[0].r);
  a[1].json = rank_json_of(score, common, options.resamples, bseed + 1, &a[1].r);
  a[2].json = rank_json_of(score, accuracy, options.resamples, bseed + 2, &a[2].r);
  return a;
}

/// The table of the policies and one line per association (own MSE, common MSE, probe acc).
void print_results(const std::vector<PolicyResult>& results, const std::vector<Association>& a,
                   std::ostream& out) {
  char buf[512];
  out << "policy                                   score    own MSE    common MSE  probe acc\n";
  for (const PolicyResult& r : results) {
    const nlohmann::json& row = r.row;
    std::snprintf(buf, sizeof buf, "%-40s %.4f   %.5f    %.5f     %.4f\n",
                  row["policy"].get<std::string>().c_str(), row["score"]["score"].get<double>(),
                  row["heldout_own"]["mse"].get<double>(),
                  row["heldout_common"]["mse"].get<double>(),
                  row["linear_probe"]["accuracy"].get<double>());
    out << buf;
  }
  const char* what[] = {"own MSE", "common MSE", "probe acc"};
  const char* predicted[] = {"< 0", "< 0", "> 0"};
  for (size_t i = 0; i < 3; ++i) {
    const nlohmann::json& j = a[i].json;
    if (j["degenerate"].get<bool>()) {
      out << "score vs " << what[i] << ": degenerate (" << j["reason"].get<std::string>() << ")\n";
      continue;
    }
    const RankCorrelations& r = a[i].r;
    std::snprintf(buf, sizeof buf,
                  "score vs %-12s Spearman %+.3f [%+.3f, %+.3f]  Kendall %+.3f [%+.3f, %+.3f]  "
                  "(theory predicts %s)\n",
                  what[i], r.spearman.value, r.spearman.ci_low, r.spearman.ci_high, r.kendall.value,
                  r.kendall.ci_low, r.kendall.ci_high, predicted[i]);
    out << buf;
  }
}

/// The JSON document's "settings" object: the study as it ran.
nlohmann::json study_settings_json(const TheoryVsTrainingOptions& options) {
  return {{"policies", options.policies},
          {"features", options.features},
          {"pca", options.pca},
          {"draws", options.draws},
          {"eval_policy", options.eval_policy},
          {"preset", options.preset},
          {"patch_length", options.patch_length},
          {"epochs", options.epochs},
          {"batch_size", options.batch_size},
          {"lr", options.lr},
          {"warmup_epochs", options.warmup_epochs},
          {"probe_epochs", options.probe_epochs},
          {"resamples", options.resamples},
          {"samples", options.data.samples}};
}

}  // namespace

nlohmann::json run_theory_vs_training(const TheoryVsTrainingOptions& options, std::ostream& out,
                                      std::ostream& log) {
  using nlohmann::json;
  options.validate();
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const StudySplit split = train_test_windows(options.data);
  const data::Windows& train = split.train;
  log << "theory_vs_training: " << train.size() << " training, " << split.test.size()
      << " held-out windows\n";
  const masking::Grid grid = masking::make_grid(train.channels, train.length, options.patch_length);
  masking::PolicyContext context;
  context.pilot = &train;

  masking::ScoreOptions so;
  so.estimator = masking::Estimator::kCca;
  so.draws = options.draws;
  so.pca = options.pca;
  so.seed = options.seed;
  so.threads = options.threads;
  masking::PolicyScorer scorer(train, grid, masking::make_feature_map(options.features), so);
  const auto eval_policy = masking::make_policy(options.eval_policy, grid, context);
  const auto eval_masks =
      masking::window_masks(*eval_policy, split.test, derive_seed(options.seed, 77));
  std::filesystem::create_directories(options.workdir);
  // One study per checkpoint folder at a time (its checkpoints are locked one by one as well).
  const FileLock lock(lock_path_for_folder(options.workdir), "output folder " + options.workdir);

  std::vector<PolicyResult> results;
  json rows = json::array();
  for (size_t k = 0; k < options.policies.size(); ++k) {
    const auto policy = masking::make_policy(options.policies[k], grid, context);
    const masking::PolicyScore s = scorer.score(*policy);
    results.push_back(train_and_evaluate(options, *policy, s, k, split, *eval_policy, eval_masks));
    const PolicyResult& r = results.back();
    rows.push_back(r.row);
    log << "theory_vs_training: " << policy->spec() << ": score " << s.mean << ", own MSE "
        << r.own_mse << ", common MSE " << r.common_mse << ", probe " << r.accuracy << " ("
        << elapsed() << " s)\n";
  }
  const std::vector<Association> a = associations(results, options);
  print_results(results, a, out);

  json doc = {{"study", "theory_vs_training"},
              {"data", split.description},
              {"settings", study_settings_json(options)},
              {"seed", options.seed},
              {"policies", rows},
              {"rank_correlations",
               {{"score_vs_own_mse", a[0].json},
                {"score_vs_common_mse", a[1].json},
                {"score_vs_probe_accuracy", a[2].json}}},
              {"prediction",
               {{"score_vs_own_mse", "negative"},
                {"score_vs_common_mse", "negative"},
                {"score_vs_probe_accuracy", "positive"}}},
              {"seconds", elapsed()}};
  if (!options.recorded_options.empty()) doc["options"] = options.recorded_options;
  if (!options.json.empty()) write_json(options.json, doc);
  return doc;
}

}  // namespace moca::sim
