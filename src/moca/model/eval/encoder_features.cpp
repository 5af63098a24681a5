// The encoder as a feature map of token views (encoder_features.hpp).
#include "moca/model/eval/encoder_features.hpp"
#include "moca/common/error_text.hpp"

#include <mutex>
#include <numeric>
#include <stdexcept>

#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/detail/tensor_adapter.hpp"
#include "moca/model/eval/detail/inference_batches.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/nn/moca_model.hpp"

namespace moca::model {

struct EncoderFeatures::Impl {
  CheckpointInfo info;
  torch::Device device{torch::kCPU};
  InferenceOptions options;
  MocaEncoder encoder{nullptr};
  std::mutex mutex;
};

EncoderFeatures::EncoderFeatures(const std::string& checkpoint, const InferenceOptions& options)
    : impl_(std::make_unique<Impl>()) {
  check_ranges(options);  // InferenceOptions::batch_size
  impl_->options = options;
  impl_->device = detail::setup_runtime(options.runtime);
  auto ck = detail::open_checkpoint(checkpoint);
  impl_->info = ck.info;
  impl_->encoder = detail::load_encoder(ck, impl_->device);
}

EncoderFeatures::~EncoderFeatures() = default;

int EncoderFeatures::dim() const {
  return impl_->info.model.embed_dim;
}
const CheckpointInfo& EncoderFeatures::info() const {
  return impl_->info;
}

Eigen::MatrixXd EncoderFeatures::operator()(const data::Windows& windows,
                                            const std::vector<int>& rows,
                                            const std::vector<std::vector<int>>& tokens) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const MocaOptions& mo = impl_->info.model;
  detail::check_fits(impl_->info, windows, "EncoderFeatures");
  if (rows.size() != tokens.size()) {
    throw_invalid("EncoderFeatures", std::to_string(rows.size()) + " rows but " +
                                         std::to_string(tokens.size()) + " token lists");
  }
  const int C = windows.channels, P = mo.patches();
  const bool stacked = mo.layout == TokenLayout::kStacked;
  if (stacked && C != mo.channels) {
    throw_invalid("EncoderFeatures",
                  "a stacked-layout model needs all " + std::to_string(mo.channels) + " channels");
  }
  auto pos_rows = detail::pos_rows_for_data(impl_->info, windows.channel_names, C, impl_->device);
  // Model token ids of each view.
  std::vector<std::vector<int64_t>> ids(tokens.size());
  std::vector<int> counts(tokens.size());
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k].empty()) {
      throw_invalid("EncoderFeatures",
                    "view " + std::to_string(k) + " has no tokens (its mean feature is undefined)");
    }
    for (int t : tokens[k]) {
      if (t < 0 || t >= C * P) {
        throw_invalid("EncoderFeatures", "token " + std::to_string(t) + " outside the " +
                                             std::to_string(C) + " x " + std::to_string(P) +
                                             " grid");
      }
    }
    if (!stacked) {
      ids[k].assign(tokens[k].begin(), tokens[k].end());
    } else {
      std::vector<int> per_col(static_cast<size_t>(P), 0);
      for (int t : tokens[k]) ++per_col[static_cast<size_t>(t % P)];
      for (int p = 0; p < P; ++p) {
        const int cnt = per_col[static_cast<size_t>(p)];
        if (cnt != 0 && cnt != C) {
          throw_invalid("EncoderFeatures",
                        "a stacked-layout model needs views of whole time columns; "
                        "column " +
                            std::to_string(p) + " is partly in view " + std::to_string(k));
        }
        if (cnt == C) ids[k].push_back(p);
      }
    }
    counts[k] = static_cast<int>(ids[k].size());
  }
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows.size()), dim());
  torch::NoGradGuard no_grad;
  for (const auto& group : detail::batches_by_count(counts, impl_->options.batch_size)) {
    std::vector<int> wrows;
    std::vector<int64_t> flat;
    for (int k : group) {
      wrows.push_back(rows[static_cast<size_t>(k)]);
      flat.insert(flat.end(), ids[static_cast<size_t>(k)].begin(),
                  ids[static_cast<size_t>(k)].end());
    }
    const int64_t B = static_cast<int64_t>(group.size()), K = counts[static_cast<size_t>(group[0])];
    auto ids_keep = torch::tensor(flat, torch::kInt64).view({B, K}).to(impl_->device);
    auto x = detail::windows_tensor(windows, wrows, impl_->device);
    auto h = impl_->encoder->forward(patchify(x, mo.layout, mo.patch_length), ids_keep, pos_rows);
    auto f = detail::to_eigen(h.slice(1, 1).mean(1));
    for (size_t b = 0; b < group.size(); ++b)
      out.row(group[b]) = f.row(static_cast<Eigen::Index>(b));
  }
  return out;
}

ViewFeatures EncoderFeatures::view_features(const data::Windows& windows,
                                            const std::vector<masking::Mask>& masks) const {
  if (masks.size() != 1 && static_cast<int>(masks.size()) != windows.size()) {
    throw_invalid(
        "EncoderFeatures::view_features()",
        std::to_string(masks.size()) + " masks for " + std::to_string(windows.size()) + " windows");
  }
  std::vector<int> rows(static_cast<size_t>(windows.size()));
  std::iota(rows.begin(), rows.end(), 0);
  std::vector<std::vector<int>> vis, hid;
  for (int i = 0; i < windows.size(); ++i) {
    const auto& m = masks.size() == 1 ? masks[0] : masks[static_cast<size_t>(i)];
    vis.push_back(m.visible_tokens());
    hid.push_back(m.masked_tokens());
  }
  ViewFeatures f;
  f.unmasked = (*this)(windows, rows, vis);
  f.masked = (*this)(windows, rows, hid);
  return f;
}

std::shared_ptr<const masking::FeatureMap> make_encoder_feature_map(
    const std::string& checkpoint, const InferenceOptions& options) {
  auto enc = std::make_shared<EncoderFeatures>(checkpoint, options);
  masking::FeatureCallback cb = [enc](const data::Windows& w, const std::vector<int>& rows,
                                      const std::vector<std::vector<int>>& tokens) {
    return (*enc)(w, rows, tokens);
  };
  return std::make_shared<masking::CallbackFeatureMap>("encoder", cb, options.batch_size, false);
}

}  // namespace moca::model
