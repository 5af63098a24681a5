#include "moca/data/resample.hpp"
#include "moca/common/error_text.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace moca::data {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kKaiserBeta = 8.0;
constexpr double kHalfWidth = 16.0;

// Modified Bessel function of the first kind, order 0 (power series; converges fast for x <= 20).
double bessel_i0(double x) {
  double sum = 1.0, term = 1.0;
  const double q = x * x / 4.0;
  for (int k = 1; k < 200; ++k) {
    term *= q / (static_cast<double>(k) * k);
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum;
}

void check_rate(double hz, const char* what) {
  if (!(hz > 0.0) || !std::isfinite(hz)) {
    throw_invalid("", std::string("resample_bandlimited(): ") + what + " (" + std::to_string(hz) +
                          ") must be a positive, finite rate");
  }
}

// Mirror index k into [0, n - 1] (x_{-k} = x_k, x_{n-1+k} = x_{n-1-k}), repeated as needed.
int mirror(long k, int n) {
  if (n == 1) return 0;
  const long period = 2L * (n - 1);
  k %= period;
  if (k < 0) k += period;
  return static_cast<int>(k < n ? k : period - k);
}

}  // namespace

int resampled_length(int samples, double from_hz, double to_hz) {
  check_rate(from_hz, "from_hz");
  check_rate(to_hz, "to_hz");
  const double m = std::round(static_cast<double>(samples) * to_hz / from_hz);
  return std::max(1, static_cast<int>(m));
}

RowMatrixXf resample_bandlimited(const RowMatrixXf& x, double from_hz, double to_hz) {
  check_rate(from_hz, "from_hz");
  check_rate(to_hz, "to_hz");
  const int t = static_cast<int>(x.cols());
  if (t < 1) throw_invalid("resample_bandlimited()", "the window has no samples");
  if (from_hz == to_hz) return x;
  const int m = resampled_length(t, from_hz, to_hz);
  const double scale = std::min(1.0, to_hz / from_hz);
  const double fc = 0.5 * scale, half = kHalfWidth / scale;
  const double i0_beta = bessel_i0(kKaiserBeta);
  RowMatrixXf y(x.rows(), m);
  std::vector<double> w;
  std::vector<int> idx;
  for (int j = 0; j < m; ++j) {
    const double p = static_cast<double>(j) * from_hz / to_hz;
    const long lo = static_cast<long>(std::ceil(p - half)),
               hi = static_cast<long>(std::floor(p + half));
    w.clear();
    idx.clear();
    double sum = 0.0;
    for (long k = lo; k <= hi; ++k) {
      const double d = p - static_cast<double>(k);
      const double u = d / half;
      if (std::abs(u) > 1.0) continue;
      const double arg = 2.0 * fc * d;
      const double sinc = arg == 0.0 ? 1.0 : std::sin(kPi * arg) / (kPi * arg);
      const double win = bessel_i0(kKaiserBeta * std::sqrt(std::max(0.0, 1.0 - u * u))) / i0_beta;
      w.push_back(sinc * win);
      idx.push_back(mirror(k, t));
      sum += w.back();
    }
    for (Eigen::Index c = 0; c < x.rows(); ++c) {
      double acc = 0.0;
      for (size_t q = 0; q < w.size(); ++q) acc += w[q] * static_cast<double>(x(c, idx[q]));
      y(c, j) = static_cast<float>(acc / sum);
    }
  }
  return y;
}

RowMatrixXf fit_length(const RowMatrixXf& x, int length) {
  if (length < 1) {
    throw_invalid("fit_length()", "length (" + std::to_string(length) + ") must be >= 1");
  }
  const int m = static_cast<int>(x.cols());
  if (m < 1) throw_invalid("fit_length()", "the window has no samples");
  if (m == length) return x;
  RowMatrixXf y(x.rows(), length);
  if (m > length) {
    y = x.middleCols((m - length) / 2, length);
    return y;
  }
  const int before = (length - m) / 2;
  for (Eigen::Index c = 0; c < x.rows(); ++c) {
    for (int j = 0; j < length; ++j) {
      const int k = std::clamp(j - before, 0, m - 1);
      y(c, j) = x(c, k);
    }
  }
  return y;
}

Windows resample_windows(const Windows& w, double to_hz, int length) {
  check_rate(to_hz, "to_hz");
  const bool resample = w.sample_rate_hz != to_hz;
  if (resample) check_rate(w.sample_rate_hz, "the windows' sample_rate_hz");
  const int m = resample ? resampled_length(w.length, w.sample_rate_hz, to_hz) : w.length;
  const int out_len = length > 0 ? length : m;
  if (!resample && out_len == w.length) {
    Windows same = w;
    same.sample_rate_hz = to_hz;
    return same;
  }
  Windows out = w.subset({});
  out.length = out_len;
  out.sample_rate_hz = to_hz;
  out.labels = w.labels;
  out.subjects = w.subjects;
  out.parts = w.parts;
  out.x.resize(w.size(), static_cast<Eigen::Index>(w.channels) * out_len);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < w.size(); ++i) {
    const RowMatrixXf win = w.window(i);
    const RowMatrixXf r = resample ? resample_bandlimited(win, w.sample_rate_hz, to_hz) : win;
    out.window(i) = fit_length(r, out_len);
  }
  return out;
}

}  // namespace moca::data
