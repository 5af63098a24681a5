#include "moca/model/nn/pos_embed.hpp"
#include "moca/common/error_text.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace moca::model {

std::vector<double> sincos_1d(int dim, double pos) {
  if (dim < 2 || dim % 2 != 0) {
    throw_invalid("sincos_1d()", "dim (" + std::to_string(dim) + ") must be even and >= 2");
  }
  const int half = dim / 2;
  std::vector<double> out(static_cast<size_t>(dim));
  for (int k = 0; k < half; ++k) {
    const double omega = 1.0 / std::pow(10000.0, static_cast<double>(k) / half);
    out[static_cast<size_t>(k)] = std::sin(pos * omega);
    out[static_cast<size_t>(half + k)] = std::cos(pos * omega);
  }
  return out;
}

std::vector<float> sincos_pos_table(PosEmbedKind kind, TokenLayout layout, int channels,
                                    int patches, int dim, int pitch) {
  if (dim < 4 || dim % 4 != 0) {
    throw_invalid("sincos_pos_table()",
                  "dim (" + std::to_string(dim) + ") must be a positive multiple of 4");
  }
  if (channels < 1 || patches < 1) {
    throw_invalid("sincos_pos_table()", "grid " + std::to_string(channels) + " x " +
                                            std::to_string(patches) + " must be at least 1 x 1");
  }
  if (pitch != 0 && pitch < patches) {
    throw_invalid("sincos_pos_table()", "pitch (" + std::to_string(pitch) +
                                            ") must be 0 or at least the patches (" +
                                            std::to_string(patches) + ")");
  }
  const int stride = pitch > 0 ? pitch : patches;  // 1-D code: t = c * stride + p
  const int rows_c = layout == TokenLayout::kModality ? channels : 1;
  const int tokens = rows_c * patches;
  const size_t d = static_cast<size_t>(dim);
  std::vector<float> table((static_cast<size_t>(tokens) + 1) * d, 0.0f);
  for (int c = 0; c < rows_c; ++c) {
    for (int p = 0; p < patches; ++p) {
      const int t = c * patches + p;
      std::vector<double> first, second;
      if (kind == PosEmbedKind::kSinCos2d) {
        first = sincos_1d(dim / 2, p);
        second = sincos_1d(dim / 2, c);
      } else {
        first = sincos_1d(dim / 2, c * stride + p);
        second = sincos_1d(dim / 2, 0.0);
      }
      float* row = table.data() + (static_cast<size_t>(t) + 1) * d;
      for (size_t k = 0; k < d / 2; ++k) {
        row[k] = static_cast<float>(first[k]);
        row[d / 2 + k] = static_cast<float>(second[k]);
      }
    }
  }
  return table;
}

}  // namespace moca::model
