#include "torch_test.hpp"  // first: see the note there

#include <ATen/Parallel.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/kernels/detail/gelu_kernels.hpp"
#include "moca/model/kernels/detail/gemm.hpp"
#include "moca/model/kernels/detail/linear.hpp"
#include "test_support.hpp"

namespace {

using moca::model::detail::linear;
using moca::model::detail::linear_gelu;

double phi_cdf(double x) {
  return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
}
double phi_pdf(double x) {
  return std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

/// Gradients of sum(out * w) with respect to `inputs`.
std::vector<torch::Tensor> grads_of(const torch::Tensor& out, const torch::Tensor& w,
                                    const std::vector<torch::Tensor>& inputs) {
  return torch::autograd::grad({(out * w).sum()}, inputs, {}, /*retain_graph=*/true);
}

double max_rel(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).abs().max() / b.abs().max()).item<double>();
}

}  // namespace

TEST_CASE("GELU kernels against double-precision erf") {
  using namespace moca::model::detail;
  // erf (Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7 in exact arithmetic; evaluated in float,
  // ~4e-7 measured) and gelu on a grid.
  double worst_erf = 0.0, worst_gelu = 0.0;
  for (int i = -12000; i <= 12000; ++i) {
    const float x = static_cast<float>(i) * 1e-3f;
    worst_erf = std::max(worst_erf, std::abs(gelu_erf(x) - std::erf(static_cast<double>(x))));
    const double ref = x * phi_cdf(x);
    worst_gelu = std::max(worst_gelu, std::abs(gelu_value(x) - ref) / std::max(1.0, std::abs(ref)));
  }
  CAPTURE(worst_erf);
  CAPTURE(worst_gelu);
  CHECK(worst_erf < 5e-7);
  CHECK(worst_gelu < 5e-7);
  CHECK(worst_erf > 0.0);  // an approximation, not std::erf: the bound above is what is tested

  // The row loops on an odd-sized block (vector tails), against the double formulas.
  const int64_t rows = 37, cols = 53;
  torch::manual_seed(3);
  auto u = (3.0 * torch::randn({rows, cols})).contiguous();
  auto bias = torch::randn({cols});
  auto g = torch::randn({rows, cols});
  const auto u0 = u.clone();
  auto y = torch::empty_like(u);
  bias_gelu_rows(u.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
  auto gu = torch::empty_like(u);
  auto gb = torch::full({cols}, 0.5f);  // accumulates onto what is there
  gelu_grad_rows(u.data_ptr<float>(), g.data_ptr<float>(), gu.data_ptr<float>(),
                 gb.data_ptr<float>(), rows, cols);
  const auto pre = (u0.to(torch::kDouble) + bias.to(torch::kDouble)).contiguous();
  CHECK(torch::allclose(u.to(torch::kDouble), pre, 0.0, 1e-6));
  const auto* pp = pre.data_ptr<double>();
  const auto* yp = y.data_ptr<float>();
  const auto* gp = g.data_ptr<float>();
  const auto* gup = gu.data_ptr<float>();
  std::vector<double> colsum(static_cast<size_t>(cols), 0.5);
  double worst_y = 0.0, worst_d = 0.0;
  for (int64_t k = 0; k < rows * cols; ++k) {
    const double v = pp[k];
    worst_y = std::max(worst_y, std::abs(yp[k] - v * phi_cdf(v)) / std::max(1.0, std::abs(v)));
    const double d = gp[k] * (phi_cdf(v) + v * phi_pdf(v));
    worst_d = std::max(worst_d, std::abs(gup[k] - d) / std::max(1.0, std::abs(d)));
    colsum[static_cast<size_t>(k % cols)] += gup[k];
  }
  CHECK(worst_y < 1e-6);
  CHECK(worst_d < 1e-6);
  for (int64_t j = 0; j < cols; ++j) {
    CHECK(gb[j].item<double>() == doctest::Approx(colsum[static_cast<size_t>(j)]).epsilon(1e-5));
  }

  // Non-finite input propagates as LibTorch's gelu does: NaN stays NaN, +inf stays +inf.
  CHECK(std::isnan(gelu_value(std::numeric_limits<float>::quiet_NaN())));
  CHECK(gelu_value(std::numeric_limits<float>::infinity()) ==
        std::numeric_limits<float>::infinity());
}

TEST_CASE("linear and linear_gelu equal LibTorch's Linear and GELU, forward and gradients") {
  torch::manual_seed(5);
  torch::nn::Linear layer(24, 40);
  for (const auto& shape : std::vector<std::vector<int64_t>>{{3, 7, 24}, {11, 24}, {2, 3, 5, 24}}) {
    CAPTURE(shape.size());
    auto x = (2.0 * torch::randn(shape)).requires_grad_(true);
    const std::vector<torch::Tensor> inputs{x, layer->weight, layer->bias};
    const auto ref_l = layer->forward(x);
    const auto ref_g = torch::gelu(ref_l);
    const auto out_l = linear(x, layer);
    const auto out_g = linear_gelu(x, layer);
    REQUIRE(out_l.sizes() == ref_l.sizes());
    REQUIRE(out_g.sizes() == ref_g.sizes());
    CHECK(torch::allclose(out_l, ref_l, 1e-6, 1e-6));
    CHECK(torch::allclose(out_g, ref_g, 1e-5, 1e-6));
    const auto w = torch::randn(ref_g.sizes());
    const auto gl = grads_of(out_l, w, inputs), rl = grads_of(ref_l, w, inputs);
    const auto gg = grads_of(out_g, w, inputs), rg = grads_of(ref_g, w, inputs);
    for (size_t k = 0; k < inputs.size(); ++k) {
      CAPTURE(k);
      CHECK(max_rel(gl[k], rl[k]) < 1e-5);
      CHECK(max_rel(gg[k], rg[k]) < 1e-5);
      CHECK(rg[k].abs().max().item<double>() > 0.1);  // gradients that can fail
    }
  }
  // A non-contiguous input (a transposed view) is copied, not misread.
  auto xt = torch::randn({24, 9}).t();
  CHECK(torch::allclose(linear_gelu(xt, layer), torch::gelu(layer->forward(xt)), 1e-5, 1e-6));
}

TEST_CASE(
    "linear, linear_gelu: 1 and 2 threads agree (bit for bit with oneDNN's AVX-512 kernels); "
    "LibTorch's layers when off") {
  torch::manual_seed(8);
  torch::nn::Linear layer(128, 96);
  // 301 rows: several 32-row blocks of the bias gradient, split differently over 1 and 2 threads,
  // and products large enough to be cut into one block per thread (detail/gemm.hpp).
  const auto x0 = torch::randn({301, 128});
  const auto w = torch::randn({301, 96});
  const int saved_threads = at::get_num_threads();
  std::vector<std::vector<torch::Tensor>> runs;
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    std::vector<torch::Tensor> g;
    for (const bool gelu : {false, true}) {
      auto x = x0.clone().requires_grad_(true);
      auto out = gelu ? linear_gelu(x, layer) : linear(x, layer);
      for (auto& t : grads_of(out, w, {x, layer->weight, layer->bias})) g.push_back(t);
      g.push_back(out.detach());
    }
    runs.push_back(g);
  }
  at::set_num_threads(saved_threads);
  // Bit for bit on the oneDNN route; the BLAS route (LibTorch 2.x build) threads inside OpenBLAS,
  // whose bits follow its blocking for the thread count (test_gemm.cpp): equal to rounding there.
  // oneDNN's AVX2 kernels round by the block's extent (test_support.hpp): to rounding there too.
  const bool onednn = std::string(moca::model::detail::sgemm_library()).rfind("oneDNN", 0) == 0 &&
                      moca_test::onednn_blocks_bit_stable();
  for (size_t k = 0; k < runs[0].size(); ++k) {
    if (onednn) {
      CHECK(torch::equal(runs[0][k], runs[1][k]));
    } else {
      CHECK(torch::allclose(runs[0][k], runs[1][k], 1e-4, 1e-5));
    }
  }

  // A frozen layer (a probe's encoder): only the input's gradient, still LibTorch's to rounding.
  {
    torch::NoGradGuard no_grad;
    for (auto& p : layer->parameters()) p.set_requires_grad(false);
  }
  auto x = x0.clone().requires_grad_(true);
  const auto gx = grads_of(linear_gelu(x, layer), w, {x})[0];
  const auto rx = grads_of(torch::gelu(layer->forward(x)), w, {x})[0];
  CHECK(max_rel(gx, rx) < 1e-5);
  for (auto& p : layer->parameters()) p.set_requires_grad(true);

  moca::model::detail::set_fused_linear_enabled(false);
  CHECK(torch::equal(linear_gelu(x0, layer), torch::gelu(layer->forward(x0))));
  CHECK(torch::equal(linear(x0, layer), layer->forward(x0)));
  moca::model::detail::set_fused_linear_enabled(true);

  // Under bf16 autocast the products are bf16 (LibTorch's route), not the float32 kernel.
  moca::model::detail::AutocastScope amp(torch::kCPU, moca::model::Precision::kBf16);
  REQUIRE(amp.active());
  CHECK((linear_gelu(x0, layer).scalar_type() == torch::kBFloat16));
  CHECK((linear(x0, layer).scalar_type() == torch::kBFloat16));
}
