#include "moca/model/io/checkpoint.hpp"
#include "moca/common/error_text.hpp"

#include <algorithm>
#include <stdexcept>

namespace moca::model {

nlohmann::json to_json(const MocaOptions& o) {
  nlohmann::json j{{"channels", o.channels},
                   {"length", o.length},
                   {"patch_length", o.patch_length},
                   {"layout", to_string(o.layout)},
                   {"embed_dim", o.embed_dim},
                   {"depth", o.depth},
                   {"num_heads", o.num_heads},
                   {"decoder_embed_dim", o.decoder_embed_dim},
                   {"decoder_depth", o.decoder_depth},
                   {"decoder_num_heads", o.decoder_num_heads},
                   {"mlp_ratio", o.mlp_ratio},
                   {"pos_embed", to_string(o.pos_embed)},
                   {"loss_scope", to_string(o.loss_scope)},
                   {"norm_pix_loss", o.norm_pix_loss}};
  // Only a model used at fewer patches than its 1-D positions were made for has a pitch; the
  // others' records stay as they were.
  if (o.pos_pitch != 0) j["pos_pitch"] = o.pos_pitch;
  if (o.pos_learned) j["pos_learned"] = true;
  return j;
}

MocaOptions moca_options_from_json(const nlohmann::json& j) {
  auto get_int = [&](const char* key) {
    if (!j.contains(key) || !j.at(key).is_number_integer()) {
      throw_invalid("moca_options_from_json()",
                    "field '" + std::string(key) + "' missing or not an integer");
    }
    return j.at(key).get<int>();
  };
  auto get_str = [&](const char* key) {
    if (!j.contains(key) || !j.at(key).is_string()) {
      throw_invalid(
          "", std::string("moca_options_from_json(): field '") + key + "' missing or not a string");
    }
    return j.at(key).get<std::string>();
  };
  if (!j.is_object()) throw_invalid("moca_options_from_json()", "not an object");
  MocaOptions o;
  o.channels = get_int("channels");
  o.length = get_int("length");
  o.patch_length = get_int("patch_length");
  o.layout = parse_enum(kTokenLayoutNames, get_str("layout"), "layout");
  o.embed_dim = get_int("embed_dim");
  o.depth = get_int("depth");
  o.num_heads = get_int("num_heads");
  o.decoder_embed_dim = get_int("decoder_embed_dim");
  o.decoder_depth = get_int("decoder_depth");
  o.decoder_num_heads = get_int("decoder_num_heads");
  o.mlp_ratio = get_int("mlp_ratio");
  o.pos_embed = parse_enum(kPosEmbedNames, get_str("pos_embed"), "pos_embed");
  if (j.contains("pos_pitch")) o.pos_pitch = get_int("pos_pitch");
  if (j.contains("pos_learned")) {
    if (!j.at("pos_learned").is_boolean()) {
      throw_invalid("moca_options_from_json()", "field 'pos_learned' is not a boolean");
    }
    o.pos_learned = j.at("pos_learned").get<bool>();
  }
  o.loss_scope = parse_enum(kLossScopeNames, get_str("loss_scope"), "loss");
  if (!j.contains("norm_pix_loss") || !j.at("norm_pix_loss").is_boolean()) {
    throw_invalid("moca_options_from_json()", "field 'norm_pix_loss' missing or not a boolean");
  }
  o.norm_pix_loss = j.at("norm_pix_loss").get<bool>();
  o.validate();
  return o;
}

std::vector<int> match_channels(const std::vector<std::string>& model_channels,
                                const std::vector<std::string>& data_channels) {
  std::vector<int> rows;
  for (const auto& name : data_channels) {
    auto it = std::find(model_channels.begin(), model_channels.end(), name);
    if (it == model_channels.end()) {
      std::string valid;
      for (const auto& m : model_channels) valid += (valid.empty() ? "" : ", ") + m;
      throw_invalid("match_channels()", "data channel '" + name +
                                            "' is not one of the model's channels (" + valid + ")");
    }
    const int row = static_cast<int>(it - model_channels.begin());
    if (std::find(rows.begin(), rows.end(), row) != rows.end()) {
      throw_invalid("match_channels()", "data channel '" + name + "' appears twice");
    }
    rows.push_back(row);
  }
  return rows;
}

bool is_identity_channel_map(const std::vector<int>& rows, int model_channels) {
  if (static_cast<int>(rows.size()) != model_channels) return false;
  for (int i = 0; i < model_channels; ++i)
    if (rows[static_cast<size_t>(i)] != i) return false;
  return true;
}

}  // namespace moca::model
