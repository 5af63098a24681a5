#include <doctest/doctest.h>

#include <stdexcept>

#include <cmath>

#include "moca/model/train/schedule.hpp"

using namespace moca::model;

TEST_CASE("warm-up is linear, then a half cosine to min_lr") {
  LrSchedule s{1e-3, 1e-5, 10.0, 110.0};
  s.validate();
  CHECK(s.at(0.0) == 0.0);
  CHECK(std::abs(s.at(5.0) - 5e-4) < 1e-15);
  CHECK(std::abs(s.at(10.0) - 1e-3) < 1e-15);
  CHECK(std::abs(s.at(60.0) - (1e-3 + 1e-5) / 2) < 1e-15);  // cosine midpoint
  CHECK(std::abs(s.at(110.0) - 1e-5) < 1e-15);
  // 25% into the cosine phase: min + (max-min)(1 + cos(pi/4))/2.
  CHECK(std::abs(s.at(35.0) - (1e-5 + (1e-3 - 1e-5) * (1 + std::sqrt(0.5)) / 2)) < 1e-15);
  LrSchedule no_warmup{2.0, 0.0, 0.0, 4.0};
  CHECK(no_warmup.at(0.0) == 2.0);
  CHECK_THROWS_WITH_AS((LrSchedule{1.0, 2.0, 0.0, 1.0}.validate()), doctest::Contains("min_lr"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS((LrSchedule{1.0, 0.0, 5.0, 5.0}.validate()),
                       doctest::Contains("warmup_epochs"), std::invalid_argument);
}

TEST_CASE("layer ids and scales follow BEiT/MAE layer-wise decay") {
  const int depth = 12;
  CHECK(layer_id("encoder.cls_token", depth) == 0);
  CHECK(layer_id("encoder.patch_embed.weight", depth) == 0);
  CHECK(layer_id("encoder.blocks.0.attn.qkv.weight", depth) == 1);
  CHECK(layer_id("encoder.blocks.11.fc2.bias", depth) == 12);
  CHECK(layer_id("encoder.norm.weight", depth) == 13);
  CHECK(layer_id("head.weight", depth) == 13);
  CHECK(layer_scale(13, depth, 0.75) == 1.0);
  CHECK(std::abs(layer_scale(0, depth, 0.75) - std::pow(0.75, 13)) < 1e-15);
}

TEST_CASE("weight decay skips biases, 1-D parameters and (fine-tuning) tokens") {
  CHECK(uses_weight_decay("encoder.blocks.0.fc1.weight", 2, false));
  CHECK_FALSE(uses_weight_decay("encoder.blocks.0.fc1.bias", 1, false));
  CHECK_FALSE(uses_weight_decay("encoder.norm.weight", 1, false));
  CHECK(uses_weight_decay("encoder.cls_token", 3, false));  // pre-training decays tokens
  CHECK(uses_weight_decay("decoder.mask_token", 3, false));
  CHECK_FALSE(uses_weight_decay("encoder.cls_token", 3, true));
}
