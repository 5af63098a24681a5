#include "moca/model/nn/mask_indices.hpp"
#include "moca/common/error_text.hpp"

#include <stdexcept>
#include <string>

namespace moca::model {

MaskIndices mask_indices(const std::vector<masking::Mask>& masks, TokenLayout layout, int channels,
                         int patches) {
  if (masks.empty()) throw_invalid("mask_indices()", "no masks given");
  MaskIndices out;
  out.batch = static_cast<int>(masks.size());
  out.tokens = layout == TokenLayout::kModality ? channels * patches : patches;
  std::vector<std::uint8_t> cells(static_cast<size_t>(out.tokens));
  for (size_t b = 0; b < masks.size(); ++b) {
    const masking::Mask& m = masks[b];
    if (m.channels() != channels || m.patches() != patches) {
      throw_invalid("mask_indices()",
                    "mask " + std::to_string(b) + " is " + std::to_string(m.channels()) + " x " +
                        std::to_string(m.patches()) + ", the model's grid is " +
                        std::to_string(channels) + " x " + std::to_string(patches));
    }
    if (layout == TokenLayout::kModality) {
      for (int t = 0; t < out.tokens; ++t) cells[static_cast<size_t>(t)] = m.masked(t) ? 1 : 0;
    } else {
      for (int p = 0; p < patches; ++p) {
        const bool col = m.masked(0, p);
        for (int c = 1; c < channels; ++c) {
          if (m.masked(c, p) != col) {
            throw_invalid("mask_indices()",
                          "the stacked layout needs time-synchronous masks (whole columns, "
                          "e.g. sync, temporal, extrapolation), but column " +
                              std::to_string(p) + " of mask " + std::to_string(b) +
                              " is partly masked");
          }
        }
        cells[static_cast<size_t>(p)] = col ? 1 : 0;
      }
    }
    int keep = 0;
    for (auto v : cells) keep += v ? 0 : 1;
    if (b == 0) {
      out.keep = keep;
      out.ids_keep.reserve(masks.size() * static_cast<size_t>(keep));
      out.ids_restore.resize(masks.size() * static_cast<size_t>(out.tokens));
      out.mask.resize(masks.size() * static_cast<size_t>(out.tokens));
    } else if (keep != out.keep) {
      throw_invalid("mask_indices()", "mask " + std::to_string(b) + " keeps " +
                                          std::to_string(keep) + " tokens but mask 0 keeps " +
                                          std::to_string(out.keep) +
                                          "; a batch needs the same visible count in every window");
    }
    std::int64_t* restore = out.ids_restore.data() + b * static_cast<size_t>(out.tokens);
    float* mrow = out.mask.data() + b * static_cast<size_t>(out.tokens);
    std::int64_t vis = 0, hid = keep;
    for (int t = 0; t < out.tokens; ++t) {
      mrow[t] = cells[static_cast<size_t>(t)] ? 1.0f : 0.0f;
      if (cells[static_cast<size_t>(t)]) {
        restore[t] = hid++;
      } else {
        restore[t] = vis++;
        out.ids_keep.push_back(t);
      }
    }
  }
  return out;
}

}  // namespace moca::model
