#include "moca/model/kernels/detail/linear.hpp"

#include <ATen/Parallel.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <algorithm>
#include <atomic>

#include "moca/model/kernels/detail/adamw.hpp"
#include "moca/model/kernels/detail/attention.hpp"
#include "moca/model/kernels/detail/cpu_kernels.hpp"
#include "moca/model/kernels/detail/gelu_kernels.hpp"
#include "moca/model/kernels/detail/gemm.hpp"

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

// Row-major products of the layers, rows x in inputs, out x in weights (all contiguous).
// u (rows x out) = x wᵀ, with beta = 1 adding to what u holds.
void forward_product(const float* x, const float* w, float* u, int64_t rows, int64_t in,
                     int64_t out, float beta) {
  sgemm_rm(false, true, rows, out, in, 1.f, x, in, w, in, beta, u, out);
}

// The input and weight gradients of u = x wᵀ from gu = dL/du: gx = gu w, gw = guᵀ x.
torch::Tensor input_grad(const torch::Tensor& gu, const torch::Tensor& w) {
  const int64_t rows = gu.size(0), out = w.size(0), in = w.size(1);
  auto gx = torch::empty({rows, in}, gu.options());
  sgemm_rm(false, false, rows, in, out, 1.f, gu.data_ptr<float>(), out, w.data_ptr<float>(), in,
           0.f, gx.data_ptr<float>(), in);
  return gx;
}
torch::Tensor weight_grad(const torch::Tensor& gu, const torch::Tensor& x) {
  const int64_t rows = gu.size(0), out = gu.size(1), in = x.size(1);
  auto gw = torch::empty({out, in}, gu.options());
  sgemm_rm(true, false, out, in, rows, 1.f, gu.data_ptr<float>(), out, x.data_ptr<float>(), in, 0.f,
           gw.data_ptr<float>(), in);
  return gw;
}

// Σ over blocks of the blocks' partial sums (blocks x cols), in block order.
torch::Tensor sum_partials(const torch::Tensor& partial) {
  const int64_t blocks = partial.size(0), cols = partial.size(1);
  auto gb = torch::zeros({cols}, partial.options());
  float* gbp = gb.data_ptr<float>();
  const float* pp = partial.data_ptr<float>();
  for (int64_t k = 0; k < blocks; ++k) {
    const float* row = pp + k * cols;
    for (int64_t j = 0; j < cols; ++j) gbp[j] += row[j];
  }
  return gb;
}

// The bias gradient Σ_i g[i][:], summed within fixed blocks of rows, then over the blocks.
torch::Tensor bias_grad(const torch::Tensor& g) {
  const int64_t rows = g.size(0), cols = g.size(1), blocks = blocks_of(rows);
  auto partial = torch::zeros({blocks, cols}, g.options());
  const float* gp = g.data_ptr<float>();
  float* pp = partial.data_ptr<float>();
  at::parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      float* sum = pp + k * cols;
      for (int64_t i = k * kRowBlock; i < std::min(rows, (k + 1) * kRowBlock); ++i) {
        const float* row = gp + i * cols;
        for (int64_t j = 0; j < cols; ++j) sum[j] += row[j];
      }
    }
  });
  return sum_partials(partial);
}

struct LinearFn : public torch::autograd::Function<LinearFn> {
  // x2: rows x in (contiguous), weight: out x in, bias: out -> rows x out
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x2,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    const int64_t rows = x2.size(0), in = x2.size(1), out = weight.size(0);
    const auto w = weight.contiguous();
    const auto b = bias.contiguous();
    auto y = torch::empty({rows, out}, x2.options());
    float* yp = y.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    for (int64_t i = 0; i < rows; ++i) std::copy(bp, bp + out, yp + i * out);
    forward_product(x2.data_ptr<float>(), w.data_ptr<float>(), yp, rows, in, out, 1.f);
    ctx->save_for_backward({x2, w});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x2 = saved[0];
    const auto& w = saved[1];
    const auto g = grads[0].contiguous();
    torch::Tensor gx, gw, gb;
    if (ctx->needs_input_grad(0)) gx = input_grad(g, w);
    if (ctx->needs_input_grad(1)) gw = weight_grad(g, x2);
    if (ctx->needs_input_grad(2)) gb = bias_grad(g);
    return {gx, gw, gb};
  }
};

struct LinearGelu : public torch::autograd::Function<LinearGelu> {
  // x2: rows x in (contiguous), weight: out x in, bias: out -> rows x out
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x2,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    const int64_t rows = x2.size(0), in = x2.size(1), cols = weight.size(0);
    const auto w = weight.contiguous();
    auto u = torch::empty({rows, cols}, x2.options());
    auto y = torch::empty_like(u);
    float* up = u.data_ptr<float>();
    forward_product(x2.data_ptr<float>(), w.data_ptr<float>(), up, rows, in, cols, 0.f);
    const auto b = bias.contiguous();
    float* yp = y.data_ptr<float>();
    const float* bp = b.data_ptr<float>();
    at::parallel_for(0, blocks_of(rows), 1, [&](int64_t begin, int64_t end) {
      const int64_t r0 = begin * kRowBlock, r1 = std::min(rows, end * kRowBlock);
      bias_gelu_rows(up + r0 * cols, bp, yp + r0 * cols, r1 - r0, cols);
    });
    ctx->save_for_backward({x2, w, u});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& x2 = saved[0];
    const auto& w = saved[1];
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
    torch::Tensor gx, gw, gb;
    if (ctx->needs_input_grad(2)) gb = sum_partials(partial);
    if (ctx->needs_input_grad(0)) gx = input_grad(gu, w);
    if (ctx->needs_input_grad(1)) gw = weight_grad(gu, x2);
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

// The float32 routes through sgemm_rm (outside autocast, which casts the operands to bf16).
bool float_route(const torch::Tensor& x, const torch::nn::Linear& layer) {
  const auto& w = layer->weight;
  const auto& b = layer->bias;
  return cpu_route(x) && have_sgemm() && b.defined() && x.scalar_type() == torch::kFloat &&
         w.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat && !cpu_autocast();
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
  if (float_route(x, layer)) {
    const auto x2 = x.reshape({-1, x.size(-1)}).contiguous();
    return LinearFn::apply(x2, w, layer->bias).view(out_shape);
  }
  return torch::addmm(layer->bias, x.reshape({-1, x.size(-1)}), w.t()).view(out_shape);
}

torch::Tensor linear_gelu(const torch::Tensor& x, torch::nn::Linear layer) {
  if (!float_route(x, layer)) return torch::gelu(linear(x, layer));
  const auto& w = layer->weight;
  auto out_shape = x.sizes().vec();
  out_shape.back() = w.size(0);
  const auto x2 = x.reshape({-1, x.size(-1)}).contiguous();
  return LinearGelu::apply(x2, w, layer->bias).view(out_shape);
}

}  // namespace moca::model::detail
