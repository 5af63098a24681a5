#pragma once
/// \file encoder_features.hpp
/// A pre-trained MoCA encoder as the feature map Phi of the policy scorer (torch-free API).
///
/// Phi(view) = mean over the view's tokens of the encoder outputs (final norm, cls excluded),
/// where only the view's tokens enter the encoder (exactly as visible tokens do in
/// pre-training). For the unmasked view x^U these are the mask's visible tokens; for the masked
/// view x^M the masked ones (the encoder sees x^M as if the other tokens were masked).
///
/// Wiring into kcca_score (tools/kcca_score, built with MOCA_WITH_TORCH): link moca::model and
///   auto phi = moca::model::make_encoder_feature_map(checkpoint_path);
///   // phi is a std::shared_ptr<const masking::FeatureMap> named "encoder"
/// so `kcca_score --features encoder --checkpoint F` scores policies with the learned
/// representation.
#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"
#include "moca/masking/feature_map.hpp"
#include "moca/masking/mask.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/io/checkpoint.hpp"

namespace moca::model {

/// Features of both views of each window: n x D each.
struct ViewFeatures {
  Eigen::MatrixXd unmasked;  ///< Phi(x^U)
  Eigen::MatrixXd masked;    ///< Phi(x^M)
};

/// A loaded encoder (MAE or classifier checkpoint). Calls are serialised internally, so one
/// object may be shared; it is not meant for parallel use.
class EncoderFeatures {
 public:
  /// Loads the encoder. std::runtime_error for checkpoint problems.
  explicit EncoderFeatures(const std::string& checkpoint, const InferenceOptions& options = {});
  ~EncoderFeatures();
  EncoderFeatures(const EncoderFeatures&) = delete;
  EncoderFeatures& operator=(const EncoderFeatures&) = delete;

  /// Feature dimension D (the encoder width).
  int dim() const;
  const CheckpointInfo& info() const;

  /// The masking::FeatureCallback contract: row k = Phi of window rows[k] restricted to the
  /// tokens tokens[k] (ascending c*P + p over the windows' channels). Windows whose channels are
  /// a named subset of the model's use the matching modality rows. For a stacked-layout model a
  /// token set must consist of whole time columns. Throws std::invalid_argument for an empty
  /// token set, a token out of range, or windows that do not fit the model.
  Eigen::MatrixXd operator()(const data::Windows& windows, const std::vector<int>& rows,
                             const std::vector<std::vector<int>>& tokens) const;

  /// Both views' features for one mask per window (or one shared mask).
  ViewFeatures view_features(const data::Windows& windows,
                             const std::vector<masking::Mask>& masks) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The encoder as a masking::FeatureMap named "encoder" (a CallbackFeatureMap).
std::shared_ptr<const masking::FeatureMap> make_encoder_feature_map(
    const std::string& checkpoint, const InferenceOptions& options = {});

}  // namespace moca::model
