#pragma once
/// \file random.hpp
/// Portable, seeded random numbers for every moca routine.
///
/// The standard library's distributions (std::uniform_int_distribution, std::normal_distribution)
/// are implementation-defined, so the same seed can give different numbers on another
/// compiler. moca draws only from std::mt19937_64 (whose output sequence is fixed by the
/// standard) through the functions below, so "same seed, same output" holds everywhere.
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace moca {

/// The one engine type used everywhere. Construct as `Rng rng(seed)`.
using Rng = std::mt19937_64;

/// Uniform integer in the closed range [lo, hi] (unbiased, by rejection). Requires lo <= hi.
inline std::int64_t uniform_int(Rng& rng, std::int64_t lo, std::int64_t hi) {
  if (lo > hi) {
    throw std::invalid_argument("uniform_int(): lo (" + std::to_string(lo) + ") > hi (" +
                                std::to_string(hi) + ")");
  }
  const std::uint64_t range = static_cast<std::uint64_t>(hi - lo);
  if (range == UINT64_MAX) return static_cast<std::int64_t>(rng());
  const std::uint64_t n = range + 1;
  const std::uint64_t limit = UINT64_MAX - (UINT64_MAX % n);  // accept v < limit
  std::uint64_t v;
  do {
    v = rng();
  } while (v >= limit);
  return lo + static_cast<std::int64_t>(v % n);
}

/// Uniform double in [0, 1) with 53 random bits.
inline double uniform01(Rng& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// Standard normal N(0, 1) by the Box–Muller transform (one value per call).
inline double standard_normal(Rng& rng) {
  double u1 = uniform01(rng);
  while (u1 <= 0.0) u1 = uniform01(rng);
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

/// In-place Fisher–Yates shuffle driven by uniform_int.
template <typename T>
void shuffle(std::vector<T>& v, Rng& rng) {
  for (std::int64_t i = static_cast<std::int64_t>(v.size()) - 1; i > 0; --i) {
    std::swap(v[static_cast<size_t>(i)], v[static_cast<size_t>(uniform_int(rng, 0, i))]);
  }
}

/// A derived seed for stream `stream` of a computation seeded with `seed` (SplitMix64 mix),
/// so that parallel or repeated sub-computations get independent, reproducible streams.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace moca
