#pragma once
/// \file adamw.hpp
/// Internal (torch translation units of src/moca/model, the benchmark and the model tests): one
/// AdamW step of a torch::optim::AdamW as a single pass over each parameter on CPU, and the
/// parameters the trainers' optimisers update.
#include <torch/torch.h>

#include <vector>

namespace moca::model::detail {

/// The parameters of `module` that require gradients, in parameters() order: what the trainers'
/// AdamW and their gradient reducers update.
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module);

/// One step of `optimizer`, the same update as optimizer.step() (LibTorch's AdamW, decoupled
/// weight decay, no amsgrad) to float rounding. When every parameter with a gradient is a dense,
/// contiguous CPU float32 tensor (and amsgrad is off), each parameter is updated in one pass
/// (weight decay, both moments, bias corrections and the step read p, g, m, v once and write
/// p, m, v once; at::parallel_for over chunks) where LibTorch 1.13's step makes about ten
/// (docs/benchmarks.md, "One-pass AdamW"). The optimiser's state (step
/// count, exp_avg, exp_avg_sq) is LibTorch's own, created the way AdamW::step creates it, so
/// checkpoints and optimizer.step() stay interchangeable. Otherwise (CUDA, other dtypes, sparse
/// gradients, amsgrad, or the fused step switched off) it calls optimizer.step().
void adamw_step(torch::optim::AdamW& optimizer);

/// p's AdamW state in `optimizer` (the object AdamW::step and adamw_step() update and checkpoints
/// save), or nullptr before its first step. LibTorch keys it by the TensorImpl's address: as text
/// before 2.0, the address itself after.
torch::optim::AdamWParamState* find_adamw_state(torch::optim::AdamW& optimizer,
                                                const torch::Tensor& p);

/// p's AdamW state in `optimizer`, created as AdamW::step creates it (step 0, zero moments)
/// when missing.
torch::optim::AdamWParamState& adamw_state(torch::optim::AdamW& optimizer, const torch::Tensor& p);

/// Whether adamw_step() may take the one-pass route (default true; process-wide, atomic). Off,
/// it always calls optimizer.step(): the trainer's golden record (tests/model), taken before the
/// fused step existed, is compared bit for bit on that path.
void set_fused_adamw_enabled(bool enabled);
bool fused_adamw_enabled();

}  // namespace moca::model::detail
