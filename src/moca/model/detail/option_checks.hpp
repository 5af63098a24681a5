#pragma once
/// \file option_checks.hpp
/// Checks that PretrainOptions::validate() and DownstreamOptions::validate() share (internal).
/// Each throws std::invalid_argument "<where>: <field> (<value>) <rule>".
#include <optional>
#include <string>

namespace moca::model::detail {

/// The architecture of a fresh model: `preset` one of preset_names(), `patch_length` >= 1; the
/// message names `<owner>::preset` or `<owner>::patch_length`, which the programs rewrite to
/// their flags.
void check_architecture(const std::string& owner, const std::string& preset, int patch_length);

/// The schedule's rules that join two fields (each field's own range is its schema row's,
/// model::schedule_schema): min_lr in [0, lr]; warmup_epochs, when set, in [0, epochs). `owner`
/// names the struct: a warm-up out of range throws "<owner>::warmup_epochs (5) must be in [0,
/// <owner>::epochs = 2)", the fields the programs map to their flags (--warmup-epochs, --epochs).
void check_schedule(const std::string& owner, int epochs, double lr, double min_lr,
                    const std::optional<double>& warmup_epochs);

/// The warm-up a run uses: `set` when the user set it; unset, `fallback` (the struct's default)
/// yields to the epochs: at most epochs - 1 (0 for one epoch), so a short run is valid as asked.
double effective_warmup(const std::optional<double>& set, double fallback, int epochs);

/// The note for a default warm-up that yielded (empty otherwise): "<owner>::warmup_epochs not
/// set: its default 5 is not below <owner>::epochs (2); the warm-up is 1 epoch".
std::string warmup_note(const std::string& owner, const std::optional<double>& set, double fallback,
                        int epochs);

}  // namespace moca::model::detail
