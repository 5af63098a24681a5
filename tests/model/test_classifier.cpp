// Kept classifiers (classifier.hpp) and the PyTorch weight exchange (interop.hpp).
#include "torch_test.hpp"  // first: see the note there

#include <torch/serialize.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "moca/common/random.hpp"
#include "moca/model/eval/classifier.hpp"
#include "moca/model/eval/downstream.hpp"
#include "moca/model/eval/interop.hpp"
#include "moca/model/eval/protocol.hpp"
#include "moca/model/io/checkpoint.hpp"
#include "moca/model/train/pretrain.hpp"
#include "test_support.hpp"

using namespace moca::model;
using moca_test::rows;

namespace {

moca::data::Windows first_channels(const moca::data::Windows& w, int c) {
  moca::data::Windows a = w;
  a.channels = c;
  a.channel_names.resize(static_cast<size_t>(c));
  a.x = w.x.leftCols(static_cast<Eigen::Index>(c) * w.length);
  return a;
}

DownstreamOptions quick(DownstreamMode mode, int epochs, const std::string& save) {
  auto o = downstream_defaults(mode);
  o.checkpoint = moca_test::shared_checkpoint();
  o.epochs = epochs;
  o.warmup_epochs = 0;
  o.batch_size = 20;
  o.progress = false;
  o.runtime.threads = 1;
  o.save_model = save;
  return o;
}

std::vector<int> argmax_rows(const Eigen::MatrixXd& p) {
  std::vector<int> out;
  for (Eigen::Index i = 0; i < p.rows(); ++i) {
    Eigen::Index k = 0;
    p.row(i).maxCoeff(&k);
    out.push_back(static_cast<int>(k));
  }
  return out;
}

}  // namespace

TEST_CASE("a saved classifier repeats the test predictions printed at training time") {
  const auto w = moca_test::small_windows(120, 31);
  const auto train = rows(w, 0, 80), test = rows(w, 80, 120);
  for (auto mode : {DownstreamMode::kLinearProbe, DownstreamMode::kFinetune}) {
    CAPTURE(to_string(mode));
    const std::string path = moca_test::temp_path("clf_" + to_string(mode) + ".pt");
    std::ostringstream log;
    const auto r = train_classifier(quick(mode, 3, path), train, test, log);
    const Classifier clf(path);
    CHECK(clf.info().kind == "classifier");
    CHECK(clf.spec().probe == (mode == DownstreamMode::kLinearProbe));
    CHECK(clf.spec().class_names == w.class_names);
    CHECK(clf.spec().input_channels == w.channel_names);
    CHECK(clf.spec().sample_rate_hz == w.sample_rate_hz);
    CHECK(clf.predict(test) == r.predicted);
    const Eigen::MatrixXd p = clf.predict_proba(test);
    REQUIRE(p.rows() == 40);
    REQUIRE(p.cols() == 7);
    CHECK((p.rowwise().sum().array() - 1.0).abs().maxCoeff() < 1e-12);
    CHECK(p.minCoeff() >= 0.0);
    CHECK(argmax_rows(p) == r.predicted);
  }
}

TEST_CASE("shuffled-label control: a probe kept from permuted labels predicts at chance") {
  const auto w = moca_test::small_windows(280, 21);
  auto train = rows(w, 0, 196);
  const auto test = rows(w, 196, 280);
  auto o = quick(DownstreamMode::kLinearProbe, 30, moca_test::temp_path("real.pt"));
  o.warmup_epochs = 3;
  o.batch_size = 28;
  std::ostringstream log;
  train_classifier(o, train, test, log);
  std::vector<int> perm(static_cast<size_t>(train.size()));
  std::iota(perm.begin(), perm.end(), 0);
  moca::Rng rng(5);
  moca::shuffle(perm, rng);
  const Eigen::VectorXi y = train.labels;
  for (int i = 0; i < train.size(); ++i) train.labels(i) = y(perm[static_cast<size_t>(i)]);
  o.save_model = moca_test::temp_path("shuffled.pt");
  train_classifier(o, train, test, log);
  auto accuracy = [&](const std::string& path) {
    const auto pred = Classifier(path).predict(test);
    int hits = 0;
    for (int i = 0; i < test.size(); ++i) hits += pred[static_cast<size_t>(i)] == test.labels(i);
    return static_cast<double>(hits) / test.size();
  };
  const double real = accuracy(moca_test::temp_path("real.pt"));
  const double shuffled = accuracy(moca_test::temp_path("shuffled.pt"));
  MESSAGE("kept probe accuracy " << real << ", shuffled-label control " << shuffled
                                 << " (chance 1/7)");
  CHECK(real > 2.0 / 7.0);
  CHECK(shuffled < 0.3);
}

TEST_CASE("refit: an empty test part trains only, and the kept model loads") {
  const auto w = moca_test::small_windows(60, 32);
  const std::string path = moca_test::temp_path("refit.pt");
  std::ostringstream log;
  const auto r =
      train_classifier(quick(DownstreamMode::kLinearProbe, 2, path), w, w.subset({}), log);
  CHECK(r.predicted.empty());
  CHECK(log.str().find("no test windows") != std::string::npos);
  CHECK(Classifier(path).predict(w).size() == 60u);
}

TEST_CASE("prepare_windows: extra channels dropped, missing ones refused, order by name") {
  const auto w = moca_test::small_windows(60, 33);
  const auto acc = first_channels(w, 3);
  const std::string path = moca_test::temp_path("acc_clf.pt");
  std::ostringstream log;
  train_classifier(quick(DownstreamMode::kLinearProbe, 2, path), rows(acc, 0, 40),
                   rows(acc, 40, 60), log);
  const Classifier clf(path);
  CHECK(clf.spec().input_channels == std::vector<std::string>{"acc_x", "acc_y", "acc_z"});
  CHECK(clf.info().channel_names == w.channel_names);
  std::vector<std::string> notes;
  const auto prepared = prepare_windows(clf.spec(), w, &notes);
  REQUIRE(notes.size() == 1);
  CHECK(prepared.x == acc.x);
  CHECK(clf.predict(prepared) == clf.predict(acc));
  // Reordered channels come back in the classifier's order.
  auto rev = acc;
  rev.channel_names = {"acc_z", "acc_y", "acc_x"};
  for (int c = 0; c < 3; ++c)
    rev.x.middleCols(c * w.length, w.length) = acc.x.middleCols((2 - c) * w.length, w.length);
  CHECK(prepare_windows(clf.spec(), rev).x == acc.x);
  // A classifier on acc+gyro refuses accelerometer-only data, naming the missing channel.
  const std::string full = moca_test::temp_path("full_clf.pt");
  train_classifier(quick(DownstreamMode::kLinearProbe, 1, full), rows(w, 0, 40), rows(w, 40, 60),
                   log);
  const Classifier six(full);
  CHECK_THROWS_WITH_AS(prepare_windows(six.spec(), acc), doctest::Contains("'gyro_x' is missing"),
                       std::invalid_argument);
  CHECK_THROWS_AS(six.predict(acc), std::invalid_argument);
  auto shorter = w;
  shorter.length = 100;
  shorter.x = w.x.leftCols(600);
  CHECK_THROWS_WITH_AS(prepare_windows(six.spec(), shorter), doctest::Contains("length 200"),
                       std::invalid_argument);
  auto faster = w;
  faster.sample_rate_hz = 100.0;
  CHECK_THROWS_AS(prepare_windows(six.spec(), faster), std::invalid_argument);
}

TEST_CASE("labels are matched to the classifier's classes by name") {
  ClassifierSpec spec;
  spec.class_names = {"walk", "sit", "lay"};
  moca::data::Windows w = first_channels(moca_test::small_windows(3, 1), 1);
  w.class_names = {"lay", "walk", "sit"};
  w.labels = Eigen::VectorXi(3);
  w.labels << 0, 1, -1;
  CHECK(labels_as_classifier_ids(spec, w) == std::vector<int>{2, 0, -1});
  w.class_names = {"lay", "run", "sit"};
  CHECK_THROWS_WITH_AS(labels_as_classifier_ids(spec, w), doctest::Contains("'run'"),
                       std::invalid_argument);
}

TEST_CASE("an MAE is not a classifier, and the reverse is refused where an MAE is needed") {
  CHECK_THROWS_WITH_AS(Classifier(moca_test::shared_checkpoint()),
                       doctest::Contains("not a classifier"), std::invalid_argument);
  CHECK_THROWS_AS(Classifier(moca_test::temp_path("no_such_file.pt")), std::runtime_error);
}

TEST_CASE("PyTorch key names follow the MAE/timm layout") {
  CHECK(pytorch_name("encoder.patch_embed.weight", false) == "patch_embed.proj.weight");
  CHECK(pytorch_name("encoder.cls_token", false) == "cls_token");
  CHECK(pytorch_name("encoder.pos_embed", false) == "pos_embed");
  CHECK(pytorch_name("encoder.blocks.11.attn.qkv.bias", false) == "blocks.11.attn.qkv.bias");
  CHECK(pytorch_name("encoder.blocks.3.fc1.weight", false) == "blocks.3.mlp.fc1.weight");
  CHECK(pytorch_name("encoder.blocks.3.norm2.bias", false) == "blocks.3.norm2.bias");
  CHECK(pytorch_name("encoder.norm.weight", false) == "norm.weight");
  CHECK(pytorch_name("decoder.embed.weight", false) == "decoder_embed.weight");
  CHECK(pytorch_name("decoder.mask_token", false) == "mask_token");
  CHECK(pytorch_name("decoder.pos_embed", false) == "decoder_pos_embed");
  CHECK(pytorch_name("decoder.blocks.0.fc2.bias", false) == "decoder_blocks.0.mlp.fc2.bias");
  CHECK(pytorch_name("decoder.norm.bias", false) == "decoder_norm.bias");
  CHECK(pytorch_name("decoder.pred.weight", false) == "decoder_pred.weight");
  CHECK(pytorch_name("head.weight", false) == "head.weight");
  CHECK(pytorch_name("head.weight", true) == "head.1.weight");
  CHECK(pytorch_name("head_norm.running_var", true) == "head.0.running_var");
  CHECK_THROWS_AS(pytorch_name("encoder.bogus", false), std::invalid_argument);
}

TEST_CASE("export -> torch::pickle_load -> import gives back the same checkpoint") {
  const std::string mae = moca_test::shared_checkpoint();
  const std::string pth = moca_test::temp_path("mae.pth");
  const auto rep = export_pytorch(mae, pth);
  CHECK(rep.kind == "mae");
  std::ifstream in(pth, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto top = torch::pickle_load(bytes).toGenericDict();
  auto state = top.at("model").toGenericDict();
  CHECK(state.size() == rep.keys.size());
  const auto info = read_checkpoint_info(mae);
  const auto pw = state.at("patch_embed.proj.weight").toTensor();
  CHECK(pw.sizes().vec() == std::vector<int64_t>{info.model.embed_dim, 1, 1, 20});
  CHECK(state.at("pos_embed").toTensor().sizes().vec() ==
        std::vector<int64_t>{1, info.model.tokens() + 1, info.model.embed_dim});
  // Back: the arrays by PyTorch name, imported, equal the original bit for bit.
  std::vector<NamedArray> arrays;
  for (const auto& kv : state) {
    auto t = kv.value().toTensor().to(torch::kFloat32).contiguous();
    NamedArray a;
    a.name = kv.key().toStringRef();
    a.shape = t.sizes().vec();
    a.values.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    arrays.push_back(a);
  }
  ImportOptions o;
  o.channel_names = info.channel_names;
  o.sample_rate_hz = 50.0;
  o.num_heads = info.model.num_heads;
  o.decoder_num_heads = info.model.decoder_num_heads;
  const std::string back = moca_test::temp_path("mae_back.pt");
  const auto imp = import_arrays(arrays, o, back);
  CHECK(to_json(imp.model) == to_json(info.model));
  std::string why;
  CHECK_MESSAGE(moca_test::same_model_parameters(mae, back, why), why);

  SUBCASE("bad input names the key") {
    auto missing = arrays;
    missing.erase(std::find_if(missing.begin(), missing.end(),
                               [](const NamedArray& a) { return a.name == "norm.bias"; }));
    CHECK_THROWS_WITH_AS(import_arrays(missing, o, back), doctest::Contains("'norm.bias'"),
                         std::invalid_argument);
    auto extra = arrays;
    extra.push_back({"blocks.0.attn.bonus", {1}, {0.f}});
    CHECK_THROWS_WITH_AS(import_arrays(extra, o, back), doctest::Contains("'blocks.0.attn.bonus'"),
                         std::invalid_argument);
    auto wrong = arrays;
    for (auto& a : wrong)
      if (a.name == "blocks.1.attn.proj.bias") {
        a.shape = {2, a.shape[0] / 2};
      }
    CHECK_THROWS_WITH_AS(import_arrays(wrong, o, back),
                         doctest::Contains("'blocks.1.attn.proj.bias'"), std::invalid_argument);
    auto asked = o;
    asked.kind = ImportKind::kClassifier;
    CHECK_THROWS_WITH_AS(import_arrays(arrays, asked, back), doctest::Contains("holds an MAE"),
                         std::invalid_argument);
    auto unnamed = o;
    unnamed.channel_names.clear();
    CHECK_THROWS_WITH_AS(import_arrays(arrays, unnamed, back), doctest::Contains("channel_names"),
                         std::invalid_argument);
    auto three = o;
    three.channel_names = {"a", "b", "c", "d", "e", "f", "g"};
    CHECK_THROWS_AS(import_arrays(arrays, three, back), std::invalid_argument);
    auto no_rate = o;
    no_rate.sample_rate_hz = 0;
    CHECK_THROWS_WITH_AS(import_arrays(arrays, no_rate, back),
                         doctest::Contains("ImportOptions::sample_rate (0) is required"),
                         std::invalid_argument);
  }
}

TEST_CASE("import_pytorch reads a moca export's channel names and rate; a contradiction fails") {
  const std::string mae = moca_test::shared_checkpoint();
  const auto info = read_checkpoint_info(mae);
  const std::string pth = moca_test::temp_path("mae_record.pth");
  export_pytorch(mae, pth);
  // No options: the export's record gives channel names, rate and heads.
  const std::string back = moca_test::temp_path("mae_record_back.pt");
  const auto imp = import_pytorch(pth, ImportOptions{}, back);
  const auto got = read_checkpoint_info(back);
  CHECK(got.channel_names == info.channel_names);
  CHECK(got.meta.at("data").at("sample_rate_hz").get<double>() ==
        info.meta.at("data").at("sample_rate_hz").get<double>());
  CHECK(to_json(imp.model) == to_json(info.model));
  std::string why;
  CHECK_MESSAGE(moca_test::same_model_parameters(mae, back, why), why);
  bool noted = false;
  for (const auto& n : imp.notes) noted = noted || n.rfind("channel_names from the export", 0) == 0;
  CHECK(noted);
  // Given and equal to the record: accepted.
  ImportOptions same;
  same.channel_names = info.channel_names;
  same.sample_rate_hz = info.meta.at("data").at("sample_rate_hz").get<double>();
  CHECK_NOTHROW(import_pytorch(pth, same, back));
  // Given and different: an error naming the option field (the programs' flag).
  ImportOptions other = same;
  std::reverse(other.channel_names.begin(), other.channel_names.end());
  CHECK_THROWS_WITH_AS(import_pytorch(pth, other, back),
                       doctest::Contains("ImportOptions::channel_names"), std::invalid_argument);
  other = same;
  other.sample_rate_hz = 32.0;
  CHECK_THROWS_WITH_AS(import_pytorch(pth, other, back),
                       doctest::Contains("ImportOptions::sample_rate (32) contradicts"),
                       std::invalid_argument);
  // A foreign state dict (the weights alone, no 'moca' record) still needs both.
  std::ifstream in(pth, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto state = torch::pickle_load(bytes).toGenericDict().at("model");
  const std::string bare = moca_test::temp_path("mae_bare.pth");
  {
    const std::vector<char> data = torch::pickle_save(state);
    std::ofstream(bare, std::ios::binary)
        .write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  CHECK_THROWS_WITH_AS(import_pytorch(bare, ImportOptions{}, back),
                       doctest::Contains("ImportOptions::sample_rate (0) is required"),
                       std::invalid_argument);
  ImportOptions rate_only;
  rate_only.sample_rate_hz = 50.0;
  CHECK_THROWS_WITH_AS(import_pytorch(bare, rate_only, back),
                       doctest::Contains("ImportOptions::channel_names ('') is required"),
                       std::invalid_argument);
}

// Issue 31: a 4-s model takes 5-s windows (whole patches: 240 samples, 12 patches of 20 where the
// checkpoint has 10). The fixed sin-cos positions are evaluated at the new patch indices; the
// encoder's weights are the checkpoint's.
TEST_CASE("another window length: same encoder weights, positions at the new patch indices") {
  const moca::data::Windows w200 = moca_test::small_windows(60, 31);
  moca::data::Windows w = w200;  // 240 samples: each channel's 200, then its first 40 again
  w.length = 240;
  w.x.resize(w200.x.rows(), 6 * 240);
  for (int i = 0; i < w.size(); ++i) {
    w.window(i).leftCols(200) = w200.window(i);
    w.window(i).rightCols(40) = w200.window(i).leftCols(40);
  }
  const std::string save = moca_test::temp_path("length240.pt");
  std::ostringstream log;
  const auto r = train_classifier(quick(DownstreamMode::kLinearProbe, 2, save), rows(w, 0, 40),
                                  rows(w, 40, 60), log);
  CHECK(r.test.n == 20);
  auto saved = moca::model::detail::open_checkpoint(save);
  auto own = moca::model::detail::open_checkpoint(moca_test::shared_checkpoint());
  REQUIRE(saved.info.model.length == 240);
  REQUIRE(own.info.model.length == 200);
  REQUIRE(saved.info.model.pos_embed == PosEmbedKind::kSinCos2d);
  MocaEncoder e240(saved.info.model), e200(own.info.model);
  moca::model::detail::load_module(saved, *e240, {"encoder"});
  moca::model::detail::load_module(own, *e200, {"encoder"});
  const auto p200 = e200->named_parameters(true);
  for (const auto& p : e240->named_parameters(true)) {  // a probe leaves the encoder as it was
    CHECK_MESSAGE(torch::equal(p.value(), p200[p.key()]), p.key());
  }
  // The table by hand: row 1 + c * P + p = [sin(p w_k), cos(p w_k), sin(c w_k), cos(c w_k)],
  // w_k = 10000^(-k / (D/4)), k < D/4.
  const torch::Tensor t240 = e240->named_buffers(false)["pos_embed"][0];
  const torch::Tensor t200 = e200->named_buffers(false)["pos_embed"][0];
  const int D = saved.info.model.embed_dim, q = D / 4;
  REQUIRE(t240.size(0) == 1 + 6 * 12);
  double worst = 0.0;
  for (int c = 0; c < 6; ++c) {
    for (int p = 0; p < 12; ++p) {
      for (int k = 0; k < q; ++k) {
        const double wk = std::pow(10000.0, -static_cast<double>(k) / q);
        const double want[4] = {std::sin(p * wk), std::cos(p * wk), std::sin(c * wk),
                                std::cos(c * wk)};
        for (int part = 0; part < 4; ++part) {
          const double got = t240[1 + c * 12 + p][part * q + k].item<double>();
          worst = std::max(worst, std::abs(got - want[part]));
        }
      }
      if (p < 10) {  // the positions the checkpoint knows are its own rows
        CHECK(torch::equal(t240[1 + c * 12 + p], t200[1 + c * 10 + p]));
      }
    }
  }
  CHECK(worst < 1e-6);
  // The kept classifier predicts 240-sample windows and refuses the model's old length.
  const Classifier clf(save);
  CHECK(clf.predict(rows(w, 40, 60)).size() == 20);
  CHECK_THROWS_AS(clf.predict(rows(w200, 40, 60)), std::invalid_argument);
  // A length that is not whole patches is refused, naming the rule.
  moca::data::Windows w230 = w;
  w230.length = 230;
  w230.x.resize(w.x.rows(), 6 * 230);
  for (int i = 0; i < w.size(); ++i) w230.window(i) = w.window(i).leftCols(230);
  CHECK_THROWS_WITH_AS(train_classifier(quick(DownstreamMode::kLinearProbe, 1, ""),
                                        rows(w230, 0, 40), rows(w230, 40, 60), log),
                       doctest::Contains("not a whole number of the model's patches"),
                       std::invalid_argument);
}

namespace {

/// A cpu-small MAE with the released code's 1-D positions (--pos-embed 1d), pre-trained for one
/// short epoch: what matters here is its positional table. Built once per test process.
const std::string& checkpoint_1d() {
  static const std::string path = [] {
    PretrainOptions o;
    o.preset = "cpu-small";
    o.pos_embed = PosEmbedKind::kSinCos1d;
    o.epochs = 1;
    o.batch_size = 20;
    o.warmup_epochs = 0;
    o.lr = 1e-3;
    o.checkpoint = moca_test::temp_path("pos1d.pt");
    o.checkpoint_every = 100;
    o.progress = false;
    o.seed = 5;
    o.runtime.threads = 1;
    std::ostringstream log;
    pretrain(o, moca_test::small_windows(40, 5), log);
    return o.checkpoint;
  }();
  return path;
}

/// `w` (200 samples per channel) at `length` samples: each channel cropped, or continued with
/// its own first samples.
moca::data::Windows at_length(const moca::data::Windows& w, int length) {
  moca::data::Windows out = w;
  out.length = length;
  out.x.resize(w.x.rows(), static_cast<Eigen::Index>(w.channels) * length);
  for (int i = 0; i < w.size(); ++i) {
    for (int t = 0; t < length; ++t) out.window(i).col(t) = w.window(i).col(t % w.length);
  }
  return out;
}

/// The encoder of a checkpoint, loaded as its options describe it.
MocaEncoder encoder_of(const std::string& path) {
  auto ck = moca::model::detail::open_checkpoint(path);
  MocaEncoder e(ck.info.model);
  moca::model::detail::load_module(ck, *e, {"encoder"});
  return e;
}

/// Largest |table - formula| over the token rows of a C x P table: row 1 + c * P + p is
/// [sin(a w_k), cos(a w_k), sin(b w_k), cos(b w_k)], w_k = 10000^(-k / (D/4)), k < D/4, with
/// (a, b) = (p, c) for 2-D positions and (c * pitch + p, 0) for 1-D ones.
double table_error(const torch::Tensor& table, bool one_d, int C, int P, int pitch) {
  const int q = static_cast<int>(table.size(1)) / 4;
  double worst = 0.0;
  for (int c = 0; c < C; ++c) {
    for (int p = 0; p < P; ++p) {
      const double a = one_d ? c * pitch + p : p, b = one_d ? 0 : c;
      for (int k = 0; k < q; ++k) {
        const double wk = std::pow(10000.0, -static_cast<double>(k) / q);
        const double want[4] = {std::sin(a * wk), std::cos(a * wk), std::sin(b * wk),
                                std::cos(b * wk)};
        for (int part = 0; part < 4; ++part) {
          const double got = table[1 + c * P + p][part * q + k].item<double>();
          worst = std::max(worst, std::abs(got - want[part]));
        }
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("another window length, 1-D positions: token (c, p) keeps the model's c * P + p") {
  const moca::data::Windows w200 = moca_test::small_windows(60, 31);
  const moca::data::Windows w160 = at_length(w200, 160), w180 = at_length(w200, 180),
                            w240 = at_length(w200, 240);
  std::ostringstream log;
  const torch::Tensor own = encoder_of(checkpoint_1d())->named_buffers(false)["pos_embed"][0];
  REQUIRE(own.size(0) == 1 + 6 * 10);
  CHECK(table_error(own, true, 6, 10, 10) < 1e-6);
  // Shorter (8 patches): the kept classifier's table has pitch 10, every row the model's own.
  const std::string save160 = moca_test::temp_path("pos1d_160.pt");
  auto o = quick(DownstreamMode::kLinearProbe, 2, save160);
  o.checkpoint = checkpoint_1d();
  const auto r = train_classifier(o, rows(w160, 0, 40), rows(w160, 40, 60), log);
  const Classifier kept(save160);
  REQUIRE(kept.info().model.length == 160);
  CHECK(kept.info().model.pos_pitch == 10);
  const torch::Tensor t160 = encoder_of(save160)->named_buffers(false)["pos_embed"][0];
  REQUIRE(t160.size(0) == 1 + 6 * 8);
  CHECK(table_error(t160, true, 6, 8, 10) < 1e-6);
  for (int c = 0; c < 6; ++c)
    for (int p = 0; p < 8; ++p) CHECK(torch::equal(t160[1 + c * 8 + p], own[1 + c * 10 + p]));
  // It loads and predicts at its own length, repeating the training run's predictions.
  CHECK(kept.predict(rows(w160, 40, 60)) == r.predicted);
  // The kept classifier at yet another length: up to its pitch, at the model's positions.
  auto again = quick(DownstreamMode::kLinearProbe, 1, moca_test::temp_path("pos1d_180.pt"));
  again.checkpoint = save160;
  train_classifier(again, rows(w180, 0, 40), rows(w180, 40, 60), log);
  const torch::Tensor t180 = encoder_of(again.save_model)->named_buffers(false)["pos_embed"][0];
  CHECK(table_error(t180, true, 6, 9, 10) < 1e-6);
  again.save_model = moca_test::temp_path("pos1d_200.pt");
  train_classifier(again, rows(w200, 0, 40), rows(w200, 40, 60), log);
  CHECK(torch::equal(encoder_of(again.save_model)->named_buffers(false)["pos_embed"][0], own));
  // Longer (12 patches) is refused, from the model and from the kept classifier alike.
  again.save_model.clear();
  for (const std::string& from : {checkpoint_1d(), save160}) {
    CAPTURE(from);
    again.checkpoint = from;
    CHECK_THROWS_WITH_AS(
        train_classifier(again, rows(w240, 0, 40), rows(w240, 40, 60), log),
        doctest::Contains("windows of 240 samples -> 12 patches per modality, more than the "
                          "model's 10: with 1-D positions (--pos-embed 1d)"),
        std::invalid_argument);
  }
  // --input-seconds says so before any data is read.
  const ModelGeometry g = checkpoint_geometry(checkpoint_1d());
  CHECK(g.max_patches == 10);
  CHECK(geometry_at_seconds(g, 3.2, "ClassifyOptions::input_seconds").length == 160);
  CHECK(geometry_at_seconds(g, 4.0, "ClassifyOptions::input_seconds").length == 200);
  CHECK_THROWS_WITH_AS(geometry_at_seconds(g, 5.0, "ClassifyOptions::input_seconds"),
                       doctest::Contains("ClassifyOptions::input_seconds (5) -> 12 patches per "
                                         "modality, more than the model's 10"),
                       std::invalid_argument);
  CHECK(checkpoint_geometry(moca_test::shared_checkpoint()).max_patches == 0);  // 2-D: no bound
}

TEST_CASE("another window length, 2-D positions: a shorter input keeps the first rows") {
  const moca::data::Windows w160 = at_length(moca_test::small_windows(60, 31), 160);
  const std::string save = moca_test::temp_path("pos2d_160.pt");
  std::ostringstream log;
  const auto r = train_classifier(quick(DownstreamMode::kLinearProbe, 2, save), rows(w160, 0, 40),
                                  rows(w160, 40, 60), log);
  const torch::Tensor own =
      encoder_of(moca_test::shared_checkpoint())->named_buffers(false)["pos_embed"][0];
  const torch::Tensor t160 = encoder_of(save)->named_buffers(false)["pos_embed"][0];
  REQUIRE(t160.size(0) == 1 + 6 * 8);
  CHECK(read_checkpoint_info(save).model.pos_pitch == 0);
  CHECK(table_error(t160, false, 6, 8, 0) < 1e-6);
  for (int c = 0; c < 6; ++c)
    for (int p = 0; p < 8; ++p) CHECK(torch::equal(t160[1 + c * 8 + p], own[1 + c * 10 + p]));
  CHECK(Classifier(save).predict(rows(w160, 40, 60)) == r.predicted);
}

TEST_CASE("--scratch-init timm: a learnable table, kept and predicted bit for bit") {
  const auto w = moca_test::small_windows(60, 41);
  const std::string save = moca_test::temp_path("timm.pt");
  auto o = quick(DownstreamMode::kScratch, 2, save);
  o.checkpoint.clear();
  o.preset = "cpu-small";
  o.scratch_init = ScratchInit::kTimm;
  CHECK(o.to_json().at("scratch_init") == "timm");
  std::ostringstream log;
  const auto r = train_classifier(o, rows(w, 0, 40), rows(w, 40, 60), log);
  const Classifier kept(save);
  CHECK(kept.info().model.pos_learned);
  CHECK(kept.info().meta.at("training").at("scratch_init") == "timm");
  // The table in the file is a trained parameter, far from the sin-cos code it is built with.
  auto ck = moca::model::detail::open_checkpoint(save);
  MocaEncoder e(ck.info.model);
  const torch::Tensor sincos = e->pos_embed().detach().clone();
  moca::model::detail::load_module(ck, *e, {"encoder"});
  CHECK(e->named_parameters(false).contains("pos_embed"));
  CHECK((e->pos_embed() - sincos).abs().max().item<double>() > 0.5);
  CHECK(std::abs(e->pos_embed().std().item<double>() - 0.02) < 0.005);
  // predict repeats the training run's predictions, and two loads give the same probabilities.
  CHECK(kept.predict(rows(w, 40, 60)) == r.predicted);
  CHECK(kept.predict_proba(rows(w, 40, 60)) == Classifier(save).predict_proba(rows(w, 40, 60)));
  // Same seed, same network and numbers; the MAE initialisation gives another network.
  o.save_model.clear();
  CHECK(train_classifier(o, rows(w, 0, 40), rows(w, 40, 60), log).predicted == r.predicted);
  CHECK(train_classifier(o, rows(w, 0, 40), rows(w, 40, 60), log).history.at(0).at("loss") ==
        r.history.at(0).at("loss"));
  o.scratch_init = ScratchInit::kMae;
  CHECK(train_classifier(o, rows(w, 0, 40), rows(w, 40, 60), log).history.at(0).at("loss") !=
        r.history.at(0).at("loss"));
  // At another length the learned table is refused, saying why.
  auto again = quick(DownstreamMode::kLinearProbe, 1, "");
  again.checkpoint = save;
  const auto w160 = at_length(w, 160);
  CHECK_THROWS_WITH_AS(train_classifier(again, rows(w160, 0, 40), rows(w160, 40, 60), log),
                       doctest::Contains("positional table was learnt (timm initialisation, "
                                         "--scratch-init timm) for its own 10 patches"),
                       std::invalid_argument);
  // Only the scratch mode takes it.
  again.scratch_init = ScratchInit::kTimm;
  CHECK_THROWS_WITH_AS(again.validate(),
                       doctest::Contains("DownstreamOptions::scratch_init (timm) applies to the "
                                         "scratch mode only"),
                       std::invalid_argument);
  ProtocolOptions po;
  po.downstream = o;
  po.downstream.scratch_init = ScratchInit::kTimm;
  bool pos_unused = false;
  for (const auto& u : unused_options(po)) pos_unused |= u.field == "DownstreamOptions::pos_embed";
  CHECK(pos_unused);
}

// Issue 40: the authors' fine-tuning trains pos_embed (layer 0, no weight decay); moca's default
// keeps the fixed code. The trained table starts from the checkpoint's and moves; the control
// (the default) keeps the checkpoint's table bit for bit.
TEST_CASE("--train-pos-embed: fine-tuning trains the table from the checkpoint's code") {
  const auto w = moca_test::small_windows(60, 43);
  auto ck = moca::model::detail::open_checkpoint(moca_test::shared_checkpoint());
  MocaEncoder pre(ck.info.model);
  moca::model::detail::load_module(ck, *pre, {"encoder"});
  const torch::Tensor start = pre->pos_embed().detach().clone();
  auto table_of = [](const std::string& path) {
    auto kept = moca::model::detail::open_checkpoint(path);
    MocaEncoder e(kept.info.model);
    moca::model::detail::load_module(kept, *e, {"encoder"});
    return std::make_pair(kept.info.model.pos_learned, e->pos_embed().detach().clone());
  };
  std::ostringstream log;
  const std::string fixed_path = moca_test::temp_path("ft_fixed.pt");
  train_classifier(quick(DownstreamMode::kFinetune, 2, fixed_path), rows(w, 0, 40), rows(w, 40, 60),
                   log);
  const auto [fixed_learned, fixed_table] = table_of(fixed_path);
  CHECK_FALSE(fixed_learned);
  CHECK(torch::equal(fixed_table, start));  // the control: the table does not move
  const std::string trained_path = moca_test::temp_path("ft_trained.pt");
  auto o = quick(DownstreamMode::kFinetune, 2, trained_path);
  o.train_pos_embed = true;
  CHECK(o.to_json().at("train_pos_embed") == true);
  CHECK_FALSE(quick(DownstreamMode::kFinetune, 2, "").to_json().contains("train_pos_embed"));
  const auto r = train_classifier(o, rows(w, 0, 40), rows(w, 40, 60), log);
  const auto [learned, table] = table_of(trained_path);
  CHECK(learned);
  const double moved = (table - start).abs().max().item<double>();
  CHECK(moved > 0.0);  // trained
  CHECK(moved < 0.1);  // from the checkpoint's code (2 epochs at lr 1e-3), not a random start
  CHECK(torch::equal(table[0][0], start[0][0]) == false);  // the cls row takes part too
  CHECK(Classifier(trained_path).predict(rows(w, 40, 60)) == r.predicted);
  // At another length the trained table starts from the fixed code at the new patch indices, and
  // the kept classifier takes only that length.
  const auto w160 = at_length(w, 160);
  o.save_model = moca_test::temp_path("ft_trained160.pt");
  train_classifier(o, rows(w160, 0, 40), rows(w160, 40, 60), log);
  const auto [learned160, table160] = table_of(o.save_model);
  CHECK(learned160);
  REQUIRE(table160.size(1) == 1 + 6 * 8);
  for (int c = 0; c < 6; ++c) {
    for (int p = 0; p < 8; ++p) {
      CHECK((table160[0][1 + c * 8 + p] - start[0][1 + c * 10 + p]).abs().max().item<double>() <
            0.1);
    }
  }
  CHECK_THROWS_AS(Classifier(o.save_model).predict(rows(w, 40, 60)), std::invalid_argument);
  // Only fine-tuning takes it.
  auto probe = quick(DownstreamMode::kLinearProbe, 1, "");
  probe.train_pos_embed = true;
  CHECK_THROWS_WITH_AS(probe.validate(),
                       doctest::Contains("DownstreamOptions::train_pos_embed (true) applies to the "
                                         "finetune mode only"),
                       std::invalid_argument);
}

TEST_CASE("label fraction: per class, at least one each, seeded, never an unlabelled window") {
  moca::data::Windows w = moca_test::small_windows(16, 3);
  const int labels[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2, -1, -1};
  for (int i = 0; i < 16; ++i) w.labels(i) = labels[i];
  auto count = [&](const std::vector<int>& rows, int c) {
    return std::count_if(rows.begin(), rows.end(), [&](int r) { return w.labels(r) == c; });
  };
  const std::vector<int> tenth = label_subset(w, 0.1, 7);
  CHECK(tenth.size() == 3);  // round(1), round(0.3) -> 1, round(0.1) -> 1
  CHECK(count(tenth, 0) == 1);
  CHECK(count(tenth, 1) == 1);
  CHECK(count(tenth, 2) == 1);
  const std::vector<int> half = label_subset(w, 0.5, 7);
  CHECK(count(half, 0) == 5);
  CHECK(count(half, 1) == 2);  // round(1.5) = 2
  CHECK(count(half, 2) == 1);
  CHECK(count(half, -1) == 0);
  CHECK(std::is_sorted(half.begin(), half.end()));
  CHECK(label_subset(w, 0.5, 7) == half);  // same seed, same rows
  bool differs = false;
  for (std::uint64_t seed = 8; seed < 12 && !differs; ++seed)
    differs = label_subset(w, 0.5, seed) != half;
  CHECK(differs);
  CHECK(label_subset(w, 1.0, 7).size() == 14);  // every labelled window
}

TEST_CASE("shuffled-label control: a seeded permutation of the labels, class counts kept") {
  moca::data::Windows w = moca_test::small_windows(40, 3);
  for (int i = 0; i < 40; ++i) w.labels(i) = i < 20 ? 0 : i < 32 ? 1 : 2;
  const moca::data::Windows s = moca::model::shuffle_labels(w, 11);
  std::vector<int> a(w.labels.data(), w.labels.data() + 40),
      b(s.labels.data(), s.labels.data() + 40);
  CHECK(std::is_permutation(a.begin(), a.end(), b.begin()));
  CHECK(a != b);
  int moved = 0;
  for (int i = 0; i < 40; ++i) moved += a[i] != b[i];
  CHECK(moved >= 10);  // a permutation of 40, not a swap or two
  CHECK(s.x == w.x);   // the windows themselves are untouched
  CHECK(s.subjects == w.subjects);
  const moca::data::Windows again = moca::model::shuffle_labels(w, 11);
  CHECK(again.labels == s.labels);
  CHECK(moca::model::shuffle_labels(w, 12).labels != s.labels);
}
