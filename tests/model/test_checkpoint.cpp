#include "torch_test.hpp"  // first: see the note there

#include <stdexcept>

#include <cstdio>
#include <fstream>

#include "moca/data/synthetic.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "moca/model/io/detail/checkpoint_torch.hpp"
#include "moca/model/nn/moca_model.hpp"
#include "test_support.hpp"

using namespace moca::model;

namespace moca_test {

moca::data::Windows small_windows(int n, std::uint64_t seed) {
  moca::data::SyntheticOptions o;
  o.windows = n;
  o.seed = seed;
  return moca::data::generate_synthetic(o);
}

moca::data::Windows rows(const moca::data::Windows& w, int from, int to) {
  std::vector<int> r;
  for (int i = from; i < to; ++i) r.push_back(i);
  return w.subset(r);
}

std::string temp_path(const std::string& name) {
  // MOCA_TEST_TMPDIR: where programs carried to another machine (scripts/gpu-check.sh) write,
  // since the build tree they were compiled in is not there.
  const char* dir = std::getenv("MOCA_TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : MOCA_BINARY_DIR) + "/test_model_" + name;
}

bool same_model_parameters(const std::string& a, const std::string& b, std::string& why) {
  auto ca = moca::model::detail::open_checkpoint(a), cb = moca::model::detail::open_checkpoint(b);
  if (to_json(ca.info.model) != to_json(cb.info.model)) {
    why = "different architectures";
    return false;
  }
  MocaMae ma(ca.info.model), mb(cb.info.model);
  moca::model::detail::load_module(ca, *ma);
  moca::model::detail::load_module(cb, *mb);
  auto pb = mb->named_parameters();
  for (const auto& p : ma->named_parameters()) {
    if (!torch::equal(p.value(), pb[p.key()])) {
      why = "parameter " + p.key() + " differs (max |diff| " +
            std::to_string((p.value() - pb[p.key()]).abs().max().item<double>()) + ")";
      return false;
    }
  }
  return true;
}

}  // namespace moca_test

namespace {

MocaOptions micro() {
  MocaOptions o;
  o.length = 40;
  o.patch_length = 4;
  o.embed_dim = 16;
  o.depth = 2;
  o.num_heads = 2;
  o.decoder_embed_dim = 8;
  o.decoder_depth = 1;
  o.decoder_num_heads = 2;
  return o;
}

// micro() with one change
template <class Change>
MocaOptions micro_with(Change change) {
  MocaOptions o = micro();
  change(o);
  return o;
}

nlohmann::json meta_for(const MocaOptions& o) {
  return {{"kind", "mae"},
          {"model", to_json(o)},
          {"channel_names", {"acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"}}};
}

}  // namespace

TEST_CASE("save and load round trip restores every parameter and buffer") {
  torch::manual_seed(1);
  MocaMae a(micro());
  const auto path = moca_test::temp_path("roundtrip.pt");
  moca::model::detail::save_checkpoint(path, *a, nullptr, meta_for(micro()));
  const auto info = read_checkpoint_info(path);
  CHECK(info.kind == "mae");
  CHECK(to_json(info.model) == to_json(micro()));
  CHECK(info.channel_names.size() == 6);
  torch::manual_seed(2);
  MocaMae b(micro());
  auto ck = moca::model::detail::open_checkpoint(path);
  moca::model::detail::load_module(ck, *b);
  auto pb = b->named_parameters();
  for (const auto& p : a->named_parameters()) CHECK(torch::equal(p.value(), pb[p.key()]));
  auto bb = b->named_buffers();
  for (const auto& p : a->named_buffers()) CHECK(torch::equal(p.value(), bb[p.key()]));
  // An encoder alone loads from the MAE checkpoint's "encoder" entry.
  MocaEncoder enc(micro());
  auto ck2 = moca::model::detail::open_checkpoint(path);
  moca::model::detail::load_module(ck2, *enc, {"encoder"});
  CHECK(torch::equal(enc->named_parameters()["cls_token"],
                     a->encoder->named_parameters()["cls_token"]));
  std::string why;
  CHECK(moca_test::same_model_parameters(path, path, why));
}

TEST_CASE("bad checkpoints give clear errors") {
  CHECK_THROWS_WITH_AS(read_checkpoint_info(moca_test::temp_path("does-not-exist.pt")),
                       doctest::Contains("cannot open"), std::runtime_error);
  const auto junk = moca_test::temp_path("junk.pt");
  {
    std::ofstream os(junk, std::ios::binary);
    os << "this is not a checkpoint";
  }
  CHECK_THROWS_WITH_AS(read_checkpoint_info(junk), doctest::Contains("not a moca checkpoint"),
                       std::runtime_error);
  // A valid LibTorch archive without the moca tag.
  const auto plain = moca_test::temp_path("plain.pt");
  {
    torch::serialize::OutputArchive ar;
    ar.write("x", torch::ones({2}));
    ar.save_to(plain);
  }
  CHECK_THROWS_WITH_AS(read_checkpoint_info(plain), doctest::Contains("no format tag"),
                       std::runtime_error);
  // A truncated file.
  torch::manual_seed(1);
  MocaMae a(micro());
  const auto good = moca_test::temp_path("good.pt");
  moca::model::detail::save_checkpoint(good, *a, nullptr, meta_for(micro()));
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto cut = moca_test::temp_path("truncated.pt");
  {
    std::ofstream os(cut, std::ios::binary);
    os << bytes.substr(0, bytes.size() / 2);
  }
  CHECK_THROWS_AS(read_checkpoint_info(cut), std::runtime_error);
}

TEST_CASE("loading into a model of another shape names the parameter and both shapes") {
  torch::manual_seed(1);
  MocaMae a(micro());
  const auto path = moca_test::temp_path("shape.pt");
  moca::model::detail::save_checkpoint(path, *a, nullptr, meta_for(micro()));
  MocaMae wider(micro_with([](MocaOptions& o) { o.embed_dim = 32; }));
  auto ck = moca::model::detail::open_checkpoint(path);
  CHECK_THROWS_WITH_AS(
      moca::model::detail::load_module(ck, *wider),
      doctest::Contains("encoder.cls_token' has shape [1, 1, 16], the model expects [1, 1, 32]"),
      std::runtime_error);
  MocaMae deeper(micro_with([](MocaOptions& o) { o.depth = 3; }));
  auto ck2 = moca::model::detail::open_checkpoint(path);
  CHECK_THROWS_WITH_AS(moca::model::detail::load_module(ck2, *deeper), doctest::Contains("missing"),
                       std::runtime_error);
}
