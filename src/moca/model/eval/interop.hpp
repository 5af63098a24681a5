#pragma once
/// \file interop.hpp
/// Weights exchanged with PyTorch in the MAE/timm layout of the authors' models (torch-free API).
///
/// Key names (moca -> PyTorch), for an MAE (kind "mae") and a classifier (kind "classifier"):
///   encoder.patch_embed.{weight,bias}  -> patch_embed.proj.{weight,bias}  (weight reshaped to the
///                                         Conv2d kernel D x Cin x 1 x Lp: Cin = 1 for the modality
///                                         layout, the authors' `--alt`; Cin = C for stacked)
///   encoder.cls_token, encoder.pos_embed -> cls_token, pos_embed
///   encoder.blocks.k.{norm1,attn.qkv,attn.proj,norm2}.* -> blocks.k.(same).*
///   encoder.blocks.k.fc1 / fc2         -> blocks.k.mlp.fc1 / mlp.fc2
///   encoder.norm                       -> norm
///   decoder.embed / mask_token / pos_embed -> decoder_embed / mask_token / decoder_pos_embed
///   decoder.blocks.k.*                 -> decoder_blocks.k.* (fc1/fc2 under mlp.)
///   decoder.norm / decoder.pred        -> decoder_norm / decoder_pred
///   head.{weight,bias}                 -> head.{weight,bias}                  (fine-tuned ViT)
///   head_norm.{running_mean,...} + head -> head.0.* + head.1.*               (linear probe, as
///                                         MAE's Sequential(BatchNorm1d(affine=False), Linear))
/// Positional tables travel as the tensors they are (moca's fixed sin-cos tables; the authors'
/// pos_embed is a frozen Parameter of the same shape).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/common/option_schema.hpp"
#include "moca/model/model_options.hpp"

namespace moca::model {

/// One tensor by name: shape and values (row-major). Integer buffers (BatchNorm's
/// num_batches_tracked) travel as their value in `values`.
struct NamedArray {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};

/// The PyTorch (timm) name of a moca parameter or buffer; `probe` selects the linear probe's
/// head names. std::invalid_argument for a name outside the table above.
std::string pytorch_name(const std::string& moca_name, bool probe);

/// What an export or import did.
struct InteropReport {
  std::string kind;                ///< "mae" or "classifier"
  bool probe = false;              ///< classifier head: BatchNorm + Linear
  MocaOptions model;               ///< the architecture
  std::vector<std::string> keys;   ///< PyTorch key names, in order
  std::vector<std::string> notes;  ///< what was inferred or assumed, one line each
};

/// The file format of exported weights.
enum class WeightsFormat { kAuto, kPth, kSafetensors };
inline constexpr EnumName<WeightsFormat> kWeightsFormatNames[] = {
    {WeightsFormat::kAuto, "auto"},
    {WeightsFormat::kPth, "pth"},
    {WeightsFormat::kSafetensors, "safetensors"}};

/// `format`, with kAuto resolved by the output's name: ".safetensors" -> safetensors, any other
/// name -> pth.
WeightsFormat resolve_weights_format(const std::string& path, WeightsFormat format);

/// The `moca_format` metadata value of a safetensors file written by export_pytorch.
inline constexpr const char* kSafetensorsExportFormat = "moca-safetensors-1";

/// Writes `checkpoint`'s weights to `out` (atomically) in the layout above, as
/// * pth: a pickled dict {'model': state_dict, 'moca': {kind, head, model options, channel_names,
///   class_names, input_channels, sample_rate_hz (as text)}} that `torch.load(out,
///   weights_only=True)` reads and moca.torch_model's modules load with strict=True;
/// * safetensors (safetensors.hpp): the same tensors (F32; BatchNorm's counter I64) and the same
///   record in the string map `__metadata__`: format "pt", moca_format
///   kSafetensorsExportFormat, kind, head, sample_rate_hz (JSON number text), and model,
///   channel_names, class_names, input_channels as JSON text. No pickle: any safetensors reader
///   (numpy, torch, Rust) opens it.
InteropReport export_pytorch(const std::string& checkpoint, const std::string& out,
                             WeightsFormat format = WeightsFormat::kPth);

/// What a file written by export_pytorch records beside the weights (its 'moca' entry).
struct ExportRecord {
  std::string kind;                         ///< "mae" or "classifier"
  MocaOptions model;                        ///< the architecture (the heads shapes do not show)
  std::vector<std::string> channel_names;   ///< the model's C modalities
  std::vector<std::string> class_names;     ///< classifier: the head's classes
  std::vector<std::string> input_channels;  ///< classifier: the head's data channels
  std::optional<double> sample_rate_hz;     ///< the training windows' rate, when recorded
};

/// The weights of a torch.save file read by LibTorch's own unpickler, which resolves only the
/// globals of tensors and containers and runs no Python: a bare state dict, or the `model` entry
/// of a checkpoint dictionary. Files it cannot read (the authors' checkpoints pickle `args` as an
/// argparse.Namespace) give std::runtime_error naming the file and pointing to
/// moca.interop.import_pytorch (Python), whose reader skips such entries. A file written by
/// export_pytorch also gives its record in `exported` (when not null; empty otherwise).
std::vector<NamedArray> read_pth_arrays(const std::string& path,
                                        std::optional<ExportRecord>* exported = nullptr);

/// The weights of `path`, in either format, told apart by their first bytes (a safetensors
/// header, else a torch.save archive read by read_pth_arrays). safetensors values of any float
/// or integer dtype are converted to float; a moca export's record comes back in `exported`.
/// std::invalid_argument for a safetensors header that fails the format's checks (naming the
/// tensor), std::runtime_error for a file that cannot be read.
std::vector<NamedArray> read_weight_arrays(const std::string& path,
                                           std::optional<ExportRecord>* exported = nullptr);

/// What import_arrays() is asked to build: the kind the file must hold, or either.
enum class ImportKind { kAuto, kMae, kClassifier };
inline constexpr EnumName<ImportKind> kImportKindNames[] = {
    {ImportKind::kAuto, "auto"},
    {ImportKind::kMae, "mae"},
    {ImportKind::kClassifier, "classifier"}};

/// What import_arrays() cannot read from the tensors' shapes.
struct ImportOptions {
  ImportKind kind = ImportKind::kAuto;     ///< auto (from the keys) | mae | classifier
  std::vector<std::string> channel_names;  ///< C names (required: the model's modalities)
  /// The training windows' rate (required, > 0). import_pytorch() takes channel_names,
  /// sample_rate_hz, class_names and input_channels left empty (0) from a moca export's record.
  std::vector<std::string> input_channels;  ///< classifier: the head's data channels (default all)
  std::vector<std::string> class_names;     ///< classifier: K names (default "0".."K-1", noted)
  double sample_rate_hz = 0.0;
  int num_heads = 0;           ///< 0 = embed_dim / 64 (every registered timm ViT, noted)
  int decoder_num_heads = 0;   ///< 0 = decoder_embed_dim / 32 (every registered MAE decoder)
  bool norm_pix_loss = false;  ///< training option of the source (authors' args)
  LossScope loss_scope = LossScope::kAll;            ///< likewise
  nlohmann::json source = nlohmann::json::object();  ///< recorded as meta.source

  /// Every option a user sets, declared once (option_schema.hpp): `moca import`'s flags and
  /// Python's keywords (norm_pix_loss and loss_scope, which Python's reader takes from the
  /// authors' pickled args, are Python's alone). The checks are import_arrays()'s, which needs
  /// the file to know what is required.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* I = "ImportOptions";
    const Range any = Range::any();
    v(o.kind, Option{I, "kind", "--kind", "auto | mae | classifier"}, kImportKindNames);
    v(o.channel_names,
      Option{I, "channel_names", "--channel-names",
             "the model's modalities in token-row order (comma-separated; required unless the "
             "file is a moca export, which records them)"});
    v(o.sample_rate_hz,
      Option{I, "sample_rate", "--sample-rate",
             "Hz of the windows the model was trained on (required unless the file is a moca "
             "export, which records it)",
             Range::at_least(0)});
    v(o.class_names, Option{I, "class_names", "--class-names",
                            "classifier: names of the head's classes (default: a moca export's "
                            "record)"});
    v(o.input_channels, Option{I, "input_channels", "--input-channels",
                               "classifier: the head's data channels (default: a moca export's "
                               "record)"});
    v(o.num_heads, Option{I, "num_heads", "--num-heads", "0 = width / 64", Range::at_least(0)});
    v(o.decoder_num_heads, Option{I, "decoder_num_heads", "--decoder-num-heads",
                                  "0 = decoder width / 32", Range::at_least(0)});
    v(o.norm_pix_loss, Option{I, "norm_pix_loss", "--norm-pix-loss",
                              "the source was trained on per-patch normalised targets", any,
                              kEveryScope, nullptr, Surface::kPython});
    v(o.loss_scope,
      Option{I, "loss_scope", "--loss", "the source's loss: all | masked", any, kEveryScope,
             nullptr, Surface::kPython},
      kLossScopeNames);
  }
};

/// Builds a moca checkpoint `out` (atomically) from PyTorch-named tensors: infers the
/// architecture from the shapes (layout from the patch kernel's input channels, C from
/// channel_names, P from pos_embed, depth from the block count, MLP ratio from fc1, positional
/// kind by comparing the table with moca's 1-D and 2-D codes), checks that every key the model
/// needs is present once with its shape and that no other key is. std::invalid_argument naming
/// the key (missing, extra, wrong shape), a missing option, or a kind mismatch (a classifier's
/// keys where an MAE was asked for, and the reverse).
InteropReport import_arrays(const std::vector<NamedArray>& tensors, const ImportOptions& options,
                            const std::string& out);

/// `moca import`: read_weight_arrays(path) (pth or safetensors), then import_arrays(). What a moca
/// export records fills the options left unset: channel_names, sample_rate_hz, class_names,
/// input_channels (empty or 0) and num_heads / decoder_num_heads (0), each said in the report's
/// notes; an option given that contradicts the record is std::invalid_argument naming the field
/// (`ImportOptions::channel_names`, the programs' --channel-names). options.source names the file.
InteropReport import_pytorch(const std::string& path, ImportOptions options,
                             const std::string& out);

}  // namespace moca::model
