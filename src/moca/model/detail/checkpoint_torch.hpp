#pragma once
/// \file checkpoint_torch.hpp
/// Internal torch helpers of src/moca/model: device and threads, Eigen <-> tensor adapters (the
/// project's only ones), checkpoint archives with shape-checked loading. Include only from
/// torch translation units of src/moca/model (and the model tests).
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"
#include "moca/model/checkpoint.hpp"
#include "moca/model/moca_model.hpp"
#include "moca/model/runtime.hpp"

namespace moca::model::detail {

/// Sets the intra-op threads and returns the device to use. Throws std::invalid_argument for an
/// invalid RuntimeOptions and std::runtime_error when "cuda" is asked for but not available.
torch::Device setup_runtime(const RuntimeOptions& runtime);

/// Mixed precision for one scope: while alive, autocast to bfloat16 is on for `device`'s type when
/// `precision` is "bf16" (nothing happens for "fp32"). Wrap forward passes and the loss only —
/// not backward() or the optimiser step (as torch.autocast in Python). Restores the previous
/// autocast state and clears the cast cache when the outermost scope ends. Uses the device-typed
/// autocast API of LibTorch >= 2.4 and the per-backend one of older versions.
class AutocastScope {
 public:
  AutocastScope(const torch::Device& device, const std::string& precision);
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

/// Rows `rows` of `windows` as a B x C x L float tensor on `device` (copy).
torch::Tensor windows_tensor(const data::Windows& windows, const std::vector<int>& rows,
                             const torch::Device& device);
/// A B x (C*L) row-major Eigen batch as a B x C x L tensor on `device` (copy).
torch::Tensor batch_tensor(const data::RowMatrixXf& batch, int channels, int length,
                           const torch::Device& device);
/// The parameters of `module` that require gradients, in parameters() order.
std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module);
/// A 2-D float tensor (any device) as an Eigen double matrix.
Eigen::MatrixXd to_eigen(const torch::Tensor& t);

/// An opened checkpoint: the archive and its metadata.
struct OpenCheckpoint {
  CheckpointInfo info;
  torch::serialize::InputArchive archive;
};

/// Opens and validates a checkpoint (see checkpoint.hpp); std::runtime_error naming the file.
OpenCheckpoint open_checkpoint(const std::string& path);

/// Writes `module` (and `optimizer` when not null) with `meta` atomically to `path`.
void save_checkpoint(const std::string& path, const torch::nn::Module& module,
                     const torch::optim::Optimizer* optimizer, const nlohmann::json& meta);

/// Loads the parameters and buffers of `module` from the archive's `model` entry, descending
/// into the sub-archives named by `path` first (e.g. {"encoder"} loads an encoder from an MAE or
/// classifier checkpoint). Throws std::runtime_error naming the checkpoint and the parameter when
/// one is missing or its shape differs from the module's.
void load_module(OpenCheckpoint& checkpoint, torch::nn::Module& module,
                 const std::vector<std::string>& path = {});

/// The encoder of an MAE or classifier checkpoint on `device`, in eval mode (load_module with
/// {"encoder"}).
MocaEncoder load_encoder(OpenCheckpoint& checkpoint, const torch::Device& device);

/// Restores an optimizer saved by save_checkpoint; std::runtime_error if absent or unreadable.
void load_optimizer(OpenCheckpoint& checkpoint, torch::optim::Optimizer& optimizer);

/// The message of an exception without LibTorch's C++ backtrace.
std::string error_message(const std::exception& e);

/// Pos rows for data with `channel_names` into a model with `info` (undefined tensor when the
/// data has exactly the model's channels; data without names must have the model's count).
torch::Tensor pos_rows_for_data(const CheckpointInfo& info,
                                const std::vector<std::string>& channel_names, int channels,
                                const torch::Device& device);

}  // namespace moca::model::detail
