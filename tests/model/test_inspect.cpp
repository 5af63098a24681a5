// The inspection pass (src/moca/model/eval/inspect.hpp): attention against a direct computation
// from the checkpoint's weights with plain tensor ops, the model's own outputs, masks, rollout.
#include "torch_test.hpp"
// (torch_test.hpp first: doctest's CHECK after glog's)
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "commands.hpp"
#include "moca/common/matrix_io.hpp"
#include "moca/common/random.hpp"
#include "moca/model/eval/attention_report.hpp"
#include "moca/model/eval/inspect.hpp"
#include "moca/model/kernels/detail/attention.hpp"
#include "moca/model/kernels/detail/cpu_kernels.hpp"
#include "moca/model/nn/mask_indices.hpp"
#include "test_support.hpp"

using namespace moca::model;
using moca::masking::Mask;
namespace md = moca::model::detail;

namespace {

Mask random_mask(std::uint64_t seed, int masked) {
  moca::Rng rng(seed);
  std::vector<int> perm(60);
  for (int t = 0; t < 60; ++t) perm[static_cast<size_t>(t)] = t;
  moca::shuffle(perm, rng);
  Mask m(6, 10);
  for (int k = 0; k < masked; ++k) m.set(perm[static_cast<size_t>(k)], true);
  return m;
}

MocaEncoder load_encoder(const std::string& path) {
  auto ck = md::open_checkpoint(path);
  return md::load_encoder(ck, torch::kCPU);
}

// Per layer and head softmax(q k^T / sqrt(d)) of window x (1 x C x L) computed here from the
// checkpoint's named weights with plain tensor ops (layer_norm, linear, gelu; no moca kernel),
// visible tokens `keep` (empty = all): L x H x N x N in double.
torch::Tensor direct_attention(MocaEncoder& enc, const torch::Tensor& x,
                               const std::vector<int64_t>& keep) {
  torch::NoGradGuard ng;
  auto P = enc->named_parameters();
  auto B = enc->named_buffers();
  auto d = [](const torch::Tensor& t) { return t.to(torch::kFloat64); };
  const auto& o = enc->options();
  const int64_t D = o.embed_dim, H = o.num_heads, hd = D / H;
  auto tokens = d(x).reshape({1, -1, o.patch_length});  // modality layout
  auto pos = d(B["pos_embed"])[0];
  auto h = torch::linear(tokens, d(P["patch_embed.weight"]), d(P["patch_embed.bias"])) +
           pos.slice(0, 1).unsqueeze(0);
  if (!keep.empty()) h = h.index_select(1, torch::tensor(keep, torch::kInt64));
  h = torch::cat({d(P["cls_token"]) + pos.slice(0, 0, 1).unsqueeze(0), h}, 1);
  const int64_t N = h.size(1);
  std::vector<torch::Tensor> out;
  for (int l = 0; l < o.depth; ++l) {
    const std::string b = "blocks." + std::to_string(l) + ".";
    auto ln = [&](const torch::Tensor& v, const std::string& n) {
      return torch::layer_norm(v, {D}, d(P[b + n + ".weight"]), d(P[b + n + ".bias"]), 1e-6);
    };
    auto qkv = torch::linear(ln(h, "norm1"), d(P[b + "attn.qkv.weight"]), d(P[b + "attn.qkv.bias"]))
                   .reshape({N, 3, H, hd})
                   .permute({1, 2, 0, 3});
    auto a = torch::softmax(
        torch::matmul(qkv[0], qkv[1].transpose(-2, -1)) / std::sqrt(static_cast<double>(hd)), -1);
    out.push_back(a);
    auto att = torch::matmul(a, qkv[2]).permute({1, 0, 2}).reshape({1, N, D});
    h = h + torch::linear(att, d(P[b + "attn.proj.weight"]), d(P[b + "attn.proj.bias"]));
    auto m =
        torch::gelu(torch::linear(ln(h, "norm2"), d(P[b + "fc1.weight"]), d(P[b + "fc1.bias"])));
    h = h + torch::linear(m, d(P[b + "fc2.weight"]), d(P[b + "fc2.bias"]));
  }
  return torch::stack(out);
}

/// The inspector on the CPU: the tests below compare its arithmetic with the model's forward
/// pass on the CPU (their references), which a GPU's kernels would differ from in rounding.
InferenceOptions on_cpu() {
  InferenceOptions io;
  io.runtime.device = moca::model::Device::kCpu;
  return io;
}

}  // namespace

TEST_CASE("inspection pass: rows sum to 1 and equal a direct softmax(QK^T/sqrt(d)) to 1e-5") {
  const std::string ck = moca_test::shared_checkpoint();
  const EncoderInspector ins(ck, on_cpu());
  auto enc = load_encoder(ck);
  const auto w = moca_test::small_windows(4, 51);
  for (bool masked : {false, true}) {
    const Mask m = random_mask(7, 45);
    const WindowAttention a = ins.attention(w, 2, masked ? &m : nullptr);
    REQUIRE(a.layers == 4);
    REQUIRE(a.heads == 4);
    REQUIRE(a.tokens == 60);
    std::vector<int64_t> keep;
    std::vector<int> rows = {0};  // grid rows of the encoder's rows
    for (int t = 0; t < 60; ++t) {
      if (masked && m.masked(t)) continue;
      keep.push_back(t);
      rows.push_back(1 + t);
    }
    if (!masked) keep.clear();
    const auto ref = direct_attention(enc, md::windows_tensor(w, {2}, torch::kCPU), keep);
    const auto r = ref.accessor<double, 4>();
    double worst = 0.0, worst_sum = 0.0;
    for (int l = 0; l < a.layers; ++l)
      for (int h = 0; h < a.heads; ++h)
        for (size_t i = 0; i < rows.size(); ++i) {
          double s = 0.0;
          for (size_t j = 0; j < rows.size(); ++j) {
            const double v = a.weight(l, h, rows[i], rows[j]);
            s += v;
            worst = std::max(
                worst, std::abs(v - r[l][h][static_cast<int64_t>(i)][static_cast<int64_t>(j)]));
          }
          worst_sum = std::max(worst_sum, std::abs(s - 1.0));
        }
    CHECK(worst < 1e-5);
    CHECK(worst_sum < 1e-12);
    // Masked-out tokens get no attention and give none.
    if (masked) {
      int nonzero = 0;
      for (int l = 0; l < a.layers; ++l)
        for (int h = 0; h < a.heads; ++h)
          for (int i = 0; i < a.size(); ++i)
            for (int t = 0; t < 60; ++t)
              if (m.masked(t))
                nonzero += a.weight(l, h, i, 1 + t) != 0.0 || a.weight(l, h, 1 + t, i) != 0.0;
      CHECK(nonzero == 0);
      CHECK(a.rollout.col(1 + m.masked_tokens()[0]).isZero(0.0));
    }
    // The rollout rows of live tokens sum to 1 (products of row-stochastic matrices).
    CHECK(std::abs(a.rollout.row(0).sum() - 1.0) < 1e-12);
  }
}

TEST_CASE("inspection pass gives exactly the model's encoder outputs (kernels on and off)") {
  const std::string ck = moca_test::shared_checkpoint();
  auto enc = load_encoder(ck);
  const auto w = moca_test::small_windows(3, 52);
  const Mask m = random_mask(8, 45);
  for (bool kernels : {true, false}) {
    moca::model::detail::set_cpu_kernels_enabled(kernels);
    const EncoderInspector ins(ck, on_cpu());
    torch::NoGradGuard ng;
    auto x = patchify(md::windows_tensor(w, {1}, torch::kCPU), TokenLayout::kModality, 20);
    auto full = enc->forward(x);
    auto ids = to_tensors(mask_indices({m}, TokenLayout::kModality, 6, 10), torch::kCPU);
    auto part = enc->forward(x, ids.ids_keep);
    const auto a = ins.attention(w, 1);
    const auto b = ins.attention(w, 1, &m);
    const Eigen::MatrixXf ref_full = md::to_eigen(full[0]).cast<float>();
    const Eigen::MatrixXf ref_part = md::to_eigen(part[0]).cast<float>();
    CHECK(a.output == ref_full);  // bit for bit
    CHECK(b.output == ref_part);
    CHECK(b.output.rows() == 16);
  }
  moca::model::detail::set_cpu_kernels_enabled(true);
}

TEST_CASE("masked tokens' samples do not change the attention") {
  const EncoderInspector ins(moca_test::shared_checkpoint());
  auto w = moca_test::small_windows(2, 53);
  const Mask m = random_mask(9, 30);
  const auto a = ins.attention(w, 0, &m);
  for (int c = 0; c < 6; ++c)
    for (int t = 0; t < 200; ++t)
      if (m.masked(c, t / 20)) w.x(0, c * 200 + t) += 5.0f;
  const auto b = ins.attention(w, 0, &m);
  CHECK(a.weights == b.weights);
  // Control: perturbing a visible token does change it.
  const int vis = m.visible_tokens()[0];
  w.x(0, (vis / 10) * 200 + (vis % 10) * 20) += 5.0f;
  CHECK(ins.attention(w, 0, &m).weights != a.weights);
}

TEST_CASE("attention rollout: identity stays identity; a two-layer product by hand") {
  const Eigen::MatrixXd id = Eigen::MatrixXd::Identity(5, 5);
  CHECK(attention_rollout({id, id, id}).isApprox(id, 0.0));
  Eigen::MatrixXd a1(2, 2), a2(2, 2), want(2, 2);
  a1 << 1, 0, 0.5, 0.5;
  a2 << 0.5, 0.5, 0, 1;
  // (0.5 I + 0.5 a2)(0.5 I + 0.5 a1) = [[.75,.25],[0,1]] [[1,0],[.25,.75]]
  want << 0.8125, 0.1875, 0.25, 0.75;
  CHECK((attention_rollout({a1, a2}) - want).cwiseAbs().maxCoeff() < 1e-15);
  CHECK_THROWS_AS(attention_rollout({}), std::invalid_argument);
  CHECK_THROWS_AS(attention_rollout({a1, id}), std::invalid_argument);
}

TEST_CASE("pooled embeddings: cls = the encoder's row 0, mean = the token mean") {
  const std::string ck = moca_test::shared_checkpoint();
  InferenceOptions io = on_cpu();
  io.batch_size = 3;  // several batches
  const EncoderInspector ins(ck, io);
  auto enc = load_encoder(ck);
  const auto w = moca_test::small_windows(7, 54);
  const Eigen::MatrixXd cls = ins.embed(w, Pool::kCls), mean = ins.embed(w, Pool::kMean);
  torch::NoGradGuard ng;
  auto h = enc->forward(patchify(md::windows_tensor(w, {0, 1, 2, 3, 4, 5, 6}, torch::kCPU),
                                 TokenLayout::kModality, 20));
  const Eigen::MatrixXd rc = md::to_eigen(h.select(1, 0));
  const Eigen::MatrixXd rm = md::to_eigen(h.slice(1, 1).mean(1));
  CHECK((cls - rc).cwiseAbs().maxCoeff() < 1e-5);
  CHECK((mean - rm).cwiseAbs().maxCoeff() < 1e-5);
  CHECK((cls - mean).cwiseAbs().maxCoeff() > 1e-2);  // control: the poolings differ
  CHECK(parse_enum(kPoolNames, "cls", "--pool") == Pool::kCls);
  CHECK(pool_name(Pool::kMean) == "mean");
  CHECK_THROWS_WITH_AS(parse_enum(kPoolNames, "max", "--pool"),
                       doctest::Contains("--pool (max) must be one of: cls, mean"),
                       std::invalid_argument);
}

TEST_CASE("inspection refuses windows and masks that do not fit") {
  const EncoderInspector ins(moca_test::shared_checkpoint());
  const auto w = moca_test::small_windows(2, 55);
  CHECK_THROWS_WITH_AS(ins.attention(w, 2), doctest::Contains("window (2) must be in [0, 2)"),
                       std::invalid_argument);
  const Mask wrong(6, 5);
  CHECK_THROWS_AS(ins.attention(w, 0, &wrong), std::invalid_argument);
}

TEST_CASE("moca attention and moca embed --map: files, seeds, and errors") {
  using namespace moca::tools;
  const std::string ck = moca_test::shared_checkpoint();
  std::ostringstream out, log;
  AttentionCommand a;
  a.model = ck;
  a.data.synthetic_windows = 40;
  a.windows = {0, 3};
  a.policy = "cross:ratio=0.5";
  a.out_dir = moca_test::temp_path("attention");
  a.png = false;
  const auto j = run_attention(a, out, log);
  REQUIRE(j["windows"].size() == 2);
  CHECK(j["windows"][1]["cls_attention_rollout"].size() == 6);
  CHECK(j["windows"][1]["cls_attention_rollout"][0].size() == 10);
  a.windows = {0, 12};
  CHECK_THROWS_WITH_AS(run_attention(a, out, log),
                       doctest::Contains("AttentionOptions::windows (12) must be in [0, 12)"),
                       std::invalid_argument);
  CHECK(unused_options(a).empty());
  a.policy.clear();  // no masks: the seed takes no effect
  REQUIRE(unused_options(a).size() == 1);
  CHECK(unused_options(a)[0].field == "AttentionOptions::seed");

  EmbedCommand ec;
  moca::model::EmbedOptions& e = ec.options;
  e.checkpoints = {ck, ck};
  e.labels = {"a", "b"};
  e.data.synthetic_windows = 60;
  e.data.split = moca::data::SplitKind::kAll;
  e.map = moca::model::EmbedMap::kUmap;
  e.umap.neighbors = 10;
  e.umap.seed = 3;
  e.out_dir = moca_test::temp_path("embed_map");
  e.png = false;
  const auto m = run_embed(ec, out, log);
  CHECK(m["pool"] == "mean");  // a map without a pool: mean pooling
  CHECK(m["models"].size() == 2);
  const Eigen::MatrixXd ya = moca::read_npy_matrix(e.out_dir + "/map_a.npy");
  const Eigen::MatrixXd yb = moca::read_npy_matrix(e.out_dir + "/map_b.npy");
  CHECK(ya.rows() == 60);
  CHECK(ya == yb);    // same embeddings, same seed: same coordinates
  e.max_windows = 8;  // fewer points than neighbours
  CHECK_THROWS_WITH_AS(run_embed(ec, out, log),
                       doctest::Contains("neighbors (10) must be <= the number of points (8)"),
                       std::invalid_argument);
  e.max_windows = 1;
  e.map = moca::model::EmbedMap::kPca;
  CHECK_THROWS_WITH_AS(run_embed(ec, out, log), doctest::Contains("points (1) must be >= 2"),
                       std::invalid_argument);
}

TEST_CASE("write_attention_report: the token table and the matrices as written") {
  const EncoderInspector ins(moca_test::shared_checkpoint());
  const auto w = moca_test::small_windows(2, 56);
  const Mask m = random_mask(10, 30);
  const WindowAttention a = ins.attention(w, 1, &m);
  const std::string prefix = moca_test::temp_path("report");
  const auto j = write_attention_report(a, w, 1, prefix, "test", false);
  CHECK(j["files"].size() == 4);
  CHECK(j["cls_attention_rollout"].size() == 6);
  std::ifstream tokens(prefix + "_tokens.csv");
  std::string line;
  std::getline(tokens, line);
  CHECK(line.rfind("token,channel,patch,visible,cls_l0,received_l0,", 0) == 0);
  const Eigen::MatrixXd last = a.head_mean(3);
  int rows = 0;
  while (std::getline(tokens, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    REQUIRE(f.size() == 4 + 2 * 4 + 1);
    const int t = std::stoi(f[0]);
    CHECK(f[1] == w.channel_names[static_cast<size_t>(t / 10)]);
    CHECK(std::stoi(f[2]) == t % 10);
    CHECK(std::stoi(f[3]) == (m.masked(t) ? 0 : 1));
    CHECK(std::abs(std::stod(f[10]) - last(0, 1 + t)) < 1e-8);  // cls_l3
    CHECK(std::abs(std::stod(f[12]) - a.rollout(0, 1 + t)) < 1e-8);
    ++rows;
  }
  CHECK(rows == 60);
  // The long table holds every (layer, head, query, key) of the cls and the 30 visible tokens.
  std::ifstream att(prefix + "_attention.csv");
  long lines = 0;
  while (std::getline(att, line)) ++lines;
  CHECK(lines == 1 + 4L * 4 * 31 * 31);
}
