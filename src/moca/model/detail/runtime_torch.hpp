#pragma once
/// \file runtime_torch.hpp
/// Internal: the torch side of runtime.hpp: the device and threads of a run, and bf16 autocast
/// scopes. Include only from torch translation units of src/moca/model (and the model tests).
#include <torch/torch.h>

#include <string>

#include "moca/model/runtime.hpp"

namespace moca::model::detail {

/// Sets the intra-op threads and returns the device to use. Throws std::invalid_argument for an
/// invalid RuntimeOptions and std::runtime_error when "cuda" is asked for but not available.
torch::Device setup_runtime(const RuntimeOptions& runtime);

/// Mixed precision for one scope: while alive, autocast to bfloat16 is on for `device`'s type when
/// `precision` is kBf16 (nothing happens for kFp32). Wrap forward passes and the loss only —
/// not backward() or the optimiser step (as torch.autocast in Python). Restores the previous
/// autocast state and clears the cast cache when the outermost scope ends. Uses the device-typed
/// autocast API of LibTorch >= 2.4 and the per-backend one of older versions.
class AutocastScope {
 public:
  AutocastScope(const torch::Device& device, Precision precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;
  /// Whether this scope turned autocast on.
  bool active() const { return active_; }

 private:
  bool active_ = false;
  c10::DeviceType type_ = c10::DeviceType::CPU;
  bool previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

}  // namespace moca::model::detail
