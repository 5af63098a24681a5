#include <doctest/doctest.h>

#include <cmath>

#include "moca/model/nn/model_memory.hpp"

using moca::model::mae_step_activation_bytes;

TEST_CASE("the activation estimate follows its formula and grows with the batch") {
  const moca::model::MocaOptions o = moca::model::preset("cpu-small");
  const double T = o.tokens(), r = o.mlp_ratio;
  const double enc = o.depth * ((10 + 2 * r) * 1 * o.embed_dim + 2.0 * o.num_heads);
  const double dec = o.decoder_depth * ((10 + 2 * r) * (T + 1) * o.decoder_embed_dim +
                                        2.0 * o.decoder_num_heads * (T + 1) * (T + 1));
  const double want = 8.0 * (T * o.token_dim() + enc + dec);  // batch 1, no visible token
  CHECK(std::abs(mae_step_activation_bytes(o, 1, 0) - want) < 1e-6 * want);
  CHECK(std::abs(mae_step_activation_bytes(o, 64, 0) - 64 * want) < 1e-6 * 64 * want);
  CHECK(mae_step_activation_bytes(o, 1, 10) > mae_step_activation_bytes(o, 1, 0));
}
