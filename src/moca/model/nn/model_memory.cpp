#include "moca/model/nn/model_memory.hpp"

namespace moca::model {

namespace {

double blocks_floats(double B, double N, double D, double heads, double r, double depth) {
  return depth * B * ((10.0 + 2.0 * r) * N * D + 2.0 * heads * N * N);
}

}  // namespace

double mae_step_activation_bytes(const MocaOptions& o, int batch, int visible) {
  const double B = batch, K = visible, T = o.tokens(), r = o.mlp_ratio;
  double floats = B * (K + T) * o.token_dim();  // patches in, reconstruction out
  floats += blocks_floats(B, K + 1, o.embed_dim, o.num_heads, r, o.depth);
  floats += blocks_floats(B, T + 1, o.decoder_embed_dim, o.decoder_num_heads, r, o.decoder_depth);
  return 2.0 * 4.0 * floats;
}

}  // namespace moca::model
