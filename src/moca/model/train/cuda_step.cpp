// The CUDA pre-training step and the fused AdamW (train/detail/cuda_step.hpp). Compiled in every
// build; the CUDA parts only where LibTorch has CUDA (MOCA_HAVE_TORCH_CUDA, set by CMake when the
// torch_cuda target exists), the fused optimiser only where LibTorch has at::_fused_adamw_.
#include "moca/model/train/detail/cuda_step.hpp"

#include <torch/version.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/kernels/detail/adamw.hpp"

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define MOCA_HAVE_FUSED_ADAMW 1
#endif

#ifdef MOCA_HAVE_TORCH_CUDA
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace moca::model::detail {

bool fused_adamw_available() {
#ifdef MOCA_HAVE_FUSED_ADAMW
  return true;
#else
  return false;
#endif
}

bool cuda_step_compiled() {
#if defined(MOCA_HAVE_TORCH_CUDA) && defined(MOCA_HAVE_FUSED_ADAMW)
  return true;
#else
  return false;
#endif
}

std::pair<std::uint64_t, std::uint64_t> cuda_memory_info() {
#ifdef MOCA_HAVE_TORCH_CUDA
  if (!torch::cuda::is_available()) return {0, 0};
  size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: the caller goes on without the figure
    return {0, 0};
  }
  return {free_bytes, total_bytes};
#else
  return {0, 0};
#endif
}

void check_cuda_precision(Precision precision, const std::string& what) {
#ifdef MOCA_HAVE_TORCH_CUDA
  if (precision != Precision::kBf16 || !torch::cuda::is_available()) return;
  const cudaDeviceProp* p = at::cuda::getCurrentDeviceProperties();
  if (p->major < 8) {
    throw std::runtime_error(what +
                             ": bf16 needs a GPU of compute capability 8.0 or newer "
                             "(Ampere); this one (" +
                             std::string(p->name) + ") is " + std::to_string(p->major) + "." +
                             std::to_string(p->minor) + "; use fp32");
  }
#else
  (void)precision;
  (void)what;
#endif
}

// ---------------------------------------------------------------------------------------------
// FusedAdamW

struct FusedAdamW::Impl {
  struct Group {
    std::vector<torch::Tensor> params, exp_avgs, exp_avg_sqs, steps;
    std::vector<torch::optim::AdamWParamState*> states;
    double beta1 = 0.9, beta2 = 0.999, weight_decay = 0.0, eps = 1e-8;
  };
  std::vector<Group> groups;
  torch::Tensor lr;  ///< 0-dim float32 on the parameters' device (CUDA only)
  double lr_host = 0.0;
  bool cuda = false;
};

FusedAdamW::FusedAdamW(torch::optim::AdamW& optimizer) : impl_(std::make_unique<Impl>()) {
  if (!fused_adamw_available()) {
    throw std::runtime_error("FusedAdamW: this LibTorch (" + std::string(TORCH_VERSION) +
                             ") has no at::_fused_adamw_ (PyTorch >= 2.4)");
  }
  torch::NoGradGuard no_grad;
  bool first = true;
  torch::Device device(torch::kCPU);
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    if (o.amsgrad()) throw std::runtime_error("FusedAdamW: amsgrad is not supported");
    Impl::Group g;
    g.beta1 = std::get<0>(o.betas());
    g.beta2 = std::get<1>(o.betas());
    g.weight_decay = o.weight_decay();
    g.eps = o.eps();
    impl_->lr_host = o.lr();
    for (auto& p : group.params()) {
      if (first) {
        device = p.device();
        first = false;
      } else if (p.device() != device) {
        throw std::runtime_error("FusedAdamW: parameters on more than one device");
      }
      auto& s = adamw_state(optimizer, p);
      // A resumed state may have been read onto another device than its parameter's.
      if (s.exp_avg().device() != p.device()) s.exp_avg(s.exp_avg().to(p.device()));
      if (s.exp_avg_sq().device() != p.device()) s.exp_avg_sq(s.exp_avg_sq().to(p.device()));
      g.params.push_back(p);
      g.exp_avgs.push_back(s.exp_avg());
      g.exp_avg_sqs.push_back(s.exp_avg_sq());
      g.steps.push_back(torch::full({}, static_cast<double>(s.step()),
                                    torch::TensorOptions().dtype(torch::kFloat).device(device)));
      g.states.push_back(&s);
    }
    if (!g.params.empty()) impl_->groups.push_back(std::move(g));
  }
  impl_->cuda = device.is_cuda();
  if (impl_->cuda) {
    impl_->lr =
        torch::full({}, impl_->lr_host, torch::TensorOptions().dtype(torch::kFloat).device(device));
  }
}

FusedAdamW::~FusedAdamW() = default;

void FusedAdamW::set_lr(double lr) {
  impl_->lr_host = lr;
  if (impl_->cuda) impl_->lr.fill_(lr);
}

void FusedAdamW::launch() {
#ifdef MOCA_HAVE_FUSED_ADAMW
  torch::NoGradGuard no_grad;
  for (auto& g : impl_->groups) {
    std::vector<torch::Tensor> grads;
    grads.reserve(g.params.size());
    for (const auto& p : g.params) {
      if (!p.grad().defined()) throw std::runtime_error("FusedAdamW: a parameter has no gradient");
      grads.push_back(p.grad());
    }
    at::_foreach_add_(g.steps, 1.0);
    if (impl_->cuda) {
      at::_fused_adamw_(g.params, grads, g.exp_avgs, g.exp_avg_sqs, {}, g.steps, impl_->lr, g.beta1,
                        g.beta2, g.weight_decay, g.eps, /*amsgrad=*/false,
                        /*maximize=*/false);
    } else {
      at::_fused_adamw_(g.params, grads, g.exp_avgs, g.exp_avg_sqs, {}, g.steps, impl_->lr_host,
                        g.beta1, g.beta2, g.weight_decay, g.eps, /*amsgrad=*/false,
                        /*maximize=*/false);
    }
  }
#endif
}

void FusedAdamW::count() {
  for (auto& g : impl_->groups) {
    for (auto* s : g.states) s->step(s->step() + 1);
  }
}

// ---------------------------------------------------------------------------------------------
// CudaStep

#if defined(MOCA_HAVE_TORCH_CUDA) && defined(MOCA_HAVE_FUSED_ADAMW)

struct CudaStep::Impl {
  /// One pinned staging area: the batch and its masks, and the event after its uploads.
  struct Staging {
    torch::Tensor x, keep, restore, mask;  // pinned host tensors
    at::cuda::CUDAEvent uploaded;
    bool used = false;
  };

  Impl(MocaMae m, torch::optim::AdamW& optimizer, Precision p, bool g, int eager)
      : model(std::move(m)), adamw(optimizer), precision(p), graphs(g), eager_steps(eager) {}

  MocaMae model;
  FusedAdamW adamw;
  Precision precision;
  bool graphs;
  int eager_steps;
  std::string note;
  torch::Device device{torch::kCUDA};
  std::vector<torch::Tensor> params;
  // The fixed device inputs of every step (what a captured graph reads).
  torch::Tensor x, keep, restore, mask, loss_sum;
  int64_t B = -1, C = 0, L = 0, K = -1, T = 0;
  Staging staging[2];
  long steps = 0, pending = 0;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
  bool captured = false;

  void allocate(int64_t b, int64_t c, int64_t l, int64_t k, int64_t t) {
    B = b, C = c, L = l, K = k, T = t;
    const auto f = torch::TensorOptions().dtype(torch::kFloat).device(device);
    const auto i = torch::TensorOptions().dtype(torch::kLong).device(device);
    x = torch::empty({B, C, L}, f);
    keep = torch::empty({B, K}, i);
    restore = torch::empty({B, T}, i);
    mask = torch::empty({B, T}, f);
    const auto pf = torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true);
    const auto pi = torch::TensorOptions().dtype(torch::kLong).pinned_memory(true);
    for (auto& s : staging) {
      s.x = torch::empty({B, C, L}, pf);
      s.keep = torch::empty({B, K}, pi);
      s.restore = torch::empty({B, T}, pi);
      s.mask = torch::empty({B, T}, pf);
      s.used = false;
    }
  }

  void upload(const float* host_x, const MaskIndices& m) {
    Staging& s = staging[steps % 2];
    // The staging area's previous uploads (two steps ago) must be done before it is refilled;
    // this waits only when the device is more than a step behind the host.
    if (s.used) s.uploaded.synchronize();
    std::memcpy(s.x.data_ptr<float>(), host_x, sizeof(float) * static_cast<size_t>(B * C * L));
    std::memcpy(s.keep.data_ptr<int64_t>(), m.ids_keep.data(), sizeof(int64_t) * m.ids_keep.size());
    std::memcpy(s.restore.data_ptr<int64_t>(), m.ids_restore.data(),
                sizeof(int64_t) * m.ids_restore.size());
    std::memcpy(s.mask.data_ptr<float>(), m.mask.data(), sizeof(float) * m.mask.size());
    x.copy_(s.x, /*non_blocking=*/true);
    keep.copy_(s.keep, true);
    restore.copy_(s.restore, true);
    mask.copy_(s.mask, true);
    s.uploaded.record(at::cuda::getCurrentCUDAStream());
    s.used = true;
  }

  /// Forward, backward and the optimiser on the fixed inputs; the loss is added to loss_sum.
  void body() {
    for (auto& p : params) p.mutable_grad() = torch::Tensor();
    torch::Tensor loss;
    {
      AutocastScope amp(device, precision);
      loss = model->forward(x, MaskTensors{keep, restore, mask}).loss;
    }
    loss.backward();
    {
      torch::NoGradGuard no_grad;
      loss_sum.add_(loss.detach());
    }
    adamw.launch();
  }

  void capture() {
    // Capture on a side stream (the legacy default stream cannot be captured), after the work
    // queued so far; the replays then run on the current stream. The autocast cast cache stays
    // off while capturing, so no cast made inside the graph outlives it.
    auto current = at::cuda::getCurrentCUDAStream();
    auto side = at::cuda::getStreamFromPool();
    at::cuda::CUDAEvent ready;
    ready.record(current);
    ready.block(side);
    auto g = std::make_unique<at::cuda::CUDAGraph>();
    const bool cache = at::autocast::is_autocast_cache_enabled();
    try {
      c10::cuda::CUDAStreamGuard guard(side);
      at::autocast::set_autocast_cache_enabled(false);
      g->capture_begin();
      try {
        body();
      } catch (...) {
        try {
          g->capture_end();
        } catch (...) {
        }
        throw;
      }
      g->capture_end();
      at::autocast::set_autocast_cache_enabled(cache);
    } catch (const std::exception& e) {
      at::autocast::set_autocast_cache_enabled(cache);
      side.synchronize();
      graphs = false;
      note = std::string("CUDA graph capture failed, steps stay eager: ") + e.what();
      return;
    }
    at::cuda::CUDAEvent done;
    done.record(side);
    done.block(current);
    graph = std::move(g);
    captured = true;
  }
};

CudaStep::CudaStep(MocaMae model, torch::optim::AdamW& optimizer, Precision precision, bool graphs,
                   int eager_steps)
    : impl_(std::make_unique<Impl>(std::move(model), optimizer, precision, graphs,
                                   std::max(1, eager_steps))) {
  Impl& s = *impl_;
  s.params = trainable_parameters(*s.model);
  if (s.params.empty() || !s.params.front().is_cuda()) {
    throw std::invalid_argument("CudaStep: the model's parameters must be on CUDA");
  }
  s.device = s.params.front().device();
  s.loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(s.device));
}

CudaStep::~CudaStep() = default;

void CudaStep::step(const float* x, const MaskIndices& masks, double lr) {
  Impl& s = *impl_;
  c10::cuda::CUDAGuard device_guard(s.device);
  const auto& o = s.model->options();
  const int64_t C = o.channels, L = o.length;  // the window shape the model takes
  if (s.B < 0) {
    s.allocate(masks.batch, C, L, masks.keep, masks.tokens);
  } else if (masks.batch != s.B || masks.tokens != s.T || masks.keep != s.K) {
    // Another shape: the captured graph cannot serve it. Drop it and go on eagerly.
    if (s.captured || s.graphs) {
      s.note = "CUDA graphs off: the batch shape changed (" + std::to_string(s.B) + " x " +
               std::to_string(s.K) + " visible tokens, then " + std::to_string(masks.batch) +
               " x " + std::to_string(masks.keep) + ")";
    }
    torch::cuda::synchronize();
    s.graph.reset();
    s.captured = false;
    s.graphs = false;
    s.allocate(masks.batch, C, L, masks.keep, masks.tokens);
  }
  s.upload(x, masks);
  s.adamw.set_lr(lr);
  if (!s.captured && s.graphs && s.steps >= s.eager_steps) s.capture();
  if (s.captured) {
    s.graph->replay();
  } else {
    s.body();
  }
  s.adamw.count();
  ++s.steps;
  ++s.pending;
}

std::pair<double, long> CudaStep::take_losses() {
  Impl& s = *impl_;
  c10::cuda::CUDAGuard device_guard(s.device);
  const double sum = s.loss_sum.item<double>();  // waits for the device
  s.loss_sum.zero_();
  const long n = s.pending;
  s.pending = 0;
  return {sum, n};
}

bool CudaStep::graphed() const {
  return impl_->captured;
}

const std::string& CudaStep::note() const {
  return impl_->note;
}

#else  // no CUDA LibTorch, or no fused AdamW: CudaStep cannot be built.

struct CudaStep::Impl {};

CudaStep::CudaStep(MocaMae, torch::optim::AdamW&, Precision, bool, int) {
  throw std::runtime_error(std::string("CudaStep: this build has no CUDA step (LibTorch ") +
                           TORCH_VERSION + (fused_adamw_available() ? "" : ", no fused AdamW") +
                           ")");
}
CudaStep::~CudaStep() = default;
void CudaStep::step(const float*, const MaskIndices&, double) {}
std::pair<double, long> CudaStep::take_losses() {
  return {0.0, 0};
}
bool CudaStep::graphed() const {
  return false;
}
const std::string& CudaStep::note() const {
  static const std::string none;
  return none;
}

#endif

}  // namespace moca::model::detail
