#pragma once
/// \file model_options.hpp
/// Architecture options of the MoCA masked autoencoder and its named presets (torch-free).
///
/// Input: a window x in R^{C x L}. It is cut into P = L / Lp patches per modality.
/// * `modality` layout (MoCA, paper "Time Series Input"): T = C * P tokens of Lp values, token
///   index c * P + p, one Linear(Lp -> D) shared by all modalities;
/// * `stacked` layout (the "MAE Original" input shape of the ablation): T = P tokens of C * Lp
///   values (within a token, value c * Lp + q), one Linear(C * Lp -> D). Only masks that hide
///   whole time columns (sync, temporal, extrapolation) are meaningful for it.
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"

namespace moca::model {

/// How a window becomes tokens.
enum class TokenLayout {
  kModality,  ///< C x P tokens of Lp samples (MoCA)
  kStacked    ///< P tokens of C * Lp samples (MAE Original)
};

/// The fixed (not learned) positional embedding of encoder and decoder.
enum class PosEmbedKind {
  /// The paper's 2-D sin-cos code over (modality c, time p): the first D/2 dimensions encode p
  /// and the last D/2 encode c, each as [sin(pos w_k), cos(pos w_k)], w_k = 10000^(-k/(D/4)),
  /// k < D/4 (MAE's get_2d_sincos_pos_embed on a C x P grid). Row 0 (cls) is zero.
  kSinCos2d,
  /// The released code's variant: the same formula on a 1 x T grid, i.e. a 1-D code of the
  /// flattened index t = c * P + p in the first D/2 dimensions and constants (sin 0 = 0,
  /// cos 0 = 1) in the last D/2 (docs/model.md, "Model").
  kSinCos1d
};

/// Which patches the reconstruction loss averages over.
enum class LossScope {
  kAll,    ///< all patches, visible and masked (paper "Objective", upstream default)
  kMasked  ///< masked patches only (original MAE)
};

// clang-format off
/// The names of the choices (`--layout`, `--pos-embed`, `--loss`; checkpoint metadata).
inline constexpr EnumName<TokenLayout> kTokenLayoutNames[] = {
    {TokenLayout::kModality, "modality"},
    {TokenLayout::kStacked,  "stacked"}};
inline constexpr EnumName<PosEmbedKind> kPosEmbedNames[] = {
    {PosEmbedKind::kSinCos2d, "2d"},
    {PosEmbedKind::kSinCos1d, "1d"}};
inline constexpr EnumName<LossScope> kLossScopeNames[] = {
    {LossScope::kAll,    "all"},
    {LossScope::kMasked, "masked"}};
// clang-format on

std::string to_string(TokenLayout v);
std::string to_string(PosEmbedKind v);
std::string to_string(LossScope v);

/// Architecture of the MAE (encoder, decoder) and of the classifier built on its encoder.
/// Defaults are the `tiny` preset on UCI-HAPT windows (6 x 200, Lp = 20).
struct MocaOptions {
  int channels = 6;       ///< C >= 1 modalities (sensor axes)
  int length = 200;       ///< L >= 1 samples per window
  int patch_length = 20;  ///< Lp >= 1, must divide L
  TokenLayout layout = TokenLayout::kModality;
  int embed_dim = 192;          ///< D, encoder width; divisible by num_heads and by 4
  int depth = 12;               ///< encoder blocks >= 1
  int num_heads = 3;            ///< encoder attention heads >= 1
  int decoder_embed_dim = 128;  ///< Dd; divisible by decoder_num_heads and by 4
  int decoder_depth = 4;        ///< decoder blocks >= 1
  int decoder_num_heads = 4;    ///< decoder attention heads >= 1
  int mlp_ratio = 4;            ///< MLP hidden width = mlp_ratio * width, >= 1
  PosEmbedKind pos_embed = PosEmbedKind::kSinCos2d;
  /// 1-D positions only: the patches per modality of the code t = c * pitch + p; 0 (default) =
  /// P. A model used at P' < P patches per modality (options_at_length) keeps its own P here, so
  /// every token keeps the position it was trained with. 0 or >= P; only with kSinCos1d.
  int pos_pitch = 0;
  /// The positional table is a trained parameter, not the fixed code (timm's ViT:
  /// DownstreamOptions::scratch_init timm): saved and loaded with the weights, and a model with
  /// it takes only its own window length. Default false.
  bool pos_learned = false;
  LossScope loss_scope = LossScope::kAll;
  /// Normalise each target patch to zero mean, unit (unbiased) variance, eps 1e-6 (MAE option).
  bool norm_pix_loss = false;

  /// P = L / Lp patches per modality.
  int patches() const { return patch_length > 0 ? length / patch_length : 0; }
  /// Tokens per window: C * P (modality) or P (stacked).
  int tokens() const { return layout == TokenLayout::kModality ? channels * patches() : patches(); }
  /// Values per token: Lp (modality) or C * Lp (stacked).
  int token_dim() const {
    return layout == TokenLayout::kModality ? patch_length : channels * patch_length;
  }
  /// The pitch of the 1-D position code: pos_pitch when set, else P.
  int position_pitch() const { return pos_pitch > 0 ? pos_pitch : patches(); }
  /// The most patches per modality the positions allow at another window length: 0 (no bound)
  /// for 2-D positions, the stacked layout and one modality, whose codes continue at new patch
  /// indices; position_pitch() for 1-D positions over C > 1 modality rows, where channel c's
  /// patch `pitch` would take the position c * pitch + pitch of channel c + 1's patch 0.
  int max_patches() const {
    return pos_embed == PosEmbedKind::kSinCos1d && layout == TokenLayout::kModality && channels > 1
               ? position_pitch()
               : 0;
  }
  /// Throws std::invalid_argument naming the first field that breaks its rule.
  void validate() const;
};

/// Throws std::invalid_argument (`where: SUBJECT -> P' patches per modality, more than the
/// model's M: ... (rule: ...)`) when `patches` exceeds `max_patches` (MocaOptions::max_patches;
/// 0 = no bound). `subject` says where P' came from, e.g. "ClassifyOptions::input_seconds (5)";
/// `patch_length` turns the bound into samples.
void check_patches_fit_positions(int patches, int max_patches, int patch_length,
                                 const std::string& where, const std::string& subject);

/// `model` taking windows of `length` samples instead of its own: the same weights on
/// P' = length / Lp patches per modality, every token keeping the position it was trained with.
/// 2-D positions, the stacked layout and one modality continue their codes at the new indices;
/// 1-D positions over C > 1 modalities keep t = c * P + p with the model's pitch P (pos_pitch is
/// set to it), which needs P' <= P. std::invalid_argument (prefixed `where`) when `length` is not
/// a whole number of patches or P' exceeds max_patches().
/// A learned positional table (pos_learned) is refused at any other length.
MocaOptions options_at_length(const MocaOptions& model, int length, const std::string& where);

/// Names of the built-in presets: "paper-base", "tiny", "cpu-small".
std::vector<std::string> preset_names();

/// A preset's architecture (width, depth, heads of encoder and decoder) on a C x L window with
/// patch length Lp; the other fields keep their defaults.
/// * paper-base: encoder 768/12/12, decoder 512/8/16 (ViT-Base MAE, for a GPU);
/// * tiny:       encoder 192/12/3,  decoder 128/4/4;
/// * cpu-small:  encoder 128/4/4,   decoder 64/2/4 (tests, demos and the 30-minute CPU study).
/// Throws std::invalid_argument for an unknown name, listing the valid ones.
MocaOptions preset(const std::string& name, int channels = 6, int length = 200,
                   int patch_length = 20);

/// The scope bits the studies (simulations/) take rows of PretrainOptions::schema by: every study
/// takes the architecture and the schedule's preset, patch_length, epochs, batch_size, lr and
/// warmup_epochs (kStudyScope); the resumable one (policy_study) also checkpoint_every
/// (kResumableStudyScope); the other rows (policy, optimiser details, output and resume paths,
/// seed) are the commands' own (kCommandScope: every bit but these two). The bits lie above those
/// of DownstreamOptions' modes, so the rows the two structs share keep their mode scopes.
inline constexpr Scope kStudyScope = 1u << 30, kResumableStudyScope = 1u << 29;
inline constexpr Scope kCommandScope = kEveryScope & ~(kStudyScope | kResumableStudyScope);

/// The schedule rows PretrainOptions::schema and DownstreamOptions::schema share (the fields have
/// the same names in both): epochs, batch_size, lr, min_lr, warmup_epochs and weight_decay of
/// `owner`, with `warmup_help` saying the struct's default warm-up.
template <class O, class V>
void schedule_schema(const char* owner, O& o, V&& v, const char* warmup_help) {
  v(o.epochs, Option{owner, "epochs", "--epochs", "training epochs", Range::at_least(1)});
  v(o.batch_size, Option{owner, "batch_size", "--batch", "windows per batch (the global batch)",
                         Range::at_least(1)});
  v(o.lr, Option{owner, "lr", "--lr", "peak learning rate", Range::above(0)});
  v(o.min_lr, Option{owner, "min_lr", "--min-lr", "floor of the cosine schedule", Range::any(),
                     kCommandScope, "in [0, lr]"});
  v(o.warmup_epochs, Option{owner, "warmup_epochs", "--warmup-epochs", warmup_help, Range::any(),
                            kEveryScope, "in [0, epochs)"});
  v(o.weight_decay, Option{owner, "weight_decay", "--weight-decay", "AdamW weight decay",
                           Range::at_least(0), kCommandScope});
}

}  // namespace moca::model
