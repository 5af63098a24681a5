#include "moca/masking/detail/token_grams.hpp"

#include "moca/common/error_text.hpp"
#include "moca/common/memory.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace moca::masking::detail {

namespace {

constexpr Eigen::Index B = 32;  // tile edge

// The two inner loops as plain loops the compiler vectorises, compiled for AVX-512 and AVX2 as
// well as the baseline (the build targets generic x86-64, so Eigen's own kernels are SSE2):
// the loader picks the widest clone the CPU runs.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MOCA_TOKEN_GRAMS_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MOCA_TOKEN_GRAMS_CLONES
#endif

// T(:, j) = sum_k zi(:, k) zj(j, k) for j < nj: zi, zj point at the tile's first row of the
// token's w columns of the column-major Z (leading dimension ld); T is B x B column-major.
MOCA_TOKEN_GRAMS_CLONES
void token_product(const double* __restrict zi, const double* __restrict zj, Eigen::Index ld,
                   Eigen::Index w, Eigen::Index ni, Eigen::Index nj, double* __restrict T) {
  for (Eigen::Index j = 0; j < nj; ++j) {
    double acc[B] = {};
    for (Eigen::Index k = 0; k < w; ++k) {
      const double* __restrict col = zi + k * ld;
      const double z = zj[j + k * ld];
      if (ni == B) {
        for (Eigen::Index i = 0; i < B; ++i) acc[i] += col[i] * z;
      } else {
        for (Eigen::Index i = 0; i < ni; ++i) acc[i] += col[i] * z;
      }
    }
    for (Eigen::Index i = 0; i < B; ++i) T[j * B + i] = acc[i];
  }
}

// out(:, j) += ai .* T(:, j) for every j < nj with aj[j] != 0 (out, T: B x B column-major).
MOCA_TOKEN_GRAMS_CLONES
void masked_accumulate(const double* __restrict ai, const double* __restrict aj,
                       const double* __restrict T, Eigen::Index ni, Eigen::Index nj,
                       double* __restrict out) {
  for (Eigen::Index j = 0; j < nj; ++j) {
    if (aj[j] == 0.0) continue;
    const double* t = T + j * B;
    double* o = out + j * B;
    if (ni == B) {
      for (Eigen::Index i = 0; i < B; ++i) o[i] += ai[i] * t[i];
    } else {
      for (Eigen::Index i = 0; i < ni; ++i) o[i] += ai[i] * t[i];
    }
  }
}

void check_inputs(const Eigen::MatrixXd& Z, int tokens,
                  const std::vector<Eigen::MatrixXd>& in_view) {
  const Eigen::Index n = Z.rows();
  if (tokens < 1 || Z.cols() % tokens != 0 || n < 1) {
    throw_invalid("token_masked_grams()", std::to_string(Z.cols()) + " columns do not split into " +
                                              std::to_string(tokens) + " equal token blocks (n " +
                                              std::to_string(n) + ")");
  }
  for (const auto& a : in_view) {
    if (a.rows() != n || a.cols() != tokens) {
      throw_invalid("token_masked_grams()", "a view's token indicator is " +
                                                std::to_string(a.rows()) + " x " +
                                                std::to_string(a.cols()) + ", expected " +
                                                std::to_string(n) + " x " + std::to_string(tokens));
    }
  }
}

// Tiles (bi, bj), bj <= bi, of B x B covering the lower triangle of an n x n matrix.
std::vector<std::pair<Eigen::Index, Eigen::Index>> lower_tiles(Eigen::Index n) {
  const Eigen::Index nb = (n + B - 1) / B;
  std::vector<std::pair<Eigen::Index, Eigen::Index>> tiles;
  tiles.reserve(static_cast<size_t>(nb * (nb + 1) / 2));
  for (Eigen::Index bi = 0; bi < nb; ++bi)
    for (Eigen::Index bj = 0; bj <= bi; ++bj) tiles.emplace_back(bi, bj);
  return tiles;
}

// The tile at rows i0, columns j0 of every view's Gram (and its mirror): the per-token products
// of the tile into T (tokens B x B matrices), then per view the sum over its tokens through acc.
void tile_grams(const Eigen::MatrixXd& Z, int tokens, const std::vector<Eigen::MatrixXd>& in_view,
                Eigen::Index i0, Eigen::Index j0, std::vector<Eigen::MatrixXd>& T,
                Eigen::MatrixXd& acc, std::vector<Eigen::MatrixXd>& grams) {
  const Eigen::Index n = Z.rows(), w = Z.cols() / tokens;
  const Eigen::Index ni = std::min(B, n - i0), nj = std::min(B, n - j0);
  for (int t = 0; t < tokens; ++t) {
    token_product(&Z(i0, t * w), &Z(j0, t * w), n, w, ni, nj, T[static_cast<size_t>(t)].data());
  }
  for (size_t v = 0; v < in_view.size(); ++v) {
    const Eigen::MatrixXd& a = in_view[v];
    auto out = acc.topLeftCorner(ni, nj);
    out.setZero();
    for (int t = 0; t < tokens; ++t) {
      masked_accumulate(&a(i0, t), &a(j0, t), T[static_cast<size_t>(t)].data(), ni, nj, acc.data());
    }
    Eigen::MatrixXd& g = grams[v];
    g.block(i0, j0, ni, nj) = out;
    if (i0 != j0) {  // the mirror tile, written column by column (contiguous stores)
      for (Eigen::Index c = 0; c < ni; ++c) {
        double* dst = &g(j0, i0 + c);
        for (Eigen::Index r = 0; r < nj; ++r) dst[r] = acc(c, r);
      }
    }
  }
}

// Double centring: Xc Xcᵀ = G - r 1ᵀ - 1 rᵀ + mean(r), r = row means of G.
void double_centre(std::vector<Eigen::MatrixXd>& grams, int nthreads) {
  (void)nthreads;
  const int V = static_cast<int>(grams.size());
#ifdef _OPENMP
#pragma omp parallel for num_threads(nthreads) schedule(static)
#endif
  for (int v = 0; v < V; ++v) {
    Eigen::MatrixXd& g = grams[static_cast<size_t>(v)];
    const Eigen::Index n = g.rows();
    const Eigen::VectorXd r = g.rowwise().sum() / static_cast<double>(n);
    const double m = r.mean();
    for (Eigen::Index j = 0; j < n; ++j) {
      g.col(j).array() -= r.array() + (r(j) - m);
    }
  }
}

}  // namespace

void token_masked_grams(const Eigen::MatrixXd& Z, int tokens,
                        const std::vector<Eigen::MatrixXd>& in_view, int threads,
                        std::vector<Eigen::MatrixXd>& grams) {
  check_inputs(Z, tokens, in_view);
  const Eigen::Index n = Z.rows();
  grams.resize(in_view.size());
  for (auto& g : grams) {
    g.resize(n, n);  // first written below: fault it in as huge pages where the system can
    advise_huge_pages(g.data(), static_cast<std::size_t>(g.size()) * sizeof(double));
  }
  // Tiles of B x B: the per-token products of a tile stay in cache (T * B² doubles: 480 KB for
  // 60 tokens) while every view reads them.
  const auto tiles = lower_tiles(n);
  const long count = static_cast<long>(tiles.size());
#ifdef _OPENMP
  const int nthreads = threads > 0 ? threads : omp_get_max_threads();
#else
  const int nthreads = 1;
  (void)threads;
#endif
#ifdef _OPENMP
#pragma omp parallel num_threads(nthreads)
#endif
  {
    std::vector<Eigen::MatrixXd> T(static_cast<size_t>(tokens), Eigen::MatrixXd(B, B));
    Eigen::MatrixXd acc(B, B);
#ifdef _OPENMP
#pragma omp for schedule(dynamic)
#endif
    for (long k = 0; k < count; ++k) {
      const auto& tile = tiles[static_cast<size_t>(k)];
      tile_grams(Z, tokens, in_view, tile.first * B, tile.second * B, T, acc, grams);
    }
  }
  double_centre(grams, nthreads);
}

}  // namespace moca::masking::detail
