#include "moca/model/kernels/detail/gelu_kernels.hpp"

#include <cstring>

// Built with -fno-math-errno -fno-trapping-math (CMakeLists.txt), without which GCC keeps these
// loops scalar. The clones: GCC and clang >= 14 on x86-64 with an ifunc-capable libc.
#if defined(__x86_64__) && defined(__linux__) && \
    (defined(__clang__) ? __clang_major__ >= 14 : defined(__GNUC__))
#define MOCA_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MOCA_VECTOR_CLONES
#endif

namespace moca::model::detail {

namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

// exp(x) for x <= 0 (Cephes' expf polynomial): x = n ln2 + r, |r| <= ln2 / 2, exp(r) by a
// degree-5 polynomial, 2^n by the exponent bits. Clamped at -87 (2^-126, the smallest normal).
inline float exp_nonpositive(float x) {
  x = x > -87.f ? x : -87.f;
  const float n = (x * 1.44269504088896341f + 12582912.f) - 12582912.f;  // round to nearest
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) * (1 << 23);
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return e * scale;
}

// erf(x), Abramowitz & Stegun 7.1.26.
inline float erf_as(float x) {
  const float ax = x < 0.f ? -x : x;
  const float t = 1.f / (1.f + 0.3275911f * ax);
  float y = 1.061405429f;
  y = y * t - 1.453152027f;
  y = y * t + 1.421413741f;
  y = y * t - 0.284496736f;
  y = y * t + 0.254829592f;
  const float r = 1.f - y * t * exp_nonpositive(-ax * ax);
  return x < 0.f ? -r : r;
}

inline float cdf(float u) {
  return 0.5f * (1.f + erf_as(u * kInvSqrt2));
}

}  // namespace

float gelu_erf(float x) {
  return erf_as(x);
}
float gelu_value(float x) {
  return x * cdf(x);
}

MOCA_VECTOR_CLONES
void bias_gelu_rows(float* u, const float* bias, float* y, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    float* __restrict ur = u + i * cols;
    float* __restrict yr = y + i * cols;
    const float* __restrict b = bias;
    for (int64_t j = 0; j < cols; ++j) {
      const float v = ur[j] + b[j];
      ur[j] = v;
      yr[j] = v * cdf(v);
    }
  }
}

MOCA_VECTOR_CLONES
void gelu_grad_rows(const float* u, const float* g, float* gu, float* bias_grad, int64_t rows,
                    int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    const float* ur = u + i * cols;
    const float* gr = g + i * cols;
    float* dr = gu + i * cols;
    float* __restrict gb = bias_grad;
    for (int64_t j = 0; j < cols; ++j) {
      const float v = ur[j];
      const float d = gr[j] * (cdf(v) + v * kInvSqrt2Pi * exp_nonpositive(-0.5f * v * v));
      dr[j] = d;
      gb[j] += d;
    }
  }
}

}  // namespace moca::model::detail
