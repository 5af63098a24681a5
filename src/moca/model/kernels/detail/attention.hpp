#pragma once
/// \file attention.hpp
/// Internal (torch translation units of src/moca/model and the model tests): the attention core
/// softmax(q kᵀ · scale) v of every (sample, head), taking the qkv projection's output directly.
#include <torch/torch.h>

namespace moca::model::detail {

/// qkv: B x N x 3D (the qkv Linear's output: q, k, v, each as H heads of D/H) -> B x N x D (the
/// heads side by side), through LibTorch's products and softmax (any device and dtype).
torch::Tensor attention_plain(const torch::Tensor& qkv, int64_t heads, double scale);

/// Whether attention_cpu() serves this input: a CPU float32 or bfloat16 tensor, in a build with
/// BLAS.
bool attention_cpu_supported(const torch::Tensor& qkv);

/// The forward pass takes attention_cpu() for head dims up to this: 32 (tiny's decoder) and 64
/// (tiny's encoder, 192 / 3, and paper-base), where it is faster than LibTorch's per-matrix bmm
/// loop on the CPU (the measurements: docs/benchmarks/model.md, "attention_cpu's head-dim limit").
constexpr int64_t kCpuAttentionMaxHeadDim = 64;

/// Whether AttentionImpl may take attention_cpu() (default true; process-wide, atomic). Off, every
/// forward pass takes attention_plain(): the trainer's golden record (tests/model), taken before
/// the kernel existed, is compared bit for bit on that path.
void set_cpu_attention_enabled(bool enabled);
bool cpu_attention_enabled();

/// The same as attention_plain() as one autograd function for CPU float32: forward and backward
/// loop over the B x H (sample, head) pairs in parallel (at::parallel_for, OpenMP) with small
/// BLAS GEMMs on strided views of qkv (no permute copies), keeping the softmax for backward.
/// Equal to attention_plain() to float rounding (tests/model). A bfloat16 qkv (bf16 autocast) is
/// widened first and the result is float32: one rounding where LibTorch's bf16 products round
/// each product and the softmax; 10 % off a tiny bf16 step (LibTorch's per-matrix bf16 bmm loop).
/// Throws std::invalid_argument if
/// !attention_cpu_supported(qkv) or the shape is not B x N x 3D with D divisible by heads.
torch::Tensor attention_cpu(const torch::Tensor& qkv, int64_t heads, double scale);

}  // namespace moca::model::detail
