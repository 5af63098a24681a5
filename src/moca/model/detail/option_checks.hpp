#pragma once
/// \file option_checks.hpp
/// Checks that PretrainOptions::validate() and DownstreamOptions::validate() share (internal).
/// Each throws std::invalid_argument "<where>: <field> (<value>) <rule>".
#include <string>

namespace moca::model::detail {

/// The architecture of a fresh model: `preset` one of preset_names(), `patch_length` >= 1.
void check_architecture(const std::string& where, const std::string& preset, int patch_length);

/// A training schedule: epochs, batch_size >= 1; lr > 0 and finite; min_lr in [0, lr];
/// warmup_epochs in [0, epochs); weight_decay >= 0.
void check_schedule(const std::string& where, int epochs, int batch_size, double lr, double min_lr,
                    double warmup_epochs, double weight_decay);

}  // namespace moca::model::detail
