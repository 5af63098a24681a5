#pragma once
/// \file runtime.hpp
/// Where and how torch computes: device choice and CPU threads (torch-free options).
#include <string>

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"

namespace moca::model {

/// Where a run computes.
enum class Device {
  kAuto,  ///< CUDA when available, else CPU (an option only; a run's device is never kAuto)
  kCpu,
  kCuda
};
/// Arithmetic of the training forward passes (RuntimeOptions::precision).
enum class Precision { kFp32, kBf16 };

// clang-format off
/// The names of the choices (`--device`, `--precision`; results and checkpoint metadata).
inline constexpr EnumName<Device> kDeviceNames[] = {
    {Device::kAuto, "auto"},
    {Device::kCpu,  "cpu"},
    {Device::kCuda, "cuda"}};
inline constexpr EnumName<Precision> kPrecisionNames[] = {
    {Precision::kFp32, "fp32"},
    {Precision::kBf16, "bf16"}};
// clang-format on
std::string to_string(Device v);
std::string to_string(Precision v);

/// Device and threading of a run. Setting up a run (every training and inference entry point)
/// also tunes glibc's allocator once per process (blocks up to 32 MiB stay in the heap, the
/// heap is not trimmed), which avoids page-faulting fresh memory for every step's tensors.
struct RuntimeOptions {
  /// kAuto (CUDA when available, else CPU; default), kCpu or kCuda.
  Device device = Device::kAuto;
  /// Intra-op CPU threads; 0 (default) = the machine's hardware cores. LibTorch as packaged here
  /// starts with 1 thread, so every entry point sets this explicitly. Range 0..1024.
  int threads = 0;
  /// Arithmetic of the training forward passes (pre-training, fine-tuning, and the fine-tuned
  /// model's evaluation): kFp32 (default) or kBf16 — autocast to bfloat16 on the run's device
  /// (matrix products and attention in bf16, reductions, norms and losses in fp32, weights,
  /// gradients and optimiser state in fp32; bf16 has fp32's range, so no loss scaling is
  /// needed). Meant for CUDA (Ampere or newer); on CPU it works but is usually slower.
  Precision precision = Precision::kFp32;
  /// Pre-training on CPU: the batch is cut into this many row blocks that run forward and
  /// backward concurrently on one intra-op thread each (model::mae_loss_and_gradients); their
  /// gradients are summed in a fixed order. 0 (default) = the thread count on CPU and 1 on CUDA;
  /// 1 = the plain whole-batch step. Range 0..1024. Results are deterministic for a given value.
  int batch_shards = 0;
  /// CUDA float32 matrix products and convolutions in TF32 (true, default: the tensor cores'
  /// float32 mode, about 3e-4 relative error per product) or in full float32 (false). Set for
  /// the process when a run sets up CUDA; CPU arithmetic is never changed.
  bool tf32 = true;
  /// Pre-training on one CUDA device: after three eager steps the whole step (forward,
  /// backward, fused AdamW) is captured as a CUDA graph and replayed (true, default); false keeps
  /// every step eager. A capture that fails, or a batch of another shape, falls back to eager
  /// steps with a note in the log.
  bool cuda_graphs = true;
  /// Throws std::invalid_argument naming the field (`RuntimeOptions::threads`), value and rule.
  void validate() const;
  /// The thread count actually used (threads, or the hardware cores when 0).
  int effective_threads() const;
  /// The batch shards used for a batch of `batch` windows on CUDA (`cuda`) or CPU.
  int effective_batch_shards(bool cuda, int batch) const;
  /// True when a run on these options computes on CUDA: device kCuda, or kAuto where
  /// cuda_available() (what the training entry points pick).
  bool uses_cuda() const;

  /// Which commands take a row: every command that runs a model (kInferenceRuntimeScope), the
  /// training ones (kTrainingRuntimeScope adds precision and CUDA graphs), pre-training
  /// (kPretrainRuntimeScope adds the CPU batch shards).
  static constexpr Scope kInferenceRuntimeScope = 1u << 0;
  static constexpr Scope kTrainingRuntimeScope = kInferenceRuntimeScope | 1u << 1;
  static constexpr Scope kPretrainRuntimeScope = kTrainingRuntimeScope | 1u << 2;

  /// Every option a user sets, declared once (option_schema.hpp): the commands' runtime flag
  /// group (the rows of the command's scope above) and the range checks of validate().
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* R = "RuntimeOptions";
    v(o.device, Option{R, "device", "--device", "auto | cpu | cuda"}, kDeviceNames);
    v(o.threads, Option{R, "threads", "--threads", "CPU threads (0 = hardware cores)",
                        Range::between(0, 1024)});
    v(o.tf32, Option{R, "tf32", "--tf32",
                     "CUDA: float32 products on the tensor cores' TF32 (default) or in full "
                     "float32"});
    v(o.precision,
      Option{R, "precision", "--precision",
             "fp32 | bf16 (autocast of the training forward passes; meant for CUDA)", Range::any(),
             1u << 1},
      kPrecisionNames);
    v(o.cuda_graphs, Option{R, "cuda_graphs", "--cuda-graphs",
                            "CUDA pre-training: the step replayed as a CUDA graph (default) or "
                            "every step eager",
                            Range::any(), 1u << 1});
    v(o.batch_shards, Option{R, "batch_shards", "--batch-shards",
                             "CPU: concurrent batch blocks, one thread each (0 = --threads, 1 = "
                             "off)",
                             Range::between(0, 1024), 1u << 2});
  }
};

/// True when this LibTorch build sees a CUDA device.
bool cuda_available();

}  // namespace moca::model
