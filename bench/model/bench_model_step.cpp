// Times one MoCA pre-training step (forward, backward, AdamW update) and a plain matrix multiply
// on the same threads, and reports the step's FLOP count and its fraction of the measured
// matrix-multiply rate (on CPU the faster of LibTorch's product and the one moca's kernels use).
// The step is the trainer's (model::mae_loss_and_gradients): on CPU the batch is split into
// --shards blocks run concurrently (default: one per thread). On CUDA (--device cuda) every timed
// step ends with a device synchronisation and the matrix rate is the device's 4096^3 product.
// Usage: bench_model_step [--preset tiny] [--device cpu] [--threads 2] [--shards 0]
//   [--precision fp32] [--batch 50]
//   [--ratio 0.75] [--reps 20] [--warmup 3]
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "enum_option.hpp"
#include "moca/common/output_file.hpp"
#include "moca/common/random.hpp"
#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/kernels/detail/adamw.hpp"
#include "moca/model/kernels/detail/cpu_kernels.hpp"
#include "moca/model/kernels/detail/gemm.hpp"
#include "moca/model/nn/moca_model.hpp"
#include "moca/model/nn/model_flops.hpp"
#include "moca/model/train/detail/cuda_step.hpp"
#include "run_cli.hpp"

#include <torch/csrc/autograd/profiler_legacy.h>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct BenchOptions {
  std::string preset = "tiny";
  int threads = 2, batch = 50, reps = 20, warmup = 3, channels = 6, length = 200, patch = 20;
  int shards = 0;
  moca::model::Precision precision = moca::model::Precision::kFp32;
  moca::model::Device device = moca::model::Device::kCpu;
  std::string profile, kernels = "moca", cuda_step = "graph";
  bool no_tf32 = false;
  int group = 0;  ///< steps per timed group: 0 = 10 on CUDA, 1 on CPU
  double ratio = 0.75;
};

void add_flags(CLI::App& app, BenchOptions& o) {
  app.add_option("--preset", o.preset, "model preset");
  moca::tools::add_enum_option(&app, "--device", o.device, moca::model::kDeviceNames,
                               "auto | cpu | cuda");
  app.add_option("--threads", o.threads, "intra-op threads");
  app.add_option("--batch", o.batch, "windows per step");
  app.add_option("--ratio", o.ratio, "masked fraction (cross masking)");
  app.add_option("--shards", o.shards,
                 "batch shards run concurrently, one thread each (0 = threads, 1 = off)");
  moca::tools::add_enum_option(&app, "--precision", o.precision, moca::model::kPrecisionNames,
                               "fp32 | bf16 (autocast of the forward pass)");
  app.add_option("--profile", o.profile,
                 "write a per-op summary of the timed steps (LibTorch's profiler) to this file");
  app.add_option("--kernels", o.kernels,
                 "moca: the trainer's CPU kernels (attention, Linear+GELU, AdamW); libtorch: "
                 "LibTorch's layers and optimiser; both: alternate steps of the two, same model")
      ->check(CLI::IsMember({"moca", "libtorch", "both"}));
  app.add_option("--cuda-step", o.cuda_step,
                 "CUDA: graph (the trainer's step, captured as a CUDA graph), fused (the same, "
                 "eager), libtorch (LibTorch's per-parameter AdamW, loss read every step)")
      ->check(CLI::IsMember({"graph", "fused", "libtorch"}));
  app.add_flag("--no-tf32", o.no_tf32, "CUDA fp32: full-precision products (default TF32)");
  app.add_option("--group", o.group,
                 "steps timed between device synchronisations (0 = 10 on CUDA, 1 on CPU)")
      ->check(CLI::Range(0, 1000));
  app.add_option("--reps", o.reps, "timed steps");
  app.add_option("--warmup", o.warmup, "untimed steps first");
}

// AdamW as the trainer: weight decay on matrices, none on biases and 1-D parameters.
torch::optim::AdamW make_adamw(moca::model::MocaMae& model) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& p : model->named_parameters()) {
    (p.value().dim() <= 1 || (p.key().size() >= 5 && p.key().substr(p.key().size() - 5) == ".bias")
         ? no_decay
         : decay)
        .push_back(p.value());
  }
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay,
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(5e-4).betas({0.9, 0.95}).weight_decay(0.05)));
  groups.emplace_back(no_decay,
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(5e-4).betas({0.9, 0.95}).weight_decay(0.0)));
  return torch::optim::AdamW(std::move(groups));
}

// `batch` cross masks hiding `masked` of the channels x patches tokens each (seed 1).
std::vector<moca::masking::Mask> random_masks(int batch, int channels, int patches, int masked) {
  const int T = channels * patches;
  moca::Rng rng(1);
  std::vector<moca::masking::Mask> masks;
  for (int b = 0; b < batch; ++b) {
    std::vector<int> perm(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) perm[static_cast<size_t>(t)] = t;
    moca::shuffle(perm, rng);
    moca::masking::Mask m(channels, patches);
    for (int k = 0; k < masked; ++k) m.set(perm[static_cast<size_t>(k)], true);
    masks.push_back(m);
  }
  return masks;
}

struct StepTimes {
  std::vector<double> wall, cpu;  // seconds per timed step (per group's step on CUDA)
  int group = 1;                  // steps timed between synchronisations
  std::string cuda_step;          // what the CUDA steps ran: "graph", "fused" or "libtorch"
  std::string note;               // why CUDA graphs were not used, if asked for and not used
};

// Warm-up then timed training steps of one model per kernel set in `variants` (true: moca's CPU
// kernels), alternating group by group so that both see the same minutes of the machine; the
// profiler records the timed ones when asked. One StepTimes per variant.
std::vector<StepTimes> time_steps(const BenchOptions& o, const torch::Device& device, int shards,
                                  const std::vector<bool>& variants) {
  const bool cuda = device.is_cuda();
  const auto sync = [cuda] {
    if (cuda) torch::cuda::synchronize();
  };
  auto opts = moca::model::preset(o.preset, o.channels, o.length, o.patch);
  std::vector<moca::model::MocaMae> models;
  std::vector<torch::optim::AdamW> optimizers;
  models.reserve(variants.size());
  optimizers.reserve(variants.size());
  for (size_t v = 0; v < variants.size(); ++v) {
    torch::manual_seed(0);
    models.emplace_back(opts);
    models.back()->to(device);
    models.back()->train();
    optimizers.push_back(make_adamw(models.back()));
  }
  const int masked = static_cast<int>(std::floor(o.ratio * opts.tokens()));
  auto x_cpu = torch::randn({o.batch, o.channels, o.length}).contiguous();
  auto x = x_cpu.to(device);
  const auto masks = random_masks(o.batch, o.channels, opts.patches(), masked);
  const auto indices = moca::model::mask_indices(masks, opts.layout, o.channels, opts.patches());
  auto mt = moca::model::to_tensors(indices, device);
  // On CUDA the trainer's CUDA step (uploads from the host, fused AdamW, graphs) unless
  // --cuda-step libtorch.
  const bool engine = cuda && o.cuda_step != "libtorch";
  std::vector<std::unique_ptr<moca::model::detail::CudaStep>> engines;
  for (size_t v = 0; engine && v < variants.size(); ++v) {
    engines.push_back(std::make_unique<moca::model::detail::CudaStep>(
        models[v], optimizers[v], o.precision, o.cuda_step == "graph"));
  }
  const int group = o.group > 0 ? o.group : (cuda ? 10 : 1);
  const int groups = std::max(1, (o.reps + group - 1) / group);
  std::vector<StepTimes> times(variants.size());
  for (auto& t : times) t.group = group;
  std::ostringstream trace;  // the profiler's trace, written through the output module
  std::unique_ptr<torch::autograd::profiler::RecordProfile> recorder;
  auto one_step = [&](size_t v) {
    if (engine) {
      engines[v]->step(x_cpu.data_ptr<float>(), indices, 5e-4);
    } else {
      moca::model::mae_loss_and_gradients(models[v], x, mt, shards, o.precision);
      moca::model::detail::adamw_step(optimizers[v]);
    }
  };
  for (int i = 0; i < o.warmup; ++i) {
    for (size_t v = 0; v < variants.size(); ++v) {
      moca::model::detail::set_cpu_kernels_enabled(variants[v]);
      one_step(v);
    }
  }
  if (!o.profile.empty()) {
    recorder = std::make_unique<torch::autograd::profiler::RecordProfile>(trace);
  }
  for (int g = 0; g < groups; ++g) {
    for (size_t v = 0; v < variants.size(); ++v) {
      moca::model::detail::set_cpu_kernels_enabled(variants[v]);
      sync();
      const double t0 = now(), c0 = cpu_now();
      for (int k = 0; k < group; ++k) one_step(v);
      sync();
      const double t1 = now(), c1 = cpu_now();
      times[v].wall.push_back((t1 - t0) / group);
      times[v].cpu.push_back((c1 - c0) / group);
    }
  }
  for (size_t v = 0; v < variants.size(); ++v) {
    times[v].cuda_step = !cuda                   ? ""
                         : !engine               ? "libtorch"
                         : engines[v]->graphed() ? "graph"
                                                 : "fused";
    if (engine) {
      const auto [sum, n] = engines[v]->take_losses();
      if (!std::isfinite(sum)) {
        throw std::runtime_error("non-finite loss in the timed CUDA steps (" + std::to_string(n) +
                                 " steps)");
      }
      times[v].note = engines[v]->note();
    }
  }
  moca::model::detail::set_cpu_kernels_enabled(true);
  recorder.reset();  // completes the trace
  if (!o.profile.empty()) moca::write_output_text(o.profile, trace.str());
  return times;
}

// The optimiser step alone, on the preset's parameters with random gradients: LibTorch's
// AdamW::step against the one-pass step the trainer takes (detail::adamw_step), alternating,
// median of 20 each after 3 warm-up; {LibTorch ms, one-pass ms}.
std::pair<double, double> time_optimizer(const BenchOptions& o, const torch::Device& device) {
  torch::manual_seed(1);
  moca::model::MocaMae a(moca::model::preset(o.preset, o.channels, o.length, o.patch));
  moca::model::MocaMae b(moca::model::preset(o.preset, o.channels, o.length, o.patch));
  a->to(device);
  b->to(device);
  for (auto* m : {&a, &b}) {
    for (auto& p : (*m)->parameters()) p.mutable_grad() = torch::randn_like(p);
  }
  torch::optim::AdamW libtorch = make_adamw(a), fused = make_adamw(b);
  const bool cuda = device.is_cuda();
  std::vector<double> ta, tb;
  for (int i = 0; i < 23; ++i) {
    for (int which = 0; which < 2; ++which) {
      if (cuda) torch::cuda::synchronize();
      const double t0 = now();
      if (which == 0) {
        libtorch.step();
      } else {
        moca::model::detail::adamw_step(fused);
      }
      if (cuda) torch::cuda::synchronize();
      if (i >= 3) (which == 0 ? ta : tb).push_back(now() - t0);
    }
  }
  return {median(ta), median(tb)};
}

// Rate of an n^3 fp32 product run by `product` (which synchronises the device itself): median
// over 10 calls after 2 untimed ones.
template <class Product>
double median_rate(int64_t n, Product product) {
  std::vector<double> rates;
  for (int i = 0; i < 12; ++i) {
    const double t0 = now();
    product();
    const double t1 = now();
    if (i >= 2)
      rates.push_back(2.0 * static_cast<double>(n * n) * static_cast<double>(n) / (t1 - t0));
  }
  return median(rates);
}

// LibTorch's matrix-multiply rate on the same threads (or device), in `dtype` (on CUDA float32
// products follow the TF32 switch that setup_runtime set).
double matmul_rate(const torch::Device& device, int64_t n,
                   torch::ScalarType dtype = torch::kFloat) {
  const bool cuda = device.is_cuda();
  auto a = torch::randn({n, n}).to(device, dtype), b2 = torch::randn({n, n}).to(device, dtype);
  if (cuda) torch::cuda::synchronize();
  return median_rate(n, [&] {
    auto c = torch::mm(a, b2);
    if (cuda) torch::cuda::synchronize();
  });
}

/// The rate of moca's own CPU product (detail::sgemm_rm, the one its kernels use), on the same
/// threads.
double kernel_matmul_rate(int64_t n) {
  std::vector<float> a(static_cast<size_t>(n * n), 0.5f), b(a), c(a.size());
  return median_rate(n, [&] {
    moca::model::detail::sgemm_rm(false, false, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f,
                                  c.data(), n);
  });
}

int run_bench(const BenchOptions& o) {
  moca::model::RuntimeOptions runtime;
  runtime.device = o.device;
  runtime.threads = o.threads;
  runtime.batch_shards = o.shards;
  runtime.precision = o.precision;
  runtime.tf32 = !o.no_tf32;
  // threads, the allocator and the device, as the trainer
  const torch::Device device = moca::model::detail::setup_runtime(runtime);
  const bool cuda = device.is_cuda();
  const int used_shards = runtime.effective_batch_shards(cuda, o.batch);
  const std::vector<bool> variants =
      o.kernels == "both" ? std::vector<bool>{true, false} : std::vector<bool>{o.kernels == "moca"};
  const auto all_times = time_steps(o, device, used_shards, variants);
  const StepTimes& times = all_times.front();
  const auto opts = moca::model::preset(o.preset, o.channels, o.length, o.patch);
  const int T = opts.tokens();
  const int masked = static_cast<int>(std::floor(o.ratio * T));
  const double step_s = median(times.wall);
  const double flops = moca::model::mae_step_flops(opts, o.batch, T - masked);
  const int64_t n = cuda ? 4096 : 1024;
  const double torch_rate = matmul_rate(
      device, n,
      cuda && o.precision == moca::model::Precision::kBf16 ? torch::kBFloat16 : torch::kFloat);
  // On CPU the kernels' own product may be faster than LibTorch's (oneDNN against an OpenBLAS
  // held to AVX2): the fraction is of the faster of the two, the machine's GEMM limit as moca
  // reaches it.
  const bool kernel_gemm = !cuda && moca::model::detail::have_sgemm();
  const double kernel_rate = kernel_gemm ? kernel_matmul_rate(n) : 0.0;
  const double peak = std::max(torch_rate, kernel_rate);
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "preset " << o.preset << ", batch " << o.batch << ", tokens " << T << ", visible "
            << T - masked << ", threads " << at::get_num_threads() << ", batch shards "
            << used_shards << ", " << moca::model::to_string(o.precision) << ", "
            << (cuda ? "cuda" : "cpu") << ", " << (variants.front() ? "moca" : "libtorch")
            << " kernels";
  if (cuda) {
    std::cout << ", cuda step " << times.cuda_step << ", "
              << (o.precision == moca::model::Precision::kFp32 && !o.no_tf32 ? "tf32" : "no tf32")
              << ", " << times.group << " steps per timed group";
  }
  std::cout << "\n";
  if (!times.note.empty()) std::cout << "note: " << times.note << "\n";
  std::cout << "step median " << step_s * 1e3 << " ms (min "
            << *std::min_element(times.wall.begin(), times.wall.end()) * 1e3 << " ms) over "
            << times.wall.size() * static_cast<size_t>(times.group)
            << " steps; CPU time per step (all threads) median " << median(times.cpu) * 1e3
            << " ms\n";
  std::cout << "step FLOPs " << flops / 1e9 << " GFLOP -> " << flops / step_s / 1e9 << " GFLOP/s; "
            << (cuda && o.precision == moca::model::Precision::kBf16 ? "bf16 " : "") << "sgemm "
            << n << "^3 " << torch_rate / 1e9 << " GFLOP/s (LibTorch)";
  if (kernel_gemm) {
    std::cout << ", " << kernel_rate / 1e9 << " GFLOP/s (" << moca::model::detail::sgemm_library()
              << ", moca's kernels)";
  }
  std::cout << "; fraction " << flops / step_s / peak << " of the faster\n";
  if (variants.size() == 2) {
    const double plain_s = median(all_times.back().wall);
    std::cout << "same steps with LibTorch's layers and optimiser (alternating): median "
              << plain_s * 1e3 << " ms, CPU " << median(all_times.back().cpu) * 1e3
              << " ms; moca kernels / LibTorch = " << step_s / plain_s << " (speed-up "
              << plain_s / step_s << "x)\n";
  }
  const auto [adamw_libtorch, adamw_fused] = time_optimizer(o, device);
  std::cout << "optimiser step (in the step above) median " << adamw_fused * 1e3
            << " ms; LibTorch's AdamW::step on the same parameters " << adamw_libtorch * 1e3
            << " ms\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Time a MoCA pre-training step"};
  BenchOptions o;
  add_flags(app, o);
  return moca::tools::run_cli("bench_model_step", app, argc, argv, [&] { return run_bench(o); });
}
