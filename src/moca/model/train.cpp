// Pre-training loop (torch translation unit). See pretrain.hpp for the contract.
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "moca/common/file_lock.hpp"
#include "moca/common/memory.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/augment.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/model/checkpoint.hpp"
#include "moca/model/detail/distributed_torch.hpp"
#include "moca/model/mask_indices.hpp"
#include "moca/model/moca_model.hpp"
#include "moca/model/model_memory.hpp"
#include "moca/model/pretrain.hpp"
#include "moca/model/detail/progress.hpp"
#include "moca/model/schedule.hpp"
#include "moca/model/detail/torch_util.hpp"

namespace moca::model {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<std::string> channel_names_of(const data::Windows& w) {
  if (!w.channel_names.empty()) return w.channel_names;
  std::vector<std::string> names;
  for (int c = 0; c < w.channels; ++c) names.push_back("ch" + std::to_string(c));
  return names;
}

/// AdamW over two groups: decayed (2+-D, not bias) and not decayed.
std::unique_ptr<torch::optim::AdamW> make_pretrain_optimizer(MocaMae& model,
                                                             const PretrainOptions& o) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& p : model->named_parameters()) {
    if (!p.value().requires_grad()) continue;
    (uses_weight_decay(p.key(), p.value().dim(), /*no_decay_tokens=*/false) ? decay : no_decay)
        .push_back(p.value());
  }
  auto opts = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(1e-8).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, opts(o.weight_decay));
  groups.emplace_back(no_decay, opts(0.0));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), torch::optim::AdamWOptions(o.lr));
}

void set_lr(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  }
}

std::string json_diff(const nlohmann::json& want, const nlohmann::json& have) {
  std::string out;
  for (auto it = want.begin(); it != want.end(); ++it) {
    if (!have.contains(it.key()) || have.at(it.key()) != it.value()) {
      out += (out.empty() ? "" : ", ") + it.key() + " (checkpoint " +
             (have.contains(it.key()) ? have.at(it.key()).dump() : std::string("absent")) +
             ", now " + it.value().dump() + ")";
    }
  }
  return out;
}

}  // namespace

double mae_loss_and_gradients(MocaMae& model, const torch::Tensor& x, const MaskTensors& masks,
                              int shards, const std::string& precision) {
  const int64_t batch = x.size(0);
  if (shards < 1 || shards > batch) {
    throw std::invalid_argument("mae_loss_and_gradients(): shards (" + std::to_string(shards) +
                                ") must be in [1, batch size " + std::to_string(batch) + "]");
  }
  const torch::Device device = x.device();
  std::vector<torch::Tensor> params;
  for (const auto& p : model->parameters()) {
    if (p.requires_grad()) params.push_back(p);
  }
  if (shards == 1) {
    // Backward into undefined gradients writes them afresh: the same "replace" contract as the
    // shard path, without a zero fill.
    for (auto& p : params) p.mutable_grad() = torch::Tensor();
    MaeOutput out;
    {
      detail::AutocastScope amp(device, precision);
      out = model->forward(x, masks);
    }
    out.loss.backward();
    return out.loss.item<double>();
  }
  // Row blocks and their weights in the whole-batch loss.
  const bool masked_only = model->options().loss_scope() == LossScope::kMasked;
  const double total_weight =
      masked_only ? masks.mask.sum().item<double>() : static_cast<double>(batch);
  struct Shard {
    torch::Tensor x;
    MaskTensors masks;
    double weight = 0.0;
    double loss = 0.0;
    std::vector<torch::Tensor> grads;
    std::exception_ptr error;
  };
  std::vector<Shard> parts(static_cast<size_t>(shards));
  for (int s = 0; s < shards; ++s) {
    const int64_t begin = batch * s / shards, end = batch * (s + 1) / shards;
    Shard& part = parts[static_cast<size_t>(s)];
    part.x = x.slice(0, begin, end);
    part.masks = {masks.ids_keep.slice(0, begin, end), masks.ids_restore.slice(0, begin, end),
                  masks.mask.slice(0, begin, end)};
    part.weight =
        (masked_only ? part.masks.mask.sum().item<double>() : static_cast<double>(end - begin)) /
        total_weight;
  }
  auto run = [&](Shard& part) {
    try {
      // Grad mode and autocast are thread-local; intra-op threads (OpenMP ICV, which OpenBLAS
      // reads too) are per calling thread.
      at::set_num_threads(1);
      torch::AutoGradMode grad_mode(true);
      torch::Tensor loss;
      {
        detail::AutocastScope amp(device, precision);
        loss = model->forward(part.x, part.masks).loss;
      }
      part.loss = loss.item<double>();
      part.grads = torch::autograd::grad({loss * part.weight}, params, /*grad_outputs=*/{},
                                         /*retain_graph=*/false, /*create_graph=*/false,
                                         /*allow_unused=*/true);
    } catch (...) {
      part.error = std::current_exception();
    }
  };
  const int main_threads = at::get_num_threads();
  std::vector<std::thread> workers;
  for (int s = 1; s < shards; ++s)
    workers.emplace_back(run, std::ref(parts[static_cast<size_t>(s)]));
  run(parts[0]);
  for (auto& w : workers) w.join();
  at::set_num_threads(main_threads);
  for (const auto& part : parts) {
    if (part.error) std::rethrow_exception(part.error);
  }
  double loss = 0.0;
  for (const auto& part : parts) loss += part.weight * part.loss;
  // Every parameter's gradient is replaced (undefined where no block reached it, so the
  // optimiser skips it).
  torch::NoGradGuard no_grad;
  for (size_t j = 0; j < params.size(); ++j) {
    torch::Tensor sum;
    for (auto& part : parts) {
      torch::Tensor& g = part.grads[j];
      if (!g.defined()) continue;
      sum = sum.defined() ? sum + g : std::move(g);  // the blocks' gradients are fresh tensors
    }
    params[j].mutable_grad() = sum;
  }
  return loss;
}

PretrainResult pretrain(const PretrainOptions& o, const data::Windows& train, std::ostream& log_in,
                        const std::atomic<bool>* stop) {
  o.validate();
  train.validate("pretrain(): training windows");
  const int n = train.size();
  if (n < o.batch_size) {
    throw std::invalid_argument("pretrain(): batch_size (" + std::to_string(o.batch_size) +
                                ") exceeds the number of training windows (" + std::to_string(n) +
                                ")");
  }
  const auto t_start = std::chrono::steady_clock::now();
  torch::Device device = detail::setup_runtime(o.runtime);
  // Data-parallel when the environment names a world of several ranks (distributed.hpp).
  const DistEnv denv = read_dist_env();
  check_global_batch("pretrain()", o.batch_size, denv.world_size);
  if (device.is_cuda() && denv.world_size > 1) {
    device = detail::local_cuda_device(denv.local_rank);
  }
  o.dist.validate();
  Communicator* const comm = &Communicator::process(o.dist, device.is_cuda());
  const int rank = comm->rank(), world = comm->world_size();
  const bool root = comm->is_root();
  // Only rank 0 logs and writes; the other ranks' log goes nowhere.
  std::ostream null_log(nullptr);
  std::ostream& log = root ? log_in : null_log;
  // One writer per checkpoint (and its metrics log) for the whole run: a second run with the
  // same checkpoint refuses to start instead of overwriting this one's files.
  std::unique_ptr<FileLock> lock;
  if (root) {
    lock =
        std::make_unique<FileLock>(lock_path_for_file(o.checkpoint), "checkpoint " + o.checkpoint);
  }

  MocaOptions mo = preset(o.preset, train.channels, train.length, o.patch_length);
  mo.layout(parse_token_layout(o.layout))
      .pos_embed(parse_pos_embed(o.pos_embed))
      .loss_scope(parse_loss_scope(o.loss))
      .norm_pix_loss(o.norm_pix_loss);
  mo.validate();
  const int local_batch = o.batch_size / world;
  if (!device.is_cuda()) {
    // A lower bound (no visible token counted), so a refusal is never wrong.
    require_memory(mae_step_activation_bytes(mo, local_batch, 0),
                   "pre-training on the CPU with batch " + std::to_string(local_batch) +
                       " (preset " + o.preset + "; activations, a lower bound)",
                   "use a smaller --batch");
  }
  const masking::Grid grid = masking::make_grid(train.channels, train.length, o.patch_length);
  masking::PolicyContext context;
  context.pilot = &train;
  const auto policy = masking::make_policy(o.policy, grid, context);

  torch::manual_seed(o.seed);
  MocaMae model(mo);
  model->to(device);
  model->train();
  auto optimizer = make_pretrain_optimizer(model, o);

  PretrainResult result;
  result.model = mo;
  result.device = device.is_cuda() ? "cuda" : "cpu";
  result.threads = o.runtime.effective_threads();
  result.rank = rank;
  result.world_size = world;
  result.backend = comm->backend();
  const int shards = o.runtime.effective_batch_shards(device.is_cuda(), local_batch);
  result.iterations_per_epoch = n / o.batch_size;
  const long ipe = result.iterations_per_epoch;
  const nlohmann::json training = o.training_json();
  nlohmann::json data_json = {{"n", n},
                              {"channels", train.channels},
                              {"length", train.length},
                              {"sample_rate_hz", train.sample_rate_hz},
                              {"modalities", nlohmann::json::object()},
                              {"description", train.description}};
  for (const auto& g : train.modalities) data_json["modalities"][g.name] = g.channels;
  double partial_sum = 0.0;  // loss sum of the epoch in progress (kept across a resume)
  long partial_count = 0;
  double partial_seconds = 0.0;

  if (o.resume) {
    auto ck = detail::open_checkpoint(o.checkpoint);
    const auto& meta = ck.info.meta;
    if (ck.info.kind != "mae" || !meta.contains("training")) {
      throw std::invalid_argument("pretrain(): checkpoint " + o.checkpoint +
                                  " is not a pre-training checkpoint");
    }
    const std::string diff = json_diff(training, meta.at("training"));
    if (!diff.empty()) {
      throw std::invalid_argument("pretrain(): cannot resume " + o.checkpoint +
                                  " with different training options: " + diff);
    }
    // Checkpoints written before the data metadata gained the rate and the modality groups
    // (2026-11-23) lack those two keys: compare what they record.
    nlohmann::json data_want = data_json;
    for (const char* key : {"sample_rate_hz", "modalities"}) {
      if (!meta.at("data").contains(key)) data_want.erase(key);
    }
    const std::string ddiff = json_diff(data_want, meta.at("data"));
    if (!ddiff.empty()) {
      throw std::invalid_argument("pretrain(): cannot resume " + o.checkpoint +
                                  " on different data: " + ddiff);
    }
    detail::load_module(ck, *model);
    detail::load_optimizer(ck, *optimizer);
    result.iterations = meta.at("iteration").get<long>();
    for (const auto& r : meta.at("history")) result.history.push_back(epoch_record_from_json(r));
    partial_sum = meta.at("partial_loss_sum").get<double>();
    partial_count = meta.at("partial_count").get<long>();
    partial_seconds = meta.at("partial_seconds").get<double>();
    log << "resuming " << o.checkpoint << " at iteration " << result.iterations << " (epoch "
        << result.iterations / ipe + 1 << ")\n";
  }
  // Every rank must run the same numbers on the same data, from the same state.
  comm->check_same("options hash (training options, model, data, resume point)",
                   options_digest(training.dump() + to_json(mo).dump() + data_json.dump() +
                                  policy->spec() + std::to_string(result.iterations)));
  detail::broadcast_module(*comm, *model);
  std::vector<torch::Tensor> trainable;
  for (const auto& p : model->parameters()) {
    if (p.requires_grad()) trainable.push_back(p);
  }
  detail::GradientReducer reducer(*comm, trainable);
  std::unique_ptr<detail::C10dReducer> c10d_reducer;
  if (world > 1 && o.dist.grad_sync == "reducer") {
    if (shards != 1 || mo.loss_scope() == LossScope::kMasked) {
      throw std::invalid_argument(
          "pretrain(): --grad-sync reducer needs one batch shard per rank (--batch-shards 1; "
          "now " +
          std::to_string(shards) + ") and --loss all (now " + o.loss + ")");
    }
    c10d_reducer = std::make_unique<detail::C10dReducer>(*comm, trainable);
  }

  LrSchedule schedule{o.lr, o.min_lr, o.warmup_epochs, static_cast<double>(o.epochs)};
  schedule.validate();
  const std::uint64_t order_seed = derive_seed(o.seed, 1);
  const std::uint64_t step_seed = derive_seed(o.seed, 2);
  const int C = train.channels, L = train.length, B = o.batch_size;
  const std::string metrics_path = o.metrics_path();

  auto write_metrics = [&]() {
    std::ostringstream os;
    for (const auto& r : result.history) os << to_json(r).dump() << "\n";
    if (root) write_output_text(metrics_path, os.str());
  };
  auto write_checkpoint = [&](bool finished) {
    nlohmann::json meta;
    meta["kind"] = "mae";
    meta["model"] = to_json(mo);
    meta["channel_names"] = channel_names_of(train);
    meta["class_names"] = train.class_names;
    meta["training"] = training;
    meta["policy_spec"] = policy->spec();
    meta["data"] = data_json;
    meta["iteration"] = result.iterations;
    meta["windows_seen"] = result.iterations * static_cast<long>(o.batch_size);
    meta["world_size"] = world;
    meta["iterations_per_epoch"] = ipe;
    meta["partial_loss_sum"] = partial_sum;
    meta["partial_count"] = partial_count;
    meta["partial_seconds"] = partial_seconds;
    meta["finished"] = finished;
    nlohmann::json hist = nlohmann::json::array();
    for (const auto& r : result.history) hist.push_back(to_json(r));
    meta["history"] = hist;
    if (root) detail::save_checkpoint(o.checkpoint, *model, optimizer.get(), meta);
    result.checkpoint = o.checkpoint;
  };

  ProgressBar bar(std::cerr, o.progress && root, ProgressBar::stderr_is_terminal());
  const long total = ipe * o.epochs;
  data::RowMatrixXf batch(B, static_cast<Eigen::Index>(C) * L);
  std::vector<masking::Mask> masks(static_cast<size_t>(B));
  std::vector<int> rows(static_cast<size_t>(B));
  const auto run_start = std::chrono::steady_clock::now();
  const long first_iteration = result.iterations;

  bool stop_agreed = false;  // a stop request on any rank, agreed at the last step
  for (int epoch = static_cast<int>(result.iterations / ipe); epoch < o.epochs; ++epoch) {
    const std::vector<int> order =
        epoch_order(n, derive_seed(order_seed, static_cast<std::uint64_t>(epoch)));
    const auto epoch_start = std::chrono::steady_clock::now();
    double lr = 0.0;
    for (long j = result.iterations - static_cast<long>(epoch) * ipe; j < ipe; ++j) {
      for (int b = 0; b < B; ++b) {
        rows[static_cast<size_t>(b)] = order[static_cast<size_t>(j * B + b)];
        batch.row(b) = train.x.row(rows[static_cast<size_t>(b)]);
      }
      Rng rng(derive_seed(step_seed, static_cast<std::uint64_t>(result.iterations)));
      if (o.augment) data::augment_batch(batch, train, rng, o.augment_probability);
      for (int b = 0; b < B; ++b) {
        Eigen::Map<const data::RowMatrixXf> window(batch.row(b).data(), C, L);
        masks[static_cast<size_t>(b)] = policy->sample(rng, window);
      }
      lr = schedule.at(epoch + static_cast<double>(j) / static_cast<double>(ipe));
      set_lr(*optimizer, lr);
      // The whole global batch's masks were drawn above; this rank takes its slice.
      auto mt = to_tensors(mask_indices(masks, mo.layout(), C, mo.patches()), device);
      torch::Tensor x;
      double weight = 1.0;
      if (world == 1) {
        x = detail::batch_tensor(batch, C, L, device);
      } else {
        const int b0 = rank * local_batch;
        const data::RowMatrixXf mine = batch.middleRows(b0, local_batch);
        x = detail::batch_tensor(mine, C, L, device);
        weight = mo.loss_scope() == LossScope::kMasked
                     ? mt.mask.slice(0, b0, b0 + local_batch).sum().item<double>() /
                           mt.mask.sum().item<double>()
                     : static_cast<double>(local_batch) / B;
        mt = {mt.ids_keep.slice(0, b0, b0 + local_batch),
              mt.ids_restore.slice(0, b0, b0 + local_batch),
              mt.mask.slice(0, b0, b0 + local_batch)};
      }
      if (c10d_reducer) c10d_reducer->prepare_for_backward();
      double loss = mae_loss_and_gradients(model, x, mt, shards, o.runtime.precision);
      const bool stop_vote = stop != nullptr && stop->load();
      if (world == 1) {
        stop_agreed = stop_vote;
      } else if (c10d_reducer) {
        // The gradients were averaged during backward; the loss and stop votes follow.
        const auto sums = detail::allreduce_sum(
            *comm, {weight * loss, stop_vote ? 1.0 : 0.0},
            "all-reduce of the loss at iteration " + std::to_string(result.iterations + 1));
        loss = sums[0];
        stop_agreed = sums[1] > 0.0;
      } else {
        const auto sums = reducer.reduce(
            weight, {weight * loss, stop_vote ? 1.0 : 0.0},
            "all-reduce of the gradients at iteration " + std::to_string(result.iterations + 1));
        loss = sums[0];
        stop_agreed = sums[1] > 0.0;
      }
      if (!std::isfinite(loss)) {
        throw std::runtime_error("pretrain(): non-finite loss at iteration " +
                                 std::to_string(result.iterations) + " (epoch " +
                                 std::to_string(epoch + 1) +
                                 "); lower the learning rate or check the data");
      }
      optimizer->step();
      ++result.iterations;
      partial_sum += loss;
      ++partial_count;
      const double elapsed = seconds_since(run_start);
      const double sps = (result.iterations - first_iteration) * static_cast<double>(B) / elapsed;
      const double eta = elapsed / (result.iterations - first_iteration) *
                         static_cast<double>(total - result.iterations);
      bar.update(epoch, o.epochs, j + 1, ipe, partial_sum / partial_count, sps, eta);
      const bool stop_now =
          stop_agreed || (o.stop_after_iterations >= 0 &&
                          result.iterations >= o.stop_after_iterations && j + 1 < ipe);
      if (stop_now) {
        partial_seconds += seconds_since(epoch_start);
        write_checkpoint(false);
        if (o.progress) std::cerr << "\n";
        log << "interrupted at iteration " << result.iterations << "; checkpoint " << o.checkpoint
            << " (resume with --resume)\n";
        result.interrupted = true;
        result.seconds = seconds_since(t_start);
        result.allreduce_seconds = reducer.seconds();
        result.loop_seconds = seconds_since(run_start);
        result.loop_iterations = result.iterations - first_iteration;
        return result;
      }
    }
    EpochRecord rec;
    rec.epoch = epoch;
    rec.iteration = result.iterations;
    rec.loss = partial_sum / static_cast<double>(partial_count);
    rec.lr = lr;
    rec.seconds = partial_seconds + seconds_since(epoch_start);
    rec.samples_per_s = static_cast<double>(partial_count) * B / rec.seconds;
    result.history.push_back(rec);
    partial_sum = 0.0;
    partial_count = 0;
    partial_seconds = 0.0;
    const double elapsed = seconds_since(run_start);
    bar.end_epoch(epoch, o.epochs, ipe, rec.loss, rec.samples_per_s,
                  elapsed / (result.iterations - first_iteration) *
                      static_cast<double>(total - result.iterations));
    write_metrics();
    const bool last = epoch + 1 == o.epochs;
    if (last || (epoch + 1) % o.checkpoint_every == 0) {
      write_checkpoint(last);
      log << "epoch " << epoch + 1 << "/" << o.epochs << " loss " << rec.loss << " -> "
          << o.checkpoint << "\n";
    }
    const bool stop_now = stop_agreed || (o.stop_after_iterations >= 0 &&
                                          result.iterations >= o.stop_after_iterations && !last);
    if (stop_now) {
      if (!last && (epoch + 1) % o.checkpoint_every != 0) write_checkpoint(false);
      log << "interrupted after epoch " << epoch + 1 << "; checkpoint " << o.checkpoint
          << " (resume with --resume)\n";
      result.interrupted = true;
      result.seconds = seconds_since(t_start);
      result.allreduce_seconds = reducer.seconds();
      result.loop_seconds = seconds_since(run_start);
      result.loop_iterations = result.iterations - first_iteration;
      return result;
    }
  }
  result.finished = true;
  result.seconds = seconds_since(t_start);
  result.allreduce_seconds = reducer.seconds();
  result.loop_seconds = seconds_since(run_start);
  result.loop_iterations = result.iterations - first_iteration;
  return result;
}

}  // namespace moca::model
