#include "bound_check.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "moca/common/random.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/model/checkpoint.hpp"
#include "moca/model/imputation.hpp"

namespace moca::sim {

void BoundCheckOptions::validate() const {
  const std::string f = "BoundCheckOptions::validate(): ";
  if (checkpoint.empty()) throw std::invalid_argument(f + "checkpoint is empty; give --checkpoint");
  data.validate();
  if (policies.empty()) throw std::invalid_argument(f + "policies is empty");
  if (!(c > 0.0))
    throw std::invalid_argument(f + "c (" + masking::format_number(c) + ") must be > 0");
  if (threads < 0) {
    throw std::invalid_argument(f + "threads (" + std::to_string(threads) + ") must be >= 0");
  }
}

nlohmann::json run_bound_check(const BoundCheckOptions& options, std::ostream& out,
                               std::ostream& log) {
  using nlohmann::json;
  options.validate();
  const auto t0 = std::chrono::steady_clock::now();
  const model::CheckpointInfo info = model::read_checkpoint_info(options.checkpoint);
  const StudySplit split = train_test_windows(options.data);
  const data::Windows& w = split.test;
  const masking::Grid grid = masking::make_grid(w.channels, w.length, info.model.patch_length());
  model::InferenceOptions io;
  io.runtime.device = "cpu";
  io.runtime.threads = options.threads;
  log << "bound_check: " << w.size() << " held-out windows, checkpoint " << options.checkpoint
      << "\n";

  json rows = json::array();
  char buf[512];
  out << "policy                 L (norm.)  2c^2-2A   xi         eps       bound     |xi|/bound "
         "holds  raw masked MSE\n";
  for (size_t k = 0; k < options.policies.size(); ++k) {
    const auto policy = masking::make_policy(options.policies[k], grid);
    std::vector<masking::Mask> masks, comps;
    for (int i = 0; i < w.size(); ++i) {
      Rng rng(derive_seed(derive_seed(options.seed, k), static_cast<std::uint64_t>(i)));
      masks.push_back(policy->sample(rng, w.window(i)));
      comps.push_back(masks.back().complement());
    }
    const data::RowMatrixXf pred = model::reconstruct_with_model(options.checkpoint, w, masks, io);
    const data::RowMatrixXf self = model::reconstruct_with_model(options.checkpoint, w, comps, io);
    const int C = w.channels, L = w.length, P = grid.patches, Lp = grid.patch_length;
    std::vector<std::vector<double>> h(w.size()), hg(w.size()), x(w.size());
    double raw_se = 0, raw_eps = 0;
    long count = 0;
    for (int i = 0; i < w.size(); ++i) {
      for (int c = 0; c < C; ++c) {
        for (int p = 0; p < P; ++p) {
          if (!masks[static_cast<size_t>(i)].masked(c, p)) continue;
          for (int t = p * Lp; t < (p + 1) * Lp; ++t) {
            const int col = c * L + t;
            h[i].push_back(pred(i, col));
            hg[i].push_back(self(i, col));
            x[i].push_back(w.x(i, col));
            raw_se += std::pow(static_cast<double>(pred(i, col)) - w.x(i, col), 2);
            raw_eps += std::pow(static_cast<double>(self(i, col)) - w.x(i, col), 2);
            ++count;
          }
        }
      }
    }
    const BoundTerms t = bound_terms(h, hg, x, options.c);
    const double ratio = t.bound > 0 ? std::abs(t.xi) / t.bound : 0.0;
    rows.push_back({{"policy", policy->spec()},
                    {"loss", t.loss},
                    {"alignment", t.alignment},
                    {"gap_2c2_minus_2A", t.gap},
                    {"xi", t.xi},
                    {"eps", t.eps},
                    {"bound", t.bound},
                    {"abs_xi_over_bound", ratio},
                    {"holds", t.holds},
                    {"band_relative_to_loss", t.loss > 0 ? t.bound / t.loss : 0.0},
                    {"windows", t.windows},
                    {"raw_masked_mse", raw_se / static_cast<double>(count)},
                    {"raw_self_mse", raw_eps / static_cast<double>(count)}});
    std::snprintf(buf, sizeof buf,
                  "%-22s %.5f    %.5f   %+.5f   %.5f   %.5f   %.3f      %-5s  %.5f\n",
                  policy->spec().c_str(), t.loss, t.gap, t.xi, t.eps, t.bound, ratio,
                  t.holds ? "yes" : "NO", raw_se / static_cast<double>(count));
    out << buf;
  }
  json doc = {
      {"study", "bound_check"},
      {"data", split.description},
      {"options",
       {{"checkpoint", options.checkpoint},
        {"policies", options.policies},
        {"c", options.c},
        {"samples", options.data.samples},
        {"held_out_windows", w.size()}}},
      {"seed", options.seed},
      {"model", info.meta.value("model", json::object())},
      {"policies", rows},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  if (!options.json.empty()) write_json(options.json, doc);
  return doc;
}

}  // namespace moca::sim
