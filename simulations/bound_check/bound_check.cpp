#include "bound_check.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "moca/common/random.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/masking/policy.hpp"
#include "moca/masking/policy_spec.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "run_cli.hpp"

namespace moca::sim {

void BoundCheckOptions::validate() const {
  const std::string f = "BoundCheckOptions::";  // fields, which the program names by their flags
  if (checkpoint.empty()) throw std::invalid_argument(f + "checkpoint is empty; give --checkpoint");
  data.validate();
  if (policies.empty()) throw std::invalid_argument(f + "policies is empty");
  check_ranges(*this);  // c, threads
}

namespace {

using nlohmann::json;

/// The masked samples of every window: the model's prediction from the visible cells (h), its
/// prediction from the complementary mask, where the masked cells are the visible ones (hg),
/// and the data (x); with the raw squared errors of both predictions summed.
struct MaskedSamples {
  std::vector<std::vector<double>> h, hg, x;
  double raw_se = 0, raw_eps = 0;
  long count = 0;
};

MaskedSamples masked_samples(const data::Windows& w, const masking::Grid& grid,
                             const std::vector<masking::Mask>& masks, const data::RowMatrixXf& pred,
                             const data::RowMatrixXf& self) {
  const int C = w.channels, L = w.length, P = grid.patches, Lp = grid.patch_length;
  MaskedSamples m;
  m.h.resize(w.size());
  m.hg.resize(w.size());
  m.x.resize(w.size());
  for (int i = 0; i < w.size(); ++i) {
    for (int c = 0; c < C; ++c) {
      for (int p = 0; p < P; ++p) {
        if (!masks[static_cast<size_t>(i)].masked(c, p)) continue;
        for (int t = p * Lp; t < (p + 1) * Lp; ++t) {
          const int col = c * L + t;
          m.h[i].push_back(pred(i, col));
          m.hg[i].push_back(self(i, col));
          m.x[i].push_back(w.x(i, col));
          m.raw_se += std::pow(static_cast<double>(pred(i, col)) - w.x(i, col), 2);
          m.raw_eps += std::pow(static_cast<double>(self(i, col)) - w.x(i, col), 2);
          ++m.count;
        }
      }
    }
  }
  return m;
}

/// The Remark's terms for policy number k on the held-out windows `w`, with the raw masked MSE
/// of both predictions and |xi| / bound.
struct PolicyCheck {
  std::string spec;
  BoundTerms terms;
  double ratio = 0.0, raw_mse = 0.0, raw_self_mse = 0.0;
};

/// Checks policy number k and prints its line of the table to `out`.
PolicyCheck check_policy(const BoundCheckOptions& options, size_t k, const data::Windows& w,
                         const masking::Grid& grid, const model::InferenceOptions& io,
                         std::ostream& out) {
  const auto policy = masking::make_policy(options.policies[k], grid);
  const std::vector<masking::Mask> masks =
      masking::window_masks(*policy, w, derive_seed(options.seed, k));
  std::vector<masking::Mask> comps;
  for (const auto& m : masks) comps.push_back(m.complement());
  const data::RowMatrixXf pred = model::reconstruct_with_model(options.checkpoint, w, masks, io);
  const data::RowMatrixXf self = model::reconstruct_with_model(options.checkpoint, w, comps, io);
  const MaskedSamples m = masked_samples(w, grid, masks, pred, self);
  PolicyCheck r;
  r.spec = policy->spec();
  r.terms = bound_terms(m.h, m.hg, m.x, options.c);
  const BoundTerms& t = r.terms;
  r.ratio = t.bound > 0 ? std::abs(t.xi) / t.bound : 0.0;
  r.raw_mse = m.raw_se / static_cast<double>(m.count);
  r.raw_self_mse = m.raw_eps / static_cast<double>(m.count);
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%-22s %.5f    %.5f   %+.5f   %.5f   %.5f   %.3f      %-5s  %.5f\n", r.spec.c_str(),
                t.loss, t.gap, t.xi, t.eps, t.bound, r.ratio, t.holds ? "yes" : "NO", r.raw_mse);
  out << buf;
  return r;
}

}  // namespace

nlohmann::json run_bound_check(const BoundCheckOptions& options, std::ostream& out,
                               std::ostream& log) {
  options.validate();
  const auto t0 = std::chrono::steady_clock::now();
  const model::CheckpointInfo info = model::read_checkpoint_info(options.checkpoint);
  const StudySplit split = train_test_windows(options.data);
  const data::Windows& w = split.test;
  const masking::Grid grid = masking::make_grid(w.channels, w.length, info.model.patch_length);
  model::InferenceOptions io;
  io.runtime.device = model::Device::kCpu;
  io.runtime.threads = options.threads;
  log << "bound_check: " << w.size() << " held-out windows, checkpoint " << options.checkpoint
      << "\n";

  json rows = json::array();
  out << "policy                 L (norm.)  2c^2-2A   xi         eps       bound     |xi|/bound "
         "holds  raw masked MSE\n";
  for (size_t k = 0; k < options.policies.size(); ++k) {
    const PolicyCheck r = check_policy(options, k, w, grid, io, out);
    const BoundTerms& t = r.terms;
    rows.push_back({{"policy", r.spec},
                    {"loss", t.loss},
                    {"alignment", t.alignment},
                    {"gap_2c2_minus_2A", t.gap},
                    {"xi", t.xi},
                    {"eps", t.eps},
                    {"bound", t.bound},
                    {"abs_xi_over_bound", r.ratio},
                    {"holds", t.holds},
                    {"band_relative_to_loss", t.loss > 0 ? t.bound / t.loss : 0.0},
                    {"windows", t.windows},
                    {"raw_masked_mse", r.raw_mse},
                    {"raw_self_mse", r.raw_self_mse}});
  }
  json doc = {
      {"study", "bound_check"},
      {"data", split.description},
      {"settings",
       {{"checkpoint", options.checkpoint},
        {"policies", options.policies},
        {"c", options.c},
        {"samples", options.data.samples},
        {"held_out_windows", w.size()}}},
      {"seed", options.seed},
      {"model", info.meta.value("model", json::object())},
      {"policies", rows},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
  tools::record_program_options(doc);
  if (!options.json.empty()) write_json(options.json, doc);
  return doc;
}

}  // namespace moca::sim
