#pragma once
/// \file encoder_loader.hpp
/// kcca_score's `--features encoder` map, loaded at run time from the encoder module
/// (encoder_plugin.cpp) so that the tool links no LibTorch.
#include <memory>
#include <string>

#include "moca/masking/feature_map.hpp"

namespace moca::tools {

/// Return codes of the module's entry point `moca_kcca_score_make_encoder`.
enum EncoderPluginCode { kEncoderPluginOk = 0, kEncoderPluginUsage = 2, kEncoderPluginFailed = 1 };

/// Where the module is looked for: <directory of this executable>/<relative libdir>/moca/<file>
/// (the same layout in the build tree and in an install).
std::string encoder_plugin_path();

/// Loads the module and builds the encoder feature map from `checkpoint`. Throws
/// std::runtime_error naming the module's path if it is missing or broken, and passes on the
/// checkpoint's errors (std::invalid_argument or std::runtime_error).
std::shared_ptr<const masking::FeatureMap> load_encoder_feature_map(const std::string& checkpoint);

}  // namespace moca::tools
