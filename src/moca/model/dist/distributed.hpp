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

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"

namespace at {
class Tensor;  // torch::Tensor; the collectives' tensor calls are made from torch TUs only
}

namespace moca::model {

/// A c10d backend: what DistOptions::backend asks for (auto | gloo | nccl) and what a run used
/// (gloo | nccl, or none: a single process, no process group).
enum class DistBackend { kAuto, kGloo, kNccl, kNone };

// clang-format off
/// The names of DistBackend values (result JSON: "backend"); `--backend` takes the first three
/// (kDistBackendChoices).
inline constexpr EnumName<DistBackend> kDistBackendNames[] = {
    {DistBackend::kAuto, "auto"},
    {DistBackend::kGloo, "gloo"},
    {DistBackend::kNccl, "nccl"},
    {DistBackend::kNone, "none"}};
/// The values `--backend` accepts.
inline constexpr EnumName<DistBackend> kDistBackendChoices[] = {
    {DistBackend::kAuto, "auto"},
    {DistBackend::kGloo, "gloo"},
    {DistBackend::kNccl, "nccl"}};
// clang-format on

/// Data-parallel options of a training run (command line: --backend, --dist-timeout).
/// Gradients cross ranks in flattened ~25 MiB buckets, one all-reduce each, after backward
/// (detail::GradientReducer; docs/benchmarks.md compares it with c10d's Reducer). backend and
/// timeout_s make the process group (make_run_context); a training call given a context checks that
/// they agree with it.
struct DistOptions {
  DistBackend backend = DistBackend::kAuto;  ///< gloo | nccl | auto (nccl on CUDA when built)
  double timeout_s = 300.0;  ///< rendezvous and collective timeout, seconds, in (0, 1 week]
  /// Throws std::invalid_argument naming the field (`DistOptions::timeout_s`), its value and the
  /// rule.
  void validate() const;

  /// Every option a user sets, declared once (option_schema.hpp): the training commands'
  /// data-parallel flags and the range check of validate().
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* D = "DistOptions";
    v(o.backend,
      Option{D, "backend", "--backend",
             "data-parallel: gloo | nccl | auto (nccl on CUDA when built with it)"},
      kDistBackendChoices);
    v(o.timeout_s,
      Option{D, "timeout_s", "--dist-timeout",
             "data-parallel: seconds a rendezvous or collective may wait for the other ranks",
             Range::between(0, 604800, true, false)});
  }
};

/// The backend a world of several ranks uses for `requested` on a CUDA (`cuda`) or CPU run:
/// auto is nccl on CUDA when compiled in (nccl_compiled()), else gloo.
DistBackend resolve_backend(DistBackend requested, bool cuda);

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

/// The ranks of one job and the collectives the training loops use. Every call that
/// communicates is collective: all ranks must make it in the same order. Two implementations:
/// LocalCollective (a world of one, every collective the identity) and the c10d process group
/// of connect_c10d(). A run holds one in its RunContext (run_context.hpp).
class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  bool is_root() const { return rank() == 0; }
  /// The rank's index among the ranks of its node (its CUDA device, modulo the visible ones).
  virtual int local_rank() const = 0;
  virtual DistBackend backend() const = 0;  ///< gloo, nccl, or none (a world of one)
  virtual double timeout_s() const = 0;     ///< of the rendezvous and of every collective

  /// Throws std::invalid_argument on every rank whose `value` differs from rank 0's (e.g. a
  /// hash of the options that determine the numbers), naming `what` and both ranks.
  virtual void check_same(const std::string& what, const std::string& value) = 0;
  /// Barrier; `what` names it in errors.
  virtual void barrier(const std::string& what) = 0;
  /// Sums `values` element-wise over the ranks (doubles; `what` names it in errors).
  virtual std::vector<double> allreduce_sum(const std::vector<double>& values,
                                            const std::string& what) = 0;
  /// Sums every tensor in place over the ranks: one all-reduce per tensor, launched together,
  /// waited together (torch translation units only).
  virtual void allreduce_sum(std::vector<at::Tensor>& tensors, const std::string& what) = 0;
  /// Overwrites every tensor with rank 0's (torch translation units only).
  virtual void broadcast_from_root(std::vector<at::Tensor>& tensors, const std::string& what) = 0;
};

/// A world of one: rank 0 of 1, backend none, every collective the identity.
class LocalCollective final : public Collective {
 public:
  explicit LocalCollective(double timeout_s = 300.0) : timeout_s_(timeout_s) {}
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  int local_rank() const override { return 0; }
  DistBackend backend() const override { return DistBackend::kNone; }
  double timeout_s() const override { return timeout_s_; }
  void check_same(const std::string&, const std::string&) override {}
  void barrier(const std::string&) override {}
  std::vector<double> allreduce_sum(const std::vector<double>& values,
                                    const std::string&) override {
    return values;
  }
  void allreduce_sum(std::vector<at::Tensor>&, const std::string&) override {}
  void broadcast_from_root(std::vector<at::Tensor>&, const std::string&) override {}

 private:
  double timeout_s_;
};

/// Joins the job described by `env`: a c10d TCPStore rendezvous (rank 0 hosts it on
/// MASTER_ADDR:MASTER_PORT) and a Gloo or NCCL process group over it (resolve_backend(options.
/// backend, cuda); NCCL makes local_rank's device current). A world size of 1 gives a
/// LocalCollective. Throws std::invalid_argument for invalid options, std::runtime_error with a
/// clear message when the port is in use, the rendezvous times out, or the backend is
/// unavailable.
std::unique_ptr<Collective> connect_c10d(const DistEnv& env, const DistOptions& options, bool cuda);

/// The sampler's epoch order: a permutation of 0..n-1 drawn from Rng(epoch_seed).
std::vector<int> epoch_order(int n, std::uint64_t epoch_seed);

/// Rows (window indices) that rank `rank` of `world_size` trains on at iteration `j` of an
/// epoch with order `order` and global batch `global_batch`. Throws std::invalid_argument when
/// the global batch is not a multiple of the world size (naming both) or j is past the epoch.
std::vector<int> rank_batch_rows(const std::vector<int>& order, long j, int global_batch, int rank,
                                 int world_size);

/// Throws std::invalid_argument unless `global_batch` is a multiple of `world_size` (message
/// names `who`, the option `field` that set the batch, e.g. "PretrainOptions::batch_size", which
/// the programs rewrite to their flag, both numbers and the rule).
void check_global_batch(const std::string& who, const std::string& field, int global_batch,
                        int world_size);

/// A short hex digest (FNV-1a 64) of `text`, for comparing options across ranks.
std::string options_digest(const std::string& text);

}  // namespace moca::model
