#pragma once
/// \file gelu_kernels.hpp
/// Internal (src/moca/model and the model tests): the elementwise loops of the fused
/// Linear + bias + GELU layer (detail/linear.hpp), on raw float rows. No torch here: this
/// translation unit is compiled with its own flags (no errno, no trapping math) and in clones for
/// AVX-512, AVX2 and the baseline, chosen at load time, so its loops vectorise.
///
/// GELU is the exact (erf) form, gelu(u) = u Φ(u) with Φ(u) = (1 + erf(u / √2)) / 2, with erf
/// from Abramowitz & Stegun 7.1.26 (absolute error ≤ 1.5e-7 in exact arithmetic, ≤ 5e-7 as
/// evaluated here in float, tested against double erf; the approximation LibTorch's own
/// vectorised CPU kernel uses) and exp from Cephes' degree-5 polynomial after range reduction.
/// Inputs are row-major blocks of `rows` x `cols` floats.
#include <cstdint>

namespace moca::model::detail {

/// u += bias (broadcast over the rows), then y = gelu(u); u keeps the pre-activation.
void bias_gelu_rows(float* u, const float* bias, float* y, int64_t rows, int64_t cols);

/// gu = g ⊙ gelu'(u) (gelu'(u) = Φ(u) + u φ(u)), and bias_grad[j] += Σ_i gu[i][j], summed over
/// the rows in order (one pass over u and g). gu may be g.
void gelu_grad_rows(const float* u, const float* g, float* gu, float* bias_grad, int64_t rows,
                    int64_t cols);

/// erf(x) and gelu(x) of one value, as the loops compute them (for the tests).
float gelu_erf(float x);
float gelu_value(float x);

}  // namespace moca::model::detail
