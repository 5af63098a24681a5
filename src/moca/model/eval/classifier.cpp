// A saved classifier applied to new windows (torch translation unit).
#include "moca/model/eval/classifier.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/data/dataset.hpp"
#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/detail/tensor_adapter.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/nn/moca_model.hpp"

namespace moca::model {

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

ClassifierSpec classifier_spec(const CheckpointInfo& info) {
  const std::string where = "checkpoint " + info.path;
  if (info.kind != "classifier") {
    throw_invalid(where,
                  "is an MAE checkpoint (pre-trained encoder and decoder), not a "
                  "classifier; keep one with `moca linprobe|finetune --save-model FILE`");
  }
  ClassifierSpec s;
  try {
    const auto& m = info.meta;
    s.input_channels = m.at("input_channels").get<std::vector<std::string>>();
    s.class_names = m.at("class_names").get<std::vector<std::string>>();
    s.sample_rate_hz = m.at("data").at("sample_rate_hz").get<double>();
    s.length = m.at("data").at("length").get<int>();
    s.probe = m.at("head").get<std::string>() == "probe";
    s.precision =
        parse_enum(kPrecisionNames, m.at("training").value("precision", std::string("fp32")),
                   where + ": training.precision");
  } catch (const nlohmann::json::exception& e) {
    throw_invalid(where, std::string("classifier metadata incomplete (") + e.what() + ")");
  }
  if (s.class_names.size() < 2) throw_invalid(where, "a classifier needs >= 2 class names");
  if (s.length != info.model.length) {
    throw_invalid(where, "data.length (" + std::to_string(s.length) +
                             ") differs from the model's length (" +
                             std::to_string(info.model.length) + ")");
  }
  match_channels(info.channel_names, s.input_channels);  // each a model channel, none twice
  return s;
}

data::Windows channels_by_position(const data::Windows& windows,
                                   const std::vector<std::string>& model_channels,
                                   std::vector<std::string>* notes) {
  if (windows.channels > static_cast<int>(model_channels.size())) {
    throw_invalid("", "channels matched by position: the data has " +
                          std::to_string(windows.channels) + " channels, the model " +
                          std::to_string(model_channels.size()));
  }
  data::Windows out = windows;
  std::string map;
  for (int c = 0; c < windows.channels; ++c) {
    const std::string& to = model_channels[static_cast<size_t>(c)];
    map += (map.empty() ? "" : " ") + windows.channel_names[static_cast<size_t>(c)] + "->" + to;
    out.channel_names[static_cast<size_t>(c)] = to;
  }
  out.modalities = data::groups_from_names(out.channel_names);  // as open_dataset names them
  if (notes != nullptr) notes->push_back("channels matched by position: " + map);
  return out;
}

data::Windows prepare_windows(const ClassifierSpec& spec, const data::Windows& w,
                              std::vector<std::string>* notes) {
  const std::string where = "prepare_windows()";
  if (w.length != spec.length) {
    throw_invalid(where, "windows", std::to_string(w.length) + " samples",
                  "must have the classifier's length " + std::to_string(spec.length) +
                      " (open the data at the checkpoint's geometry)");
  }
  if (std::abs(w.sample_rate_hz - spec.sample_rate_hz) > 1e-9 * spec.sample_rate_hz) {
    throw_invalid(where, "sample rate", std::to_string(w.sample_rate_hz) + " Hz",
                  "must be the classifier's " + std::to_string(spec.sample_rate_hz) + " Hz");
  }
  if (w.channel_names == spec.input_channels) return w;
  std::vector<int> pick;
  for (const auto& name : spec.input_channels) {
    auto it = std::find(w.channel_names.begin(), w.channel_names.end(), name);
    if (it == w.channel_names.end()) {
      throw_invalid(where, "the classifier was trained on channels " + joined(spec.input_channels) +
                               " and the data has " + joined(w.channel_names) + "; channel '" +
                               name +
                               "' is missing (channels are matched by name: name them in "
                               "meta.json channel_names or with DatasetOptions::channel_names)");
    }
    pick.push_back(static_cast<int>(it - w.channel_names.begin()));
  }
  data::Windows out;
  out.channels = static_cast<int>(pick.size());
  out.length = w.length;
  out.sample_rate_hz = w.sample_rate_hz;
  out.channel_names = spec.input_channels;
  out.class_names = w.class_names;
  out.labels = w.labels;
  out.subjects = w.subjects;
  out.parts = w.parts;
  out.subject_names = w.subject_names;
  out.description = w.description;
  out.x.resize(w.size(), static_cast<Eigen::Index>(out.channels) * w.length);
  for (int i = 0; i < w.size(); ++i)
    for (size_t j = 0; j < pick.size(); ++j)
      out.x.row(i).segment(static_cast<Eigen::Index>(j) * w.length, w.length) =
          w.x.row(i).segment(static_cast<Eigen::Index>(pick[j]) * w.length, w.length);
  if (notes) {
    notes->push_back("channels " + joined(w.channel_names) + " -> " + joined(spec.input_channels) +
                     " (the classifier's input channels, by name; others dropped)");
  }
  return out;
}

std::vector<int> labels_as_classifier_ids(const ClassifierSpec& spec, const data::Windows& w) {
  std::vector<int> ids(static_cast<size_t>(w.size()), -1);
  for (int i = 0; i < w.size(); ++i) {
    const int y = w.labels(i);
    if (y < 0) continue;
    if (w.class_names.empty()) {
      if (y >= static_cast<int>(spec.class_names.size())) {
        throw_invalid("labels_as_classifier_ids()", "label", std::to_string(y),
                      "must be a class id of the classifier (0.." +
                          std::to_string(spec.class_names.size() - 1) + ")");
      }
      ids[static_cast<size_t>(i)] = y;
      continue;
    }
    const std::string& name = w.class_names.at(static_cast<size_t>(y));
    auto it = std::find(spec.class_names.begin(), spec.class_names.end(), name);
    if (it == spec.class_names.end()) {
      throw_invalid("labels_as_classifier_ids()", "class", "'" + name + "'",
                    "is not one of the classifier's classes (" + joined(spec.class_names) + ")");
    }
    ids[static_cast<size_t>(i)] = static_cast<int>(it - spec.class_names.begin());
  }
  return ids;
}

struct Classifier::Impl {
  CheckpointInfo info;
  ClassifierSpec spec;
  torch::Device device{torch::kCPU};
  MocaClassifier clf{nullptr};
  torch::Tensor pos_rows;
  mutable std::mutex mutex;
};

Classifier::Classifier(const std::string& path, const RuntimeOptions& runtime)
    : impl_(std::make_unique<Impl>()) {
  impl_->device = detail::setup_runtime(runtime);
  auto ck = detail::open_checkpoint(path);
  impl_->info = ck.info;
  impl_->spec = classifier_spec(ck.info);
  const int K = static_cast<int>(impl_->spec.class_names.size());
  impl_->clf = MocaClassifier(ck.info.model, K, 0.0, impl_->spec.probe);
  detail::load_module(ck, *impl_->clf);
  impl_->clf->to(impl_->device);
  impl_->clf->eval();
  impl_->pos_rows =
      detail::pos_rows_for_data(ck.info, impl_->spec.input_channels,
                                static_cast<int>(impl_->spec.input_channels.size()), impl_->device);
}

Classifier::~Classifier() = default;

const CheckpointInfo& Classifier::info() const {
  return impl_->info;
}
const ClassifierSpec& Classifier::spec() const {
  return impl_->spec;
}
int Classifier::classes() const {
  return static_cast<int>(impl_->spec.class_names.size());
}

namespace {

/// Logits of all windows, in batches of 256 (the batching of train_classifier's evaluation).
torch::Tensor classifier_logits(MocaClassifier& clf, const ClassifierSpec& spec,
                                const torch::Tensor& pos_rows, const data::Windows& w,
                                const torch::Device& device) {
  w.validate("Classifier: windows");
  if (w.channel_names != spec.input_channels || w.length != spec.length) {
    throw_invalid("Classifier", "windows of channels " + joined(w.channel_names) + " x " +
                                    std::to_string(w.length) +
                                    " samples do not fit the classifier (" +
                                    joined(spec.input_channels) + " x " +
                                    std::to_string(spec.length) + "; see prepare_windows())");
  }
  torch::NoGradGuard no_grad;
  if (w.size() == 0) return torch::zeros({0, clf->head->options.out_features()});
  // The probe's head runs on all features at once, the fine-tuned model per batch of 256 under
  // the training precision: the same calls as train_classifier's evaluation, so a saved model
  // repeats its test predictions bit for bit.
  std::vector<torch::Tensor> parts;
  for (int s = 0; s < w.size(); s += 256) {
    std::vector<int> rows;
    for (int i = s; i < std::min(w.size(), s + 256); ++i) rows.push_back(i);
    auto x = detail::windows_tensor(w, rows, device);
    if (spec.probe) {
      parts.push_back(clf->features(x, pos_rows));
    } else {
      detail::AutocastScope amp(device, spec.precision);
      parts.push_back(clf->forward(x, pos_rows).to(torch::kFloat));
    }
  }
  auto all = torch::cat(parts, 0);
  if (spec.probe) all = clf->head_forward(all);
  return all.to(torch::kCPU);
}

}  // namespace

Eigen::MatrixXd Classifier::predict_proba(const data::Windows& windows) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto logits = classifier_logits(impl_->clf, impl_->spec, impl_->pos_rows, windows, impl_->device);
  return detail::to_eigen(torch::softmax(logits.to(torch::kDouble), 1));
}

std::vector<int> Classifier::predict(const data::Windows& windows, Eigen::MatrixXd* proba) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto logits = classifier_logits(impl_->clf, impl_->spec, impl_->pos_rows, windows, impl_->device);
  if (proba) *proba = detail::to_eigen(torch::softmax(logits.to(torch::kDouble), 1));
  auto a = logits.argmax(1).to(torch::kInt64).contiguous();
  const int64_t* ids = a.data_ptr<int64_t>();
  return std::vector<int>(ids, ids + a.size(0));
}

}  // namespace moca::model
