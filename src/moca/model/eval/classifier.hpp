#pragma once
/// \file classifier.hpp
/// A trained activity classifier kept on disk and applied to new windows (torch-free API).
///
/// `train_classifier` writes one when DownstreamOptions::save_model is set: a moca checkpoint of
/// kind "classifier" (checkpoint.hpp) holding the encoder, the head (and the linear probe's
/// BatchNorm statistics), and in its metadata everything needed to prepare new windows exactly as
/// the training windows were prepared:
/// * `model` (architecture), `channel_names` (the encoder's modalities, token-row order);
/// * `input_channels`: the data channels the head was trained on, in training order (a named
///   subset of `channel_names`, e.g. accelerometer only on an acc+gyro encoder);
/// * `class_names` (K names; "0".."K-1" when the training data had none), `classes` = K;
/// * `data`: `sample_rate_hz` and `length` of the training windows and `normalisation` ("none":
///   windows are used in their recorded units; there is no per-channel scaling to repeat);
/// * `head`: "probe" (BatchNorm1d without affine + Linear) or "linear" (fine-tuned ViT);
/// * `training`: DownstreamOptions::to_json(), plus `provenance` from the caller (protocol, fold,
///   data source).
#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/data/windows.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "moca/model/runtime.hpp"

namespace moca::model {

/// What a classifier checkpoint says about the windows it takes and the classes it gives.
struct ClassifierSpec {
  std::vector<std::string> input_channels;  ///< data channels, in the order the head expects
  std::vector<std::string> class_names;     ///< K names, class id k = class_names[k]
  double sample_rate_hz = 50.0;             ///< rate of the training windows
  int length = 200;                         ///< L samples per window
  bool probe = false;                       ///< linear probe head (BatchNorm + Linear)
  Precision precision = Precision::kFp32;   ///< arithmetic of the forward pass at training time
};

/// A loaded classifier. Calls are serialised internally (one object may be shared, but calls do
/// not run in parallel).
class Classifier {
 public:
  /// Loads a classifier checkpoint. std::runtime_error for a missing or unreadable file;
  /// std::invalid_argument when the file is a moca checkpoint of another kind (e.g. an MAE:
  /// "a pre-trained MAE, not a classifier; train one with linprobe/finetune --save-model").
  explicit Classifier(const std::string& path, const RuntimeOptions& runtime = {});
  ~Classifier();
  Classifier(const Classifier&) = delete;
  Classifier& operator=(const Classifier&) = delete;

  const CheckpointInfo& info() const;
  const ClassifierSpec& spec() const;
  /// Number of classes K.
  int classes() const;

  /// Class probabilities (softmax of the logits): n x K. The windows must have the classifier's
  /// input channels in its order (prepare_windows() does that) and its length. Throws
  /// std::invalid_argument when they do not fit.
  Eigen::MatrixXd predict_proba(const data::Windows& windows) const;
  /// The predicted class id of every window: argmax of the logits (the rule train_classifier
  /// uses for its test predictions, so a saved model repeats them exactly). When `proba` is not
  /// null it receives predict_proba()'s matrix from the same forward pass.
  std::vector<int> predict(const data::Windows& windows, Eigen::MatrixXd* proba = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads the classifier part of a checkpoint's metadata (torch-free). Throws
/// std::invalid_argument when `info` is not a classifier or the metadata lacks a field.
ClassifierSpec classifier_spec(const CheckpointInfo& info);

/// How a data set's channels are matched to a model's.
enum class ChannelMatch {
  kName,      ///< by name (the default: a checkpoint knows its channels' names)
  kPosition,  ///< the data's channel i is the model's channel i (the user asserts the order)
};
inline constexpr EnumName<ChannelMatch> kChannelMatchNames[] = {
    {ChannelMatch::kName, "name"}, {ChannelMatch::kPosition, "position"}};

/// `windows` with its channels renamed to the first C of `model_channels`, in order (C = the
/// data's channel count; std::invalid_argument when the model has fewer). The modality groups
/// follow the new names. `notes` (if not null) receives the map, e.g. "a->acc_x b->acc_y".
data::Windows channels_by_position(const data::Windows& windows,
                                   const std::vector<std::string>& model_channels,
                                   std::vector<std::string>* notes = nullptr);

/// Brings `windows` to a classifier's input channels: every input channel must be in the data
/// (matched by name; otherwise std::invalid_argument naming the missing channel and both lists),
/// the data's other channels are dropped and the rest put in the classifier's order. Length and
/// rate must already be the classifier's (open_dataset does that at the checkpoint's geometry);
/// std::invalid_argument otherwise. `notes` receives one line per change made.
data::Windows prepare_windows(const ClassifierSpec& spec, const data::Windows& windows,
                              std::vector<std::string>* notes = nullptr);

/// Class ids of `windows` (labels into windows.class_names) re-expressed as the classifier's
/// class ids, matched by name; -1 stays -1. Windows without class names must use the classifier's
/// ids. std::invalid_argument naming a data class the classifier does not know.
std::vector<int> labels_as_classifier_ids(const ClassifierSpec& spec, const data::Windows& windows);

}  // namespace moca::model
