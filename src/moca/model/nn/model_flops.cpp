#include "moca/model/nn/model_flops.hpp"

namespace moca::model {

namespace {

double blocks_flops(double B, double N, double D, double r, double depth) {
  const double proj = 2.0 * B * N * (3.0 * D * D + D * D + 2.0 * r * D * D);
  const double attn = 4.0 * B * N * N * D;
  return depth * (proj + attn);
}

}  // namespace

double mae_forward_flops(const MocaOptions& o, int batch, int visible) {
  const double B = batch, K = visible, T = o.tokens();
  const double D = o.embed_dim, Dd = o.decoder_embed_dim, r = o.mlp_ratio;
  double f = 2.0 * B * K * o.token_dim() * D;
  f += blocks_flops(B, K + 1, D, r, o.depth);
  f += 2.0 * B * (K + 1) * D * Dd;
  f += blocks_flops(B, T + 1, Dd, r, o.decoder_depth);
  f += 2.0 * B * (T + 1) * Dd * o.token_dim();
  return f;
}

double mae_step_flops(const MocaOptions& o, int batch, int visible) {
  return 3.0 * mae_forward_flops(o, batch, visible);
}

double classifier_forward_flops(const MocaOptions& o, int batch, int classes) {
  const double B = batch, T = o.tokens(), D = o.embed_dim;
  return 2.0 * B * T * o.token_dim() * D + blocks_flops(B, T + 1, D, o.mlp_ratio, o.depth) +
         2.0 * B * D * classes;
}

}  // namespace moca::model
