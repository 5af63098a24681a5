#include "moca/model/train/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "moca/common/error_text.hpp"

namespace moca::model {

void LrSchedule::validate() const {
  auto fail = [](const std::string& f, double v, const std::string& rule) {
    throw_invalid("LrSchedule::validate()", f, std::to_string(v), rule);
  };
  if (!(base_lr > 0.0) || !std::isfinite(base_lr)) fail("base_lr", base_lr, "must be > 0");
  if (!(min_lr >= 0.0) || min_lr > base_lr) fail("min_lr", min_lr, "must be in [0, base_lr]");
  if (!(epochs > 0.0) || !std::isfinite(epochs)) fail("epochs", epochs, "must be > 0");
  if (!(warmup_epochs >= 0.0) || (warmup_epochs > 0.0 && warmup_epochs >= epochs)) {
    fail("warmup_epochs", warmup_epochs, "must be in [0, epochs)");
  }
}

double LrSchedule::at(double e) const {
  e = std::clamp(e, 0.0, epochs);
  if (e < warmup_epochs) return base_lr * e / warmup_epochs;
  const double span = epochs - warmup_epochs;
  const double progress = span > 0.0 ? (e - warmup_epochs) / span : 1.0;
  return min_lr + (base_lr - min_lr) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

namespace {
bool starts_with(const std::string& s, const std::string& p) {
  return s.rfind(p, 0) == 0;
}
bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}
}  // namespace

int layer_id(const std::string& name, int depth) {
  if (name == "encoder.cls_token" || name == "encoder.pos_embed" ||
      starts_with(name, "encoder.patch_embed.")) {
    return 0;
  }
  const std::string blocks = "encoder.blocks.";
  if (starts_with(name, blocks)) {
    const size_t dot = name.find('.', blocks.size());
    return std::stoi(name.substr(blocks.size(), dot - blocks.size())) + 1;
  }
  return depth + 1;
}

double layer_scale(int id, int depth, double decay) {
  return std::pow(decay, static_cast<double>(depth + 1 - id));
}

bool uses_weight_decay(const std::string& name, long ndim, bool no_decay_tokens) {
  if (ndim <= 1 || ends_with(name, ".bias")) return false;
  if (no_decay_tokens && (ends_with(name, "cls_token") || ends_with(name, "pos_embed"))) {
    return false;
  }
  return true;
}

}  // namespace moca::model
