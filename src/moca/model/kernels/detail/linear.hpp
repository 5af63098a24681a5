#pragma once
/// \file linear.hpp
/// Internal (torch translation units of src/moca/model and the model tests): the model's Linear
/// layers on CPU without LibTorch 1.13's extra passes.
///
/// LibTorch 1.13's Linear on a 3-D input is a matmul and a separate bias add (its backward a
/// separate sum), and GELU after it two more passes (forward and backward). In float32 on CPU,
/// linear() is one autograd function whose products are detail::sgemm_rm (gemm.hpp: oneDNN where
/// built with it), the bias copied into the output before the product adds to it; linear_gelu()
/// is Linear + GELU as one autograd function: the product, then one pass that adds the bias and
/// applies GELU; backward one pass for GELU's derivative and the bias gradient (gelu_kernels.hpp),
/// then the two products. Under autocast linear() is one addmm on the 2-D view (the bias is C of
/// the GEMM). Equal to LibTorch's layers to float rounding (tests/model).
#include <torch/torch.h>

namespace moca::model::detail {

/// layer(x) for x of shape (..., in): on CPU in float32 the autograd function above, under
/// autocast (or in another dtype) one addmm on the 2-D view; deterministic for any thread count
/// in float32. Elsewhere, or with the fused layers switched off, layer->forward(x).
torch::Tensor linear(const torch::Tensor& x, torch::nn::Linear layer);

/// gelu(layer(x)) (the exact, erf GELU). For a CPU float32 x outside autocast, one autograd
/// function (above); deterministic for any thread count (the bias gradient is summed over
/// fixed blocks of rows in order). Elsewhere, or switched off, torch::gelu(layer->forward(x)).
torch::Tensor linear_gelu(const torch::Tensor& x, torch::nn::Linear layer);

/// Whether linear() and linear_gelu() take the routes above (default true; process-wide,
/// atomic). Off, they are LibTorch's Linear and GELU: the trainer's golden record (tests/model),
/// taken before these existed, is compared bit for bit on that path.
void set_fused_linear_enabled(bool enabled);
bool fused_linear_enabled();

}  // namespace moca::model::detail
