#include <doctest/doctest.h>

#include <stdexcept>

#include "moca/model/io/checkpoint.hpp"
#include "moca/model/model_options.hpp"

using namespace moca::model;

TEST_CASE("presets have the documented widths, depths and heads") {
  const auto base = preset("paper-base");
  CHECK(base.embed_dim == 768);
  CHECK(base.depth == 12);
  CHECK(base.num_heads == 12);
  CHECK(base.decoder_embed_dim == 512);
  CHECK(base.decoder_depth == 8);
  CHECK(base.decoder_num_heads == 16);
  const auto tiny = preset("tiny");
  CHECK(tiny.embed_dim == 192);
  CHECK(tiny.depth == 12);
  CHECK(tiny.num_heads == 3);
  CHECK(tiny.decoder_embed_dim == 128);
  CHECK(tiny.decoder_depth == 4);
  CHECK(tiny.decoder_num_heads == 4);
  const auto small = preset("cpu-small", 3, 100, 10);
  CHECK(small.channels == 3);
  CHECK(small.patches() == 10);
  CHECK(small.tokens() == 30);
  CHECK(small.token_dim() == 10);
  auto stacked = small;
  stacked.layout = TokenLayout::kStacked;
  CHECK(stacked.tokens() == 10);
  CHECK(stacked.token_dim() == 30);
}

TEST_CASE("unknown presets and bad options give clear errors") {
  CHECK_THROWS_WITH_AS(preset("huge"), doctest::Contains("paper-base, tiny, cpu-small"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(preset("tiny", 6, 200, 30), doctest::Contains("patch_length"),
                       std::invalid_argument);
  MocaOptions o;
  o.num_heads = 5;  // 192 % 5 != 0
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("embed_dim"), std::invalid_argument);
  o = MocaOptions();
  o.decoder_embed_dim = 130;  // not a multiple of 4
  o.decoder_num_heads = 2;
  CHECK_THROWS_WITH_AS(o.validate(), doctest::Contains("decoder_embed_dim"), std::invalid_argument);
  o = MocaOptions();
  o.depth = 0;
  CHECK_THROWS_AS(o.validate(), std::invalid_argument);
  CHECK_THROWS_AS(parse_enum(kTokenLayoutNames, "rows", "layout"), std::invalid_argument);
  CHECK_THROWS_AS(parse_enum(kPosEmbedNames, "3d", "pos_embed"), std::invalid_argument);
  CHECK_THROWS_AS(parse_enum(kLossScopeNames, "some", "loss"), std::invalid_argument);
}

TEST_CASE("options survive a JSON round trip; malformed JSON is rejected") {
  MocaOptions o = preset("cpu-small", 3, 120, 12);
  o.layout = TokenLayout::kStacked;
  o.pos_embed = PosEmbedKind::kSinCos1d;
  o.loss_scope = LossScope::kMasked;
  o.norm_pix_loss = true;
  const MocaOptions back = moca_options_from_json(to_json(o));
  CHECK(to_json(back) == to_json(o));
  auto j = to_json(o);
  j.erase("depth");
  CHECK_THROWS_WITH_AS(moca_options_from_json(j), doctest::Contains("depth"),
                       std::invalid_argument);
  j = to_json(o);
  j["layout"] = "diagonal";
  CHECK_THROWS_AS(moca_options_from_json(j), std::invalid_argument);
}

TEST_CASE("channels are matched by name for fewer-modality inference") {
  const std::vector<std::string> model = {"acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"};
  CHECK(match_channels(model, {"acc_x", "acc_y", "acc_z"}) == std::vector<int>{0, 1, 2});
  CHECK(match_channels(model, {"gyro_z", "acc_x"}) == std::vector<int>{5, 0});
  CHECK(is_identity_channel_map(match_channels(model, model), 6));
  CHECK_FALSE(is_identity_channel_map({0, 1, 2}, 6));
  CHECK_THROWS_WITH_AS(match_channels(model, {"mag_x"}), doctest::Contains("mag_x"),
                       std::invalid_argument);
  CHECK_THROWS_AS(match_channels(model, {"acc_x", "acc_x"}), std::invalid_argument);
}
