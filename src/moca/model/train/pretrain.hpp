#pragma once
/// \file pretrain.hpp
/// MoCA pre-training: masked reconstruction with any masking policy (torch-free interface).
///
/// Optimisation as in the paper's Table "Pre-training settings" and the released code: AdamW
/// (betas 0.9/0.95, eps 1e-8), weight decay on every parameter of 2+ dimensions that is not a
/// bias (cls and mask tokens included, as upstream), per-iteration linear warm-up and cosine decay
/// (LrSchedule), shuffled mini-batches without replacement, the last incomplete batch dropped.
///
/// Data: a data::WindowSource, held in memory or read from disk a batch at a time
/// (window_source.hpp). Each epoch's order is data::block_shuffle_order over the source's storage
/// with shuffle_block and shuffle_pool; block 0 is the full shuffle, the in-memory default, so a
/// set in memory keeps the numbers it had before sources existed. A source read from disk is
/// read by a prefetch thread one batch ahead of the step, and each rank reads only its own
/// slice of every global batch (and the x2 windows of its own rows' splices), unless the
/// masking policy reads window values (a user's function), when it reads the whole batch.
///
/// Determinism: every random choice of global iteration t (masks, on-the-fly augmentation) is
/// drawn from Rng(derive_seed(derive_seed(seed, 2), t)), and the batch order of epoch e from
/// Rng(derive_seed(derive_seed(seed, 1), e)); the weights start from torch::manual_seed(seed).
/// So (seed, iteration) is the whole random state, and a run resumed from a checkpoint repeats
/// the uninterrupted run bit for bit on CPU with the same thread count.
///
/// Data-parallel (distributed.hpp): started by `moca launch`, torchrun or srun, every rank trains
/// a replica on its slice of each global batch of `batch_size` windows (which must be a multiple
/// of the world size); rank 0's initial weights are broadcast; each step's gradients are summed
/// over ranks weighted by each rank's share of the global loss, so N ranks follow the 1-rank run
/// to fp32 reduction order. Masks and augmentation are drawn for the whole global batch as in
/// one process. Rank 0 alone writes the log, metrics and checkpoints; the checkpoint stores the
/// global iteration (windows seen = iteration x batch_size), so any world size can resume it.
/// A stop request (signal) on any rank stops every rank at the same iteration.
#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "moca/common/option_schema.hpp"
#include "moca/data/window_source.hpp"
#include "moca/data/windows.hpp"
#include "moca/model/dist/distributed.hpp"
#include "moca/model/dist/run_context.hpp"
#include "moca/model/model_options.hpp"
#include "moca/model/runtime.hpp"

namespace moca::model {

/// Options of pretrain(). Defaults: `tiny`, cross masking at 0.75, the paper's optimiser.
struct PretrainOptions {
  std::string preset = "tiny";                       ///< paper-base | tiny | cpu-small
  int patch_length = 20;                             ///< Lp (divides the window length)
  TokenLayout layout = TokenLayout::kModality;       ///< --layout modality | stacked
  PosEmbedKind pos_embed = PosEmbedKind::kSinCos2d;  ///< --pos-embed 2d (paper) | 1d (released)
  LossScope loss = LossScope::kAll;                  ///< --loss all (paper) | masked
  bool norm_pix_loss = false;                        ///< per-patch normalised targets
  std::string policy = "cross:ratio=0.75";           ///< masking policy spec (masking::make_policy)
  int epochs = 100;                                  ///< >= 1
  int batch_size = 50;                               ///< >= 1 and <= number of training windows
  double lr = 5e-4;                                  ///< peak (absolute) learning rate, > 0
  double min_lr = 1e-5;  ///< cosine floor, in [0, lr] (released code: 1e-5)
  /// Linear warm-up in epochs, in [0, epochs) when set. Unset: kDefaultWarmupEpochs, capped at
  /// epochs - 1 (effective_warmup_epochs(); warmup_note() says so).
  std::optional<double> warmup_epochs;
  double weight_decay = 0.05;  ///< >= 0
  double beta1 = 0.9;          ///< in [0, 1)
  double beta2 = 0.95;         ///< in [0, 1)
  /// Windows per block of the block shuffle (data::block_shuffle_order); 0 = auto: the full
  /// shuffle for windows in memory, kStreamBlock for windows read from disk.
  int shuffle_block = 0;
  int shuffle_pool = 1024;           ///< blocks whose windows are shuffled together, >= 1
  bool augment = false;              ///< on-the-fly Algorithm 1 splices (data::augment_batch)
  double augment_probability = 1.0;  ///< per window, in [0, 1], when augment is on
  std::string checkpoint = "moca_pretrain.pt";  ///< checkpoint path (written atomically)
  std::string metrics;        ///< JSON-lines log; empty = checkpoint + ".metrics.jsonl"
  int checkpoint_every = 10;  ///< epochs between checkpoints (>= 1); also at the end
  bool resume = false;        ///< continue from `checkpoint`
  std::uint64_t seed = 0;     ///< weights, batch order, masks, augmentation
  RuntimeOptions runtime;     ///< device and threads
  DistOptions dist;           ///< data-parallel backend, timeout, gradient sync (several ranks)
  bool progress = true;       ///< progress bar on stderr
  /// Stop (with a checkpoint) once this many iterations are done in total; -1 = no limit.
  /// Meant for tests and for splitting a run; the run can be resumed.
  long stop_after_iterations = -1;

  static constexpr double kDefaultWarmupEpochs = 10.0;
  /// The block of the auto shuffle for windows read from disk.
  static constexpr int kStreamBlock = 64;
  /// The block a run on `source` uses (shuffle_block, or auto's choice); 0 = the full shuffle.
  int effective_shuffle_block(bool in_memory) const {
    return shuffle_block != 0 ? shuffle_block : in_memory ? 0 : kStreamBlock;
  }

  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
  /// The warm-up the run uses: warmup_epochs when set, else the default capped at epochs - 1.
  double effective_warmup_epochs() const;
  /// Non-empty when the default warm-up yielded to `epochs`: the note to show the user.
  std::string warmup_note() const;
  /// The options that determine the numbers a run produces (for resume checks and JSON).
  nlohmann::json training_json() const;
  /// The metrics path actually used.
  std::string metrics_path() const {
    return metrics.empty() ? checkpoint + ".metrics.jsonl" : metrics;
  }

  /// Every option a user sets, declared once (option_schema.hpp): `moca pretrain`'s flags, the
  /// range checks of validate() and their messages. runtime and dist (their own flag groups)
  /// and progress (--no-progress) are not rows.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* P = "PretrainOptions";
    // (scopes, model_options.hpp: the rows without one are the studies' too; kCommandScope rows
    // are moca pretrain's alone)
    constexpr Scope C = kCommandScope;
    const Range any = Range::any();
    v(o.preset, Option{P, "preset", "--preset", "architecture: paper-base | tiny | cpu-small"});
    v(o.patch_length,
      Option{P, "patch_length", "--patch-length", "samples per patch", Range::at_least(1)});
    v(o.layout, Option{P, "layout", "--layout", "modality | stacked", any, C}, kTokenLayoutNames);
    v(o.pos_embed, Option{P, "pos_embed", "--pos-embed", "2d (paper) | 1d (released code)", any, C},
      kPosEmbedNames);
    v(o.loss, Option{P, "loss", "--loss", "all (paper) | masked", any, C}, kLossScopeNames);
    v(o.norm_pix_loss,
      Option{P, "norm_pix_loss", "--norm-pix-loss", "per-patch normalised targets", any, C});
    v(o.policy, Option{P, "policy", "--policy", "masking policy spec", any, C});
    v(o.shuffle_block,
      Option{P, "shuffle_block", "--shuffle-block",
             "windows per block of the block shuffle (0: the full shuffle in memory, 64 streamed)",
             Range::at_least(0), C});
    v(o.shuffle_pool,
      Option{P, "shuffle_pool", "--shuffle-pool", "blocks whose windows the block shuffle mixes",
             Range::at_least(1), C});
    schedule_schema(P, o, v,
                    "linear warm-up in epochs; default 10, at most --epochs - 1 unless given");
    v(o.beta1, Option{P, "beta1", "--beta1", "AdamW beta1", Range::between(0, 1, false, true), C});
    v(o.beta2, Option{P, "beta2", "--beta2", "AdamW beta2", Range::between(0, 1, false, true), C});
    v(o.augment, Option{P, "augment", "--augment", "on-the-fly Algorithm 1 augmentation", any, C});
    v(o.augment_probability,
      Option{P, "augment_probability", "--augment-probability",
             "share of windows spliced when --augment is on", Range::between(0, 1), C});
    v(o.checkpoint, Option{P, "checkpoint", "--checkpoint", "checkpoint file", any, C});
    v(o.metrics, Option{P, "metrics", "--metrics",
                        "JSON-lines log (default <checkpoint>.metrics.jsonl)", any, C});
    v(o.checkpoint_every,
      Option{P, "checkpoint_every", "--checkpoint-every", "epochs between checkpoints",
             Range::at_least(1), kEveryScope & ~kStudyScope});
    v(o.resume, Option{P, "resume", "--resume", "continue from --checkpoint", any, C});
    v(o.seed,
      Option{P, "seed", "--seed", "seed of the weights, batch order, masks, augmentation", any, C});
    v(o.stop_after_iterations, Option{P, "stop_after_iterations", "--stop-after",
                                      "checkpoint and stop after this many iterations (-1 = never)",
                                      Range::at_least(-1), C});
  }
};

/// One epoch of pre-training (one JSON line of the metrics log).
struct EpochRecord {
  int epoch = 0;               ///< 0-based epoch index
  long iteration = 0;          ///< global iterations done at the end of the epoch
  double loss = 0.0;           ///< mean training loss over the epoch's iterations
  double lr = 0.0;             ///< learning rate of the epoch's last iteration
  double samples_per_s = 0.0;  ///< throughput
  double seconds = 0.0;        ///< wall time of the epoch
  /// Windows this rank read in the epoch (its slices and splice partners), the seconds its
  /// reads took (on the prefetch thread for windows on disk) and the seconds the steps waited
  /// for them: read_windows / read_seconds is the read throughput. Absent in records written
  /// before sources existed (then 0).
  long read_windows = 0;
  double read_seconds = 0.0;
  double read_wait_seconds = 0.0;
};
nlohmann::json to_json(const EpochRecord& r);
EpochRecord epoch_record_from_json(const nlohmann::json& j);

/// What pretrain() did.
struct PretrainResult {
  std::vector<EpochRecord> history;  ///< every completed epoch, including those before a resume
  long iterations = 0;               ///< global iterations done
  long iterations_per_epoch = 0;     ///< floor(n / batch_size)
  bool finished = false;             ///< all epochs done
  bool interrupted = false;          ///< stopped by the stop flag or stop_after_iterations
  std::string checkpoint;            ///< last checkpoint written
  Device device = Device::kCpu;      ///< kCpu or kCuda
  int threads = 0;                   ///< intra-op threads used
  double seconds = 0.0;              ///< wall time of this call
  MocaOptions model;                 ///< architecture trained
  int rank = 0;                      ///< this process's rank (0 writes the outputs)
  int world_size = 1;                ///< data-parallel ranks
  DistBackend backend = DistBackend::kNone;  ///< gloo | nccl | none (one process)
  double allreduce_seconds = 0.0;            ///< time in the gradient all-reduce during this call
  double loop_seconds = 0.0;                 ///< time in the training loop during this call
  long loop_iterations = 0;                  ///< iterations done during this call
  long windows_read = 0;                     ///< windows this rank read during this call
  std::int64_t bytes_read = 0;     ///< bytes this rank read from the source during this call
  double read_seconds = 0.0;       ///< seconds spent reading (prefetch thread included)
  double read_wait_seconds = 0.0;  ///< seconds the steps waited for reads
  std::string storage;             ///< the source's storage_text()
};

/// The options `o` leaves without effect: augment_probability without augment (`moca pretrain`
/// refuses the flag stated).
std::vector<UnusedOption> unused_options(const PretrainOptions& o);

/// Pre-trains a MoCA MAE on `train` (its windows, not its labels) on the ranks of `context`
/// (data-parallel when its world has several; its options.dist must fit the context:
/// RunContext::check_fits). Progress goes to stderr when options.progress (rank 0); a summary
/// line per checkpoint to context.log(). When `stop` becomes true (e.g. from a SIGINT handler),
/// the current iteration finishes, a checkpoint is written and the call returns with
/// interrupted = true. Throws std::invalid_argument for invalid options or data (and, on
/// resume, a checkpoint made with different training options or data), std::runtime_error for
/// I/O and non-finite losses (the message names the iteration).
PretrainResult pretrain(const PretrainOptions& options, const data::WindowSource& train,
                        RunContext& context, const std::atomic<bool>* stop = nullptr);
/// pretrain() on windows in memory (data::InMemorySource).
PretrainResult pretrain(const PretrainOptions& options, const data::Windows& train,
                        RunContext& context, const std::atomic<bool>* stop = nullptr);
/// pretrain() in one process (a local RunContext on `log`), whatever the environment says.
PretrainResult pretrain(const PretrainOptions& options, const data::Windows& train,
                        std::ostream& log, const std::atomic<bool>* stop = nullptr);
PretrainResult pretrain(const PretrainOptions& options, const data::WindowSource& train,
                        std::ostream& log, const std::atomic<bool>* stop = nullptr);

}  // namespace moca::model
