#pragma once
/// \file pos_embed.hpp
/// Fixed sin-cos positional embeddings (torch-free, so they can be tested on their own).
#include <vector>

#include "moca/model/model_options.hpp"

namespace moca::model {

/// 1-D sin-cos code of one position: `dim` values [sin(pos w_k) for k < dim/2,
/// cos(pos w_k) for k < dim/2] with w_k = 10000^(-k / (dim/2)) (Vaswani et al.; MAE's
/// get_1d_sincos_pos_embed_from_grid). Requires dim even and >= 2.
std::vector<double> sincos_1d(int dim, double pos);

/// The (1 + T) x dim positional table, row-major; row 0 is the cls token's (all zeros) and row
/// 1 + t is token t's. Tokens are laid out as in MocaOptions (modality: t = c * P + p over
/// `channels` x `patches`; stacked: t = p).
/// * kSinCos2d: row = [sincos_1d(dim/2, p), sincos_1d(dim/2, c)] (c = 0 for the stacked layout);
/// * kSinCos1d: row = [sincos_1d(dim/2, c * pitch + p), sincos_1d(dim/2, 0)] (the released
///   code's 1 x T grid), pitch = `pitch` when > 0, else `patches` (t itself): a model used at
///   fewer patches than it was trained with keeps its own pitch (MocaOptions::pos_pitch).
/// Throws std::invalid_argument unless dim is a positive multiple of 4, channels, patches >= 1
/// and pitch is 0 or >= patches.
std::vector<float> sincos_pos_table(PosEmbedKind kind, TokenLayout layout, int channels,
                                    int patches, int dim, int pitch = 0);

}  // namespace moca::model
