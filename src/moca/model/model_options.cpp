#include "moca/model/model_options.hpp"

#include <stdexcept>

#include "moca/common/enum_names.hpp"
#include "moca/common/error_text.hpp"

namespace moca::model {

namespace {

[[noreturn]] void bad_name(const std::string& what, const std::string& value,
                           const std::string& valid) {
  throw_invalid(what, "unknown value '" + value + "' (valid: " + valid + ")");
}

}  // namespace

std::string to_string(TokenLayout v) {
  return enum_name(kTokenLayoutNames, v);
}
std::string to_string(PosEmbedKind v) {
  return enum_name(kPosEmbedNames, v);
}
std::string to_string(LossScope v) {
  return enum_name(kLossScopeNames, v);
}

void MocaOptions::validate() const {
  auto fail = [](const std::string& field, int value, const std::string& rule) {
    throw_invalid("MocaOptions::validate()", field, std::to_string(value), rule);
  };
  if (channels < 1) fail("channels", channels, "must be >= 1");
  if (length < 1) fail("length", length, "must be >= 1");
  if (patch_length < 1 || length % patch_length != 0) {
    fail("patch_length", patch_length,
         "must be >= 1 and divide length (" + std::to_string(length) + ")");
  }
  if (depth < 1) fail("depth", depth, "must be >= 1");
  if (decoder_depth < 1) fail("decoder_depth", decoder_depth, "must be >= 1");
  if (num_heads < 1) fail("num_heads", num_heads, "must be >= 1");
  if (decoder_num_heads < 1) fail("decoder_num_heads", decoder_num_heads, "must be >= 1");
  if (mlp_ratio < 1) fail("mlp_ratio", mlp_ratio, "must be >= 1");
  if (embed_dim < 4 || embed_dim % 4 != 0 || embed_dim % num_heads != 0) {
    fail("embed_dim", embed_dim,
         "must be a positive multiple of 4 and of num_heads (" + std::to_string(num_heads) + ")");
  }
  if (pos_pitch != 0 && (pos_embed != PosEmbedKind::kSinCos1d || pos_pitch < patches())) {
    fail("pos_pitch", pos_pitch,
         "must be 0, or with 1-D positions at least the patches per modality (" +
             std::to_string(patches()) + ")");
  }
  if (decoder_embed_dim < 4 || decoder_embed_dim % 4 != 0 ||
      decoder_embed_dim % decoder_num_heads != 0) {
    fail("decoder_embed_dim", decoder_embed_dim,
         "must be a positive multiple of 4 and of decoder_num_heads (" +
             std::to_string(decoder_num_heads) + ")");
  }
}

void check_patches_fit_positions(int patches, int max_patches, int patch_length,
                                 const std::string& where, const std::string& subject) {
  if (max_patches <= 0 || patches <= max_patches) return;
  const std::string m = std::to_string(max_patches);
  throw_invalid(where, subject + " -> " + std::to_string(patches) +
                           " patches per modality, more than the model's " + m +
                           ": with 1-D positions (--pos-embed 1d) token (c, p) is at position c*" +
                           m + " + p, so channel c's patch " + m +
                           " would take the position of channel c+1's patch 0 (rule: at most " + m +
                           " patches, " + std::to_string(max_patches * patch_length) +
                           " samples, per modality; 2-D positions have no such bound)");
}

MocaOptions options_at_length(const MocaOptions& model, int length, const std::string& where) {
  if (length < 1 || length % model.patch_length != 0) {
    throw_invalid(where, "windows of length " + std::to_string(length) +
                             " are not a whole number of the model's patches (patch_length " +
                             std::to_string(model.patch_length) + "; the model's own length is " +
                             std::to_string(model.length) + ")");
  }
  if (model.pos_learned && length != model.length) {
    throw_invalid(where, "windows of " + std::to_string(length) +
                             " samples, but the model's positional table was learnt (timm "
                             "initialisation, --scratch-init timm) for its own " +
                             std::to_string(model.patches()) +
                             " patches per modality (rule: a learned table is used at its own "
                             "length, " +
                             std::to_string(model.length) +
                             " samples; only the fixed sin-cos "
                             "codes extend)");
  }
  check_patches_fit_positions(length / model.patch_length, model.max_patches(), model.patch_length,
                              where, "windows of " + std::to_string(length) + " samples");
  MocaOptions out = model;
  if (model.max_patches() > 0) out.pos_pitch = model.position_pitch();
  out.length = length;
  if (out.pos_pitch == out.patches()) out.pos_pitch = 0;  // at the pitch itself: the plain code
  out.validate();
  return out;
}

std::vector<std::string> preset_names() {
  return {"paper-base", "tiny", "cpu-small"};
}

MocaOptions preset(const std::string& name, int channels, int length, int patch_length) {
  MocaOptions o;
  o.channels = channels;
  o.length = length;
  o.patch_length = patch_length;
  // encoder width, depth, heads; decoder width, depth, heads
  auto widths = [&o](int d, int depth, int heads, int dd, int ddepth, int dheads) {
    o.embed_dim = d;
    o.depth = depth;
    o.num_heads = heads;
    o.decoder_embed_dim = dd;
    o.decoder_depth = ddepth;
    o.decoder_num_heads = dheads;
  };
  if (name == "paper-base") {
    widths(768, 12, 12, 512, 8, 16);
  } else if (name == "tiny") {
    widths(192, 12, 3, 128, 4, 4);
  } else if (name == "cpu-small") {
    widths(128, 4, 4, 64, 2, 4);
  } else {
    bad_name("preset()", name, "paper-base, tiny, cpu-small");
  }
  o.validate();
  return o;
}

}  // namespace moca::model
