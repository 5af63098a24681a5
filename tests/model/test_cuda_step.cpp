#include "torch_test.hpp"  // first: see the note there

#include <cmath>
#include <stdexcept>
#include <vector>

#include "moca/common/random.hpp"
#include "moca/model/kernels/detail/adamw.hpp"
#include "moca/model/nn/mask_indices.hpp"
#include "moca/model/nn/moca_model.hpp"
#include "moca/model/train/detail/cuda_step.hpp"
#include "test_support.hpp"

// The fused AdamW of LibTorch 2.x and the CUDA step (train/detail/cuda_step.hpp). The CUDA cases
// run where a GPU is (scripts/gpu-check.sh); on CPU they say they were skipped.

using namespace moca::model;
namespace md = moca::model::detail;

namespace {

std::unique_ptr<torch::optim::AdamW> make_adamw(const std::vector<torch::Tensor>& decay,
                                                const std::vector<torch::Tensor>& rest) {
  auto opts = [](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(1e-3).betas({0.9, 0.95}).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, opts(0.05));
  groups.emplace_back(rest, opts(0.0));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), torch::optim::AdamWOptions(1e-3));
}

std::unique_ptr<torch::optim::AdamW> model_adamw(MocaMae& m) {
  std::vector<torch::Tensor> decay, rest;
  for (const auto& p : m->named_parameters())
    (p.value().dim() >= 2 ? decay : rest).push_back(p.value());
  return make_adamw(decay, rest);
}

/// A batch of `batch` windows with `masked` of the tokens hidden in each (seeded).
MaskIndices random_indices(const MocaOptions& o, int batch, int masked, std::uint64_t seed) {
  moca::Rng rng(seed);
  std::vector<moca::masking::Mask> masks;
  const int P = o.length / o.patch_length, T = o.channels * P;
  for (int b = 0; b < batch; ++b) {
    std::vector<int> perm(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) perm[static_cast<size_t>(t)] = t;
    moca::shuffle(perm, rng);
    moca::masking::Mask m(o.channels, P);
    for (int k = 0; k < masked; ++k) m.set(perm[static_cast<size_t>(k)], true);
    masks.push_back(m);
  }
  return mask_indices(masks, o.layout, o.channels, P);
}

double max_abs(const torch::Tensor& t) {
  return t.abs().max().item<double>();
}

/// 100 AdamW steps of LibTorch's fused kernel (md::FusedAdamW) and of the reference on
/// `device` (moca's one-pass step on CPU, which is LibTorch's AdamW::step elsewhere), on the
/// same gradients, with a warm-up and decaying rate: the parameters move, and agree to float
/// rounding, as do the moments and the host step counts.
void compare_fused_adamw(const torch::Device& device) {
  torch::manual_seed(11);
  std::vector<torch::Tensor> a, b, start;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{70, 33}, {100003}, {5, 5}, {33}}) {
    auto t = torch::randn(shape).to(device);
    start.push_back(t.clone());
    a.push_back(t.clone().requires_grad_(true));
    b.push_back(t.clone().requires_grad_(true));
  }
  auto ref = make_adamw({a[0], a[1], a[2]}, {a[3]});
  auto opt = make_adamw({b[0], b[1], b[2]}, {b[3]});
  md::FusedAdamW fused(*opt);
  for (int step = 0; step < 100; ++step) {
    const double lr = 1e-3 * std::min(1.0, (step + 1) / 10.0) * (1.0 - step / 200.0);
    for (size_t i = 0; i < a.size(); ++i) {
      auto g = 3.0 * torch::randn(a[i].sizes()).to(device);
      a[i].mutable_grad() = g.clone();
      b[i].mutable_grad() = g.clone();
    }
    for (auto& group : ref->param_groups()) {
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    }
    md::adamw_step(*ref);
    fused.set_lr(lr);
    fused.step();
  }
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    const double moved = max_abs(a[i].detach() - start[i]);
    const double diff = max_abs(a[i].detach() - b[i].detach());
    CAPTURE(moved);
    CAPTURE(diff);
    CHECK(moved > 1e-2);         // the parameters moved (the comparison can fail)
    CHECK(diff < 1e-4 * moved);  // float rounding over 100 steps
    auto& sa = md::adamw_state(*ref, a[i]);
    auto& sb = md::adamw_state(*opt, b[i]);
    CHECK(sa.step() == 100);
    CHECK(sb.step() == 100);  // the host count that checkpoints save
    CHECK(max_abs(sa.exp_avg() - sb.exp_avg()) < 1e-5 * max_abs(sa.exp_avg()));
    CHECK(max_abs(sa.exp_avg_sq() - sb.exp_avg_sq()) < 1e-5 * max_abs(sa.exp_avg_sq()));
  }
}

}  // namespace

TEST_CASE("LibTorch's fused AdamW equals moca's one-pass AdamW over 100 steps (CPU)") {
  if (!md::fused_adamw_available()) {
    MESSAGE("skipped: this LibTorch has no at::_fused_adamw_ (PyTorch >= 2.4)");
    return;
  }
  compare_fused_adamw(torch::kCPU);
}

TEST_CASE("LibTorch's fused AdamW with a device rate equals LibTorch's AdamW on CUDA") {
  if (!md::fused_adamw_available() || !torch::cuda::is_available()) {
    MESSAGE("skipped: no at::_fused_adamw_ or no CUDA device");
    return;
  }
  compare_fused_adamw(torch::kCUDA);
}

TEST_CASE("CudaStep refuses a model that is not on CUDA") {
  torch::manual_seed(3);
  MocaMae m(moca_test::micro_mae());
  auto opt = model_adamw(m);
  // A build without the CUDA step says so (runtime_error); one with it refuses the CPU model.
  CHECK_THROWS(md::CudaStep(m, *opt, Precision::kFp32, true));
}

TEST_CASE("CUDA step: graph replay equals eager steps; the losses follow LibTorch's step") {
  if (!md::cuda_step_compiled() || !torch::cuda::is_available()) {
    MESSAGE("skipped: no CUDA step in this build or no CUDA device");
    return;
  }
  const MocaOptions o = moca_test::micro_mae();
  const int B = 8, masked = 45, steps = 20;
  torch::manual_seed(4);
  MocaMae graphed(o), eager(o), plain(o);
  {
    torch::NoGradGuard no_grad;
    auto src = graphed->parameters();
    for (auto* m : {&eager, &plain}) {
      auto dst = (*m)->parameters();
      for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
    }
  }
  const auto start = graphed->parameters()[0].detach().clone();
  for (auto* m : {&graphed, &eager, &plain}) {
    (*m)->to(torch::kCUDA);
    (*m)->train();
  }
  auto opt_g = model_adamw(graphed), opt_e = model_adamw(eager), opt_p = model_adamw(plain);
  md::CudaStep step_g(graphed, *opt_g, Precision::kFp32, true, 3);
  md::CudaStep step_e(eager, *opt_e, Precision::kFp32, false);
  double loss_p = 0.0;
  for (int s = 0; s < steps; ++s) {
    const auto x = torch::randn({B, o.channels, o.length}).contiguous();
    const auto mi = random_indices(o, B, masked, 100 + static_cast<std::uint64_t>(s));
    const double lr = 1e-3 * (1.0 + 0.1 * s);
    step_g.step(x.data_ptr<float>(), mi, lr);
    step_e.step(x.data_ptr<float>(), mi, lr);
    for (auto& group : opt_p->param_groups()) {
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    }
    loss_p += mae_loss_and_gradients(plain, x.to(torch::kCUDA), to_tensors(mi, torch::kCUDA), 1,
                                     Precision::kFp32);
    opt_p->step();
  }
  CHECK(step_g.graphed());
  CHECK(step_g.note().empty());
  CHECK_FALSE(step_e.graphed());
  const auto [sum_g, n_g] = step_g.take_losses();
  const auto [sum_e, n_e] = step_e.take_losses();
  CHECK(n_g == steps);
  CHECK(n_e == steps);
  CHECK(std::abs(sum_g - sum_e) <= 1e-5 * std::abs(sum_e));
  CHECK(std::abs(sum_e - loss_p) <= 1e-4 * std::abs(loss_p));
  // The graph replays the eager step's kernels: the weights agree to float rounding. (Against
  // LibTorch's per-parameter AdamW only the losses are compared: Adam's normalised update turns
  // rounding differences in near-zero gradients into steps of the learning rate's size, so
  // weights drift apart by ~lr over 20 steps; the optimisers themselves are compared on shared
  // gradients above.)
  const auto pg = graphed->parameters(), pe = eager->parameters();
  CHECK(max_abs(pg[0].detach().cpu() - start) > 1e-3);  // training moved the weights
  for (size_t i = 0; i < pg.size(); ++i) {
    CAPTURE(i);
    const double scale = std::max(1e-3, max_abs(pe[i].detach()));
    CHECK(max_abs(pg[i].detach() - pe[i].detach()) <= 1e-5 * scale);
  }
  // The host step counts advanced with the replays.
  CHECK(md::adamw_state(*opt_g, pg[0]).step() == steps);
}
