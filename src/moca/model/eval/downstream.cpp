// Linear probing, fine-tuning and the supervised baseline (torch translation unit).
#include "moca/model/eval/downstream.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"
#include "moca/model/detail/option_checks.hpp"
#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/detail/tensor_adapter.hpp"
#include "moca/model/dist/detail/distributed_torch.hpp"
#include "moca/model/eval/classifier.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/kernels/detail/adamw.hpp"
#include "moca/model/nn/moca_model.hpp"
#include "moca/model/train/detail/progress.hpp"
#include "moca/model/train/schedule.hpp"

namespace moca::model {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void check_labels(const data::Windows& w, const char* what) {
  for (int i = 0; i < w.size(); ++i) {
    if (w.labels(i) < 0) {
      throw_invalid("train_classifier()", std::string(what) + " window " + std::to_string(i) +
                                              " has no label (" + std::to_string(w.labels(i)) +
                                              ")");
    }
  }
}

std::vector<int> epoch_order(int n, std::uint64_t seed, int epoch) {
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(derive_seed(derive_seed(seed, 3), static_cast<std::uint64_t>(epoch)));
  shuffle(order, rng);
  return order;
}

torch::Tensor label_tensor(const data::Windows& w, const std::vector<int>& rows,
                           const torch::Device& device) {
  std::vector<int64_t> y;
  y.reserve(rows.size());
  for (int r : rows) y.push_back(w.labels(r));
  return torch::tensor(y, torch::kInt64).to(device);
}

torch::Tensor smoothed_cross_entropy(const torch::Tensor& logits, const torch::Tensor& y,
                                     double eps) {
  auto logp = torch::log_softmax(logits, -1);
  auto nll = -logp.gather(1, y.unsqueeze(1)).squeeze(1);
  if (eps <= 0.0) return nll.mean();
  auto smooth = -logp.mean(-1);
  return ((1.0 - eps) * nll + eps * smooth).mean();
}

/// Cls features of all windows (eval mode, no grad), in batches.
torch::Tensor extract_features(MocaClassifier& clf, const data::Windows& w,
                               const torch::Tensor& pos_rows, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  const int chunk = 256;
  for (int s = 0; s < w.size(); s += chunk) {
    std::vector<int> rows;
    for (int i = s; i < std::min(w.size(), s + chunk); ++i) rows.push_back(i);
    parts.push_back(clf->features(detail::windows_tensor(w, rows, device), pos_rows));
  }
  return torch::cat(parts, 0);
}

std::vector<int> argmax_rows(const torch::Tensor& logits) {
  auto a = logits.argmax(1).to(torch::kCPU, torch::kInt64).contiguous();
  std::vector<int> out(static_cast<size_t>(a.size(0)));
  for (int64_t i = 0; i < a.size(0); ++i)
    out[static_cast<size_t>(i)] = static_cast<int>(a[i].item<int64_t>());
  return out;
}

/// The classifier to train and how the data's channels map onto the model's.
struct ClassifierModel {
  MocaOptions mo;
  MocaClassifier clf{nullptr};
  torch::Tensor pos_rows;  ///< the data's rows of the model's positions (undefined: identity)
  std::string channel_map;
  std::vector<std::string> model_channels;  ///< the encoder's modalities (checkpoint or data)
  bool probe = false;                       ///< frozen encoder, BatchNorm + linear head
};

/// Loads the checkpoint's encoder into `encoder`, built with other options than the checkpoint's:
/// another window length (options_at_length) and/or a learnable positional table
/// (DownstreamOptions::train_pos_embed). Through an encoder with the checkpoint's own options,
/// whose every parameter and buffer is copied but the positional table. The table: at the
/// checkpoint's own length the checkpoint's (whether `encoder` holds it as a buffer or as a
/// parameter); at another length the new encoder's own (the same fixed code at the new patch
/// indices, 1-D positions at the checkpoint's pitch). std::runtime_error, at another length, when
/// the checkpoint's table is not the fixed code its options describe (a table changed after it
/// was made: imported from a fine-tuned PyTorch model), which could not be carried there.
void load_encoder_through_own(detail::OpenCheckpoint& ck, MocaEncoderImpl& encoder) {
  MocaEncoder own(ck.info.model);
  const torch::Tensor fixed = own->pos_embed().clone();
  detail::load_module(ck, *own, {"encoder"});
  const torch::Tensor stored = own->pos_embed();
  const bool same_length = encoder.options().length == ck.info.model.length;
  if (!same_length && !torch::allclose(stored, fixed, 0.0, 1e-6)) {
    const MocaOptions& mo = ck.info.model;
    throw std::runtime_error(
        "checkpoint " + ck.info.path + ": its positional table differs from the fixed sin-cos " +
        "code its options describe (pos_embed '" + to_string(mo.pos_embed) + "', " +
        std::to_string(mo.patches()) + " patches per modality" +
        (mo.max_patches() > 0 ? ", pitch " + std::to_string(mo.position_pitch()) : "") +
        "; max difference " + std::to_string((stored - fixed).abs().max().item<double>()) +
        "), so its positions cannot be evaluated at another window length (rule: only the fixed "
        "code extends; use the model at its own length, " +
        std::to_string(mo.length) + " samples)");
  }
  torch::NoGradGuard no_grad;
  const auto from = own->named_parameters(true);
  for (auto& p : encoder.named_parameters(true)) {
    if (p.key() != "pos_embed") p.value().copy_(from[p.key()]);
  }
  const auto buffers = own->named_buffers(true);
  for (auto& b : encoder.named_buffers(true)) {
    if (b.key() != "pos_embed") b.value().copy_(buffers[b.key()]);
  }
  if (same_length) encoder.pos_embed().copy_(stored);
}

/// Builds the classifier from random initialisation (scratch) or with the checkpoint's encoder.
ClassifierModel make_classifier(const DownstreamOptions& o, const data::Windows& train, int classes,
                                const torch::Device& device) {
  ClassifierModel m;
  std::unique_ptr<detail::OpenCheckpoint> ck;
  if (o.mode == DownstreamMode::kScratch) {
    m.mo = preset(o.preset, train.channels, train.length, o.patch_length);
    m.mo.layout = o.layout;
    m.mo.pos_embed = o.pos_embed;
    m.mo.pos_learned = o.scratch_init == ScratchInit::kTimm;
    m.channel_map = "identity";
    m.model_channels = train.channel_names;
  } else {
    ck = std::make_unique<detail::OpenCheckpoint>(detail::open_checkpoint(o.checkpoint));
    m.mo = ck->info.model;
    if (train.length != m.mo.length) {
      // Another length: the same weights on P' = L' / Lp patches per modality, every token at
      // the position it was trained with (options_at_length: 1-D positions keep the
      // checkpoint's pitch, so P' may not exceed it); load_encoder_through_own checks that the
      // checkpoint's table is the fixed code.
      m.mo = options_at_length(m.mo, train.length, "train_classifier()");
    }
    // A trained table starts as the fixed code at the data's length (set after
    // options_at_length, which refuses a learned table at another length).
    if (o.train_pos_embed) m.mo.pos_learned = true;
    m.model_channels = ck->info.channel_names;
    CheckpointInfo at_length = ck->info;
    at_length.model = m.mo;
    m.pos_rows = detail::pos_rows_for_data(at_length, train.channel_names, train.channels, device);
    if (!m.pos_rows.defined()) {
      m.channel_map = "identity";
    } else {
      const auto rows = match_channels(ck->info.channel_names, train.channel_names);
      for (size_t j = 0; j < rows.size(); ++j) {
        m.channel_map += (j ? " " : "") + train.channel_names[j] + "->" +
                         ck->info.channel_names[static_cast<size_t>(rows[j])];
      }
    }
  }
  torch::manual_seed(o.seed);
  m.probe = o.mode == DownstreamMode::kLinearProbe;
  m.clf = MocaClassifier(m.mo, classes, m.probe ? 0.0 : o.drop_path, m.probe);
  if (!ck && o.scratch_init == ScratchInit::kTimm) timm_init(*m.clf);
  if (ck && m.mo.length == ck->info.model.length &&
      m.mo.pos_learned == ck->info.model.pos_learned) {
    detail::load_module(*ck, *m.clf->encoder, {"encoder"});
  } else if (ck) {
    load_encoder_through_own(*ck, *m.clf->encoder);
  }
  m.clf->to(device);
  return m;
}

/// AdamW parameter groups and each group's learning-rate scale.
struct ParamGroups {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  std::vector<double> lr_scales;
};

/// Linear probe: the head alone (the encoder is frozen here), weight decay on its matrices.
/// Fine-tune and scratch: one group per (layer, decayed or not), lr scaled by layer decay.
ParamGroups make_param_groups(DownstreamMode mode, MocaClassifier& clf, const DownstreamOptions& o,
                              int depth) {
  ParamGroups out;
  auto adamw = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(o.lr).betas({0.9, 0.999}).eps(1e-8).weight_decay(wd));
  };
  if (mode == DownstreamMode::kLinearProbe) {
    for (auto& p : clf->encoder->parameters()) p.set_requires_grad(false);
    std::vector<torch::Tensor> decay, no_decay;
    for (const auto& p : clf->head->named_parameters()) {
      (p.value().dim() > 1 ? decay : no_decay).push_back(p.value());
    }
    out.groups.emplace_back(decay, adamw(o.weight_decay));
    out.groups.emplace_back(no_decay, adamw(0.0));
    out.lr_scales = {1.0, 1.0};
    return out;
  }
  std::map<std::pair<int, bool>, std::vector<torch::Tensor>> buckets;
  for (const auto& p : clf->named_parameters()) {
    if (!p.value().requires_grad()) continue;
    const int id = layer_id(p.key(), depth);
    const bool wd = uses_weight_decay(p.key(), p.value().dim(), /*no_decay_tokens=*/true);
    buckets[{id, wd}].push_back(p.value());
  }
  for (auto& kv : buckets) {
    out.groups.emplace_back(kv.second, adamw(kv.first.second ? o.weight_decay : 0.0));
    out.lr_scales.push_back(layer_scale(kv.first.first, depth, o.layer_decay));
  }
  return out;
}

/// What a training step reads: the probe's frozen features (computed once) or the windows.
struct ClassifierInputs {
  const data::Windows& train;
  const data::Windows& test;
  torch::Tensor train_features, test_features;  ///< probe only
};

/// Mean loss of the training windows `rows` (train mode, with gradients).
torch::Tensor batch_loss(const DownstreamOptions& o, ClassifierModel& m, const ClassifierInputs& in,
                         const std::vector<int>& rows, const torch::Device& device) {
  auto y = label_tensor(in.train, rows, device);
  if (m.probe) {
    auto idx =
        torch::tensor(std::vector<int64_t>(rows.begin(), rows.end()), torch::kInt64).to(device);
    return smoothed_cross_entropy(m.clf->head_forward(in.train_features.index_select(0, idx)), y,
                                  0.0);
  }
  detail::AutocastScope amp(device, o.runtime.precision);
  return smoothed_cross_entropy(
      m.clf->forward(detail::windows_tensor(in.train, rows, device), m.pos_rows), y,
      o.label_smoothing);
}

/// Predicted class of every test window (eval mode, no gradients).
std::vector<int> evaluate(const DownstreamOptions& o, ClassifierModel& m,
                          const ClassifierInputs& in, const torch::Device& device) {
  m.clf->eval();
  torch::NoGradGuard no_grad;
  if (m.probe) return argmax_rows(m.clf->head_forward(in.test_features));
  std::vector<torch::Tensor> parts;
  for (int s = 0; s < in.test.size(); s += 256) {
    std::vector<int> rows;
    for (int i = s; i < std::min(in.test.size(), s + 256); ++i) rows.push_back(i);
    detail::AutocastScope amp(device, o.runtime.precision);
    parts.push_back(m.clf->forward(detail::windows_tensor(in.test, rows, device), m.pos_rows)
                        .to(torch::kFloat));
  }
  return argmax_rows(torch::cat(parts, 0));
}

/// The optimiser, reducer, schedule and clocks of a classifier run.
struct ClassifierLoop {
  ClassifierLoop(const DownstreamOptions& o, Collective& comm, MocaClassifier& clf, ParamGroups pg,
                 int n)
      : optimizer(std::move(pg.groups), torch::optim::AdamWOptions(o.lr)),
        lr_scales(std::move(pg.lr_scales)),
        reducer(comm, detail::trainable_parameters(*clf)),
        schedule{o.lr, o.min_lr, o.effective_warmup_epochs(), static_cast<double>(o.epochs)},
        bar(std::cerr, o.progress && comm.rank() == 0, ProgressBar::stderr_is_terminal()),
        ipe(n / o.batch_size),
        total(ipe * o.epochs) {
    schedule.validate();
  }
  void set_lr(double lr) {
    auto& gs = optimizer.param_groups();
    for (size_t g = 0; g < gs.size(); ++g) {
      static_cast<torch::optim::AdamWOptions&>(gs[g].options()).lr(lr * lr_scales[g]);
    }
  }
  torch::optim::AdamW optimizer;
  std::vector<double> lr_scales;
  detail::GradientReducer reducer;
  LrSchedule schedule;
  ProgressBar bar;
  long ipe, total, done = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

/// This process's place in a data-parallel run (one rank: 0 of 1).
struct RankSlice {
  int rank = 0, world = 1, local_batch = 0;
};

/// One optimiser step on the training windows `rows`; returns the global batch's mean loss.
double classifier_step(const DownstreamOptions& o, ClassifierModel& m, const ClassifierInputs& in,
                       ClassifierLoop& loop, const RankSlice& ranks, const std::vector<int>& rows,
                       int epoch, long j, const torch::Device& device) {
  loop.optimizer.zero_grad();
  torch::Tensor loss = batch_loss(o, m, in, rows, device);
  double lv = loss.item<double>();
  loss.backward();
  if (ranks.world > 1) {
    const double w = 1.0 / ranks.world;
    lv = loop.reducer.reduce(w, {w * lv},
                             "all-reduce of the gradients at epoch " + std::to_string(epoch + 1) +
                                 ", iteration " + std::to_string(j + 1))[0];
  }
  if (!std::isfinite(lv)) {
    throw std::runtime_error("train_classifier(): non-finite loss in epoch " +
                             std::to_string(epoch + 1) + "; lower the learning rate");
  }
  detail::adamw_step(loop.optimizer);
  return lv;
}

/// One epoch over the shuffled training windows; returns its history entry.
nlohmann::json run_classifier_epoch(const DownstreamOptions& o, ClassifierModel& m,
                                    const ClassifierInputs& in, ClassifierLoop& loop,
                                    const RankSlice& ranks, int epoch,
                                    const torch::Device& device) {
  const auto e0 = std::chrono::steady_clock::now();
  const auto order = epoch_order(in.train.size(), o.seed, epoch);
  if (m.probe) {
    m.clf->head_norm->train();
    m.clf->head->train();
  } else {
    m.clf->train();
  }
  double loss_sum = 0.0, lr = 0.0;
  for (long j = 0; j < loop.ipe; ++j) {
    // The global batch's slice of this rank (the whole batch on one rank).
    const auto first =
        order.begin() + j * o.batch_size + static_cast<long>(ranks.rank) * ranks.local_batch;
    const std::vector<int> rows(first, first + ranks.local_batch);
    lr = loop.schedule.at(epoch + static_cast<double>(j) / static_cast<double>(loop.ipe));
    loop.set_lr(lr);
    loss_sum += classifier_step(o, m, in, loop, ranks, rows, epoch, j, device);
    ++loop.done;
    const double el = seconds_since(loop.start);
    loop.bar.update(epoch, o.epochs, j + 1, loop.ipe, loss_sum / (j + 1),
                    loop.done * static_cast<double>(o.batch_size) / el,
                    el / loop.done * (loop.total - loop.done));
  }
  const double el = seconds_since(loop.start);
  loop.bar.end_epoch(epoch, o.epochs, loop.ipe, loss_sum / loop.ipe,
                     loop.done * static_cast<double>(o.batch_size) / el,
                     el / loop.done * (loop.total - loop.done));
  return {
      {"epoch", epoch}, {"loss", loss_sum / loop.ipe}, {"lr", lr}, {"seconds", seconds_since(e0)}};
}

/// Labels, shapes and batch size of the inputs (std::invalid_argument naming the problem).
void check_classifier_inputs(const DownstreamOptions& o, const data::Windows& train,
                             const data::Windows& test) {
  o.validate();
  train.validate("train_classifier(): training windows");
  if (test.size() > 0) test.validate("train_classifier(): test windows");
  check_labels(train, "training");
  check_labels(test, "test");
  if (train.channels != test.channels || train.length != test.length ||
      train.channel_names != test.channel_names) {
    throw_invalid("train_classifier()", "training and test windows differ in channels or length");
  }
  if (train.size() < o.batch_size) {
    throw_invalid("train_classifier()",
                  "DownstreamOptions::batch_size (" + std::to_string(o.batch_size) +
                      ") exceeds the number of training windows (" + std::to_string(train.size()) +
                      "): a smaller batch, or more training windows");
  }
}

/// o.classes, or (0) the number the labels and class names need, at least 2.
int class_count(const DownstreamOptions& o, const data::Windows& train, const data::Windows& test) {
  int classes = o.classes;
  if (classes == 0) {
    const int top = test.size() > 0 ? std::max(train.labels.maxCoeff(), test.labels.maxCoeff())
                                    : train.labels.maxCoeff();
    classes = std::max<int>(static_cast<int>(train.class_names.size()), top + 1);
    classes = std::max(classes, 2);
  }
  if (train.labels.maxCoeff() >= classes ||
      (test.size() > 0 && test.labels.maxCoeff() >= classes)) {
    throw_invalid("train_classifier()",
                  "a label exceeds classes - 1 (" + std::to_string(classes - 1) + ")");
  }
  return classes;
}

/// The saved classifier's metadata (classifier.hpp lists the fields).
nlohmann::json classifier_meta(const DownstreamOptions& o, const ClassifierModel& m,
                               const data::Windows& train, int classes) {
  std::vector<std::string> class_names = train.class_names;
  for (int k = static_cast<int>(class_names.size()); k < classes; ++k)
    class_names.push_back(std::to_string(k));
  class_names.resize(static_cast<size_t>(classes));
  nlohmann::json meta;
  meta["kind"] = "classifier";
  meta["model"] = to_json(m.mo);
  meta["channel_names"] = m.model_channels;
  meta["input_channels"] = train.channel_names;
  meta["class_names"] = class_names;
  meta["classes"] = classes;
  meta["head"] = m.probe ? "probe" : "linear";
  meta["data"] = {{"sample_rate_hz", train.sample_rate_hz},
                  {"length", train.length},
                  {"normalisation", "none"},
                  {"training_windows", train.size()},
                  {"description", train.description}};
  meta["training"] = o.to_json();
  meta["provenance"] = o.provenance;
  meta["channel_map"] = m.channel_map;
  return meta;
}

}  // namespace

DownstreamOptions downstream_defaults(DownstreamMode mode) {
  DownstreamOptions o;
  o.mode = mode;
  if (mode == DownstreamMode::kLinearProbe) {
    o.lr = 1e-3;
    o.weight_decay = 0.0;
    o.min_lr = 0.0;
  } else {
    o.lr = 1e-3;
    o.weight_decay = 0.05;
    o.min_lr = 1e-6;
  }
  return o;
}

double DownstreamOptions::default_warmup_epochs() const {
  return mode == DownstreamMode::kLinearProbe ? 10.0 : 5.0;
}

double DownstreamOptions::effective_warmup_epochs() const {
  return detail::effective_warmup(warmup_epochs, default_warmup_epochs(), epochs);
}

std::string DownstreamOptions::warmup_note() const {
  return detail::warmup_note("DownstreamOptions", warmup_epochs, default_warmup_epochs(), epochs);
}

void DownstreamOptions::validate() const {
  if (mode != DownstreamMode::kScratch && checkpoint.empty()) {
    throw_invalid("", "DownstreamOptions::checkpoint", "''",
                  "is required for " + to_string(mode) + " (a pre-trained MAE)");
  }
  if (mode == DownstreamMode::kScratch) {
    detail::check_architecture("DownstreamOptions", preset, patch_length);
  }
  if (train_pos_embed && mode != DownstreamMode::kFinetune) {
    throw_invalid("", "DownstreamOptions::train_pos_embed", "true",
                  "applies to the finetune mode only (the mode is " + to_string(mode) +
                      (mode == DownstreamMode::kScratch
                           ? "; --scratch-init timm learns the table from a random start)"
                           : ", whose encoder is frozen)"));
  }
  if (mode != DownstreamMode::kScratch && scratch_init != ScratchInit::kMae) {
    throw_invalid("", "DownstreamOptions::scratch_init", to_string(scratch_init),
                  "applies to the scratch mode only (a network from random initialisation); the "
                  "mode is " +
                      to_string(mode) + ", whose encoder comes from DownstreamOptions::checkpoint");
  }
  check_ranges(*this);  // the rows' ranges (schema): schedule, layer_decay, label_smoothing, ...
  detail::check_schedule("DownstreamOptions", epochs, lr, min_lr, warmup_epochs);
  if (classes < 0 || classes == 1) {
    throw_invalid("", "DownstreamOptions::classes", std::to_string(classes),
                  "must be 0 (from the data) or >= 2");
  }
  runtime.validate();
}

Scope mode_scope(DownstreamMode mode) {
  switch (mode) {
    case DownstreamMode::kLinearProbe:
      return kLinearProbeScope;
    case DownstreamMode::kFinetune:
      return kFinetuneScope;
    case DownstreamMode::kScratch:
      return kScratchScope;
  }
  return 0;
}

nlohmann::json DownstreamOptions::to_json() const {
  nlohmann::json j = {{"mode", to_string(mode)},
                      {"epochs", epochs},
                      {"batch_size", batch_size},
                      {"lr", lr},
                      {"min_lr", min_lr},
                      {"warmup_epochs", effective_warmup_epochs()},
                      {"weight_decay", weight_decay},
                      {"seed", seed},
                      {"device", to_string(runtime.device)},
                      {"threads", runtime.effective_threads()},
                      {"precision", to_string(runtime.precision)}};
  if (mode == DownstreamMode::kScratch) {
    j["preset"] = preset;
    j["patch_length"] = patch_length;
    j["layout"] = to_string(layout);
    j["pos_embed"] = to_string(pos_embed);
    j["scratch_init"] = to_string(scratch_init);
  } else {
    j["checkpoint"] = checkpoint;
    // Only when set, so the records (and digests) of runs with the fixed table stay as they were.
    if (train_pos_embed) j["train_pos_embed"] = true;
  }
  if (mode != DownstreamMode::kLinearProbe) {
    j["layer_decay"] = layer_decay;
    j["label_smoothing"] = label_smoothing;
    j["drop_path"] = drop_path;
  }
  return j;
}

DownstreamResult train_classifier(const DownstreamOptions& o, const data::Windows& train,
                                  const data::Windows& test, std::ostream& log) {
  RunContext local(log);
  return train_classifier(o, train, test, local);
}

DownstreamResult train_classifier(const DownstreamOptions& o, const data::Windows& train,
                                  const data::Windows& test, RunContext& context) {
  check_classifier_inputs(o, train, test);
  const auto t0 = std::chrono::steady_clock::now();
  std::ostream& log = context.log();
  Collective& comm = context.collective();
  torch::Device device = detail::setup_runtime(o.runtime);
  check_global_batch("train_classifier()", "DownstreamOptions::batch_size", o.batch_size,
                     comm.world_size());
  if (device.is_cuda() && comm.world_size() > 1) {
    device = detail::local_cuda_device(comm.local_rank());
  }
  o.dist.validate();
  context.check_fits(o.dist, device.is_cuda(), "train_classifier()");
  RankSlice ranks;
  ranks.rank = comm.rank();
  ranks.world = comm.world_size();
  ranks.local_batch = o.batch_size / ranks.world;
  DownstreamResult result;
  result.device = device.is_cuda() ? Device::kCuda : Device::kCpu;
  result.classes = class_count(o, train, test);

  ClassifierModel m = make_classifier(o, train, result.classes, device);
  result.channel_map = m.channel_map;
  comm.check_same(
      "options hash (classifier options, model, data)",
      options_digest(o.to_json().dump() + to_json(m.mo).dump() + std::to_string(train.size()) +
                     std::to_string(test.size()) + std::to_string(result.classes)));
  detail::broadcast_module(comm, *m.clf);
  // Drop path draws from torch's stream: one stream per rank when several train.
  if (ranks.world > 1) {
    torch::manual_seed(derive_seed(o.seed, 1000 + static_cast<std::uint64_t>(ranks.rank)));
  }
  ClassifierLoop loop(o, comm, m.clf, make_param_groups(o.mode, m.clf, o, m.mo.depth),
                      train.size());
  ClassifierInputs in{train, test, {}, {}};
  if (m.probe) {
    m.clf->eval();
    in.train_features = extract_features(m.clf, train, m.pos_rows, device);
    if (test.size() > 0) in.test_features = extract_features(m.clf, test, m.pos_rows, device);
  }
  loop.start = std::chrono::steady_clock::now();
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    result.history.push_back(run_classifier_epoch(o, m, in, loop, ranks, epoch, device));
  }
  if (test.size() > 0) {
    result.predicted = evaluate(o, m, in, device);
    result.truth.assign(test.labels.data(), test.labels.data() + test.size());
    result.test = classification_metrics(result.truth, result.predicted, result.classes);
  }
  if (!o.save_model.empty() && ranks.rank == 0) {
    detail::save_checkpoint(o.save_model, *m.clf, nullptr,
                            classifier_meta(o, m, train, result.classes));
    log << to_string(o.mode) << ": classifier saved to " << o.save_model << "\n";
  }
  result.seconds = seconds_since(t0);
  if (test.size() > 0) {
    log << to_string(o.mode) << ": test accuracy " << result.test.accuracy << ", macro-F1 "
        << result.test.macro_f1 << " (" << test.size() << " windows, " << result.seconds << " s)\n";
  } else {
    log << to_string(o.mode) << ": trained on " << train.size() << " windows (no test windows, "
        << result.seconds << " s)\n";
  }
  return result;
}

}  // namespace moca::model
