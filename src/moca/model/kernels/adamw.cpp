#include <ATen/Parallel.h>

#include <atomic>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include "moca/model/kernels/detail/adamw.hpp"

namespace moca::model::detail {

namespace {

std::atomic<bool> g_fused_adamw{true};

bool fusable(const torch::Tensor& p) {
  const auto& g = p.grad();
  return p.device().is_cpu() && p.scalar_type() == torch::kFloat && p.is_contiguous() &&
         !g.is_sparse() && g.device().is_cpu() && g.scalar_type() == torch::kFloat &&
         g.is_contiguous() && g.sizes() == p.sizes();
}

/// The key under which LibTorch keeps a parameter's state: the TensorImpl's address as text in
/// 1.x, the address itself in later versions.
template <typename Map>
typename Map::key_type state_key(const torch::Tensor& p) {
  if constexpr (std::is_same_v<typename Map::key_type, std::string>) {
    std::ostringstream text;  // as c10::guts::to_string writes it
    text << p.unsafeGetTensorImpl();
    return text.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

}  // namespace

torch::optim::AdamWParamState& adamw_state(torch::optim::AdamW& optimizer, const torch::Tensor& p) {
  if (auto* found = find_adamw_state(optimizer, p)) return *found;
  auto& states = optimizer.state();
  auto s = std::make_unique<torch::optim::AdamWParamState>();
  s->step(0);
  s->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
  s->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
  auto it = states.emplace(state_key<std::remove_reference_t<decltype(states)>>(p), std::move(s));
  return static_cast<torch::optim::AdamWParamState&>(*it.first->second);
}

namespace {

/// One parameter's update, in LibTorch's order of operations: p *= 1 - lr wd; m = b1 m +
/// (1 - b1) g; v = b2 v + (1 - b2) g²; p -= lr / bc1 · m / (sqrt(v) / sqrt(bc2) + eps).
void update(torch::Tensor& p, const torch::optim::AdamWOptions& o,
            torch::optim::AdamWParamState& s) {
  s.step(s.step() + 1);
  const double beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas());
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(s.step()));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(s.step()));
  const float decay = static_cast<float>(1.0 - o.lr() * o.weight_decay());
  const float b1 = static_cast<float>(beta1), c1 = static_cast<float>(1.0 - beta1);
  const float b2 = static_cast<float>(beta2), c2 = static_cast<float>(1.0 - beta2);
  const float sqrt_bc2 = static_cast<float>(std::sqrt(bc2)), eps = static_cast<float>(o.eps());
  const float step_size = static_cast<float>(o.lr() / bc1);
  float* P = p.data_ptr<float>();
  const float* G = p.grad().data_ptr<float>();
  float* M = s.exp_avg().data_ptr<float>();
  float* V = s.exp_avg_sq().data_ptr<float>();
  // By value and through restrict pointers, so that the compiler keeps the constants in
  // registers and vectorises the loop (with -fno-math-errno for sqrt: see CMakeLists.txt).
  at::parallel_for(0, p.numel(), 1 << 15, [=](int64_t begin, int64_t end) {
    float* __restrict pp = P;
    const float* __restrict gp = G;
    float* __restrict mp = M;
    float* __restrict vp = V;
    for (int64_t k = begin; k < end; ++k) {
      const float g = gp[k];
      const float w = pp[k] * decay;  // 1 exactly without weight decay
      const float m = mp[k] * b1 + c1 * g;
      const float v = vp[k] * b2 + c2 * g * g;
      mp[k] = m;
      vp[k] = v;
      pp[k] = w - step_size * (m / (std::sqrt(v) / sqrt_bc2 + eps));
    }
  });
}

}  // namespace

torch::optim::AdamWParamState* find_adamw_state(torch::optim::AdamW& optimizer,
                                                const torch::Tensor& p) {
  auto& states = optimizer.state();
  const auto it = states.find(state_key<std::remove_reference_t<decltype(states)>>(p));
  return it == states.end() ? nullptr
                            : static_cast<torch::optim::AdamWParamState*>(it->second.get());
}

void set_fused_adamw_enabled(bool enabled) {
  g_fused_adamw.store(enabled);
}
bool fused_adamw_enabled() {
  return g_fused_adamw.load();
}

void adamw_step(torch::optim::AdamW& optimizer) {
  bool fused = fused_adamw_enabled();
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    if (o.amsgrad()) fused = false;
    for (const auto& p : group.params()) {
      if (p.grad().defined() && !fusable(p)) fused = false;
    }
  }
  if (!fused) {
    optimizer.step();
    return;
  }
  torch::NoGradGuard no_grad;
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      update(p, o, adamw_state(optimizer, p));
    }
  }
}

std::vector<torch::Tensor> trainable_parameters(const torch::nn::Module& module) {
  std::vector<torch::Tensor> out;
  for (const auto& p : module.parameters()) {
    if (p.requires_grad()) out.push_back(p);
  }
  return out;
}

}  // namespace moca::model::detail
