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

TEST_CASE("options_at_length: every token keeps its position; 1-D positions bound the patches") {
  MocaOptions one = preset("cpu-small", 6, 200, 20);
  one.pos_embed = PosEmbedKind::kSinCos1d;
  CHECK(one.max_patches() == 10);
  // Shorter: the pitch stays the model's 10 and travels in the JSON record.
  const MocaOptions short1 = options_at_length(one, 160, "here()");
  CHECK(short1.patches() == 8);
  CHECK(short1.pos_pitch == 10);
  CHECK(short1.position_pitch() == 10);
  CHECK(moca_options_from_json(to_json(short1)).pos_pitch == 10);
  CHECK(to_json(one).count("pos_pitch") == 0);  // plain models' records are unchanged
  // From the shorter model back to 200 (10 patches, the pitch itself: the plain code) and to
  // 180; beyond the pitch is refused, naming the value and the rule.
  CHECK(options_at_length(short1, 200, "here()").pos_pitch == 0);
  CHECK(options_at_length(short1, 180, "here()").pos_pitch == 10);
  CHECK_THROWS_WITH_AS(options_at_length(one, 240, "here()"),
                       doctest::Contains("here(): windows of 240 samples -> 12 patches per "
                                         "modality, more than the model's 10: with 1-D positions"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(options_at_length(short1, 220, "here()"),
                       doctest::Contains("rule: at most 10 patches, 200 samples, per modality"),
                       std::invalid_argument);
  // 2-D positions, the stacked layout and one modality continue their codes: no bound, no pitch.
  MocaOptions two = preset("cpu-small", 6, 200, 20);
  CHECK(two.max_patches() == 0);
  CHECK(options_at_length(two, 240, "here()").pos_pitch == 0);
  MocaOptions stacked = one;
  stacked.layout = TokenLayout::kStacked;
  CHECK(stacked.max_patches() == 0);
  CHECK(options_at_length(stacked, 240, "here()").patches() == 12);
  CHECK(options_at_length(stacked, 160, "here()").pos_pitch == 0);
  MocaOptions single = preset("cpu-small", 1, 200, 20);
  single.pos_embed = PosEmbedKind::kSinCos1d;
  CHECK(single.max_patches() == 0);
  CHECK_THROWS_WITH_AS(options_at_length(two, 230, "here()"),
                       doctest::Contains("not a whole number of the model's patches"),
                       std::invalid_argument);
  // A pitch is a 1-D notion of at least P.
  MocaOptions bad = two;
  bad.pos_pitch = 12;
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("pos_pitch"), std::invalid_argument);
  bad = one;
  bad.pos_pitch = 9;
  CHECK_THROWS_WITH_AS(bad.validate(), doctest::Contains("pos_pitch (9)"), std::invalid_argument);
}
