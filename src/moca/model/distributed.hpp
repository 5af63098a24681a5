#pragma once
/// \file distributed.hpp
/// Data-parallel training on LibTorch's c10d (torch-free interface): rendezvous from the
/// environment torchrun and SLURM set, a process group (Gloo on CPU, NCCL on CUDA when this
/// LibTorch was built with it), and the seeded distributed sampler of the training loops.
///
/// Rendezvous: RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT (torchrun, `moca launch`);
/// when RANK and WORLD_SIZE are absent, SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (srun).
/// Without either (or with a world size of 1) a run is a single process and no process group is
/// made. Rank 0 hosts the c10d TCPStore on MASTER_ADDR:MASTER_PORT; every rank connects to it,
/// then builds the process group over it.
///
/// Sampler (the one rule every rank applies): epoch e's order is one permutation of the n
/// training windows drawn from (seed, e); global iteration t of the epoch takes the global batch
/// order[t*B, (t+1)*B) (B = --batch, the global batch); rank r of N takes its contiguous slice
/// [r*B/N, (r+1)*B/N) of it. B must be a multiple of N. The tail (n mod B windows) is dropped on
/// every rank, as in a 1-process run. Masks and augmentation of a global batch are drawn from
/// (seed, global iteration) for the whole global batch, in global-batch order, on every rank —
/// so the masks a window gets depend on (seed, epoch, its place in the epoch's permutation) and
/// not on the world size, and a 1-process run draws exactly what it drew before.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace moca::model {

/// Data-parallel options of a training run (command line: --backend, --dist-timeout).
struct DistOptions {
  std::string backend = "auto";  ///< gloo | nccl | auto (nccl on CUDA when built with it)
  double timeout_s = 300.0;      ///< rendezvous and collective timeout, seconds, > 0
  /// Gradient synchronisation: "buckets" (default; flattened ~25 MiB buckets, one all-reduce
  /// each, after backward) or "reducer" (c10d::Reducer, all-reduce overlapping backward; one
  /// batch shard, loss "all" only). Measured in docs/benchmarks.md.
  std::string grad_sync = "buckets";
  /// Throws std::invalid_argument naming the field, its value and the rule.
  void validate() const;
};

/// Where this process sits in the job, as read from the environment.
struct DistEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source = "none";  ///< none | env (RANK/WORLD_SIZE) | slurm
};

/// Reads the rendezvous variables through `lookup` (getenv by default). Throws
/// std::invalid_argument for a malformed or out-of-range value (rank outside [0, world size),
/// world size < 1, port outside 1..65535), naming the variable and the value.
DistEnv read_dist_env(const std::function<const char*(const char*)>& lookup = {});

/// True when this build can use NCCL (a LibTorch with c10d NCCL; compiled out otherwise).
bool nccl_compiled();

/// A process group of the ranks of one job (or a single process when the world size is 1).
/// Every call that communicates is collective: all ranks must make it in the same order.
class Communicator {
 public:
  /// A world of one: no process group, every collective is the identity.
  Communicator();
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// Joins the job described by `env` (world size 1: a world of one). `cuda`: the run's
  /// device is CUDA (backend auto picks NCCL then). Throws std::runtime_error with a clear
  /// message when the port is in use, the rendezvous times out, or the backend is unavailable.
  static std::unique_ptr<Communicator> connect(const DistEnv& env, const DistOptions& options,
                                               bool cuda);
  /// connect(read_dist_env(), options, cuda).
  static std::unique_ptr<Communicator> from_environment(const DistOptions& options, bool cuda);
  /// The process's communicator: connected from the environment on the first call (later calls
  /// return the same one, whatever their options), so that several training calls in one
  /// process (linprobe's folds) share one rendezvous. Kept until the process ends.
  static Communicator& process(const DistOptions& options, bool cuda);

  int rank() const;
  int world_size() const;
  bool is_root() const { return rank() == 0; }
  const std::string& backend() const;  ///< "gloo", "nccl" or "none"
  double timeout_s() const;

  /// Collective: throws std::invalid_argument on every rank whose `value` differs from rank 0's
  /// (e.g. a hash of the options that determine the numbers), naming `what` and both ranks.
  void check_same(const std::string& what, const std::string& value);
  /// Collective barrier; `what` names it in errors.
  void barrier(const std::string& what);

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

/// The sampler's epoch order: a permutation of 0..n-1 drawn from Rng(epoch_seed).
std::vector<int> epoch_order(int n, std::uint64_t epoch_seed);

/// Rows (window indices) that rank `rank` of `world_size` trains on at iteration `j` of an
/// epoch with order `order` and global batch `global_batch`. Throws std::invalid_argument when
/// the global batch is not a multiple of the world size (naming both) or j is past the epoch.
std::vector<int> rank_batch_rows(const std::vector<int>& order, long j, int global_batch, int rank,
                                 int world_size);

/// Throws std::invalid_argument unless `global_batch` is a multiple of `world_size` (message
/// names `who`, both numbers and the rule).
void check_global_batch(const std::string& who, int global_batch, int world_size);

/// A short hex digest (FNV-1a 64) of `text`, for comparing options across ranks.
std::string options_digest(const std::string& text);

}  // namespace moca::model
