#pragma once
/// \file checkpoint.hpp
/// The moca checkpoint format and its metadata (torch-free view).
///
/// A checkpoint is a LibTorch archive (torch::serialize::OutputArchive, a zip file) holding
/// * `moca_checkpoint`: an int64 tensor [format version] (kCheckpointFormat);
/// * `meta`: a uint8 tensor with UTF-8 JSON: kind ("mae" or "classifier"), model options,
///   channel and class names, training options, epoch, iteration, history, data description;
/// * `model`: the module's parameters and buffers, nested by submodule (encoder, decoder, head);
/// * `optimizer` (pre-training checkpoints): the AdamW state (torch's own serialisation).
/// Files are written through moca::write_output_file (temporary file + fsync + rename), so an
/// interrupted or failed write (full disk) never leaves a half checkpoint behind and keeps the
/// previous one; pre-training holds a moca::FileLock on `<checkpoint>.lock` for the whole run.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moca/model/model_options.hpp"

namespace moca::model {

/// Format version written into every checkpoint.
inline constexpr int kCheckpointFormat = 1;

/// JSON form of the architecture options (every field by name).
nlohmann::json to_json(const MocaOptions& options);
/// Inverse of to_json; throws std::invalid_argument naming a missing or malformed field, or
/// the rule the options break.
MocaOptions moca_options_from_json(const nlohmann::json& j);

/// What a checkpoint says about itself.
struct CheckpointInfo {
  std::string path;                        ///< file read
  std::string kind;                        ///< "mae" or "classifier"
  MocaOptions model;                       ///< architecture
  std::vector<std::string> channel_names;  ///< the model's modalities, in token-row order
  std::vector<std::string> class_names;    ///< classifier only
  nlohmann::json meta;                     ///< the whole metadata object
};

/// Reads a checkpoint's metadata. Throws std::runtime_error when the file is missing, is not a
/// LibTorch archive, or is not a moca checkpoint of a known format version (the message names
/// the file and what is wrong).
CheckpointInfo read_checkpoint_info(const std::string& path);

/// Model modality row of each data channel, matched by name: result[j] = index of
/// data_channels[j] in model_channels. Throws std::invalid_argument naming the first data
/// channel the model does not have (and listing the model's channels), or a repeated channel.
std::vector<int> match_channels(const std::vector<std::string>& model_channels,
                                const std::vector<std::string>& data_channels);

/// True when `rows` is 0, 1, ..., model_channels - 1 (the data has exactly the model's
/// modalities in the model's order).
bool is_identity_channel_map(const std::vector<int>& rows, int model_channels);

}  // namespace moca::model
