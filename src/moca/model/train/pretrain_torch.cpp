// The torch side of pretrain.hpp: the pre-training loop (see pretrain.hpp for the contract).
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/file_lock.hpp"
#include "moca/common/memory.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/data/augment.hpp"
#include "moca/masking/make_policy.hpp"
#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/detail/tensor_adapter.hpp"
#include "moca/model/dist/detail/distributed_torch.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/kernels/detail/adamw.hpp"
#include "moca/model/nn/mask_indices.hpp"
#include "moca/model/nn/moca_model.hpp"
#include "moca/model/nn/model_memory.hpp"
#include "moca/model/train/detail/cuda_step.hpp"
#include "moca/model/train/detail/progress.hpp"
#include "moca/model/train/pretrain.hpp"
#include "moca/model/train/schedule.hpp"

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

/// One row block of a sharded step: its inputs, its weight in the whole-batch loss, and what
/// its thread computed.
struct Shard {
  torch::Tensor x;
  MaskTensors masks;
  double weight = 0.0;
  double loss = 0.0;
  std::vector<torch::Tensor> grads;
  std::exception_ptr error;
};

/// Cuts the batch into `shards` row blocks weighted by their share of the whole-batch loss.
std::vector<Shard> make_shards(const torch::Tensor& x, const MaskTensors& masks, int shards,
                               bool masked_only) {
  const int64_t batch = x.size(0);
  const double total_weight =
      masked_only ? masks.mask.sum().item<double>() : static_cast<double>(batch);
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
  return parts;
}

/// Replaces every parameter's gradient by the sum of the blocks' (undefined where no block
/// reached it, so the optimiser skips it).
void sum_shard_gradients(std::vector<Shard>& parts, std::vector<torch::Tensor>& params) {
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
}

}  // namespace

double mae_loss_and_gradients(MocaMae& model, const torch::Tensor& x, const MaskTensors& masks,
                              int shards, Precision precision) {
  const int64_t batch = x.size(0);
  if (shards < 1 || shards > batch) {
    throw_invalid("mae_loss_and_gradients()", "shards (" + std::to_string(shards) +
                                                  ") must be in [1, batch size " +
                                                  std::to_string(batch) + "]");
  }
  const torch::Device device = x.device();
  std::vector<torch::Tensor> params = detail::trainable_parameters(*model);
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
  std::vector<Shard> parts =
      make_shards(x, masks, shards, model->options().loss_scope == LossScope::kMasked);
  auto run = [&](Shard& part) {
    try {
      // Grad mode and autocast are thread-local.
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
  // One OpenMP team, one shard per thread. Inside the parallel region LibTorch's parallel_for
  // and OpenBLAS run each shard's work on its own thread (they check omp_in_parallel), the team's
  // threads persist from step to step, and nothing calls at::set_num_threads, which rebuilds
  // LibTorch's pthreadpool on every call (per-step std::threads needed three such rebuilds, and
  // the rebuilt pools' spinning workers took CPU from the shards).
#pragma omp parallel for num_threads(shards) schedule(static, 1)
  for (int s = 0; s < shards; ++s) run(parts[static_cast<size_t>(s)]);
  for (const auto& part : parts) {
    if (part.error) std::rethrow_exception(part.error);
  }
  double loss = 0.0;
  for (const auto& part : parts) loss += part.weight * part.loss;
  sum_shard_gradients(parts, params);
  return loss;
}

namespace {

/// What a run fixes before its first step: options, data, device, ranks, architecture, policy,
/// the JSON that checkpoints record and resume checks compare.
struct PretrainRun {
  PretrainRun(const PretrainOptions& options, const data::WindowSource& source,
              RunContext& context);

  const PretrainOptions& o;
  const data::WindowSource& source;
  /// The source's metadata: no windows (meta.size() is 0; source.size() is n).
  const data::Windows& meta;
  bool in_memory = true;  ///< the source holds its windows in memory
  int shuffle_block = 0;  ///< the block shuffle's block (0: the full shuffle)
  /// Whether this rank reads the whole global batch (one rank, or a policy that reads window
  /// values) or only its slice.
  bool reads_whole_batch = true;
  torch::Device device{torch::kCPU};
  Collective& comm;
  int rank = 0, world = 1;
  bool root = true;
  std::ostream* log = nullptr;  ///< the context's log: the program's on rank 0, nowhere elsewhere
  std::unique_ptr<FileLock> lock;
  MocaOptions mo;
  std::unique_ptr<masking::MaskPolicy> policy;
  int local_batch = 0;
  int shards = 1;
  long ipe = 0;  ///< iterations per epoch
  nlohmann::json training, data_json;
};

/// The pilot windows of a data-dependent policy when the source is on disk: at most this many
/// of the first windows are read (AdaptiveOptions::pilot, 256 by default, takes the first ones).
constexpr int kMaxStreamPilot = 4096;

PretrainRun::PretrainRun(const PretrainOptions& options, const data::WindowSource& src,
                         RunContext& run_context)
    : o(options), source(src), meta(src.meta()), comm(run_context.collective()) {
  const int n = src.size();
  in_memory = src.in_memory() != nullptr;
  shuffle_block = o.effective_shuffle_block(in_memory);
  device = detail::setup_runtime(o.runtime);
  // Data-parallel when the context's collective is a world of several ranks (run_context.hpp).
  check_global_batch("pretrain()", "PretrainOptions::batch_size", o.batch_size, comm.world_size());
  if (device.is_cuda() && comm.world_size() > 1) {
    device = detail::local_cuda_device(comm.local_rank());
  }
  o.dist.validate();
  run_context.check_fits(o.dist, device.is_cuda(), "pretrain()");
  rank = comm.rank();
  world = comm.world_size();
  root = comm.is_root();
  log = &run_context.log();
  // One writer per checkpoint (and its metrics log) for the whole run: a second run with the
  // same checkpoint refuses to start instead of overwriting this one's files.
  if (root) {
    lock =
        std::make_unique<FileLock>(lock_path_for_file(o.checkpoint), "checkpoint " + o.checkpoint);
  }
  mo = preset(o.preset, meta.channels, meta.length, o.patch_length);
  mo.layout = o.layout;
  mo.pos_embed = o.pos_embed;
  mo.loss_scope = o.loss;
  mo.norm_pix_loss = o.norm_pix_loss;
  mo.validate();
  local_batch = o.batch_size / world;
  // A lower bound (no visible token counted), so a refusal is never wrong; on CUDA against the
  // device's free memory, before the first allocation can fail inside a step.
  const double activations = mae_step_activation_bytes(mo, local_batch, 0);
  const std::string what = "pre-training on the " + std::string(device.is_cuda() ? "GPU" : "CPU") +
                           " with batch " + std::to_string(local_batch) + " (preset " + o.preset +
                           "; activations, a lower bound)";
  if (!device.is_cuda()) {
    require_memory(activations, what, "use a smaller PretrainOptions::batch_size");
  } else {
    require_memory(activations, detail::cuda_memory_info().first, what,
                   "use a smaller PretrainOptions::batch_size");
  }
  const masking::Grid grid = masking::make_grid(meta.channels, meta.length, o.patch_length);
  masking::PolicyContext context;
  data::Windows pilot;
  if (in_memory) {
    context.pilot = src.in_memory();
  } else {
    std::vector<int> first(static_cast<size_t>(std::min(n, kMaxStreamPilot)));
    std::iota(first.begin(), first.end(), 0);
    data::SubsetSource head(src, first);
    pilot = data::materialize(head);
    context.pilot = &pilot;
  }
  policy = masking::make_policy(o.policy, grid, context);
  reads_whole_batch = comm.world_size() == 1 || policy->reads_window();
  shards = o.runtime.effective_batch_shards(device.is_cuda(), local_batch);
  ipe = n / o.batch_size;
  training = o.training_json();
  // Recorded when it is not the full shuffle, so that in-memory runs keep their records.
  if (shuffle_block != 0)
    training["shuffle"] = {{"block", shuffle_block}, {"pool", o.shuffle_pool}};
  data_json = {{"n", n},
               {"channels", meta.channels},
               {"length", meta.length},
               {"sample_rate_hz", meta.sample_rate_hz},
               {"modalities", nlohmann::json::object()},
               {"description", meta.description},
               {"fingerprint", src.identity()}};
  for (const auto& g : meta.modalities) data_json["modalities"][g.name] = g.channels;
}

/// What training changes: model, optimiser, counters. The random state is a function of
/// (seed, iteration) (pretrain.hpp), so the counters are the whole of it.
struct TrainState {
  MocaMae model{nullptr};
  std::unique_ptr<torch::optim::AdamW> optimizer;
  long iteration = 0;                ///< global iterations done
  std::vector<EpochRecord> history;  ///< completed epochs
  double partial_sum = 0.0;          ///< loss sum of the epoch in progress (kept across a resume)
  long partial_count = 0;
  double partial_seconds = 0.0;
  std::uint64_t order_seed = 0;  ///< batch order of epoch e: derive_seed(order_seed, e)
  std::uint64_t step_seed = 0;   ///< masks, augmentation of iteration t: derive_seed(step_seed, t)
  /// The CUDA step (one rank on CUDA, where the build has it): fused AdamW, graphs, losses read
  /// every kLossReadEvery steps.
  std::unique_ptr<detail::CudaStep> cuda;

  int epoch(long ipe) const { return static_cast<int>(iteration / ipe); }
};

/// Fresh weights from torch::manual_seed(seed), the optimiser, iteration 0.
TrainState initial_state(const PretrainRun& run) {
  TrainState s;
  torch::manual_seed(run.o.seed);
  s.model = MocaMae(run.mo);
  s.model->to(run.device);
  s.model->train();
  s.optimizer = make_pretrain_optimizer(s.model, run.o);
  s.order_seed = derive_seed(run.o.seed, 1);
  s.step_seed = derive_seed(run.o.seed, 2);
  return s;
}

/// Loads the model, optimiser and counters of `run.o.checkpoint` into `s`, after checking that
/// the checkpoint was made with the same training options and data.
void resume_from(TrainState& s, const PretrainRun& run) {
  const std::string& path = run.o.checkpoint;
  auto ck = detail::open_checkpoint(path);
  const auto& meta = ck.info.meta;
  if (ck.info.kind != "mae" || !meta.contains("training")) {
    throw_invalid("pretrain()", "checkpoint " + path + " is not a pre-training checkpoint");
  }
  const std::string diff = json_diff(run.training, meta.at("training"));
  if (!diff.empty()) {
    throw_invalid("pretrain()",
                  "cannot resume " + path + " with different training options: " + diff);
  }
  // Checkpoints written before the data metadata gained the rate, the modality groups and the
  // fingerprint (data::fingerprint: the windows' numbers, labels and subjects) lack those keys:
  // compare what they record. With a fingerprint, changed windows of the same shape are refused.
  nlohmann::json data_want = run.data_json;
  for (const char* key : {"sample_rate_hz", "modalities", "fingerprint"}) {
    if (!meta.at("data").contains(key)) data_want.erase(key);
  }
  const std::string ddiff = json_diff(data_want, meta.at("data"));
  if (!ddiff.empty()) {
    throw_invalid("pretrain()", "cannot resume " + path + " on different data: " + ddiff);
  }
  detail::load_module(ck, *s.model);
  detail::load_optimizer(ck, *s.optimizer);
  s.iteration = meta.at("iteration").get<long>();
  for (const auto& r : meta.at("history")) s.history.push_back(epoch_record_from_json(r));
  s.partial_sum = meta.at("partial_loss_sum").get<double>();
  s.partial_count = meta.at("partial_count").get<long>();
  s.partial_seconds = meta.at("partial_seconds").get<double>();
  *run.log << "resuming " << path << " at iteration " << s.iteration << " (epoch "
           << s.iteration / run.ipe + 1 << ")\n";
}

/// Writes the checkpoint (model, optimiser, counters, history) and the metrics log; rank 0 only.
void save_checkpoint(const PretrainRun& run, const TrainState& s, bool finished) {
  if (!run.root) return;
  nlohmann::json hist = nlohmann::json::array();
  for (const auto& r : s.history) hist.push_back(to_json(r));
  nlohmann::json meta;
  meta["kind"] = "mae";
  meta["model"] = to_json(run.mo);
  meta["channel_names"] = channel_names_of(run.meta);
  meta["class_names"] = run.meta.class_names;
  meta["training"] = run.training;
  meta["policy_spec"] = run.policy->spec();
  meta["data"] = run.data_json;
  meta["iteration"] = s.iteration;
  meta["windows_seen"] = s.iteration * static_cast<long>(run.o.batch_size);
  meta["world_size"] = run.world;
  meta["iterations_per_epoch"] = run.ipe;
  meta["partial_loss_sum"] = s.partial_sum;
  meta["partial_count"] = s.partial_count;
  meta["partial_seconds"] = s.partial_seconds;
  meta["finished"] = finished;
  meta["history"] = hist;
  detail::save_checkpoint(run.o.checkpoint, *s.model, s.optimizer.get(), meta);
}

void write_metrics(const PretrainRun& run, const TrainState& s) {
  std::ostringstream os;
  for (const auto& r : s.history) os << to_json(r).dump() << "\n";
  if (run.root) write_output_text(run.o.metrics_path(), os.str());
}

/// How gradients, the loss and stop votes cross ranks: the bucketed reducer.
struct GradientSync {
  GradientSync(const PretrainRun& run, const TrainState& s)
      : reducer(run.comm, detail::trainable_parameters(*s.model)) {}
  detail::GradientReducer reducer;
};

/// The loop's buffers and clocks (one per pretrain() call).
struct Loop {
  Loop(const PretrainRun& run, long first)
      : batch(run.reads_whole_batch ? run.o.batch_size : run.local_batch,
              static_cast<Eigen::Index>(run.meta.channels) * run.meta.length),
        next(batch.rows(), batch.cols()),
        partner(1, batch.cols()),
        masks(static_cast<size_t>(run.o.batch_size)),
        rows(static_cast<size_t>(batch.rows())),
        next_rows(rows.size()),
        bar(std::cerr, run.o.progress && run.root, ProgressBar::stderr_is_terminal()),
        total(run.ipe * run.o.epochs),
        first_iteration(first) {}
  data::RowMatrixXf batch;    ///< the windows this rank holds of the current global batch
  data::RowMatrixXf next;     ///< the prefetch thread's batch (a source on disk)
  data::RowMatrixXf partner;  ///< one splice partner x2
  std::vector<masking::Mask> masks;
  std::vector<int> rows, next_rows;
  std::future<double> pending;  ///< the read of `next`: its seconds
  long pending_j = -1;          ///< the batch `pending` reads
  long hinted_to = 0;           ///< batches before this one of the epoch were hinted (will_need)
  double read_seconds = 0.0;    ///< reads this call (prefetch thread included)
  double read_wait_seconds = 0.0;
  ProgressBar bar;
  long total;
  long first_iteration;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool stop_agreed = false;  ///< a stop request on any rank, agreed at the last step
};

/// Steps between reads of the CUDA step's summed loss (each read waits for the device).
constexpr long kLossReadEvery = 50;

/// The first global-batch position this rank holds in Loop::batch (0 when it reads the whole
/// batch, else its slice's first).
int first_held(const PretrainRun& run) {
  return run.reads_whole_batch ? 0 : run.rank * run.local_batch;
}

/// Reads the windows this rank holds of batch j of `order` into `out` (rows: their source
/// rows); returns the seconds it took.
double read_batch(const PretrainRun& run, const std::vector<int>& order, long j,
                  data::RowMatrixXf& out, std::vector<int>& rows) {
  const auto t0 = std::chrono::steady_clock::now();
  const long first = j * run.o.batch_size + first_held(run);
  for (size_t b = 0; b < rows.size(); ++b) rows[b] = order[static_cast<size_t>(first) + b];
  run.source.read(rows.data(), static_cast<int>(rows.size()), out.data());
  return seconds_since(t0);
}

/// Batches the prefetch thread announces ahead of the one it reads (WindowSource::will_need):
/// from disk, the scattered windows of a block-shuffled batch are then read by the kernel
/// together instead of one page fault at a time (docs/benchmarks.md: cold reads).
constexpr long kHintAhead = 32;

/// Announces this rank's windows of batches [max(hinted_to, j), j + kHintAhead) of `order`.
void hint_ahead(const PretrainRun& run, Loop& loop, const std::vector<int>& order, long j) {
  const long to = std::min(run.ipe, j + kHintAhead);
  std::vector<int> rows;
  for (long b = std::max(loop.hinted_to, j); b < to; ++b) {
    const long first = b * run.o.batch_size + first_held(run);
    for (size_t k = 0; k < loop.rows.size(); ++k)
      rows.push_back(order[static_cast<size_t>(first) + k]);
  }
  if (!rows.empty()) run.source.will_need(rows.data(), static_cast<int>(rows.size()));
  loop.hinted_to = std::max(loop.hinted_to, to);
}

/// Makes Loop::batch hold batch j: read now (windows in memory), or taken from the prefetch
/// thread, which then starts on batch j + 1 (windows on disk).
void fetch_batch(const PretrainRun& run, Loop& loop, const std::vector<int>& order, long j) {
  if (run.in_memory) {
    const double t = read_batch(run, order, j, loop.batch, loop.rows);
    loop.read_seconds += t;
    loop.read_wait_seconds += t;
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (loop.pending_j != j) {  // the first batch of a call or an epoch: nothing prefetched
    if (loop.pending.valid()) loop.pending.get();
    loop.hinted_to = j + 1;  // a new order: nothing of it announced yet
    loop.read_seconds += read_batch(run, order, j, loop.next, loop.next_rows);
  } else {
    loop.read_seconds += loop.pending.get();
  }
  loop.pending_j = -1;
  std::swap(loop.batch, loop.next);
  std::swap(loop.rows, loop.next_rows);
  loop.read_wait_seconds += seconds_since(t0);
  if (j + 1 < run.ipe) {
    loop.pending_j = j + 1;
    loop.pending = std::async(std::launch::async, [&run, &loop, &order, j] {
      hint_ahead(run, loop, order, j + 1);
      return read_batch(run, order, j + 1, loop.next, loop.next_rows);
    });
  }
}

/// Waits for a prefetch in flight (its errors are dropped: the batch it read is not used).
void drop_prefetch(Loop& loop) {
  if (!loop.pending.valid()) return;
  try {
    loop.pending.get();
  } catch (...) {
  }
  loop.pending_j = -1;
}

/// One optimiser step on batch j of `epoch` (global batch, this rank's slice), whose windows
/// Loop::batch holds (fetch_batch); returns the global batch's loss, or NaN through the CUDA
/// step, whose losses are read later (read_cuda_losses). Throws std::runtime_error for a
/// non-finite loss.
double train_step(const PretrainRun& run, TrainState& s, GradientSync& sync, Loop& loop, int epoch,
                  double lr, const std::atomic<bool>* stop) {
  const PretrainOptions& o = run.o;
  const int C = run.meta.channels, L = run.meta.length, B = o.batch_size;
  const int held0 = first_held(run), held = static_cast<int>(loop.batch.rows());
  Rng rng(derive_seed(s.step_seed, static_cast<std::uint64_t>(s.iteration)));
  // Algorithm 1 splices: drawn for the whole global batch, applied to the rows held here.
  if (o.augment) {
    const auto draws =
        data::draw_batch_splices(B, run.source.size(), L, rng, o.augment_probability);
    for (int b = 0; b < held; ++b) {
      const data::BatchSplice& d = draws[static_cast<size_t>(held0 + b)];
      if (!d.spliced) continue;
      run.source.read(&d.second, 1, loop.partner.data());
      Eigen::Map<data::RowMatrixXf> x1(loop.batch.row(b).data(), C, L);
      Eigen::Map<const data::RowMatrixXf> x2(loop.partner.data(), C, L);
      data::splice(x1, x2, d.draw);
    }
  }
  // The masks of the whole global batch, in order; a row not held here is drawn without its
  // window (the policy does not read it: reads_whole_batch is false only then).
  const data::RowMatrixXf none(0, 0);
  for (int b = 0; b < B; ++b) {
    if (b >= held0 && b < held0 + held) {
      Eigen::Map<const data::RowMatrixXf> window(loop.batch.row(b - held0).data(), C, L);
      loop.masks[static_cast<size_t>(b)] = run.policy->sample(rng, window);
    } else {
      loop.masks[static_cast<size_t>(b)] = run.policy->sample(rng, none);
    }
  }
  set_lr(*s.optimizer, lr);
  if (s.cuda) {
    s.cuda->step(loop.batch.data(), mask_indices(loop.masks, run.mo.layout, C, run.mo.patches()),
                 lr);
    loop.stop_agreed = stop != nullptr && stop->load();
    ++s.iteration;
    return std::numeric_limits<double>::quiet_NaN();
  }
  // The whole global batch's masks were drawn above; this rank takes its slice.
  auto mt = to_tensors(mask_indices(loop.masks, run.mo.layout, C, run.mo.patches()), run.device);
  torch::Tensor x;
  double weight = 1.0;
  if (run.world == 1) {
    x = detail::batch_tensor(loop.batch, C, L, run.device);
  } else {
    const int b0 = run.rank * run.local_batch, b1 = b0 + run.local_batch;
    if (run.reads_whole_batch) {
      const data::RowMatrixXf mine = loop.batch.middleRows(b0, run.local_batch);
      x = detail::batch_tensor(mine, C, L, run.device);
    } else {
      x = detail::batch_tensor(loop.batch, C, L, run.device);
    }
    weight = run.mo.loss_scope == LossScope::kMasked
                 ? mt.mask.slice(0, b0, b1).sum().item<double>() / mt.mask.sum().item<double>()
                 : static_cast<double>(run.local_batch) / B;
    mt = {mt.ids_keep.slice(0, b0, b1), mt.ids_restore.slice(0, b0, b1), mt.mask.slice(0, b0, b1)};
  }
  double loss = mae_loss_and_gradients(s.model, x, mt, run.shards, o.runtime.precision);
  const bool stop_vote = stop != nullptr && stop->load();
  if (run.world == 1) {
    loop.stop_agreed = stop_vote;
  } else {
    const std::string what = std::to_string(s.iteration + 1);
    const auto sums = sync.reducer.reduce(weight, {weight * loss, stop_vote ? 1.0 : 0.0},
                                          "all-reduce of the gradients at iteration " + what);
    loss = sums[0];
    loop.stop_agreed = sums[1] > 0.0;
  }
  if (!std::isfinite(loss)) {
    throw std::runtime_error("pretrain(): non-finite loss at iteration " +
                             std::to_string(s.iteration) + " (epoch " + std::to_string(epoch + 1) +
                             "); lower the learning rate or check the data");
  }
  detail::adamw_step(*s.optimizer);
  ++s.iteration;
  return loss;
}

/// Adds the CUDA step's losses since the last read to the epoch's sum; throws
/// std::runtime_error when one was not finite (named by the iterations they came from).
void read_cuda_losses(TrainState& s, int epoch) {
  const auto [sum, n] = s.cuda->take_losses();
  if (n == 0) return;
  if (!std::isfinite(sum)) {
    throw std::runtime_error(
        "pretrain(): non-finite loss between iterations " + std::to_string(s.iteration - n) +
        " and " + std::to_string(s.iteration - 1) + " (epoch " + std::to_string(epoch + 1) +
        "); lower the learning rate or check "
        "the data");
  }
  s.partial_sum += sum;
  s.partial_count += n;
}

/// True when the run should stop after the step just done: a stop request (agreed over ranks)
/// or stop_after_iterations reached.
bool stop_due(const PretrainOptions& o, const TrainState& s, const Loop& loop) {
  return loop.stop_agreed ||
         (o.stop_after_iterations >= 0 && s.iteration >= o.stop_after_iterations);
}

/// Runs `epoch` from s.iteration to its end and appends its record to s.history; returns false
/// when a stop came before the epoch's last step (s then holds the partial epoch).
bool run_epoch(const PretrainRun& run, TrainState& s, GradientSync& sync, Loop& loop, int epoch,
               const LrSchedule& schedule, const std::atomic<bool>* stop) {
  const PretrainOptions& o = run.o;
  const long ipe = run.ipe;
  run.source.check_unchanged();
  const std::vector<int> order =
      data::block_shuffle_order(run.source.storage(), run.shuffle_block, run.o.shuffle_pool,
                                derive_seed(s.order_seed, static_cast<std::uint64_t>(epoch)));
  // The prefetch thread reads `order`: it is done before this function returns or throws.
  struct PrefetchGuard {
    Loop& loop;
    ~PrefetchGuard() { drop_prefetch(loop); }
  } guard{loop};
  const auto epoch_start = std::chrono::steady_clock::now();
  const std::int64_t read_at_start = run.source.counters().windows;
  const double read_s_at_start = loop.read_seconds, wait_at_start = loop.read_wait_seconds;
  const double B = o.batch_size;
  auto eta = [&](double elapsed) {
    return elapsed / static_cast<double>(s.iteration - loop.first_iteration) *
           static_cast<double>(loop.total - s.iteration);
  };
  double lr = 0.0;
  for (long j = s.iteration - static_cast<long>(epoch) * ipe; j < ipe; ++j) {
    lr = schedule.at(epoch + static_cast<double>(j) / static_cast<double>(ipe));
    fetch_batch(run, loop, order, j);
    const double loss = train_step(run, s, sync, loop, epoch, lr, stop);
    if (!s.cuda) {
      s.partial_sum += loss;
      ++s.partial_count;
    } else if ((j + 1) % kLossReadEvery == 0 || j + 1 == ipe || stop_due(o, s, loop)) {
      read_cuda_losses(s, epoch);
    } else {
      continue;  // the progress bar moves when the losses are read
    }
    const double elapsed = seconds_since(loop.start);
    const double sps = static_cast<double>(s.iteration - loop.first_iteration) * B / elapsed;
    if (const double dt = loop.read_seconds - read_s_at_start; !run.in_memory && dt > 0) {
      loop.bar.set_read_rate(static_cast<double>(run.source.counters().windows - read_at_start) /
                             dt);
    }
    loop.bar.update(epoch, o.epochs, j + 1, ipe, s.partial_sum / s.partial_count, sps,
                    eta(elapsed));
    if (j + 1 < ipe && stop_due(o, s, loop)) {
      s.partial_seconds += seconds_since(epoch_start);
      return false;
    }
  }
  EpochRecord rec;
  rec.epoch = epoch;
  rec.iteration = s.iteration;
  rec.loss = s.partial_sum / static_cast<double>(s.partial_count);
  rec.lr = lr;
  rec.seconds = s.partial_seconds + seconds_since(epoch_start);
  rec.samples_per_s = static_cast<double>(s.partial_count) * B / rec.seconds;
  rec.read_windows = static_cast<long>(run.source.counters().windows - read_at_start);
  rec.read_seconds = loop.read_seconds - read_s_at_start;
  rec.read_wait_seconds = loop.read_wait_seconds - wait_at_start;
  s.history.push_back(rec);
  s.partial_sum = 0.0;
  s.partial_count = 0;
  s.partial_seconds = 0.0;
  loop.bar.end_epoch(epoch, o.epochs, ipe, rec.loss, rec.samples_per_s,
                     eta(seconds_since(loop.start)));
  return true;
}

}  // namespace

PretrainResult pretrain(const PretrainOptions& o, const data::Windows& train, std::ostream& log,
                        const std::atomic<bool>* stop) {
  RunContext local(log);
  return pretrain(o, train, local, stop);
}

PretrainResult pretrain(const PretrainOptions& o, const data::WindowSource& train,
                        std::ostream& log, const std::atomic<bool>* stop) {
  RunContext local(log);
  return pretrain(o, train, local, stop);
}

PretrainResult pretrain(const PretrainOptions& o, const data::Windows& train, RunContext& context,
                        const std::atomic<bool>* stop) {
  train.validate("pretrain(): training windows");
  const data::InMemorySource source(train);
  return pretrain(o, source, context, stop);
}

PretrainResult pretrain(const PretrainOptions& o, const data::WindowSource& train,
                        RunContext& context, const std::atomic<bool>* stop) {
  o.validate();
  if (train.size() < o.batch_size) {
    throw_invalid("pretrain()", "PretrainOptions::batch_size (" + std::to_string(o.batch_size) +
                                    ") exceeds the number of training windows (" +
                                    std::to_string(train.size()) +
                                    "): a smaller batch, or more training windows");
  }
  // (By value: the field's default is "not set".)
  if (o.effective_shuffle_block(train.in_memory() != nullptr) == 0 &&
      o.shuffle_pool != PretrainOptions{}.shuffle_pool) {
    throw_invalid("pretrain()", "PretrainOptions::shuffle_pool (" + std::to_string(o.shuffle_pool) +
                                    ") takes no effect: the full shuffle (PretrainOptions::"
                                    "shuffle_block 0, windows in memory) mixes every window");
  }
  const auto t_start = std::chrono::steady_clock::now();
  PretrainRun run(o, train, context);
  const data::ReadCounters read_start = train.counters();  // after the pilot
  std::ostream& log = *run.log;
  TrainState s = initial_state(run);
  if (o.resume) resume_from(s, run);
  // Every rank must run the same numbers on the same data, from the same state.
  run.comm.check_same(
      "options hash (training options, model, data, resume point)",
      options_digest(run.training.dump() + to_json(run.mo).dump() + run.data_json.dump() +
                     run.policy->spec() + std::to_string(s.iteration)));
  detail::broadcast_module(run.comm, *s.model);
  GradientSync sync(run, s);
  if (run.device.is_cuda() && run.world == 1 && detail::cuda_step_compiled()) {
    s.cuda = std::make_unique<detail::CudaStep>(s.model, *s.optimizer, o.runtime.precision,
                                                o.runtime.cuda_graphs);
    log << "CUDA step: fused AdamW" << (o.runtime.cuda_graphs ? ", CUDA graphs" : "")
        << (o.runtime.tf32 && o.runtime.precision == Precision::kFp32 ? ", TF32 products" : "")
        << "\n";
  }
  LrSchedule schedule{o.lr, o.min_lr, o.effective_warmup_epochs(), static_cast<double>(o.epochs)};
  schedule.validate();
  Loop loop(run, s.iteration);

  PretrainResult result;
  result.model = run.mo;
  result.device = run.device.is_cuda() ? Device::kCuda : Device::kCpu;
  result.threads = o.runtime.effective_threads();
  result.rank = run.rank;
  result.world_size = run.world;
  result.backend = run.comm.backend();
  result.iterations_per_epoch = run.ipe;
  // --stop-after N on a run that is already at iteration N (a resumed one, or N = 0): stop at
  // once, before any step. A resumed state is the checkpoint on disk, left as it is.
  if (o.stop_after_iterations >= 0 && s.iteration >= o.stop_after_iterations &&
      s.epoch(run.ipe) < o.epochs) {
    result.interrupted = true;
    if (s.iteration == 0) save_checkpoint(run, s, false);
    log << "interrupted at iteration " << s.iteration << " (--stop-after "
        << o.stop_after_iterations << "); checkpoint " << o.checkpoint
        << " (resume with --resume)\n";
  }
  for (int epoch = s.epoch(run.ipe); epoch < o.epochs && !result.interrupted; ++epoch) {
    const bool completed = run_epoch(run, s, sync, loop, epoch, schedule, stop);
    const bool last = epoch + 1 == o.epochs;
    bool saved = false;
    if (completed) {
      write_metrics(run, s);
      if (last || (epoch + 1) % o.checkpoint_every == 0) {
        save_checkpoint(run, s, last);
        saved = true;
        log << "epoch " << epoch + 1 << "/" << o.epochs << " loss " << s.history.back().loss
            << " -> " << o.checkpoint << "\n";
      }
    }
    // The one stop rule: mid-epoch (run_epoch returned early) or after a completed epoch that
    // is not the last.
    result.interrupted = !completed || (!last && stop_due(o, s, loop));
    if (!result.interrupted) continue;
    if (!saved) save_checkpoint(run, s, false);
    if (completed) {
      log << "interrupted after epoch " << epoch + 1;
    } else {
      if (o.progress) std::cerr << "\n";
      log << "interrupted at iteration " << s.iteration;
    }
    log << "; checkpoint " << o.checkpoint << " (resume with --resume)\n";
  }
  if (s.cuda && !s.cuda->note().empty()) log << "note: " << s.cuda->note() << "\n";
  result.finished = !result.interrupted;
  result.history = s.history;
  result.iterations = s.iteration;
  result.checkpoint = o.checkpoint;
  result.seconds = seconds_since(t_start);
  result.allreduce_seconds = sync.reducer.seconds();
  result.loop_seconds = seconds_since(loop.start);
  result.loop_iterations = s.iteration - loop.first_iteration;
  const data::ReadCounters read_end = train.counters();
  result.windows_read = static_cast<long>(read_end.windows - read_start.windows);
  result.bytes_read = read_end.bytes - read_start.bytes;
  result.read_seconds = loop.read_seconds;
  result.read_wait_seconds = loop.read_wait_seconds;
  result.storage = train.storage_text();
  return result;
}

}  // namespace moca::model
