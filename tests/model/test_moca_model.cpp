#include "torch_test.hpp"  // first: see the note there

#include <cmath>
#include <stdexcept>

#include "moca/common/random.hpp"
#include "moca/model/kernels/detail/adamw.hpp"
#include "moca/model/kernels/detail/attention.hpp"
#include "moca/model/nn/moca_model.hpp"
#include "test_support.hpp"

using namespace moca::model;
using moca::masking::Mask;

namespace {

MocaOptions micro(TokenLayout layout = TokenLayout::kModality) {
  return moca_test::micro_mae(layout);
}

// micro() with one change
template <class Change>
MocaOptions micro_with(Change change) {
  MocaOptions o = micro();
  change(o);
  return o;
}

std::vector<Mask> random_masks(int batch, int C, int P, int masked, std::uint64_t seed) {
  moca::Rng rng(seed);
  std::vector<Mask> out;
  for (int b = 0; b < batch; ++b) {
    std::vector<int> perm(static_cast<size_t>(C * P));
    for (int t = 0; t < C * P; ++t) perm[static_cast<size_t>(t)] = t;
    moca::shuffle(perm, rng);
    Mask m(C, P);
    for (int k = 0; k < masked; ++k) m.set(perm[static_cast<size_t>(k)], true);
    out.push_back(m);
  }
  return out;
}

std::vector<Mask> column_masks(int batch, int C, int P, int masked_cols, std::uint64_t seed) {
  moca::Rng rng(seed);
  std::vector<Mask> out;
  for (int b = 0; b < batch; ++b) {
    std::vector<int> perm(static_cast<size_t>(P));
    for (int p = 0; p < P; ++p) perm[static_cast<size_t>(p)] = p;
    moca::shuffle(perm, rng);
    Mask m(C, P);
    for (int k = 0; k < masked_cols; ++k)
      for (int c = 0; c < C; ++c) m.set(c, perm[static_cast<size_t>(k)], true);
    out.push_back(m);
  }
  return out;
}

}  // namespace

TEST_CASE("patchify lays out tokens as documented and unpatchify inverts it") {
  torch::manual_seed(0);
  auto x = torch::randn({2, 3, 12});
  auto mod = patchify(x, TokenLayout::kModality, 4);
  CHECK(mod.sizes() == torch::IntArrayRef({2, 9, 4}));
  // token c*P + p holds x[c, p*Lp : (p+1)*Lp]
  CHECK(torch::equal(mod[1][1 * 3 + 2], x[1][1].slice(0, 8, 12)));
  auto st = patchify(x, TokenLayout::kStacked, 4);
  CHECK(st.sizes() == torch::IntArrayRef({2, 3, 12}));
  // stacked token p, value c*Lp + q holds x[c, p*Lp + q]
  CHECK(st[0][2][1 * 4 + 3].item<float>() == x[0][1][2 * 4 + 3].item<float>());
  CHECK(torch::equal(unpatchify(mod, TokenLayout::kModality, 3, 4), x));
  CHECK(torch::equal(unpatchify(st, TokenLayout::kStacked, 3, 4), x));
  CHECK_THROWS_AS(patchify(x, TokenLayout::kModality, 5), std::invalid_argument);
}

TEST_CASE("MAE output shapes for both token layouts") {
  torch::manual_seed(1);
  for (auto layout : {TokenLayout::kModality, TokenLayout::kStacked}) {
    const auto o = micro(layout);
    MocaMae mae(o);
    auto x = torch::randn({5, 6, 40});
    const auto masks = layout == TokenLayout::kModality ? random_masks(5, 6, 10, 45, 2)
                                                        : column_masks(5, 6, 10, 7, 2);
    auto mt = to_tensors(mask_indices(masks, layout, 6, 10), torch::kCPU);
    auto out = mae->forward(x, mt);
    CHECK(out.pred.sizes() == torch::IntArrayRef({5, o.tokens(), o.token_dim()}));
    CHECK(out.target.sizes() == out.pred.sizes());
    CHECK(out.loss.dim() == 0);
    auto tokens = patchify(x, layout, 4);
    auto latent = mae->encoder->forward(tokens, mt.ids_keep);
    CHECK(latent.sizes() == torch::IntArrayRef({5, 1 + mt.ids_keep.size(1), 32}));
    MocaClassifier clf(o, 7, 0.1, false);
    CHECK(clf->forward(x).sizes() == torch::IntArrayRef({5, 7}));
  }
}

TEST_CASE("attention computes softmax(q k^T / sqrt(d_head)) v per head") {
  // An explicit per-head computation from the module's own weights; LibTorch >= 2 runs the fused
  // scaled_dot_product_attention in the module, 1.13 the explicit products.
  std::vector<torch::Device> devices{torch::kCPU};
  if (torch::cuda::is_available()) devices.emplace_back(torch::kCUDA);
  for (const auto& device : devices) {
    CAPTURE(device.str());
    torch::manual_seed(5);
    const int64_t B = 3, N = 7, D = 32, H = 4, Dh = D / H;
    Attention attn(static_cast<int>(D), static_cast<int>(H));
    attn->to(device);
    auto x = torch::randn({B, N, D}).to(device);
    auto params = attn->named_parameters();
    torch::NoGradGuard ng;
    auto qkv = torch::addmm(params["qkv.bias"], x.reshape({B * N, D}), params["qkv.weight"].t())
                   .reshape({B, N, 3 * D});
    auto heads = torch::zeros({B, N, D}, x.options());
    for (int64_t h = 0; h < H; ++h) {
      auto q = qkv.slice(2, h * Dh, (h + 1) * Dh);
      auto k = qkv.slice(2, D + h * Dh, D + (h + 1) * Dh);
      auto v = qkv.slice(2, 2 * D + h * Dh, 2 * D + (h + 1) * Dh);
      auto w = torch::softmax(torch::bmm(q, k.transpose(1, 2)) / std::sqrt(double(Dh)), -1);
      heads.slice(2, h * Dh, (h + 1) * Dh).copy_(torch::bmm(w, v));
    }
    auto expected =
        torch::addmm(params["proj.bias"], heads.reshape({B * N, D}), params["proj.weight"].t())
            .reshape({B, N, D});
    auto got = attn->forward(x);
    CHECK(got.sizes() == expected.sizes());
    CHECK(torch::allclose(got, expected, /*rtol=*/1e-5, /*atol=*/1e-5));
  }
}

TEST_CASE("CPU attention kernel: forward and gradients equal LibTorch's products") {
  // detail::attention_cpu (one autograd function, BLAS per (sample, head)) against
  // detail::attention_plain (LibTorch's matmul / softmax, or its fused kernel on LibTorch >= 2):
  // forward to 1e-5, the gradient of a random linear functional to 1e-4 relative.
  torch::manual_seed(11);
  struct Size {
    int64_t B, N, D, H;
  };
  for (const Size& z : {Size{3, 7, 32, 4}, Size{2, 16, 192, 12}, Size{4, 61, 128, 4}}) {
    CAPTURE(z.N);
    CAPTURE(z.D);
    auto qkv = (2.0 * torch::randn({z.B, z.N, 3 * z.D})).requires_grad_(true);
    const double scale = 1.0 / std::sqrt(static_cast<double>(z.D / z.H));
    REQUIRE(moca::model::detail::attention_cpu_supported(qkv));
    auto fast = moca::model::detail::attention_cpu(qkv, z.H, scale);
    auto plain = moca::model::detail::attention_plain(qkv, z.H, scale);
    REQUIRE(fast.sizes() == plain.sizes());
    CHECK(torch::allclose(fast, plain, 1e-5, 1e-5));
    const auto w = torch::randn(fast.sizes());
    const auto gf = torch::autograd::grad({(fast * w).sum()}, {qkv})[0];
    const auto gp = torch::autograd::grad({(plain * w).sum()}, {qkv})[0];
    const double rel = ((gf - gp).abs().max() / gp.abs().max()).item<double>();
    CAPTURE(rel);
    CHECK(rel < 1e-4);
    CHECK(gp.abs().max().item<double>() > 0.1);  // a gradient that can fail
  }
  // bf16 (autocast's qkv) is widened: float32 out, equal to the float path on the widened input.
  {
    auto q16 = torch::randn({2, 9, 3 * 32}).to(torch::kBFloat16).requires_grad_(true);
    REQUIRE(moca::model::detail::attention_cpu_supported(q16));
    const auto out = moca::model::detail::attention_cpu(q16, 4, 0.25);
    CHECK((out.scalar_type() == torch::kFloat));
    CHECK(torch::allclose(out, moca::model::detail::attention_plain(q16.to(torch::kFloat), 4, 0.25),
                          1e-5, 1e-5));
    const auto g = torch::autograd::grad({out.sum()}, {q16})[0];
    CHECK((g.scalar_type() == torch::kBFloat16));
  }
  // Not for other dtypes or shapes.
  CHECK_FALSE(
      moca::model::detail::attention_cpu_supported(torch::zeros({1, 2, 6}, torch::kDouble)));
  CHECK_THROWS_AS(
      moca::model::detail::attention_cpu(torch::zeros({1, 2, 6}, torch::kDouble), 1, 1.0),
      std::invalid_argument);
  CHECK_THROWS_AS(moca::model::detail::attention_cpu(torch::zeros({1, 2, 9}), 2, 1.0),
                  std::invalid_argument);
}

namespace {

/// p's AdamW state in `o` (it must exist).
torch::optim::AdamWParamState& adamw_state(torch::optim::AdamW& o, const torch::Tensor& p) {
  auto* s = moca::model::detail::find_adamw_state(o, p);
  REQUIRE(s != nullptr);
  return *s;
}

/// Two AdamW optimisers over copies of the same parameters: a decayed group (two matrices, one
/// long vector split into several parallel chunks, one parameter that never gets a gradient)
/// and an undecayed one (a bias).
struct AdamPair {
  std::vector<torch::Tensor> a, b;
  std::unique_ptr<torch::optim::AdamW> ref, fused;
  explicit AdamPair(bool amsgrad) {
    for (const auto& shape : std::vector<std::vector<int64_t>>{{70, 33}, {100003}, {5, 5}, {33}}) {
      auto t = torch::randn(shape);
      a.push_back(t.clone().requires_grad_(true));
      b.push_back(t.clone().requires_grad_(true));
    }
    auto make = [amsgrad](std::vector<torch::Tensor>& p) {
      auto opts = [amsgrad](double wd) {
        return std::make_unique<torch::optim::AdamWOptions>(
            torch::optim::AdamWOptions(1e-3).betas({0.9, 0.95}).weight_decay(wd).amsgrad(amsgrad));
      };
      std::vector<torch::optim::OptimizerParamGroup> groups;
      groups.emplace_back(std::vector<torch::Tensor>{p[0], p[1], p[2]}, opts(0.05));
      groups.emplace_back(std::vector<torch::Tensor>{p[3]}, opts(0.0));
      return std::make_unique<torch::optim::AdamW>(std::move(groups),
                                                   torch::optim::AdamWOptions(1e-3));
    };
    ref = make(a);
    fused = make(b);
  }
  /// The same random gradients (none for parameter 2) and learning rate on both.
  void set_gradients(double lr) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (i == 2) continue;
      auto g = 3.0 * torch::randn(a[i].sizes());
      a[i].mutable_grad() = g.clone();
      b[i].mutable_grad() = g.clone();
    }
    for (auto* o : {ref.get(), fused.get()}) {
      for (auto& group : o->param_groups())
        static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    }
  }
};

}  // namespace

TEST_CASE("one-pass AdamW step equals LibTorch's AdamW to float rounding") {
  torch::manual_seed(5);
  AdamPair pair(false);
  const auto before0 = pair.a[0].clone(), before2 = pair.a[2].clone();
  for (int step = 0; step < 6; ++step) {
    pair.set_gradients(1e-3 * (step + 1));
    pair.ref->step();
    moca::model::detail::adamw_step(*pair.fused);
  }
  // LibTorch's own step continues from the fused step's state (the same state objects).
  pair.set_gradients(2e-3);
  pair.ref->step();
  pair.fused->step();
  for (size_t i = 0; i < pair.a.size(); ++i) {
    CAPTURE(i);
    const double moved = (pair.a[i] - pair.b[i]).abs().max().item<double>();
    CAPTURE(moved);
    CHECK(torch::allclose(pair.a[i], pair.b[i], 1e-6, 1e-7));
  }
  // Parameters moved (a test that can fail), the one without a gradient did not, and no state
  // was made for it.
  CHECK((pair.b[0] - before0).abs().max().item<double>() > 1e-3);
  CHECK(torch::equal(pair.b[2], before2));
  CHECK(pair.ref->state().size() == 3);
  CHECK(pair.fused->state().size() == 3);
  // The moments agree too (they are what a checkpoint stores).
  for (size_t i : {size_t{0}, size_t{1}, size_t{3}}) {
    CAPTURE(i);
    auto& sa = adamw_state(*pair.ref, pair.a[i]);
    auto& sb = adamw_state(*pair.fused, pair.b[i]);
    CHECK(sa.step() == 7);
    CHECK(sb.step() == 7);
    // Relative to each moment's largest entry: entries near zero come from cancellation.
    auto rel = [](const torch::Tensor& x, const torch::Tensor& y) {
      return ((x - y).abs().max() / y.abs().max()).item<double>();
    };
    CHECK(rel(sb.exp_avg(), sa.exp_avg()) < 1e-6);
    CHECK(rel(sb.exp_avg_sq(), sa.exp_avg_sq()) < 1e-6);
  }
}

TEST_CASE("one-pass AdamW step: amsgrad and a switched-off fused step take LibTorch's step") {
  torch::manual_seed(6);
  AdamPair pair(true);
  pair.set_gradients(1e-3);
  pair.ref->step();
  moca::model::detail::adamw_step(*pair.fused);
  for (size_t i = 0; i < pair.a.size(); ++i) CHECK(torch::equal(pair.a[i], pair.b[i]));
  AdamPair off(false);
  moca::model::detail::set_fused_adamw_enabled(false);
  off.set_gradients(1e-3);
  off.ref->step();
  moca::model::detail::adamw_step(*off.fused);
  moca::model::detail::set_fused_adamw_enabled(true);
  for (size_t i = 0; i < off.a.size(); ++i) CHECK(torch::equal(off.a[i], off.b[i]));
}

TEST_CASE("masked tokens do not influence the encoder") {
  torch::manual_seed(2);
  MocaMae mae(micro());
  mae->eval();
  auto x = torch::randn({4, 6, 40});
  const auto masks = random_masks(4, 6, 10, 30, 3);
  auto mt = to_tensors(mask_indices(masks, TokenLayout::kModality, 6, 10), torch::kCPU);
  auto perturbed = x.clone();
  auto visible_changed = x.clone();
  for (int b = 0; b < 4; ++b)
    for (int c = 0; c < 6; ++c)
      for (int p = 0; p < 10; ++p) {
        auto seg = torch::indexing::Slice(p * 4, (p + 1) * 4);
        if (masks[static_cast<size_t>(b)].masked(c, p)) {
          perturbed.index_put_({b, c, seg}, torch::randn({4}) * 100.0);
        } else if (c == 0) {
          visible_changed.index_put_({b, c, seg}, torch::randn({4}));
        }
      }
  torch::NoGradGuard ng;
  auto enc = [&](const torch::Tensor& in) {
    return mae->encoder->forward(patchify(in, TokenLayout::kModality, 4), mt.ids_keep);
  };
  const auto base = enc(x);
  CHECK(torch::equal(base, enc(perturbed)));                 // bit for bit
  CHECK_FALSE(torch::allclose(base, enc(visible_changed)));  // and visible tokens do matter
  // The decoder output at visible positions depends only on visible tokens too.
  CHECK(torch::equal(mae->forward(x, mt).pred, mae->forward(perturbed, mt).pred));
}

TEST_CASE("fewer modalities use the matching rows of tokens and positions") {
  torch::manual_seed(3);
  const auto o = micro();
  MocaMae mae(o);
  mae->eval();
  torch::NoGradGuard ng;
  auto x = torch::randn({3, 6, 40});
  const int P = o.patches();
  for (const std::vector<int>& rows :
       {std::vector<int>{0, 1, 2}, std::vector<int>{3, 4, 5}, std::vector<int>{1, 4}}) {
    // Reference: the full window with only the selected modalities' tokens kept.
    std::vector<int64_t> keep;
    for (int c : rows)
      for (int p = 0; p < P; ++p) keep.push_back(static_cast<int64_t>(c) * P + p);
    auto ids = torch::tensor(keep).unsqueeze(0).expand({3, -1}).contiguous();
    auto ref = mae->encoder->forward(patchify(x, TokenLayout::kModality, 4), ids);
    // Fewer-modality input: only those channels, positions from pos_rows.
    std::vector<int64_t> sel(rows.begin(), rows.end());
    auto xs = x.index_select(1, torch::tensor(sel));
    auto got = mae->encoder->forward(patchify(xs, TokenLayout::kModality, 4), {},
                                     pos_rows_for_channels(o, rows));
    CHECK(torch::allclose(ref, got, 1e-5, 1e-6));
  }
  CHECK_THROWS_AS(pos_rows_for_channels(o, {6}), std::invalid_argument);
  CHECK_THROWS_AS(pos_rows_for_channels(micro(TokenLayout::kStacked), {0}), std::invalid_argument);
  // Without pos_rows a 3-channel input does not fit the 6-channel position table.
  CHECK_THROWS_AS(mae->encoder->forward(patchify(x.slice(1, 0, 3), TokenLayout::kModality, 4)),
                  std::invalid_argument);
}

TEST_CASE("the reconstruction loss decreases over 20 steps on a tiny model") {
  torch::manual_seed(4);
  const auto w = moca_test::small_windows(32, 1);
  auto x = torch::from_blob(const_cast<float*>(w.x.data()), {32, 6, 200}, torch::kFloat32).clone();
  MocaMae mae(micro_with([](MocaOptions& o) {
    o.length = 200;
    o.patch_length = 20;
  }));
  torch::optim::AdamW opt(mae->parameters(), torch::optim::AdamWOptions(1e-3));
  double first = 0.0, last = 0.0;
  for (int step = 0; step < 20; ++step) {
    auto mt = to_tensors(
        mask_indices(random_masks(32, 6, 10, 45, 100 + step), TokenLayout::kModality, 6, 10),
        torch::kCPU);
    opt.zero_grad();
    auto out = mae->forward(x, mt);
    out.loss.backward();
    opt.step();
    if (step == 0) first = out.loss.item<double>();
    last = out.loss.item<double>();
  }
  MESSAGE("loss " << first << " -> " << last);
  CHECK(last < 0.5 * first);
}

TEST_CASE("loss scopes and normalised targets") {
  torch::manual_seed(5);
  auto x = torch::randn({2, 6, 40});
  const auto masks = random_masks(2, 6, 10, 30, 6);
  auto mt = to_tensors(mask_indices(masks, TokenLayout::kModality, 6, 10), torch::kCPU);
  torch::manual_seed(50);
  MocaMae all(micro());
  torch::manual_seed(50);  // same initial weights
  MocaMae masked(micro_with([](MocaOptions& o) { o.loss_scope = LossScope::kMasked; }));
  auto a = all->forward(x, mt);
  auto m = masked->forward(x, mt);
  auto per_token = (a.pred - a.target).pow(2).mean(-1);
  CHECK(std::abs(a.loss.item<double>() - per_token.mean().item<double>()) < 1e-6);
  const double want = (per_token * mt.mask).sum().item<double>() / 60.0;
  CHECK(std::abs(m.loss.item<double>() - want) < 1e-6);
  MocaMae norm(micro_with([](MocaOptions& o) { o.norm_pix_loss = true; }));
  auto t = norm->targets(x);
  CHECK(t.mean(-1).abs().max().item<double>() < 1e-5);
  // Unbiased variance of a normalised patch: v / (v + 1e-6), v the raw patch's (Lp = 4).
  auto raw = patchify(x, TokenLayout::kModality, 4);
  auto v = (raw - raw.mean(-1, true)).pow(2).sum(-1) / 3.0;
  auto var = (t - t.mean(-1, true)).pow(2).sum(-1) / 3.0;
  CHECK((var - v / (v + 1e-6)).abs().max().item<double>() < 1e-5);
  // A mask without masked tokens cannot define a masked-only loss.
  auto none = to_tensors(mask_indices({Mask(6, 10), Mask(6, 10)}, TokenLayout::kModality, 6, 10),
                         torch::kCPU);
  CHECK_THROWS_AS(masked->forward(x, none), std::invalid_argument);
}

TEST_CASE("shape mismatches give clear errors") {
  MocaMae mae(micro());
  auto mt = to_tensors(mask_indices(random_masks(2, 6, 10, 30, 7), TokenLayout::kModality, 6, 10),
                       torch::kCPU);
  CHECK_THROWS_WITH_AS(mae->forward(torch::randn({2, 6, 48}), mt), doctest::Contains("B x C x 40"),
                       std::invalid_argument);
  CHECK_THROWS_AS(mae->forward(torch::randn({3, 6, 40}), mt), std::invalid_argument);
  CHECK_THROWS_AS(MocaClassifier(micro(), 1, 0.0, false), std::invalid_argument);
  CHECK_THROWS_AS(MocaEncoder(micro(), 1.5), std::invalid_argument);
}

TEST_CASE("drop path is active in training only") {
  torch::manual_seed(8);
  MocaClassifier clf(micro(), 3, 0.5, false);
  auto x = torch::randn({4, 6, 40});
  clf->eval();
  CHECK(torch::equal(clf->forward(x), clf->forward(x)));
  clf->train();
  CHECK_FALSE(torch::equal(clf->forward(x), clf->forward(x)));
}

TEST_CASE("AutocastScope: bf16 products inside the scope, fp32 outside, state restored") {
  using moca::model::detail::AutocastScope;
  const auto a = torch::randn({8, 16}), b = torch::randn({16, 4});
  CHECK((torch::matmul(a, b).scalar_type() == torch::kFloat));
  {
    AutocastScope fp32(torch::kCPU, Precision::kFp32);
    CHECK_FALSE(fp32.active());
    CHECK((torch::matmul(a, b).scalar_type() == torch::kFloat));
  }
  {
    AutocastScope amp(torch::kCPU, Precision::kBf16);
    CHECK(amp.active());
    const auto c = torch::matmul(a, b);
    CHECK((c.scalar_type() == torch::kBFloat16));
    // bf16 keeps ~3 significant digits of the fp32 product.
    CHECK(torch::allclose(c.to(torch::kFloat), torch::matmul(a, b).to(torch::kFloat), 0.05, 0.1));
  }
  CHECK((torch::matmul(a, b).scalar_type() == torch::kFloat));
}

TEST_CASE("batch shards give the whole-batch loss and gradients, deterministically") {
  for (auto scope : {LossScope::kAll, LossScope::kMasked}) {
    torch::manual_seed(60);
    MocaMae mae(micro_with([scope](MocaOptions& o) { o.loss_scope = scope; }));
    mae->train();
    const auto x = torch::randn({7, 6, 40});
    const auto mt = to_tensors(
        mask_indices(random_masks(7, 6, 10, 40, 61), TokenLayout::kModality, 6, 10), torch::kCPU);
    auto gradients = [&](int shards, double& loss) {
      // The gradients are replaced: stale values must not survive.
      for (auto& p : mae->parameters()) p.mutable_grad() = torch::full_like(p, 7.0);
      loss = mae_loss_and_gradients(mae, x, mt, shards, Precision::kFp32);
      std::vector<torch::Tensor> g;
      for (const auto& p : mae->parameters()) g.push_back(p.grad().clone());
      return g;
    };
    double l1 = 0, l3 = 0, l3b = 0;
    const auto g1 = gradients(1, l1), g3 = gradients(3, l3), g3b = gradients(3, l3b);
    CHECK(std::abs(l1 - l3) < 1e-6 * std::abs(l1));
    CHECK(l3 == l3b);
    REQUIRE(g1.size() == g3.size());
    for (size_t j = 0; j < g1.size(); ++j) {
      CHECK(torch::allclose(g1[j], g3[j], 1e-4, 1e-7));
      CHECK(torch::equal(g3[j], g3b[j]));
    }
    CHECK_THROWS_AS(mae_loss_and_gradients(mae, x, mt, 0, Precision::kFp32), std::invalid_argument);
    CHECK_THROWS_AS(mae_loss_and_gradients(mae, x, mt, 8, Precision::kFp32), std::invalid_argument);
  }
}

namespace {

/// All values of `tensors`, as doubles.
std::vector<double> values_of(const std::vector<torch::Tensor>& tensors) {
  std::vector<double> out;
  for (const auto& t : tensors) {
    auto c = t.detach().to(torch::kDouble).contiguous().reshape({-1});
    out.insert(out.end(), c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  }
  return out;
}

double sample_sd(const std::vector<double>& v) {
  double m = 0.0, s = 0.0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

}  // namespace

TEST_CASE("timm initialisation: trunc-normal(0.02) weights and tokens, learnable positions") {
  MocaOptions o = preset("cpu-small", 6, 200, 20);
  o.pos_learned = true;
  torch::manual_seed(3);
  MocaClassifier clf(o, 7, 0.1, false);
  timm_init(*clf);
  std::vector<torch::Tensor> weights, biases, ln_w, ln_b;
  for (const auto& m : clf->named_modules("", false)) {
    if (m.key() == "encoder.patch_embed") continue;
    if (auto* lin = m.value()->as<torch::nn::LinearImpl>()) {
      weights.push_back(lin->weight);
      biases.push_back(lin->bias);
    } else if (auto* ln = m.value()->as<torch::nn::LayerNormImpl>()) {
      ln_w.push_back(ln->weight);
      ln_b.push_back(ln->bias);
    }
  }
  REQUIRE(weights.size() == 4 * 4 + 1);  // qkv, proj, fc1, fc2 per block, and the head
  // timm's trunc_normal_(std 0.02, a -2, b 2) cuts at +-2 in absolute value, +-100 std: the
  // truncated normal's sd is 0.02 * sqrt(1 - 2 z phi(z) / (2 Phi(z) - 1)) at z = 100, i.e.
  // 0.02, and 2 (1 - Phi(2)) = 4.55 % of the values lie beyond 2 std.
  const double z = 2.0 / 0.02;
  const double phi = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::acos(-1.0));
  const double want_sd = 0.02 * std::sqrt(1.0 - 2.0 * z * phi / (2.0 * normal_cdf(z) - 1.0));
  const double beyond_2sd = 2.0 * (1.0 - normal_cdf(2.0));
  auto check_trunc_normal = [&](const std::vector<double>& v, double tol) {
    CAPTURE(v.size());
    const double sd = sample_sd(v);
    CHECK(std::abs(sd / want_sd - 1.0) < tol);
    double mean = 0.0, top = 0.0;
    long far = 0;
    for (double x : v) {
      mean += x;
      top = std::max(top, std::abs(x));
      far += std::abs(x) > 2.0 * 0.02;
    }
    CHECK(std::abs(mean / static_cast<double>(v.size())) < 4.0 * want_sd / std::sqrt(v.size()));
    CHECK(top <= 2.0);
    CHECK(std::abs(static_cast<double>(far) / static_cast<double>(v.size()) - beyond_2sd) <
          5.0 * std::sqrt(beyond_2sd / static_cast<double>(v.size())) + 1e-3);
  };
  check_trunc_normal(values_of(weights), 0.01);  // ~790k values
  const auto params = clf->encoder->named_parameters(false);
  REQUIRE(params.contains("pos_embed"));
  CHECK(params["pos_embed"].requires_grad());
  check_trunc_normal(values_of({params["pos_embed"]}), 0.05);                           // 61 x 128
  CHECK(std::abs(sample_sd(values_of({params["cls_token"]})) / want_sd - 1.0) < 0.25);  // 128
  for (const auto& b : biases) CHECK(b.abs().max().item<double>() == 0.0);
  for (const auto& w : ln_w) CHECK((w - 1.0).abs().max().item<double>() == 0.0);
  for (const auto& b : ln_b) CHECK(b.abs().max().item<double>() == 0.0);
  // The patch embedding: PyTorch's default U(+-1/sqrt(fan_in)), sd bound / sqrt(3).
  auto pe = clf->encoder->named_children()["patch_embed"]->as<torch::nn::LinearImpl>();
  const double bound = 1.0 / std::sqrt(20.0);
  CHECK(pe->weight.abs().max().item<double>() <= bound);
  CHECK(std::abs(sample_sd(values_of({pe->weight})) / (bound / std::sqrt(3.0)) - 1.0) < 0.05);
  CHECK(pe->bias.abs().max().item<double>() <= bound);
  // A fixed table is not timm's to draw.
  MocaClassifier fixed(preset("cpu-small", 6, 200, 20), 7, 0.1, false);
  CHECK_THROWS_WITH_AS(timm_init(*fixed), doctest::Contains("pos_learned"), std::invalid_argument);
}

TEST_CASE("the learnable table gets gradients and moves in a step; the fixed one does not") {
  const auto w = moca_test::small_windows(8, 4);
  std::vector<int> all(8);
  for (int i = 0; i < 8; ++i) all[static_cast<size_t>(i)] = i;
  const auto x = moca::model::detail::windows_tensor(w, all, torch::kCPU);
  const auto y = torch::tensor(std::vector<int64_t>(w.labels.data(), w.labels.data() + 8));
  for (bool learned : {true, false}) {
    CAPTURE(learned);
    MocaOptions o = preset("cpu-small", 6, 200, 20);
    o.pos_learned = learned;
    torch::manual_seed(5);
    MocaClassifier clf(o, 7, 0.0, false);
    if (learned) timm_init(*clf);
    const torch::Tensor before = clf->encoder->pos_embed().detach().clone();
    torch::optim::AdamW opt(clf->parameters(), torch::optim::AdamWOptions(1e-3));
    opt.zero_grad();
    torch::nn::functional::cross_entropy(clf->forward(x), y).backward();
    const torch::Tensor& pos = clf->encoder->pos_embed();
    CHECK(clf->named_parameters().contains("encoder.pos_embed") == learned);
    CHECK(pos.grad().defined() == learned);
    if (learned) CHECK(pos.grad().abs().max().item<double>() > 0.0);
    opt.step();
    CHECK(torch::equal(pos.detach(), before) == !learned);
  }
}
