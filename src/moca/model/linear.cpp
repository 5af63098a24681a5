#include "moca/model/detail/linear.hpp"

#include <ATen/Parallel.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <atomic>

#include "moca/model/detail/adamw.hpp"
#include "moca/model/detail/attention.hpp"
#include "moca/model/detail/cpu_kernels.hpp"
#include "moca/model/detail/gelu_kernels.hpp"

namespace moca::model::detail {

namespace {

std::atomic<bool> g_fused_linear{true};

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows per block of the bias gradient's partial sums: fixed, so the sum's order (and its
// rounding) does not depend on how many threads share the blocks.
constexpr int64_t kRowBlock = 32;

int64_t blocks_of(int64_t rows) {
  return (rows + kRowBlock - 1) / kRowBlock;
}

struct LinearGelu : public torch::autograd::Function<LinearGelu> {
  // x2: rows x in (contiguous), weight: out x in, bias: out -> rows x out
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x2,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    auto u = torch::mm(x2, weight.t());
    auto y = torch::empty_like(u);
    const int64_t rows = u.size(0), cols = u.size(1);
    const auto b = bias.contiguous();
    float* up = u.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    at::parallel_for(0, blocks_of(rows), 1, [&](int64_t begin, int64_t end) {
      const int64_t r0 = begin * kRowBlock, r1 = std::min(rows, end * kRowBlock);
      bias_gelu_rows(up + r0 * cols, bp, yp + r0 * cols, r1 - r0, cols);
    });
    ctx->save_for_backward({x2, weight, u});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x2 = saved[0];
    const auto& weight = saved[1];
    const auto& u = saved[2];
    const auto g = grads[0].contiguous();
    const int64_t rows = u.size(0), cols = u.size(1), blocks = blocks_of(rows);
    auto gu = torch::empty_like(u);
    auto partial = torch::zeros({blocks, cols}, u.options());
    const float* upt = u.data_ptr<float>();
    const float* gp = g.data_ptr<float>();
    float* gup = gu.data_ptr<float>();
    float* pp = partial.data_ptr<float>();
    at::parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const int64_t r0 = k * kRowBlock, r1 = std::min(rows, r0 + kRowBlock);
        gelu_grad_rows(upt + r0 * cols, gp + r0 * cols, gup + r0 * cols, pp + k * cols, r1 - r0,
                       cols);
      }
    });
    torch::Tensor gb;
    if (ctx->needs_input_grad(2)) {
      gb = torch::empty({cols}, u.options());
      float* gbp = gb.data_ptr<float>();
      for (int64_t j = 0; j < cols; ++j) gbp[j] = 0.f;
      for (int64_t k = 0; k < blocks; ++k) {
        const float* row = pp + k * cols;
        for (int64_t j = 0; j < cols; ++j) gbp[j] += row[j];
      }
    }
    torch::Tensor gx, gw;
    if (ctx->needs_input_grad(0)) gx = torch::mm(gu, weight);
    if (ctx->needs_input_grad(1)) gw = torch::mm(gu.t(), x2);
    return {gx, gw, gb};
  }
};

// CPU autocast is on while its dispatch key is not excluded (at::autocast::is_cpu_enabled() in
// LibTorch 1.x, deprecated in 2.x).
bool cpu_autocast() {
  return !c10::impl::tls_is_dispatch_key_excluded(c10::DispatchKey::AutocastCPU);
}

bool cpu_route(const torch::Tensor& x) {
  return g_fused_linear.load() && x.device().is_cpu() && x.dim() >= 2;
}

}  // namespace

void set_fused_linear_enabled(bool enabled) {
  g_fused_linear.store(enabled);
}
bool fused_linear_enabled() {
  return g_fused_linear.load();
}

void set_cpu_kernels_enabled(bool enabled) {
  set_cpu_attention_enabled(enabled);
  set_fused_adamw_enabled(enabled);
  set_fused_linear_enabled(enabled);
}

torch::Tensor linear(const torch::Tensor& x, torch::nn::Linear layer) {
  if (!cpu_route(x) || !layer->bias.defined()) return layer->forward(x);
  const auto& w = layer->weight;
  auto out_shape = x.sizes().vec();
  out_shape.back() = w.size(0);
  return torch::addmm(layer->bias, x.reshape({-1, x.size(-1)}), w.t()).view(out_shape);
}

torch::Tensor linear_gelu(const torch::Tensor& x, torch::nn::Linear layer) {
  const auto& w = layer->weight;
  const auto& b = layer->bias;
  const bool fused = cpu_route(x) && b.defined() && x.scalar_type() == torch::kFloat &&
                     w.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat &&
                     !cpu_autocast();
  if (!fused) return torch::gelu(linear(x, layer));
  auto out_shape = x.sizes().vec();
  out_shape.back() = w.size(0);
  const auto x2 = x.reshape({-1, x.size(-1)}).contiguous();
  return LinearGelu::apply(x2, w, b).view(out_shape);
}

}  // namespace moca::model::detail
