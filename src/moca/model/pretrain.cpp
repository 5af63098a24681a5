// The torch-free side of pretrain.hpp: the options' checks and the JSON of options and epochs.
#include "moca/model/pretrain.hpp"

#include <cmath>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/model/detail/option_checks.hpp"

namespace moca::model {

void PretrainOptions::validate() const {
  auto fail = [](const std::string& field, const std::string& value, const std::string& rule) {
    throw_invalid("PretrainOptions::validate()", field, value, rule);
  };
  auto num = [](double v) { return std::to_string(v); };
  const std::string where = "PretrainOptions::validate()";
  detail::check_architecture(where, preset, patch_length);
  if (policy.empty()) fail("policy", "''", "must be a policy spec such as cross:ratio=0.75");
  detail::check_schedule(where, "PretrainOptions", epochs, batch_size, lr, min_lr, warmup_epochs,
                         weight_decay);
  if (!(beta1 >= 0.0 && beta1 < 1.0)) fail("beta1", num(beta1), "must be in [0, 1)");
  if (!(beta2 >= 0.0 && beta2 < 1.0)) fail("beta2", num(beta2), "must be in [0, 1)");
  if (!(augment_probability >= 0.0 && augment_probability <= 1.0)) {
    fail("augment_probability", num(augment_probability), "must be in [0, 1]");
  }
  if (checkpoint.empty()) fail("checkpoint", "''", "must be a file path");
  if (checkpoint_every < 1)
    fail("checkpoint_every", std::to_string(checkpoint_every), "must be >= 1");
  if (stop_after_iterations < -1) {
    fail("stop_after_iterations", std::to_string(stop_after_iterations), "must be >= -1");
  }
  runtime.validate();
  dist.validate();
}

double PretrainOptions::effective_warmup_epochs() const {
  return detail::effective_warmup(warmup_epochs, kDefaultWarmupEpochs, epochs);
}

std::string PretrainOptions::warmup_note() const {
  return detail::warmup_note("PretrainOptions", warmup_epochs, kDefaultWarmupEpochs, epochs);
}

nlohmann::json PretrainOptions::training_json() const {
  return nlohmann::json{{"preset", preset},
                        {"patch_length", patch_length},
                        {"layout", to_string(layout)},
                        {"pos_embed", to_string(pos_embed)},
                        {"loss", to_string(loss)},
                        {"norm_pix_loss", norm_pix_loss},
                        {"policy", policy},
                        {"epochs", epochs},
                        {"batch_size", batch_size},
                        {"lr", lr},
                        {"min_lr", min_lr},
                        {"warmup_epochs", effective_warmup_epochs()},
                        {"weight_decay", weight_decay},
                        {"beta1", beta1},
                        {"beta2", beta2},
                        {"augment", augment},
                        {"augment_probability", augment_probability},
                        {"seed", seed}};
}

nlohmann::json to_json(const EpochRecord& r) {
  return nlohmann::json{
      {"epoch", r.epoch}, {"iteration", r.iteration},         {"loss", r.loss},
      {"lr", r.lr},       {"samples_per_s", r.samples_per_s}, {"seconds", r.seconds}};
}

EpochRecord epoch_record_from_json(const nlohmann::json& j) {
  EpochRecord r;
  r.epoch = j.at("epoch").get<int>();
  r.iteration = j.at("iteration").get<long>();
  r.loss = j.at("loss").get<double>();
  r.lr = j.at("lr").get<double>();
  r.samples_per_s = j.at("samples_per_s").get<double>();
  r.seconds = j.at("seconds").get<double>();
  return r;
}

}  // namespace moca::model
