#include "moca/model/nn/moca_model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include <torch/version.h>

#include "moca/common/error_text.hpp"
#include "moca/model/kernels/detail/attention.hpp"
#include "moca/model/kernels/detail/linear.hpp"
#include "moca/model/nn/pos_embed.hpp"

namespace moca::model {

namespace {

torch::Tensor pos_table_tensor(const MocaOptions& o, int dim) {
  const int rows_c = o.layout == TokenLayout::kModality ? o.channels : 1;
  std::vector<float> table =
      sincos_pos_table(o.pos_embed, o.layout, o.channels, o.patches(), dim, o.pos_pitch);
  const int64_t rows = static_cast<int64_t>(rows_c) * o.patches() + 1;
  return torch::from_blob(table.data(), {1, rows, dim}, torch::kFloat32).clone();
}

/// Position rows of the input tokens: pos (1 + Tm) x dim, rows (T') or undefined.
torch::Tensor token_positions(const torch::Tensor& pos, const torch::Tensor& pos_rows) {
  if (!pos_rows.defined()) return pos.slice(0, 1);
  return pos.index_select(0, pos_rows + 1);
}

void check_tokens(const torch::Tensor& tokens, int64_t token_dim, const char* who) {
  if (tokens.dim() != 3 || tokens.size(2) != token_dim) {
    throw_invalid(who, "tokens must be B x T x " + std::to_string(token_dim) + ", got " +
                           c10::str(tokens.sizes()));
  }
}

}  // namespace

torch::Tensor patchify(const torch::Tensor& x, TokenLayout layout, int patch_length) {
  if (x.dim() != 3 || patch_length < 1 || x.size(2) % patch_length != 0) {
    throw_invalid("patchify()",
                  "input must be B x C x L with L divisible by the "
                  "patch length (" +
                      std::to_string(patch_length) + "), got " + c10::str(x.sizes()));
  }
  const int64_t B = x.size(0), C = x.size(1), P = x.size(2) / patch_length;
  if (layout == TokenLayout::kModality) return x.reshape({B, C * P, patch_length});
  return x.reshape({B, C, P, patch_length}).permute({0, 2, 1, 3}).reshape({B, P, C * patch_length});
}

torch::Tensor unpatchify(const torch::Tensor& tokens, TokenLayout layout, int channels,
                         int patch_length) {
  if (tokens.dim() != 3) {
    throw_invalid("unpatchify()", "tokens must be B x T x d, got " + c10::str(tokens.sizes()));
  }
  const int64_t B = tokens.size(0);
  if (layout == TokenLayout::kModality) {
    if (tokens.size(2) != patch_length || tokens.size(1) % channels != 0) {
      throw_invalid("unpatchify()", "modality tokens " + c10::str(tokens.sizes()) + " do not fit " +
                                        std::to_string(channels) + " channels of patch length " +
                                        std::to_string(patch_length));
    }
    return tokens.reshape({B, channels, -1});
  }
  if (tokens.size(2) != static_cast<int64_t>(channels) * patch_length) {
    throw_invalid("unpatchify()", "stacked tokens " + c10::str(tokens.sizes()) + " do not fit " +
                                      std::to_string(channels) + " channels of patch length " +
                                      std::to_string(patch_length));
  }
  const int64_t P = tokens.size(1);
  return tokens.reshape({B, P, channels, patch_length})
      .permute({0, 2, 1, 3})
      .reshape({B, channels, P * patch_length});
}

MaskTensors to_tensors(const MaskIndices& m, const torch::Device& device) {
  MaskTensors t;
  auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  // from_blob does not copy; clone() before the source vectors go away.
  t.ids_keep = torch::from_blob(const_cast<int64_t*>(m.ids_keep.data()), {m.batch, m.keep}, i64)
                   .clone()
                   .to(device);
  t.ids_restore =
      torch::from_blob(const_cast<int64_t*>(m.ids_restore.data()), {m.batch, m.tokens}, i64)
          .clone()
          .to(device);
  t.mask = torch::from_blob(const_cast<float*>(m.mask.data()), {m.batch, m.tokens}, torch::kFloat32)
               .clone()
               .to(device);
  return t;
}

// ---------------------------------------------------------------------------------------------
AttentionImpl::AttentionImpl(int dim, int heads)
    : heads_(heads), scale_(1.0 / std::sqrt(static_cast<double>(dim / heads))) {
  qkv_ =
      register_module("qkv", torch::nn::Linear(torch::nn::LinearOptions(dim, 3 * dim).bias(true)));
  proj_ = register_module("proj", torch::nn::Linear(dim, dim));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x) {
  const int64_t B = x.size(0), N = x.size(1), D = x.size(2);
  auto qkv = detail::linear(x, qkv_);
  // CPU with small heads: one autograd function over the (sample, head) pairs in float32
  // (detail/attention.hpp), equal to LibTorch's products to float rounding. Under bf16 autocast
  // its bf16 qkv is widened first (the products then round once, where LibTorch's bf16 bmm
  // rounds each); elsewhere (CUDA, head dim > 64, other dtypes) LibTorch's products or fused
  // kernel.
  const bool cpu_kernel = detail::cpu_attention_enabled() &&
                          D / heads_ <= detail::kCpuAttentionMaxHeadDim &&
                          detail::attention_cpu_supported(qkv);
  auto out = cpu_kernel ? detail::attention_cpu(qkv, heads_, scale_)
                        : detail::attention_plain(qkv, heads_, scale_);
  return detail::linear(out.reshape({B, N, D}), proj_);
}

BlockImpl::BlockImpl(int dim, int heads, int mlp_ratio, double drop_path) : drop_path_(drop_path) {
  auto ln = [&](int d) { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d}).eps(1e-6)); };
  norm1_ = register_module("norm1", ln(dim));
  attn_ = register_module("attn", Attention(dim, heads));
  norm2_ = register_module("norm2", ln(dim));
  fc1_ = register_module("fc1", torch::nn::Linear(dim, dim * mlp_ratio));
  fc2_ = register_module("fc2", torch::nn::Linear(dim * mlp_ratio, dim));
}

torch::Tensor BlockImpl::drop_path(const torch::Tensor& x) const {
  if (drop_path_ <= 0.0 || !is_training()) return x;
  const double keep = 1.0 - drop_path_;
  auto shape = std::vector<int64_t>(static_cast<size_t>(x.dim()), 1);
  shape[0] = x.size(0);
  auto mask = torch::empty(shape, x.options()).bernoulli_(keep);
  return x * mask / keep;
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x) {
  auto h = x + drop_path(attn_(norm1_(x)));
  return h + drop_path(detail::linear(detail::linear_gelu(norm2_(h), fc1_), fc2_));
}

// ---------------------------------------------------------------------------------------------
void mae_init(torch::nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (const auto& m : module.modules(/*include_self=*/false)) {
    if (auto* lin = m->as<torch::nn::LinearImpl>()) {
      torch::nn::init::xavier_uniform_(lin->weight);
      if (lin->bias.defined()) torch::nn::init::zeros_(lin->bias);
    } else if (auto* ln = m->as<torch::nn::LayerNormImpl>()) {
      if (ln->weight.defined()) torch::nn::init::ones_(ln->weight);
      if (ln->bias.defined()) torch::nn::init::zeros_(ln->bias);
    }
  }
}

void trunc_normal_(torch::Tensor t, double std, double a, double b) {
  torch::NoGradGuard no_grad;
  auto cdf = [](double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); };
  const double lo = cdf(a / std), hi = cdf(b / std);
  t.uniform_(2.0 * lo - 1.0, 2.0 * hi - 1.0);
  t.erfinv_();
  t.mul_(std * std::sqrt(2.0));
  t.clamp_(a, b);
}

void timm_init(MocaClassifierImpl& classifier) {
  if (!classifier.encoder->options().pos_learned) {
    throw_invalid("timm_init()",
                  "the encoder's positional table is a fixed buffer; timm's initialisation "
                  "learns it (MocaOptions::pos_learned)");
  }
  torch::NoGradGuard no_grad;
  for (const auto& item : classifier.named_modules("", /*include_self=*/false)) {
    if (item.key() == "encoder.patch_embed") continue;  // PyTorch's default, below
    if (auto* lin = item.value()->as<torch::nn::LinearImpl>()) {
      trunc_normal_(lin->weight, 0.02);
      if (lin->bias.defined()) torch::nn::init::zeros_(lin->bias);
    } else if (auto* ln = item.value()->as<torch::nn::LayerNormImpl>()) {
      if (ln->weight.defined()) torch::nn::init::ones_(ln->weight);
      if (ln->bias.defined()) torch::nn::init::zeros_(ln->bias);
    }
  }
  auto params = classifier.encoder->named_parameters(/*recurse=*/false);
  trunc_normal_(params["cls_token"], 0.02);
  trunc_normal_(params["pos_embed"], 0.02);
  // The authors' PatchEmbed is a Conv2d made after timm's init: kaiming_uniform(a = sqrt 5),
  // i.e. U(+-1/sqrt(fan_in)) for the weight, and U(+-1/sqrt(fan_in)) for the bias.
  auto pe = classifier.encoder->named_children()["patch_embed"]->as<torch::nn::LinearImpl>();
  const double bound = 1.0 / std::sqrt(static_cast<double>(pe->weight.size(1)));
  torch::nn::init::uniform_(pe->weight, -bound, bound);
  torch::nn::init::uniform_(pe->bias, -bound, bound);
}

MocaEncoderImpl::MocaEncoderImpl(const MocaOptions& options, double drop_path) : options_(options) {
  options_.validate();
  if (drop_path < 0.0 || drop_path >= 1.0) {
    throw_invalid("MocaEncoder()",
                  "drop_path (" + std::to_string(drop_path) + ") must be in [0, 1)");
  }
  const int D = options_.embed_dim;
  patch_embed_ = register_module("patch_embed", torch::nn::Linear(options_.token_dim(), D));
  cls_token_ = register_parameter("cls_token", torch::zeros({1, 1, D}));
  // A learned table starts as the fixed code here; timm_init draws it afresh.
  pos_embed_ = options_.pos_learned ? register_parameter("pos_embed", pos_table_tensor(options_, D))
                                    : register_buffer("pos_embed", pos_table_tensor(options_, D));
  block_list_ = register_module("blocks", torch::nn::ModuleList());
  for (int k = 0; k < options_.depth; ++k) {
    const double rate = options_.depth > 1 ? drop_path * k / (options_.depth - 1) : 0.0;
    blocks_.push_back(Block(D, options_.num_heads, options_.mlp_ratio, rate));
    block_list_->push_back(blocks_.back());
  }
  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({D}).eps(1e-6)));
  mae_init(*this);
  torch::NoGradGuard no_grad;
  torch::nn::init::normal_(cls_token_, 0.0, 0.02);
  // The released code's Conv2d patch embedding keeps PyTorch's default bias U(+-1/sqrt(fan_in)).
  const double bound = 1.0 / std::sqrt(static_cast<double>(options_.token_dim()));
  torch::nn::init::uniform_(patch_embed_->bias, -bound, bound);
}

torch::Tensor MocaEncoderImpl::forward(const torch::Tensor& tokens, const torch::Tensor& ids_keep,
                                       const torch::Tensor& pos_rows) {
  check_tokens(tokens, options_.token_dim(), "MocaEncoder::forward()");
  const int64_t B = tokens.size(0), T = tokens.size(1), D = options_.embed_dim;
  auto pos = pos_embed_[0];
  auto tok_pos = token_positions(pos, pos_rows);
  if (tok_pos.size(0) != T) {
    throw_invalid("MocaEncoder::forward()",
                  std::to_string(T) + " input tokens, but the position table gives " +
                      std::to_string(tok_pos.size(0)) +
                      " (window shape does not match the model; see pos_rows)");
  }
  torch::Tensor x;
  if (ids_keep.defined()) {
    const int64_t K = ids_keep.size(1);
    auto kept = tokens.gather(1, ids_keep.unsqueeze(-1).expand({B, K, tokens.size(2)}));
    x = detail::linear(kept, patch_embed_) +
        tok_pos.index_select(0, ids_keep.reshape({-1})).view({B, K, D});
  } else {
    x = detail::linear(tokens, patch_embed_) + tok_pos.unsqueeze(0);
  }
  auto cls = (cls_token_ + pos.slice(0, 0, 1).unsqueeze(0)).expand({B, 1, D});
  x = torch::cat({cls, x}, 1);
  for (auto& block : blocks_) x = block->forward(x);
  return norm_(x);
}

MaeDecoderImpl::MaeDecoderImpl(const MocaOptions& options) : options_(options) {
  options_.validate();
  const int Dd = options_.decoder_embed_dim;
  embed_ = register_module("embed", torch::nn::Linear(options_.embed_dim, Dd));
  mask_token_ = register_parameter("mask_token", torch::zeros({1, 1, Dd}));
  pos_embed_ = register_buffer("pos_embed", pos_table_tensor(options_, Dd));
  block_list_ = register_module("blocks", torch::nn::ModuleList());
  for (int k = 0; k < options_.decoder_depth; ++k) {
    blocks_.push_back(Block(Dd, options_.decoder_num_heads, options_.mlp_ratio, 0.0));
    block_list_->push_back(blocks_.back());
  }
  norm_ =
      register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({Dd}).eps(1e-6)));
  pred_ = register_module("pred", torch::nn::Linear(Dd, options_.token_dim()));
  mae_init(*this);
  torch::NoGradGuard no_grad;
  torch::nn::init::normal_(mask_token_, 0.0, 0.02);
}

torch::Tensor MaeDecoderImpl::forward(const torch::Tensor& latent, const torch::Tensor& ids_restore,
                                      const torch::Tensor& pos_rows) {
  auto x = detail::linear(latent, embed_);
  const int64_t B = x.size(0), K = x.size(1) - 1, T = ids_restore.size(1), Dd = x.size(2);
  if (K > T) {
    throw_invalid("MaeDecoder::forward()",
                  std::to_string(K) + " visible tokens exceed " + std::to_string(T) + " tokens");
  }
  auto pos = pos_embed_[0];
  auto tok_pos = token_positions(pos, pos_rows);
  if (tok_pos.size(0) != T) {
    throw_invalid("MaeDecoder::forward()", std::to_string(T) +
                                               " tokens, but the position table gives " +
                                               std::to_string(tok_pos.size(0)));
  }
  auto seq = torch::cat({x.slice(1, 1), mask_token_.expand({B, T - K, Dd})}, 1);
  seq = seq.gather(1, ids_restore.unsqueeze(-1).expand({B, T, Dd}));
  auto h = torch::cat(
      {x.slice(1, 0, 1) + pos.slice(0, 0, 1).unsqueeze(0), seq + tok_pos.unsqueeze(0)}, 1);
  for (auto& block : blocks_) h = block->forward(h);
  return detail::linear(norm_(h), pred_).slice(1, 1);
}

MocaMaeImpl::MocaMaeImpl(const MocaOptions& options) : options_(options) {
  options_.validate();
  encoder = register_module("encoder", MocaEncoder(options_));
  decoder = register_module("decoder", MaeDecoder(options_));
}

torch::Tensor MocaMaeImpl::targets(const torch::Tensor& x) const {
  auto t = patchify(x, options_.layout, options_.patch_length);
  if (!options_.norm_pix_loss) return t;
  const int64_t n = t.size(2);
  auto mean = t.mean(-1, /*keepdim=*/true);
  auto centred = t - mean;
  auto var = centred.pow(2).sum(-1, /*keepdim=*/true) / static_cast<double>(n > 1 ? n - 1 : 1);
  return centred / (var + 1e-6).sqrt();
}

torch::Tensor MocaMaeImpl::loss(const torch::Tensor& target, const torch::Tensor& pred,
                                const torch::Tensor& mask) const {
  auto per_token = (pred - target).pow(2).mean(-1);
  if (options_.loss_scope == LossScope::kAll) return per_token.mean();
  return (per_token * mask).sum() / mask.sum();
}

MaeOutput MocaMaeImpl::forward(const torch::Tensor& x, const MaskTensors& masks,
                               const torch::Tensor& pos_rows) {
  if (x.dim() != 3 || x.size(2) != options_.length) {
    throw_invalid("MocaMae::forward()", "windows must be B x C x " +
                                            std::to_string(options_.length) + ", got " +
                                            c10::str(x.sizes()));
  }
  if (options_.loss_scope == LossScope::kMasked &&
      masks.ids_keep.size(1) == masks.ids_restore.size(1)) {
    throw_invalid("MocaMae::forward()",
                  "loss scope 'masked' needs at least one masked token per window");
  }
  MaeOutput out;
  auto tokens = patchify(x, options_.layout, options_.patch_length);
  if (masks.ids_restore.size(1) != tokens.size(1) || masks.ids_restore.size(0) != tokens.size(0)) {
    throw_invalid("MocaMae::forward()", "masks are " + c10::str(masks.ids_restore.sizes()) +
                                            " for " + std::to_string(tokens.size(0)) +
                                            " windows of " + std::to_string(tokens.size(1)) +
                                            " tokens");
  }
  auto latent = encoder->forward(tokens, masks.ids_keep, pos_rows);
  out.pred = decoder->forward(latent, masks.ids_restore, pos_rows);
  out.target = targets(x);
  out.loss = loss(out.target, out.pred, masks.mask);
  return out;
}

MocaClassifierImpl::MocaClassifierImpl(const MocaOptions& options, int classes, double drop_path,
                                       bool probe_head)
    : options_(options) {
  if (classes < 2) {
    throw_invalid("MocaClassifier()", "classes (" + std::to_string(classes) + ") must be >= 2");
  }
  encoder = register_module("encoder", MocaEncoder(options_, drop_path));
  if (probe_head) {
    head_norm = register_module(
        "head_norm", torch::nn::BatchNorm1d(
                         torch::nn::BatchNormOptions(options_.embed_dim).affine(false).eps(1e-6)));
  }
  head = register_module("head", torch::nn::Linear(options_.embed_dim, classes));
  torch::NoGradGuard no_grad;
  torch::nn::init::normal_(head->weight, 0.0, probe_head ? 0.01 : 2e-5);
  torch::nn::init::zeros_(head->bias);
}

torch::Tensor MocaClassifierImpl::features(const torch::Tensor& x, const torch::Tensor& pos_rows) {
  auto tokens = patchify(x, options_.layout, options_.patch_length);
  return encoder->forward(tokens, {}, pos_rows).select(1, 0);
}

torch::Tensor MocaClassifierImpl::head_forward(const torch::Tensor& f) {
  return head_norm ? head(head_norm(f)) : head(f);
}

torch::Tensor MocaClassifierImpl::forward(const torch::Tensor& x, const torch::Tensor& pos_rows) {
  return head_forward(features(x, pos_rows));
}

torch::Tensor pos_rows_for_channels(const MocaOptions& options,
                                    const std::vector<int>& channel_rows) {
  if (options.layout != TokenLayout::kModality) {
    throw_invalid("pos_rows_for_channels()",
                  "fewer-modality inference needs the modality token layout");
  }
  const int P = options.patches();
  std::vector<int64_t> rows;
  rows.reserve(channel_rows.size() * static_cast<size_t>(P));
  for (int c : channel_rows) {
    if (c < 0 || c >= options.channels) {
      throw_invalid("pos_rows_for_channels()",
                    "channel row " + std::to_string(c) + " outside the model's " +
                        std::to_string(options.channels) + " modalities");
    }
    for (int p = 0; p < P; ++p) rows.push_back(static_cast<int64_t>(c) * P + p);
  }
  return torch::tensor(rows, torch::kInt64);
}

}  // namespace moca::model
