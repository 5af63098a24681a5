// Data-parallel training support on c10d (torch translation unit). See distributed.hpp.
#include "moca/model/dist/distributed.hpp"
#include "moca/common/error_text.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef MOCA_HAVE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <type_traits>

#include "moca/common/random.hpp"
#include "moca/model/detail/torch_error.hpp"
#include "moca/model/dist/detail/distributed_torch.hpp"

namespace moca::model {

namespace {

std::chrono::milliseconds to_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000.0)));
}

std::string first_line(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

/// The collectives the trainer uses, over either backend (c10d's ProcessGroup in LibTorch 1.x,
/// Backend in 2.x: the template takes whichever class the LibTorch at hand has).
struct Collectives {
  virtual ~Collectives() = default;
  virtual void allreduce_sum(std::vector<torch::Tensor>& tensors,
                             std::chrono::milliseconds timeout) = 0;
  virtual void broadcast_root(std::vector<torch::Tensor>& tensors,
                              std::chrono::milliseconds timeout) = 0;
};

template <class PG>
struct CollectivesOf : Collectives {
  explicit CollectivesOf(c10::intrusive_ptr<PG> pg) : pg_(std::move(pg)) {}
  void allreduce_sum(std::vector<torch::Tensor>& tensors,
                     std::chrono::milliseconds timeout) override {
    each(tensors, timeout, [&](std::vector<torch::Tensor>& one) {
      c10d::AllreduceOptions o;
      o.reduceOp = c10d::ReduceOp::SUM;
      o.timeout = timeout;
      return pg_->allreduce(one, o);
    });
  }
  void broadcast_root(std::vector<torch::Tensor>& tensors,
                      std::chrono::milliseconds timeout) override {
    each(tensors, timeout, [&](std::vector<torch::Tensor>& one) {
      c10d::BroadcastOptions o;
      o.rootRank = 0;
      o.timeout = timeout;
      return pg_->broadcast(one, o);
    });
  }
  /// Launches `start` on every tensor (one tensor per call: Gloo and NCCL take a list as
  /// replicas of one tensor), then waits for all of them.
  template <class Start>
  static void each(std::vector<torch::Tensor>& tensors, std::chrono::milliseconds timeout,
                   Start&& start) {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    std::vector<std::vector<torch::Tensor>> lists;
    lists.reserve(tensors.size());
    for (auto& t : tensors) {
      lists.push_back({t});
      works.push_back(start(lists.back()));
    }
    for (auto& w : works) w->wait(timeout);
  }
  c10::intrusive_ptr<PG> pg_;
};

int parse_int(const char* name, const char* value, long lo, long hi) {
  const std::string s(value);
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || end == nullptr || *end != '\0' || errno != 0 || v < lo || v > hi) {
    throw_invalid("distributed", std::string(name) + " ('" + s + "') must be an integer in [" +
                                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(v);
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
void DistOptions::validate() const {
  if (backend == DistBackend::kNone) {
    throw_invalid("DistOptions::validate()",
                  "backend (none) must be gloo, nccl or auto (none is what a "
                  "single process reports)");
  }
  check_ranges(*this);  // timeout_s in (0, one week]
}

DistEnv read_dist_env(const std::function<const char*(const char*)>& lookup_in) {
  const auto lookup = lookup_in ? lookup_in : [](const char* n) { return std::getenv(n); };
  auto get = [&](const char* n) -> const char* {
    const char* v = lookup(n);
    return (v != nullptr && *v != '\0') ? v : nullptr;
  };
  DistEnv env;
  const char *rank = get("RANK"), *world = get("WORLD_SIZE"), *local = get("LOCAL_RANK");
  const char* rank_name = "RANK";
  const char* world_name = "WORLD_SIZE";
  const char* local_name = "LOCAL_RANK";
  if (rank != nullptr || world != nullptr) {
    if (rank == nullptr || world == nullptr) {
      throw_invalid("distributed", std::string(rank == nullptr ? "RANK" : "WORLD_SIZE") +
                                       " is not set while " +
                                       (rank == nullptr ? "WORLD_SIZE" : "RANK") +
                                       " is (set both, or neither for a single process)");
    }
    env.source = "env";
  } else if (get("SLURM_PROCID") != nullptr && get("SLURM_NTASKS") != nullptr) {
    rank = get("SLURM_PROCID");
    world = get("SLURM_NTASKS");
    local = get("SLURM_LOCALID");
    rank_name = "SLURM_PROCID";
    world_name = "SLURM_NTASKS";
    local_name = "SLURM_LOCALID";
    env.source = "slurm";
  } else {
    return env;
  }
  env.world_size = parse_int(world_name, world, 1, 1 << 20);
  env.rank = parse_int(rank_name, rank, 0, 1 << 20);
  if (env.rank >= env.world_size) {
    throw_invalid("distributed", std::string(rank_name) + " (" + std::to_string(env.rank) +
                                     ") must be < " + world_name + " (" +
                                     std::to_string(env.world_size) + ")");
  }
  env.local_rank = local != nullptr ? parse_int(local_name, local, 0, 1 << 20) : 0;
  if (const char* a = get("MASTER_ADDR")) env.master_addr = a;
  if (const char* p = get("MASTER_PORT")) env.master_port = parse_int("MASTER_PORT", p, 1, 65535);
  return env;
}

DistBackend resolve_backend(DistBackend requested, bool cuda) {
  if (requested != DistBackend::kAuto) return requested;
  return (cuda && nccl_compiled()) ? DistBackend::kNccl : DistBackend::kGloo;
}

bool nccl_compiled() {
#ifdef MOCA_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

// ---------------------------------------------------------------------------------------------
namespace {

/// The c10d implementation of Collective: a TCPStore and a Gloo or NCCL process group.
class C10dCollective final : public Collective {
 public:
  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  int local_rank() const override { return local_rank_; }
  DistBackend backend() const override { return backend_; }
  double timeout_s() const override { return timeout_s_; }
  void check_same(const std::string& what, const std::string& value) override;
  void barrier(const std::string& what) override { allreduce_sum(std::vector<double>{1.0}, what); }
  std::vector<double> allreduce_sum(const std::vector<double>& values,
                                    const std::string& what) override;
  void allreduce_sum(std::vector<torch::Tensor>& tensors, const std::string& what) override {
    run(what, [&] { collectives_->allreduce_sum(tensors, to_ms(timeout_s_)); });
  }
  void broadcast_from_root(std::vector<torch::Tensor>& tensors, const std::string& what) override {
    run(what, [&] { collectives_->broadcast_root(tensors, to_ms(timeout_s_)); });
  }
  /// Joins the job (connect_c10d; env.world_size > 1).
  C10dCollective(const DistEnv& env, const DistOptions& options, bool cuda);

 private:
  int rank_ = 0;
  int world_size_ = 1;
  int local_rank_ = 0;
  int cuda_index_ = 0;  ///< NCCL: this rank's device
  DistBackend backend_ = DistBackend::kNone;
  double timeout_s_ = 300.0;
  c10::intrusive_ptr<c10d::Store> store_;
  std::unique_ptr<Collectives> collectives_;
  long checks_ = 0;

  std::string peer_hint() const {
    if (world_size_ == 2) {
      return "rank " + std::to_string(1 - rank_) + " died or stopped responding";
    }
    return "another rank died or stopped responding (moca launch names the rank that failed)";
  }
  /// Runs a collective; any failure becomes a runtime_error naming this rank and `what`.
  template <class F>
  void run(const std::string& what, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      f();
    } catch (const std::exception& e) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      char buf[96];
      std::snprintf(buf, sizeof buf, "failed after %.1f s (DistOptions::timeout_s %g s)", s,
                    timeout_s_);
      throw std::runtime_error("rank " + std::to_string(rank_) + "/" + std::to_string(world_size_) +
                               ": " + what + " (" + enum_name(kDistBackendNames, backend_) + ") " +
                               buf + ": " + peer_hint() + "; " + first_line(error_text(e)));
    }
  }
};

C10dCollective::C10dCollective(const DistEnv& env, const DistOptions& options, bool cuda) {
  timeout_s_ = options.timeout_s;
  if (env.rank < 0 || env.rank >= env.world_size) {
    throw_invalid("distributed", "rank (" + std::to_string(env.rank) +
                                     ") must be in [0, world size " +
                                     std::to_string(env.world_size) + ")");
  }
  const DistBackend backend = resolve_backend(options.backend, cuda);
  if (backend == DistBackend::kNccl && !nccl_compiled()) {
    throw std::runtime_error(
        "distributed: DistOptions::backend nccl is not available: this moca was built against a "
        "LibTorch without c10d NCCL (use DistOptions::backend gloo, or build against a CUDA "
        "LibTorch)");
  }
  if (backend == DistBackend::kNccl && !cuda) {
    throw std::runtime_error(
        "distributed: DistOptions::backend nccl needs RuntimeOptions::device cuda");
  }
  rank_ = env.rank;
  world_size_ = env.world_size;
  local_rank_ = env.local_rank;
  if (backend == DistBackend::kNccl) {
    cuda_index_ = detail::local_cuda_device(env.local_rank).index();
  }
  backend_ = backend;
  const std::string backend_name = enum_name(kDistBackendNames, backend);
  const auto timeout = to_ms(options.timeout_s);
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(env.master_port);
  so.isServer = env.rank == 0;
  so.numWorkers = static_cast<std::size_t>(env.world_size);
  so.waitWorkers = true;
  so.timeout = timeout;
  try {
    store_ = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
  } catch (const std::exception& e) {
    const std::string msg = error_text(e);
    if (env.rank == 0 && msg.find("already in use") != std::string::npos) {
      throw std::runtime_error("distributed: MASTER_PORT " + std::to_string(env.master_port) +
                               " is in use (rank 0 hosts the rendezvous store at " + where +
                               "); choose a free port (moca launch --master-port)");
    }
    char buf[80];
    std::snprintf(buf, sizeof buf, " within DistOptions::timeout_s %g s: ", options.timeout_s);
    throw std::runtime_error("distributed: rank " + std::to_string(env.rank) + "/" +
                             std::to_string(env.world_size) + " could not join the rendezvous at " +
                             where + buf + first_line(msg));
  }
  auto prefixed = c10::make_intrusive<c10d::PrefixStore>("moca/pg", store_);
  try {
    if (backend == DistBackend::kGloo) {
      auto go = c10d::ProcessGroupGloo::Options::create(timeout);
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME")) {
        go->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      } else if (is_loopback(env.master_addr)) {
        go->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        go->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      collectives_ = std::make_unique<CollectivesOf<c10d::ProcessGroupGloo>>(
          c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, env.rank, env.world_size, go));
    } else {
#ifdef MOCA_HAVE_NCCL
      auto no = c10d::ProcessGroupNCCL::Options::create();
      no->timeout = timeout;
      collectives_ = std::make_unique<CollectivesOf<c10d::ProcessGroupNCCL>>(
          c10::make_intrusive<c10d::ProcessGroupNCCL>(prefixed, env.rank, env.world_size, no));
#endif
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("distributed: rank " + std::to_string(env.rank) +
                             " could not create the " + backend_name +
                             " process group: " + first_line(error_text(e)));
  }
}

void C10dCollective::check_same(const std::string& what, const std::string& value) {
  const std::string key = "moca/check/" + std::to_string(checks_++) + "/";
  std::vector<std::string> values(static_cast<size_t>(world_size_));
  run("comparing " + what + " across ranks", [&] {
    store_->set(key + std::to_string(rank_), std::vector<uint8_t>(value.begin(), value.end()));
    for (int r = 0; r < world_size_; ++r) {
      const auto v = store_->get(key + std::to_string(r));
      values[static_cast<size_t>(r)] = std::string(v.begin(), v.end());
    }
  });
  for (int r = 1; r < world_size_; ++r) {
    if (values[static_cast<size_t>(r)] != values[0]) {
      throw_invalid("distributed", "rank " + std::to_string(r) + "'s " + what + " (" +
                                       values[static_cast<size_t>(r)] + ") differ from rank 0's (" +
                                       values[0] + "); every rank must run the same command");
    }
  }
}

std::vector<double> C10dCollective::allreduce_sum(const std::vector<double>& values,
                                                  const std::string& what) {
  const torch::Device dev =
      backend_ == DistBackend::kNccl
          ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(cuda_index_))
          : torch::Device(torch::kCPU);
  std::vector<torch::Tensor> t{torch::tensor(values, torch::dtype(torch::kFloat64)).to(dev)};
  allreduce_sum(t, what);
  auto cpu = t[0].cpu();
  return std::vector<double>(cpu.data_ptr<double>(), cpu.data_ptr<double>() + cpu.numel());
}

}  // namespace

std::unique_ptr<Collective> connect_c10d(const DistEnv& env, const DistOptions& options,
                                         bool cuda) {
  options.validate();
  if (env.world_size <= 1) return std::make_unique<LocalCollective>(options.timeout_s);
  return std::make_unique<C10dCollective>(env, options, cuda);
}

// ---------------------------------------------------------------------------------------------
std::vector<int> epoch_order(int n, std::uint64_t epoch_seed) {
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(epoch_seed);
  shuffle(order, rng);
  return order;
}

void check_global_batch(const std::string& who, const std::string& field, int global_batch,
                        int world_size) {
  if (world_size < 1 || global_batch < 1 || global_batch % world_size != 0) {
    throw_invalid(who, "the global batch (" + field + " = " + std::to_string(global_batch) +
                           ") must be a multiple of the world size (" + std::to_string(world_size) +
                           " ranks): each rank takes batch / world size windows");
  }
}

std::vector<int> rank_batch_rows(const std::vector<int>& order, long j, int global_batch, int rank,
                                 int world_size) {
  check_global_batch("rank_batch_rows()", "the batch", global_batch, world_size);
  if (rank < 0 || rank >= world_size) {
    throw_invalid("rank_batch_rows()", "rank (" + std::to_string(rank) + ") must be in [0, " +
                                           std::to_string(world_size) + ")");
  }
  const long ipe = static_cast<long>(order.size()) / global_batch;
  if (j < 0 || j >= ipe) {
    throw_invalid("rank_batch_rows()", "iteration (" + std::to_string(j) + ") must be in [0, " +
                                           std::to_string(ipe) + ")");
  }
  const int b = global_batch / world_size;
  const auto begin = order.begin() + j * global_batch + static_cast<long>(rank) * b;
  return std::vector<int>(begin, begin + b);
}

std::string options_digest(const std::string& text) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// ---------------------------------------------------------------------------------------------
namespace detail {

torch::Device local_cuda_device(int local_rank) {
  const int count = static_cast<int>(torch::cuda::device_count());
  if (count < 1) throw std::runtime_error("distributed: no CUDA device is visible");
  const torch::Device d(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % count));
  c10::impl::getDeviceGuardImpl(torch::kCUDA)->setDevice(d);
  return d;
}

void broadcast_module(Collective& comm, torch::nn::Module& module) {
  if (comm.world_size() <= 1) return;
  std::vector<torch::Tensor> tensors;
  for (const auto& p : module.parameters()) tensors.push_back(p);
  for (const auto& b : module.buffers()) tensors.push_back(b);
  torch::NoGradGuard no_grad;
  // Flattened per dtype and device would save calls; the start-up broadcast runs once.
  std::vector<torch::Tensor> flat;
  for (auto& t : tensors) flat.push_back(t.detach().contiguous().clone());
  comm.broadcast_from_root(flat, "broadcast of the initial parameters from rank 0");
  for (size_t i = 0; i < tensors.size(); ++i) tensors[i].copy_(flat[i]);
}

GradientReducer::GradientReducer(Collective& comm, std::vector<torch::Tensor> params,
                                 std::size_t bucket_bytes)
    : comm_(comm), params_(std::move(params)) {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (buckets_.empty() || bytes >= bucket_bytes) {
      buckets_.emplace_back();
      bytes = 0;
    }
    buckets_.back().push_back(i);
    bytes += static_cast<std::size_t>(params_[i].numel()) * params_[i].element_size();
  }
}

std::vector<double> GradientReducer::reduce(double weight, const std::vector<double>& scalars,
                                            const std::string& what) {
  if (comm_.world_size() <= 1) return scalars;
  const auto t0 = std::chrono::steady_clock::now();
  torch::NoGradGuard no_grad;
  // The scalars and a "defined" vote per parameter, in doubles.
  std::vector<double> small(scalars);
  for (const auto& p : params_) small.push_back(p.grad().defined() ? 1.0 : 0.0);
  const torch::Device dev = params_.empty() ? torch::Device(torch::kCPU) : params_[0].device();
  std::vector<torch::Tensor> flats;
  for (const auto& bucket : buckets_) {
    std::vector<torch::Tensor> parts;
    for (std::size_t i : bucket) {
      const auto& p = params_[i];
      parts.push_back(p.grad().defined() ? p.grad().reshape({-1}) * weight
                                         : torch::zeros({p.numel()}, p.options()));
    }
    flats.push_back(torch::cat(parts));
  }
  flats.push_back(torch::tensor(small, torch::dtype(torch::kFloat64)).to(dev));
  comm_.allreduce_sum(flats, what);
  const auto small_cpu = flats.back().cpu();
  const double* s = small_cpu.data_ptr<double>();
  for (std::size_t k = 0; k < buckets_.size(); ++k) {
    int64_t offset = 0;
    for (std::size_t i : buckets_[k]) {
      auto& p = params_[i];
      const int64_t n = p.numel();
      if (s[scalars.size() + i] > 0.0) {
        // Into the gradient's own storage (not a view of the bucket: optimisers detach and
        // zero gradients in place).
        const auto sum = flats[k].slice(0, offset, offset + n).view(p.sizes());
        if (p.grad().defined()) {
          p.mutable_grad().copy_(sum);
        } else {
          p.mutable_grad() = sum.clone();
        }
      } else {
        p.mutable_grad() = torch::Tensor();
      }
      offset += n;
    }
  }
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return std::vector<double>(s, s + scalars.size());
}

}  // namespace detail
}  // namespace moca::model
