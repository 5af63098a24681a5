// The inspection pass, attention rollout and pooled embeddings (torch translation unit).
#include "moca/model/eval/inspect.hpp"

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/model/detail/runtime_torch.hpp"
#include "moca/model/detail/tensor_adapter.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/kernels/detail/attention.hpp"
#include "moca/model/kernels/detail/linear.hpp"
#include "moca/model/nn/mask_indices.hpp"
#include "moca/model/nn/moca_model.hpp"

namespace moca::model {

std::string pool_name(Pool pool) {
  return enum_name(kPoolNames, pool);
}

double WindowAttention::weight(int layer, int head, int query, int key) const {
  const size_t n = static_cast<size_t>(size());
  return weights
      [((static_cast<size_t>(layer) * static_cast<size_t>(heads) + static_cast<size_t>(head)) * n +
        static_cast<size_t>(query)) *
           n +
       static_cast<size_t>(key)];
}

Eigen::MatrixXd WindowAttention::head_mean(int layer) const {
  const int n = size();
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
  for (int h = 0; h < heads; ++h)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) m(i, j) += weight(layer, h, i, j);
  return m / heads;
}

int WindowAttention::token_of(int channel, int patch) const {
  return stacked ? patch : channel * patches + patch;
}

Eigen::MatrixXd WindowAttention::on_grid(const Eigen::VectorXd& row) const {
  Eigen::MatrixXd g(channels, patches);
  for (int c = 0; c < channels; ++c)
    for (int p = 0; p < patches; ++p) g(c, p) = row(1 + token_of(c, p));
  return g;
}

Eigen::MatrixXd attention_rollout(const std::vector<Eigen::MatrixXd>& layers, double residual) {
  const std::string w = "attention_rollout()";
  if (layers.empty()) throw_invalid(w, "no layers");
  if (!(residual >= 0.0 && residual <= 1.0)) {
    throw_invalid(w, "residual", std::to_string(residual), "must be in [0, 1]");
  }
  const Eigen::Index n = layers[0].rows();
  Eigen::MatrixXd r = Eigen::MatrixXd::Identity(n, n);
  for (const auto& a : layers) {
    if (a.rows() != n || a.cols() != n) {
      throw_invalid(
          w, "every layer's matrix must be " + std::to_string(n) + " x " + std::to_string(n));
    }
    r = (residual * Eigen::MatrixXd::Identity(n, n) + (1.0 - residual) * a) * r;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// A named namespace, not an anonymous one: EncoderInspector::Impl holds a Parts, and in a unity
// build this file is an included one, where GCC warns (-Wsubobject-linkage) about a class member
// of an anonymous-namespace type.
namespace inspect_parts {

using LayerNormPtr = std::shared_ptr<torch::nn::LayerNormImpl>;

// The encoder's layers, looked up by their registered names (moca_model.cpp).
struct Parts {
  torch::nn::Linear patch_embed{nullptr};
  torch::Tensor cls_token, pos_embed;
  struct Block {
    LayerNormPtr norm1, norm2;
    torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
  };
  std::vector<Block> blocks;
  LayerNormPtr norm;
};

template <typename Impl>
std::shared_ptr<Impl> child(torch::nn::Module& m, const std::string& name) {
  const auto mods = m.named_modules("", false);
  const auto* found = mods.find(name);
  auto p = found ? std::dynamic_pointer_cast<Impl>(*found) : nullptr;
  if (!p) throw std::logic_error("EncoderInspector: the encoder has no layer " + name);
  return p;
}

Parts parts_of(MocaEncoderImpl& enc) {
  Parts p;
  p.patch_embed = torch::nn::Linear(child<torch::nn::LinearImpl>(enc, "patch_embed"));
  p.cls_token = enc.named_parameters(false)["cls_token"];
  p.pos_embed = enc.pos_embed();
  for (int k = 0; k < enc.options().depth; ++k) {
    const std::string b = "blocks." + std::to_string(k) + ".";
    Parts::Block blk;
    blk.norm1 = child<torch::nn::LayerNormImpl>(enc, b + "norm1");
    blk.norm2 = child<torch::nn::LayerNormImpl>(enc, b + "norm2");
    blk.qkv = torch::nn::Linear(child<torch::nn::LinearImpl>(enc, b + "attn.qkv"));
    blk.proj = torch::nn::Linear(child<torch::nn::LinearImpl>(enc, b + "attn.proj"));
    blk.fc1 = torch::nn::Linear(child<torch::nn::LinearImpl>(enc, b + "fc1"));
    blk.fc2 = torch::nn::Linear(child<torch::nn::LinearImpl>(enc, b + "fc2"));
    p.blocks.push_back(blk);
  }
  p.norm = child<torch::nn::LayerNormImpl>(enc, "norm");
  return p;
}

void check_window_fit(const CheckpointInfo& info, const data::Windows& w, const char* who) {
  w.validate(std::string(who) + ": windows");
  if (w.length != info.model.length) {
    throw_invalid(who, "window length", std::to_string(w.length),
                  "must be the model's " + std::to_string(info.model.length));
  }
}

}  // namespace inspect_parts

using inspect_parts::check_window_fit;
using inspect_parts::Parts;
using inspect_parts::parts_of;

struct EncoderInspector::Impl {
  CheckpointInfo info;
  torch::Device device{torch::kCPU};
  InferenceOptions options;
  MocaEncoder encoder{nullptr};
  Parts parts;
};

EncoderInspector::EncoderInspector(const std::string& checkpoint, const InferenceOptions& options)
    : impl_(std::make_unique<Impl>()) {
  if (options.batch_size < 1) {
    throw_invalid("EncoderInspector()", "batch_size", std::to_string(options.batch_size),
                  "must be >= 1");
  }
  impl_->options = options;
  impl_->device = detail::setup_runtime(options.runtime);
  auto ck = detail::open_checkpoint(checkpoint);
  impl_->info = ck.info;
  impl_->encoder = detail::load_encoder(ck, impl_->device);
  impl_->parts = parts_of(*impl_->encoder);
}

EncoderInspector::~EncoderInspector() = default;

const CheckpointInfo& EncoderInspector::info() const {
  return impl_->info;
}
int EncoderInspector::dim() const {
  return impl_->info.model.embed_dim;
}

WindowAttention EncoderInspector::attention(const data::Windows& windows, int row,
                                            const masking::Mask* mask) const {
  const char* who = "EncoderInspector::attention()";
  const MocaOptions& mo = impl_->info.model;
  check_window_fit(impl_->info, windows, who);
  if (row < 0 || row >= windows.size()) {
    throw_invalid(who, "window", std::to_string(row),
                  "must be in [0, " + std::to_string(windows.size()) + ")");
  }
  const int C = windows.channels, P = mo.patches();
  const bool stacked = mo.layout == TokenLayout::kStacked;
  const int T = stacked ? P : C * P;
  const torch::Device dev = impl_->device;
  auto pos_rows = detail::pos_rows_for_data(impl_->info, windows.channel_names, C, dev);
  torch::Tensor ids_keep;
  std::vector<bool> visible(static_cast<size_t>(T), true);
  if (mask != nullptr) {
    const MaskIndices mi = mask_indices({*mask}, mo.layout, C, P);
    ids_keep = to_tensors(mi, dev).ids_keep;
    std::fill(visible.begin(), visible.end(), false);
    for (int64_t t : mi.ids_keep) visible[static_cast<size_t>(t)] = true;
  }
  torch::NoGradGuard no_grad;
  const Parts& pt = impl_->parts;
  auto tokens = patchify(detail::windows_tensor(windows, {row}, dev), mo.layout, mo.patch_length);
  // The encoder's forward pass (MocaEncoderImpl::forward), layer by layer.
  const int64_t D = mo.embed_dim, H = mo.num_heads;
  auto pos = pt.pos_embed[0];
  auto tok_pos = pos_rows.defined() ? pos.index_select(0, pos_rows + 1) : pos.slice(0, 1);
  torch::Tensor x;
  if (ids_keep.defined()) {
    const int64_t K = ids_keep.size(1);
    auto kept = tokens.gather(1, ids_keep.unsqueeze(-1).expand({1, K, tokens.size(2)}));
    x = detail::linear(kept, pt.patch_embed) +
        tok_pos.index_select(0, ids_keep.reshape({-1})).view({1, K, D});
  } else {
    x = detail::linear(tokens, pt.patch_embed) + tok_pos.unsqueeze(0);
  }
  auto cls = (pt.cls_token + pos.slice(0, 0, 1).unsqueeze(0)).expand({1, 1, D});
  x = torch::cat({cls, x}, 1);
  const int64_t N = x.size(1), hd = D / H;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));  // as AttentionImpl

  // Grid index (1 + t) of each encoder row.
  std::vector<int> grid_row(static_cast<size_t>(N), 0);
  for (int t = 0, k = 1; t < T; ++t)
    if (visible[static_cast<size_t>(t)]) grid_row[static_cast<size_t>(k++)] = 1 + t;

  WindowAttention a;
  a.layers = static_cast<int>(pt.blocks.size());
  a.heads = static_cast<int>(H);
  a.tokens = T;
  a.channels = C;
  a.patches = P;
  a.stacked = stacked;
  a.visible = visible;
  const size_t n = static_cast<size_t>(T + 1);
  a.weights.assign(static_cast<size_t>(a.layers * a.heads) * n * n, 0.0);
  std::vector<Eigen::MatrixXd> compact;
  for (size_t l = 0; l < pt.blocks.size(); ++l) {
    const Parts::Block& b = pt.blocks[l];
    auto qkv = detail::linear(b.norm1->forward(x), b.qkv);
    // The weights, from the same q and k, in double: B x H x N x N.
    auto p = qkv.to(torch::kFloat64).reshape({1, N, 3, H, hd}).permute({2, 0, 3, 1, 4});
    auto w = torch::softmax(torch::matmul(p[0], p[1].transpose(-2, -1)) * scale, -1)
                 .to(torch::kCPU)
                 .contiguous();
    const double* wp = w.data_ptr<double>();
    Eigen::MatrixXd mean = Eigen::MatrixXd::Zero(N, N);
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t i = 0; i < N; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          const double v = wp[(h * N + i) * N + j];
          mean(i, j) += v / static_cast<double>(H);
          a.weights[((l * static_cast<size_t>(H) + static_cast<size_t>(h)) * n +
                     static_cast<size_t>(grid_row[static_cast<size_t>(i)])) *
                        n +
                    static_cast<size_t>(grid_row[static_cast<size_t>(j)])] = v;
        }
      }
    }
    compact.push_back(mean);
    // The block's output through the model's own attention call (AttentionImpl::forward).
    const bool cpu_kernel = detail::cpu_attention_enabled() &&
                            hd <= detail::kCpuAttentionMaxHeadDim &&
                            detail::attention_cpu_supported(qkv);
    auto out =
        cpu_kernel ? detail::attention_cpu(qkv, H, scale) : detail::attention_plain(qkv, H, scale);
    auto h = x + detail::linear(out.reshape({1, N, D}), b.proj);
    x = h + detail::linear(detail::linear_gelu(b.norm2->forward(h), b.fc1), b.fc2);
  }
  x = pt.norm->forward(x);
  a.output = detail::to_eigen(x[0]).cast<float>();
  const Eigen::MatrixXd r = attention_rollout(compact);
  a.rollout = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < N; ++j)
      a.rollout(grid_row[static_cast<size_t>(i)], grid_row[static_cast<size_t>(j)]) = r(i, j);
  return a;
}

Eigen::MatrixXd EncoderInspector::embed(const data::Windows& windows, Pool pool) const {
  const MocaOptions& mo = impl_->info.model;
  check_window_fit(impl_->info, windows, "EncoderInspector::embed()");
  auto pos_rows = detail::pos_rows_for_data(impl_->info, windows.channel_names, windows.channels,
                                            impl_->device);
  Eigen::MatrixXd out(windows.size(), dim());
  torch::NoGradGuard no_grad;
  const int bs = impl_->options.batch_size;
  for (int s = 0; s < windows.size(); s += bs) {
    std::vector<int> rows(static_cast<size_t>(std::min(bs, windows.size() - s)));
    std::iota(rows.begin(), rows.end(), s);
    auto x = detail::windows_tensor(windows, rows, impl_->device);
    auto h = impl_->encoder->forward(patchify(x, mo.layout, mo.patch_length), {}, pos_rows);
    auto f = pool == Pool::kCls ? h.select(1, 0) : h.slice(1, 1).mean(1);
    out.middleRows(s, static_cast<Eigen::Index>(rows.size())) = detail::to_eigen(f);
  }
  return out;
}

}  // namespace moca::model
