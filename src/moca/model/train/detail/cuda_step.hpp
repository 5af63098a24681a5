#pragma once
/// \file cuda_step.hpp
/// Internal (torch translation units of src/moca/model, the benchmark and the model tests): the
/// pre-training step on CUDA, and LibTorch's fused AdamW over a torch::optim::AdamW's groups.
///
/// On CUDA a step of batch 50 is a few hundred small kernels; launched one by one from the host
/// they, not the arithmetic, set the step time. CudaStep removes what the host adds to a step:
/// the inputs go through pinned staging buffers by asynchronous copies into fixed device buffers,
/// the optimiser is LibTorch's fused multi-tensor AdamW (one launch per parameter group) with the
/// learning rate read from a device tensor, the loss is summed on the device and read only when
/// the caller asks (take_losses()), and after a few eager steps the whole step (forward,
/// backward, optimiser) is captured once as a CUDA graph and replayed. Nothing in a step waits for
/// the device, so the host prepares the next batch while the device runs this one.
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "moca/model/nn/mask_indices.hpp"
#include "moca/model/nn/moca_model.hpp"
#include "moca/model/runtime.hpp"

namespace moca::model::detail {

/// True when this LibTorch has at::_fused_adamw_ (PyTorch >= 2.2: CUDA, and CPU from 2.4).
bool fused_adamw_available();

/// True when this build can run CudaStep (a LibTorch with CUDA, compiled with it).
bool cuda_step_compiled();

/// Free and total bytes of the current CUDA device's memory ({0, 0} without CUDA).
std::pair<std::uint64_t, std::uint64_t> cuda_memory_info();

/// Throws std::runtime_error "<what> needs bf16, which this GPU (<name>, compute capability X.Y)
/// lacks; use fp32" when `precision` is kBf16 and the current CUDA device is older than Ampere
/// (compute capability 8.0). Does nothing for kFp32 or without CUDA.
void check_cuda_precision(Precision precision, const std::string& what);

/// AdamW over every group of `optimizer` through at::_fused_adamw_: the update of
/// torch::optim::AdamW (decoupled weight decay, bias corrections, no amsgrad) to float rounding,
/// one fused launch per group. The moments are the optimiser's own state tensors (created as
/// AdamW::step creates them), so checkpoints keep LibTorch's format; the step counts live in one
/// float tensor per parameter on its device (what the kernel reads) and in the host state
/// (AdamWParamState::step, counted by count()). On CUDA the rate is a device tensor, so a
/// captured graph reads each step's rate. Throws std::runtime_error when the kernel is missing
/// (fused_adamw_available()).
class FusedAdamW {
 public:
  /// Parameters are those of `optimizer`'s groups that are floating point and on one device; the
  /// set is fixed here (a captured graph updates exactly these).
  explicit FusedAdamW(torch::optim::AdamW& optimizer);
  ~FusedAdamW();
  FusedAdamW(const FusedAdamW&) = delete;
  FusedAdamW& operator=(const FusedAdamW&) = delete;

  /// The rate of the following launches (every group): a device fill on CUDA, no wait.
  void set_lr(double lr);
  /// The device work of one step: steps += 1, then the fused update of each group. Every
  /// parameter must have a gradient.
  void launch();
  /// The host side of one step: AdamWParamState::step += 1 for every parameter.
  void count();
  /// launch() then count().
  void step() {
    launch();
    count();
  }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The pre-training step on CUDA (see the file comment). One object per run and model; the
/// batch size and visible-token count are fixed by the first step (a step with another visible
/// count drops the graph and continues eagerly, with a note).
class CudaStep {
 public:
  /// `graphs`: capture the step as a CUDA graph after `eager_steps` eager steps (on failure the
  /// steps stay eager and note() says why). `model` and `optimizer` must live on CUDA.
  CudaStep(MocaMae model, torch::optim::AdamW& optimizer, Precision precision, bool graphs,
           int eager_steps = 3);
  ~CudaStep();
  CudaStep(const CudaStep&) = delete;
  CudaStep& operator=(const CudaStep&) = delete;

  /// One optimiser step at rate `lr` on the batch `x` (B x C x L floats, row-major, on the
  /// host) with the masks `masks` (B windows). Returns without waiting for the device; `x` and
  /// `masks` may be reused at once (they are copied into pinned staging memory).
  void step(const float* x, const MaskIndices& masks, double lr);
  /// The sum and count of the step losses since the previous call; waits for the device. The
  /// caller checks finiteness here (a non-finite loss is seen at most one read late).
  std::pair<double, long> take_losses();
  /// Whether the steps now replay a captured graph.
  bool graphed() const;
  /// Why graphs are not used (empty when they are, or were not asked for).
  const std::string& note() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moca::model::detail
