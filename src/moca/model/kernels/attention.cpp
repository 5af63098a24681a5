#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "moca/common/error_text.hpp"
#include "moca/model/kernels/detail/attention.hpp"
#include "moca/model/kernels/detail/gemm.hpp"

namespace moca::model::detail {

torch::Tensor attention_plain(const torch::Tensor& qkv, int64_t heads, double scale) {
  const int64_t B = qkv.size(0), N = qkv.size(1), D = qkv.size(2) / 3;
  // B x N x 3 x H x hd -> 3 x B x H x N x hd
  auto p = qkv.reshape({B, N, 3, heads, D / heads}).permute({2, 0, 3, 1, 4});
  auto q = p[0], k = p[1], v = p[2];
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  // LibTorch >= 2.1: the fused kernel (flash / memory-efficient attention on CUDA) with the
  // caller's scale (its default, 1 / sqrt(head dim), is the model's, but not every caller's: the
  // kernel test passes another).
  auto out = at::scaled_dot_product_attention(q, k, v, {}, 0.0, false, scale);
#else
  auto attn = torch::softmax(torch::matmul(q * scale, k.transpose(-2, -1)), -1);
  auto out = torch::matmul(attn, v);
#endif
  return out.transpose(1, 2).reshape({B, N, D});
}

#ifdef MOCA_MODEL_HAVE_SGEMM
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Shape {
  int64_t B, N, D, H, hd;
};

Shape shape_of(const torch::Tensor& qkv, int64_t heads) {
  if (qkv.dim() != 3 || qkv.size(2) % 3 != 0 || heads < 1 || (qkv.size(2) / 3) % heads != 0) {
    throw_invalid("attention_cpu()",
                  "qkv must be B x N x 3D with D divisible by "
                  "heads (" +
                      std::to_string(heads) + ")");
  }
  const int64_t D = qkv.size(2) / 3;
  return {qkv.size(0), qkv.size(1), D, heads, D / heads};
}

struct CpuAttention : public torch::autograd::Function<CpuAttention> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& qkv_in, int64_t heads,
                               double scale) {
    const auto qkv = qkv_in.contiguous();
    const Shape s = shape_of(qkv, heads);
    auto out = torch::empty({s.B, s.N, s.D}, qkv.options());
    auto probs = torch::empty({s.B, s.H, s.N, s.N}, qkv.options());
    const float* x = qkv.data_ptr<float>();
    float* o = out.data_ptr<float>();
    float* P = probs.data_ptr<float>();
    const int N = static_cast<int>(s.N), hd = static_cast<int>(s.hd);
    const int ld3 = static_cast<int>(3 * s.D), ld = static_cast<int>(s.D);
    at::parallel_for(0, s.B * s.H, 1, [&](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / s.H, h = bh % s.H;
        const float* q = x + b * s.N * 3 * s.D + h * s.hd;
        const float* k = q + s.D;
        const float* v = q + 2 * s.D;
        float* p = P + bh * s.N * s.N;
        // S = scale q kᵀ, then the row softmax in place
        sgemm_rm(false, true, N, N, hd, static_cast<float>(scale), q, ld3, k, ld3, 0.f, p, N);
        for (int i = 0; i < N; ++i) {
          float* row = p + static_cast<int64_t>(i) * N;
          float mx = row[0];
          for (int j = 1; j < N; ++j) mx = std::max(mx, row[j]);
          float sum = 0.f;
          for (int j = 0; j < N; ++j) {
            row[j] = std::exp(row[j] - mx);
            sum += row[j];
          }
          const float inv = 1.f / sum;
          for (int j = 0; j < N; ++j) row[j] *= inv;
        }
        // O = P v, written as head h's columns of out
        sgemm_rm(false, false, N, hd, N, 1.f, p, N, v, ld3, 0.f, o + b * s.N * s.D + h * s.hd, ld);
      }
    });
    ctx->save_for_backward({qkv, probs});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["scale"] = scale;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& qkv = saved[0];
    const auto& probs = saved[1];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const float scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    const Shape s = shape_of(qkv, heads);
    const auto dout = grads[0].contiguous();
    auto dqkv = torch::empty_like(qkv);
    const float* x = qkv.data_ptr<float>();
    const float* P = probs.data_ptr<float>();
    const float* g = dout.data_ptr<float>();
    float* dx = dqkv.data_ptr<float>();
    const int N = static_cast<int>(s.N), hd = static_cast<int>(s.hd);
    const int ld3 = static_cast<int>(3 * s.D), ld = static_cast<int>(s.D);
    at::parallel_for(0, s.B * s.H, 1, [&](int64_t begin, int64_t end) {
      std::vector<float> dS(static_cast<size_t>(s.N * s.N));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / s.H, h = bh % s.H;
        const int64_t off = b * s.N * 3 * s.D + h * s.hd;
        const float *q = x + off, *k = q + s.D, *v = q + 2 * s.D;
        float *dq = dx + off, *dk = dq + s.D, *dv = dq + 2 * s.D;
        const float* p = P + bh * s.N * s.N;
        const float* go = g + b * s.N * s.D + h * s.hd;
        // dv = Pᵀ dO; dP = dO vᵀ; dS = P (.) (dP - rowsum(dP (.) P)); dq = scale dS k;
        // dk = scale dSᵀ q
        sgemm_rm(true, false, N, hd, N, 1.f, p, N, go, ld, 0.f, dv, ld3);
        sgemm_rm(false, true, N, N, hd, 1.f, go, ld, v, ld3, 0.f, dS.data(), N);
        for (int i = 0; i < N; ++i) {
          const float* pr = p + static_cast<int64_t>(i) * N;
          float* dr = dS.data() + static_cast<int64_t>(i) * N;
          float dot = 0.f;
          for (int j = 0; j < N; ++j) dot += dr[j] * pr[j];
          for (int j = 0; j < N; ++j) dr[j] = pr[j] * (dr[j] - dot);
        }
        sgemm_rm(false, false, N, hd, N, scale, dS.data(), N, k, ld3, 0.f, dq, ld3);
        sgemm_rm(true, false, N, hd, N, scale, dS.data(), N, q, ld3, 0.f, dk, ld3);
      }
    });
    return {dqkv, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace
#endif

namespace {
std::atomic<bool> g_cpu_attention{true};
}  // namespace

void set_cpu_attention_enabled(bool enabled) {
  g_cpu_attention.store(enabled);
}
bool cpu_attention_enabled() {
  return g_cpu_attention.load();
}

bool attention_cpu_supported(const torch::Tensor& qkv) {
#ifdef MOCA_MODEL_HAVE_SGEMM
  return qkv.device().is_cpu() &&
         (qkv.scalar_type() == torch::kFloat || qkv.scalar_type() == torch::kBFloat16);
#else
  (void)qkv;
  return false;
#endif
}

torch::Tensor attention_cpu(const torch::Tensor& qkv, int64_t heads, double scale) {
  if (!attention_cpu_supported(qkv)) {
    throw_invalid("attention_cpu()",
                  "needs a CPU float32 or bfloat16 tensor and a build with BLAS (got " +
                      std::string(qkv.device().str()) + ", " +
                      std::string(c10::toString(qkv.scalar_type())) + ")");
  }
#ifdef MOCA_MODEL_HAVE_SGEMM
  // bf16 (autocast's qkv) is widened: the products run in float32 and the result is float32.
  return CpuAttention::apply(qkv.scalar_type() == torch::kBFloat16 ? qkv.to(torch::kFloat) : qkv,
                             heads, scale);
#else
  (void)heads;
  (void)scale;
  return {};
#endif
}

}  // namespace moca::model::detail
