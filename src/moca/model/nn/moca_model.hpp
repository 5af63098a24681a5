#pragma once
/// \file moca_model.hpp
/// The MoCA masked autoencoder and the ViT classifier on its encoder (LibTorch modules).
///
/// One of the few headers that include torch; include it only from torch translation units.
/// Architecture (paper "Model Architecture", docs/model.md, "Model"): patch embedding
/// Linear(token_dim -> D) + fixed sin-cos positions; the visible tokens only, with a cls token,
/// through `depth` pre-norm blocks x += Attn(LN(x)); x += MLP(LN(x)) (qkv with bias, scaled
/// dot-product attention, LayerNorm eps 1e-6, GELU MLP of ratio 4) and a final LayerNorm; then an
/// asymmetric decoder: Linear(D -> Dd), mask tokens at the masked positions, fixed positions,
/// `decoder_depth` blocks, LayerNorm and a linear head to token_dim values per token.
#include <torch/torch.h>

#include <vector>

#include "moca/model/model_options.hpp"
#include "moca/model/nn/mask_indices.hpp"
#include "moca/model/runtime.hpp"

namespace moca::model {

/// Cuts windows B x C x L into tokens: B x (C*P) x Lp (modality layout, token c*P+p) or
/// B x P x (C*Lp) (stacked layout, value c*Lp+q of token p).
torch::Tensor patchify(const torch::Tensor& x, TokenLayout layout, int patch_length);
/// Inverse of patchify: tokens back to B x C x L.
torch::Tensor unpatchify(const torch::Tensor& tokens, TokenLayout layout, int channels,
                         int patch_length);

/// Index tensors of a batch of masks (see mask_indices.hpp), on one device.
struct MaskTensors {
  torch::Tensor ids_keep;     ///< B x K int64, visible tokens ascending
  torch::Tensor ids_restore;  ///< B x T int64
  torch::Tensor mask;         ///< B x T float, 1 = masked
};
MaskTensors to_tensors(const MaskIndices& m, const torch::Device& device);

/// Multi-head self-attention with a fused qkv projection (bias) and an output projection.
class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(int dim, int heads);
  /// x: B x N x dim -> B x N x dim; softmax(q k^T / sqrt(dim/heads)) v per head.
  torch::Tensor forward(const torch::Tensor& x);

 private:
  int heads_;
  double scale_;
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr};
};
TORCH_MODULE(Attention);

/// Pre-norm transformer block with optional stochastic depth (drop path) on both branches.
class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(int dim, int heads, int mlp_ratio, double drop_path);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::Tensor drop_path(const torch::Tensor& x) const;
  double drop_path_;
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  Attention attn_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(Block);

/// The encoder: patch embedding, cls token, fixed positions, blocks, final LayerNorm.
/// Parameter names: patch_embed.*, cls_token, blocks.<k>.*, norm.*; buffer pos_embed (a
/// parameter, trained, when MocaOptions::pos_learned).
class MocaEncoderImpl : public torch::nn::Module {
 public:
  /// `drop_path` is the maximum stochastic-depth rate (block k gets drop_path * k / (depth-1)).
  explicit MocaEncoderImpl(const MocaOptions& options, double drop_path = 0.0);
  /// Encodes the tokens `ids_keep` (B x K, ascending; undefined = all tokens) of `tokens`
  /// (B x T' x token_dim from patchify). `pos_rows` (T' int64; undefined = identity) gives the
  /// model token whose position each input token takes (fewer-modality inference).
  /// Returns B x (1 + K) x D after the final norm; row 0 is the cls token.
  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& ids_keep = {},
                        const torch::Tensor& pos_rows = {});
  const MocaOptions& options() const { return options_; }
  /// The (1 x (1 + T) x D) positional table: a buffer, or a parameter when pos_learned.
  const torch::Tensor& pos_embed() const { return pos_embed_; }

 private:
  MocaOptions options_;
  torch::nn::Linear patch_embed_{nullptr};
  torch::Tensor cls_token_, pos_embed_;
  torch::nn::ModuleList block_list_{nullptr};
  std::vector<Block> blocks_;
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(MocaEncoder);

/// The MAE decoder. Parameter names: embed.*, mask_token, blocks.<k>.*, norm.*, pred.*;
/// buffer pos_embed.
class MaeDecoderImpl : public torch::nn::Module {
 public:
  explicit MaeDecoderImpl(const MocaOptions& options);
  /// latent: B x (1 + K) x D from the encoder; returns B x T' x token_dim predictions for all
  /// T' = ids_restore.size(1) tokens (cls dropped).
  torch::Tensor forward(const torch::Tensor& latent, const torch::Tensor& ids_restore,
                        const torch::Tensor& pos_rows = {});

 private:
  MocaOptions options_;
  torch::nn::Linear embed_{nullptr}, pred_{nullptr};
  torch::Tensor mask_token_, pos_embed_;
  torch::nn::ModuleList block_list_{nullptr};
  std::vector<Block> blocks_;
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(MaeDecoder);

/// What one MAE forward pass produces.
struct MaeOutput {
  torch::Tensor loss;    ///< scalar reconstruction loss (LossScope, norm_pix_loss)
  torch::Tensor pred;    ///< B x T x token_dim predicted tokens (normalised if norm_pix_loss)
  torch::Tensor target;  ///< B x T x token_dim loss targets
};

/// The masked autoencoder: submodules "encoder" and "decoder"; MAE initialisation
/// (xavier-uniform Linear weights, zero biases, LayerNorm 1/0, cls and mask tokens N(0, 0.02^2)).
class MocaMaeImpl : public torch::nn::Module {
 public:
  explicit MocaMaeImpl(const MocaOptions& options);
  /// x: B x C' x L windows; masks as index tensors over the T' tokens of x.
  MaeOutput forward(const torch::Tensor& x, const MaskTensors& masks,
                    const torch::Tensor& pos_rows = {});
  /// Loss of predictions against windows x (B x C' x L) under `mask` (B x T').
  torch::Tensor loss(const torch::Tensor& target, const torch::Tensor& pred,
                     const torch::Tensor& mask) const;
  /// The per-patch normalised or raw targets of x.
  torch::Tensor targets(const torch::Tensor& x) const;
  const MocaOptions& options() const { return options_; }
  MocaEncoder encoder{nullptr};
  MaeDecoder decoder{nullptr};

 private:
  MocaOptions options_;
};
TORCH_MODULE(MocaMae);

/// Loss and gradients of one pre-training step of `model` (in training mode) on windows x with
/// `masks`: the parameters' gradients are replaced (no zeroing needed before), the caller steps
/// the optimiser after. With `shards` == 1 this is forward + backward. With `shards` > 1 (CPU
/// batch parallelism) the
/// batch is cut into `shards` contiguous row blocks that run forward and backward concurrently,
/// each on its own thread with one intra-op thread (small transformer GEMMs scale poorly across
/// threads; whole blocks scale well); each block's gradients are weighted by its share of the
/// loss denominator (windows, or masked tokens for the masked-only loss) and summed in block
/// order, so the result is deterministic for a given shard count and equals the whole-batch
/// gradient up to rounding. `precision` as RuntimeOptions::precision. Returns the whole-batch
/// loss. Throws std::invalid_argument if shards < 1 or exceeds the batch size.
double mae_loss_and_gradients(MocaMae& model, const torch::Tensor& x, const MaskTensors& masks,
                              int shards, Precision precision);

/// A ViT classifier on the MoCA encoder: cls-token pooling (the final norm's row 0), then a
/// linear head, optionally preceded by BatchNorm1d without affine parameters (linear probing,
/// as in MAE). Submodules "encoder", "head" and (probe) "head_norm".
class MocaClassifierImpl : public torch::nn::Module {
 public:
  MocaClassifierImpl(const MocaOptions& options, int classes, double drop_path, bool probe_head);
  /// x: B x C' x L -> B x classes logits.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& pos_rows = {});
  /// The pooled encoder features (B x D) before the head.
  torch::Tensor features(const torch::Tensor& x, const torch::Tensor& pos_rows = {});
  /// The head alone on pooled features.
  torch::Tensor head_forward(const torch::Tensor& features);
  MocaEncoder encoder{nullptr};
  torch::nn::Linear head{nullptr};
  torch::nn::BatchNorm1d head_norm{nullptr};

 private:
  MocaOptions options_;
};
TORCH_MODULE(MocaClassifier);

/// MAE initialisation of the submodules of `module` (see MocaMaeImpl); usable in constructors.
void mae_init(torch::nn::Module& module);

/// timm's trunc_normal_(t, mean 0, std, a, b) (timm/models/layers/weight_init.py): the inverse
/// normal CDF of a uniform draw on [2 Phi(a/std) - 1, 2 Phi(b/std) - 1] (through erfinv), times
/// std sqrt(2), clamped to [a, b]. `a` and `b` are absolute cut-offs: timm's defaults -2 and 2
/// with std 0.02 cut at +-100 std, so the values are N(0, std^2) for every practical purpose.
void trunc_normal_(torch::Tensor t, double std, double a = -2.0, double b = 2.0);

/// timm's VisionTransformer initialisation (timm 0.3.2, the authors' supervised ViT,
/// models_vit.py): cls_token and pos_embed trunc_normal_(std 0.02); every Linear of the blocks
/// and the head trunc_normal_(std 0.02) with bias 0; LayerNorm weight 1, bias 0. The patch
/// embedding keeps PyTorch's default U(+-1/sqrt(fan_in)) for weight and bias, as the authors'
/// PatchEmbed, re-created after timm's init, does. pos_embed must be a parameter
/// (MocaOptions::pos_learned); std::invalid_argument otherwise. Draws from torch's generator.
void timm_init(MocaClassifierImpl& classifier);

/// Index tensor for fewer-modality inference: for data channel j the model modality
/// `channel_rows[j]`; returns the T' = C' * P model tokens (modality layout only). Throws
/// std::invalid_argument for an out-of-range row or the stacked layout.
torch::Tensor pos_rows_for_channels(const MocaOptions& options,
                                    const std::vector<int>& channel_rows);

}  // namespace moca::model
