// The torch side of imputation.hpp: reconstruction and imputation with a pre-trained MAE.
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/detail/tensor_adapter.hpp"
#include "moca/model/eval/detail/inference_batches.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/nn/mask_indices.hpp"
#include "moca/model/nn/moca_model.hpp"

namespace moca::model {

data::RowMatrixXf reconstruct_with_model(const std::string& checkpoint,
                                         const data::Windows& windows,
                                         const std::vector<masking::Mask>& masks,
                                         const InferenceOptions& options) {
  if (options.batch_size < 1) {
    throw_invalid("reconstruct_with_model()",
                  "batch_size (" + std::to_string(options.batch_size) + ") must be >= 1");
  }
  const torch::Device device = detail::setup_runtime(options.runtime);
  auto ck = detail::open_checkpoint(checkpoint);
  if (ck.info.kind != "mae") {
    throw_invalid("reconstruct_with_model()", checkpoint + " is a " + ck.info.kind +
                                                  " checkpoint; reconstruction needs an MAE");
  }
  const MocaOptions& mo = ck.info.model;
  if (mo.norm_pix_loss) {
    throw_invalid("reconstruct_with_model()",
                  "the model was trained with norm_pix_loss; its outputs are "
                  "per-patch normalised and cannot be mapped back to signal units");
  }
  detail::check_fits(ck.info, windows, "reconstruct_with_model()");
  if (masks.size() != 1 && static_cast<int>(masks.size()) != windows.size()) {
    throw_invalid("reconstruct_with_model()", std::to_string(masks.size()) + " masks for " +
                                                  std::to_string(windows.size()) + " windows");
  }
  auto pos_rows =
      detail::pos_rows_for_data(ck.info, windows.channel_names, windows.channels, device);
  MocaMae model(mo);
  detail::load_module(ck, *model);
  model->to(device);
  model->eval();
  torch::NoGradGuard no_grad;
  const int C = windows.channels;
  auto mask_of = [&](int i) -> const masking::Mask& {
    return masks.size() == 1 ? masks[0] : masks[static_cast<size_t>(i)];
  };
  std::vector<int> counts(static_cast<size_t>(windows.size()));
  for (int i = 0; i < windows.size(); ++i)
    counts[static_cast<size_t>(i)] = mask_of(i).masked_count();
  data::RowMatrixXf out(windows.size(), windows.x.cols());
  for (const auto& rows : detail::batches_by_count(counts, options.batch_size)) {
    std::vector<masking::Mask> bm;
    for (int r : rows) bm.push_back(mask_of(r));
    auto mt = to_tensors(mask_indices(bm, mo.layout, C, mo.patches()), device);
    auto x = detail::windows_tensor(windows, rows, device);
    auto latent =
        model->encoder->forward(patchify(x, mo.layout, mo.patch_length), mt.ids_keep, pos_rows);
    auto pred = model->decoder->forward(latent, mt.ids_restore, pos_rows);
    auto rec = unpatchify(pred, mo.layout, C, mo.patch_length)
                   .reshape({static_cast<int64_t>(rows.size()), -1})
                   .to(torch::kCPU)
                   .contiguous();
    const float* src = rec.data_ptr<float>();
    for (size_t b = 0; b < rows.size(); ++b) {
      std::copy(src + b * static_cast<size_t>(out.cols()),
                src + (b + 1) * static_cast<size_t>(out.cols()), out.row(rows[b]).data());
    }
  }
  return out;
}

data::RowMatrixXf impute_with_model(const std::string& checkpoint, const data::Windows& windows,
                                    const std::vector<masking::Mask>& masks,
                                    const InferenceOptions& options) {
  data::RowMatrixXf rec = reconstruct_with_model(checkpoint, windows, masks, options);
  const int L = windows.length;
  if (masks.empty()) return windows.x;
  const int P = masks[0].patches();
  const int Lp = L / P;
  data::RowMatrixXf out = windows.x;
  for (int i = 0; i < windows.size(); ++i) {
    const masking::Mask& m = masks.size() == 1 ? masks[0] : masks[static_cast<size_t>(i)];
    for (int c = 0; c < windows.channels; ++c)
      for (int t = 0; t < L; ++t)
        if (m.masked(c, t / Lp)) {
          const Eigen::Index col = static_cast<Eigen::Index>(c) * L + t;
          out(i, col) = rec(i, col);
        }
  }
  return out;
}

}  // namespace moca::model
