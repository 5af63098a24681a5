// Checks shared by the trainer's option structs (detail/option_checks.hpp).
#include "moca/model/detail/option_checks.hpp"

#include <algorithm>
#include <cmath>

#include "moca/common/error_text.hpp"
#include "moca/common/number_text.hpp"
#include "moca/model/model_options.hpp"

namespace moca::model::detail {

void check_architecture(const std::string& owner, const std::string& preset, int patch_length) {
  std::string names;
  bool known = false;
  for (const auto& p : preset_names()) {
    known = known || p == preset;
    names += (names.empty() ? "" : ", ") + p;
  }
  if (!known) throw_invalid("", owner + "::preset", preset, "must be one of: " + names);
  if (patch_length < 1) {
    throw_invalid("", owner + "::patch_length", std::to_string(patch_length), "must be >= 1");
  }
}

void check_schedule(const std::string& owner, int epochs, double lr, double min_lr,
                    const std::optional<double>& warmup_epochs) {
  // Fields are named Owner::field, which the programs rewrite to their flags (field_flags.hpp).
  auto field = [&](const char* name) { return owner + "::" + name; };
  if (!(min_lr >= 0.0) || min_lr > lr) {
    throw_invalid("", field("min_lr"), format_number(min_lr),
                  "must be in [0, " + field("lr") + "]");
  }
  if (warmup_epochs && (!(*warmup_epochs >= 0.0) || *warmup_epochs >= epochs)) {
    throw_invalid("", field("warmup_epochs"), format_number(*warmup_epochs),
                  "must be in [0, " + field("epochs") + " = " + std::to_string(epochs) + ")");
  }
}

double effective_warmup(const std::optional<double>& set, double fallback, int epochs) {
  if (set) return *set;
  return std::min(fallback, static_cast<double>(std::max(epochs - 1, 0)));
}

std::string warmup_note(const std::string& owner, const std::optional<double>& set, double fallback,
                        int epochs) {
  const double used = effective_warmup(set, fallback, epochs);
  if (set || used == fallback) return "";
  return owner + "::warmup_epochs not set: its default " + format_number(fallback) +
         " is not below " + owner + "::epochs (" + std::to_string(epochs) + "); the warm-up is " +
         format_number(used) + (used == 1.0 ? " epoch" : " epochs");
}

}  // namespace moca::model::detail
