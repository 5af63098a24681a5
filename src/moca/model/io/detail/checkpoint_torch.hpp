#pragma once
/// \file checkpoint_torch.hpp
/// Internal: the torch side of checkpoint.hpp: checkpoint archives (written atomically, read
/// with shape-checked loading) and the positions of named data channels in a checkpoint's model.
/// Include only from torch translation units of src/moca/model (and the model tests).
#include <torch/torch.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/model/io/checkpoint.hpp"
#include "moca/model/nn/moca_model.hpp"

namespace moca::model::detail {

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

/// Pos rows for data with `channel_names` into a model with `info` (undefined tensor when the
/// data has exactly the model's channels; data without names must have the model's count).
torch::Tensor pos_rows_for_data(const CheckpointInfo& info,
                                const std::vector<std::string>& channel_names, int channels,
                                const torch::Device& device);

}  // namespace moca::model::detail
