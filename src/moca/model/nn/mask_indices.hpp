#pragma once
/// \file mask_indices.hpp
/// Masks -> gather indices for the encoder and decoder (torch-free).
///
/// For each window the visible tokens are kept in ascending token order (ids_keep), and the
/// decoder restores the full sequence with ids_restore = the inverse of the STABLE argsort of
/// the mask, i.e. of the shuffle [visible tokens ascending, masked tokens ascending]. Masked
/// tokens are never gathered, so they cannot reach the encoder.
#include <cstdint>
#include <vector>

#include "moca/masking/mask.hpp"
#include "moca/model/model_options.hpp"

namespace moca::model {

/// Index form of a batch of masks, flat row-major vectors.
struct MaskIndices {
  int batch = 0;   ///< B windows
  int tokens = 0;  ///< T tokens per window
  int keep = 0;    ///< K visible tokens per window (equal for every window of the batch)
  std::vector<std::int64_t> ids_keep;     ///< B x K: visible tokens, ascending
  std::vector<std::int64_t> ids_restore;  ///< B x T: slot of token t in [visible.., masked..]
  std::vector<float> mask;                ///< B x T: 1 = masked, 0 = visible
};

/// Converts C x P masks into token indices for `layout`. In the modality layout token c*P+p is
/// cell (c, p). In the stacked layout token p is column p, and every column must be wholly
/// masked or wholly visible. Throws std::invalid_argument when the list is empty, a mask's grid
/// is not `channels` x `patches`, a stacked-layout column is partly masked, or the windows of
/// the batch keep different numbers of tokens (the encoder needs equal counts per batch).
MaskIndices mask_indices(const std::vector<masking::Mask>& masks, TokenLayout layout, int channels,
                         int patches);

}  // namespace moca::model
