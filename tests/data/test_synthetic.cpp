#include <doctest/doctest.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "moca/data/synthetic.hpp"
#include "moca/data/windowing.hpp"
#include "test_util.hpp"

using namespace moca::data;
using moca::data::test::contains;
using moca::data::test::error_text;

namespace {

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ma += a[i];
    mb += b[i];
  }
  ma /= n;
  mb /= n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

// Per window: acc dynamic energy (sum over acc channels of the time variance) and gyro energy
// (mean squared gyro over channels and time).
void window_energies(const Windows& w, std::vector<double>& ea, std::vector<double>& eg) {
  ea.clear();
  eg.clear();
  for (int i = 0; i < w.size(); ++i) {
    const auto x = w.window(i).cast<double>();
    double a = 0, g = 0;
    for (int c = 0; c < 3; ++c) {
      const double m = x.row(c).mean();
      a += (x.row(c).array() - m).square().mean();
      g += x.row(3 + c).array().square().mean();
    }
    ea.push_back(a);
    eg.push_back(g);
  }
}

// Same time slice: per window and patch of 20 samples, the acc change |a(end) - a(start)| and the
// gyro energy in that patch, both centred within the window, correlated over all patches.
double patch_correlation(const Windows& w) {
  std::vector<double> da, dg;
  const int lp = 20, p = w.length / lp;
  for (int i = 0; i < w.size(); ++i) {
    const auto x = w.window(i).cast<double>();
    std::vector<double> a(static_cast<size_t>(p)), g(static_cast<size_t>(p));
    double ma = 0, mg = 0;
    for (int k = 0; k < p; ++k) {
      double s = 0, e = 0;
      for (int c = 0; c < 3; ++c) {
        const double d = x(c, (k + 1) * lp - 1) - x(c, k * lp);
        s += d * d;
        e += x.row(3 + c).segment(k * lp, lp).array().square().mean();
      }
      a[static_cast<size_t>(k)] = std::sqrt(s);
      g[static_cast<size_t>(k)] = e;
      ma += std::sqrt(s) / p;
      mg += e / p;
    }
    for (int k = 0; k < p; ++k) {
      da.push_back(a[static_cast<size_t>(k)] - ma);
      dg.push_back(g[static_cast<size_t>(k)] - mg);
    }
  }
  return pearson(da, dg);
}

SyntheticOptions opts(double coupling, int n = 2100, std::uint64_t seed = 7) {
  SyntheticOptions o;
  o.windows = n;
  o.coupling = coupling;
  o.seed = seed;
  return o;
}

}  // namespace

TEST_CASE("synthetic: shape, metadata, balanced labels, finite values") {
  const Windows w = generate_synthetic(opts(0.8, 703));
  CHECK(w.size() == 703);
  CHECK(w.channels == 6);
  CHECK(w.length == 200);
  CHECK(w.sample_rate_hz == 50.0);
  CHECK(w.channel_names == hapt_channel_names());
  CHECK(w.class_names == har_class_names());
  CHECK(contains(w.description, "coupling 0.8"));
  w.validate("synthetic");
  std::vector<int> counts(7, 0);
  for (int i = 0; i < w.size(); ++i) {
    REQUIRE(w.labels(i) >= 0);
    REQUIRE(w.labels(i) <= 6);
    ++counts[static_cast<size_t>(w.labels(i))];
    CHECK(w.subjects(i) == i % 10);
  }
  for (int k = 0; k < 7; ++k) CHECK((counts[k] == 100 || counts[k] == 101));  // 703 = 7*100 + 3
}

TEST_CASE("synthetic: the same windows with 1 or 2 threads") {
  const int before = omp_get_max_threads();
  omp_set_num_threads(1);
  const Windows one = generate_synthetic(opts(0.7, 97, 12));
  omp_set_num_threads(2);
  const Windows two = generate_synthetic(opts(0.7, 97, 12));
  omp_set_num_threads(before);
  CHECK(one.x == two.x);
  CHECK(one.labels == two.labels);
}

TEST_CASE("synthetic: deterministic per seed, different across seeds") {
  const Windows a = generate_synthetic(opts(0.5, 300, 3));
  const Windows b = generate_synthetic(opts(0.5, 300, 3));
  const Windows c = generate_synthetic(opts(0.5, 300, 4));
  CHECK(a.x == b.x);
  CHECK(a.labels == b.labels);
  CHECK((a.x - c.x).cwiseAbs().maxCoeff() > 0.1f);
}

TEST_CASE("synthetic: physical sanity (gravity ~ 1 g at rest, gait is more dynamic)") {
  SyntheticOptions o = opts(1.0, 700);
  o.noise = 0.0;
  const Windows w = generate_synthetic(o);
  std::vector<double> ea, eg;
  window_energies(w, ea, eg);
  double rest_acc = 0, gait_acc = 0, rest_gyro = 0, gait_gyro = 0;
  int n_rest = 0, n_gait = 0;
  for (int i = 0; i < w.size(); ++i) {
    const int k = w.labels(i);
    if (k >= 4) {
      const auto x = w.window(i).cast<double>();
      const double g = std::sqrt(x.col(0).head(3).squaredNorm());
      CHECK(std::abs(g - 1.0) < 1e-6);  // pure gravity: |a| = 1 g at rest, no noise
      rest_acc += ea[static_cast<size_t>(i)];
      rest_gyro += eg[static_cast<size_t>(i)];
      ++n_rest;
    } else if (k >= 1) {
      gait_acc += ea[static_cast<size_t>(i)];
      gait_gyro += eg[static_cast<size_t>(i)];
      ++n_gait;
    }
  }
  CHECK(gait_acc / n_gait > 20 * rest_acc / n_rest);
  CHECK(gait_gyro / n_gait > 20 * rest_gyro / n_rest);
}

TEST_CASE("synthetic: coupling 0 makes acc and gyro independent; dependence grows with it") {
  std::vector<double> r_energy, r_patch;
  for (double c : {0.0, 0.5, 1.0}) {
    const Windows w = generate_synthetic(opts(c));
    std::vector<double> ea, eg;
    window_energies(w, ea, eg);
    r_energy.push_back(pearson(ea, eg));
    r_patch.push_back(patch_correlation(w));
    MESSAGE("coupling " << c << ": window-energy corr " << r_energy.back() << ", same-patch corr "
                        << r_patch.back());
  }
  // n = 2100 windows (21000 patches): the standard error of a null correlation is about 0.022
  // (0.007 for patches), so |r| < 0.08 (0.04) is a > 3.5 sigma band around 0.
  CHECK(std::abs(r_energy[0]) < 0.08);
  CHECK(std::abs(r_patch[0]) < 0.04);
  CHECK(r_energy[1] > 0.2);
  CHECK(r_patch[1] > 0.05);
  CHECK(r_energy[2] > r_energy[1] + 0.1);
  CHECK(r_patch[2] > r_patch[1] + 0.05);
  CHECK(r_energy[2] > 0.45);
  // At coupling 0 the gyro carries no label information: gait and rest windows have the same
  // mean gyro energy (within sampling error); at coupling 1 gait windows rotate much more.
  for (double c : {0.0, 1.0}) {
    const Windows w = generate_synthetic(opts(c));
    std::vector<double> ea, eg;
    window_energies(w, ea, eg);
    double gait = 0, rest = 0;
    int ng = 0, nr = 0;
    for (int i = 0; i < w.size(); ++i) {
      if (w.labels(i) >= 1 && w.labels(i) <= 3) {
        gait += eg[static_cast<size_t>(i)];
        ++ng;
      } else if (w.labels(i) >= 4) {
        rest += eg[static_cast<size_t>(i)];
        ++nr;
      }
    }
    const double ratio = (gait / ng) / (rest / nr);
    MESSAGE("coupling " << c << ": gyro energy gait / rest = " << ratio);
    if (c == 0.0) {
      CHECK(ratio > 0.8);
      CHECK(ratio < 1.25);
    } else {
      CHECK(ratio > 20);
    }
  }
}

TEST_CASE("synthetic: 1000 windows fast (bench target < 0.5 s; loose guard here)") {
  const auto t0 = std::chrono::steady_clock::now();
  const Windows w = generate_synthetic(SyntheticOptions{});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("generate_synthetic(1000 x 6 x 200): " << s << " s");
  CHECK(w.size() == 1000);
  CHECK(s < 2.0);  // a guard against gross regressions on a loaded CI machine; see bench_data
}

TEST_CASE("synthetic: option validation") {
  auto bad = [](auto mutate, const std::string& field) {
    SyntheticOptions o;
    mutate(o);
    const std::string msg = error_text<std::invalid_argument>([&] { generate_synthetic(o); });
    CHECK_MESSAGE(contains(msg, field), msg);
  };
  bad([](SyntheticOptions& o) { o.windows = 0; }, "windows (0)");
  bad([](SyntheticOptions& o) { o.length = 4; }, "length (4)");
  bad([](SyntheticOptions& o) { o.sample_rate_hz = 0; }, "sample_rate_hz");
  bad([](SyntheticOptions& o) { o.coupling = 1.5; }, "coupling (1.5");
  bad([](SyntheticOptions& o) { o.coupling = -0.1; }, "coupling (-0.1");
  bad([](SyntheticOptions& o) { o.coupling = std::nan(""); }, "coupling");
  bad([](SyntheticOptions& o) { o.noise = -1; }, "noise (-1");
  bad([](SyntheticOptions& o) { o.subjects = 0; }, "subjects (0)");
}
