// The torch-free side of pretrain.hpp: the options' checks and the JSON of options and epochs.
#include "moca/model/train/pretrain.hpp"

#include <cmath>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/model/detail/option_checks.hpp"

namespace moca::model {

std::vector<UnusedOption> unused_options(const PretrainOptions& o) {
  if (o.augment) return {};
  return {{"PretrainOptions::augment_probability", "only augment uses it, and it is off"}};
}

void PretrainOptions::validate() const {
  detail::check_architecture("PretrainOptions", preset, patch_length);
  if (policy.empty()) {
    throw_invalid("", "PretrainOptions::policy", "''",
                  "must be a policy spec such as cross:ratio=0.75");
  }
  check_ranges(*this);  // the rows' ranges (schema): schedule, betas, augment_probability, ...
  detail::check_schedule("PretrainOptions", epochs, lr, min_lr, warmup_epochs);
  if (checkpoint.empty()) {
    throw_invalid("", "PretrainOptions::checkpoint", "''", "must be a file path");
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
      {"epoch", r.epoch},
      {"iteration", r.iteration},
      {"loss", r.loss},
      {"lr", r.lr},
      {"samples_per_s", r.samples_per_s},
      {"seconds", r.seconds},
      {"read_windows", r.read_windows},
      {"read_seconds", r.read_seconds},
      {"read_wait_seconds", r.read_wait_seconds},
      {"read_windows_per_s", r.read_seconds > 0 ? r.read_windows / r.read_seconds : 0.0}};
}

EpochRecord epoch_record_from_json(const nlohmann::json& j) {
  EpochRecord r;
  r.epoch = j.at("epoch").get<int>();
  r.iteration = j.at("iteration").get<long>();
  r.loss = j.at("loss").get<double>();
  r.lr = j.at("lr").get<double>();
  r.samples_per_s = j.at("samples_per_s").get<double>();
  r.seconds = j.at("seconds").get<double>();
  r.read_windows = j.value("read_windows", 0L);
  r.read_seconds = j.value("read_seconds", 0.0);
  r.read_wait_seconds = j.value("read_wait_seconds", 0.0);
  return r;
}

}  // namespace moca::model
