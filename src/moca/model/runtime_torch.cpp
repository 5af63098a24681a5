// The torch side of runtime.hpp: CUDA's presence, the run's device and threads, bf16 autocast
// scopes (detail/runtime_torch.hpp).
#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/train/detail/cuda_step.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <stdexcept>

#include "moca/common/memory.hpp"

namespace moca::model {

bool cuda_available() {
  return torch::cuda::is_available();
}

namespace detail {

torch::Device setup_runtime(const RuntimeOptions& runtime) {
  runtime.validate();
  at::set_num_threads(runtime.effective_threads());
  // Heap-served activations: faster CPU steps (docs/benchmarks.md).
  tune_allocator();
  if (runtime.device == Device::kCpu) return torch::kCPU;
  if (runtime.device == Device::kCuda) {
    if (!torch::cuda::is_available()) {
      throw std::runtime_error(
          "setup_runtime(): device 'cuda' requested but this LibTorch build sees no CUDA device "
          "(use RuntimeOptions::device cpu or auto)");
    }
  } else if (!torch::cuda::is_available()) {
    return torch::kCPU;
  }
  // Every CUDA entry point: bf16 refused before the first step on a GPU without it.
  check_cuda_precision(runtime.precision, "setup_runtime()");
  // CUDA only: these switches leave CPU products alone.
  at::globalContext().setAllowTF32CuBLAS(runtime.tf32);
  at::globalContext().setAllowTF32CuDNN(runtime.tf32);
  return torch::kCUDA;
}

namespace {

// Autocast state per device type across LibTorch versions (the API became device-typed in 2.4).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool autocast_enabled(c10::DeviceType t) {
  return at::autocast::is_autocast_enabled(t);
}
void set_autocast_enabled(c10::DeviceType t, bool on) {
  at::autocast::set_autocast_enabled(t, on);
}
at::ScalarType autocast_dtype(c10::DeviceType t) {
  return at::autocast::get_autocast_dtype(t);
}
void set_autocast_dtype(c10::DeviceType t, at::ScalarType d) {
  at::autocast::set_autocast_dtype(t, d);
}
#else
bool autocast_enabled(c10::DeviceType t) {
  return t == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void set_autocast_enabled(c10::DeviceType t, bool on) {
  if (t == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(on);
  } else {
    at::autocast::set_cpu_enabled(on);
  }
}
at::ScalarType autocast_dtype(c10::DeviceType t) {
  return t == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                    : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast_dtype(c10::DeviceType t, at::ScalarType d) {
  if (t == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(d);
  } else {
    at::autocast::set_autocast_cpu_dtype(d);
  }
}
#endif

}  // namespace

AutocastScope::AutocastScope(const torch::Device& device, Precision precision) {
  if (precision != Precision::kBf16) return;
  type_ = device.type();
  previous_enabled_ = autocast_enabled(type_);
  previous_dtype_ = autocast_dtype(type_);
  set_autocast_dtype(type_, at::kBFloat16);
  set_autocast_enabled(type_, true);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast_enabled(type_, previous_enabled_);
  set_autocast_dtype(type_, previous_dtype_);
}

}  // namespace detail
}  // namespace moca::model
