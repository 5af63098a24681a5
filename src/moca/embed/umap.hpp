#pragma once
/// \file umap.hpp
/// UMAP (McInnes, Healy & Melville 2018, arXiv:1802.03426), implemented here from the paper and
/// the reference implementation's documented defaults: an exact k-nearest-neighbour graph
/// (Euclidean), the fuzzy simplicial set (smooth kNN distances: rho_i = nearest non-zero
/// distance, sigma_i by bisection so that sum_j exp(-(d_ij - rho_i)/sigma_i) = log2(k); the
/// fuzzy union w_ij + w_ji - w_ij w_ji), a PCA initialisation scaled to [0, 10], and the seeded
/// SGD layout with the curve 1 / (1 + a d^(2b)) (a, b fitted to min_dist and spread), one
/// attractive move per edge sample (both ends), `negative_samples` repulsive moves per sample,
/// gradients clipped at 4 and the learning rate falling linearly to 0.
///
/// Deterministic: the kNN search (split over `threads` by rows; each row's answer does not
/// depend on the split, ties broken by index) and a single-threaded layout driven by
/// Rng(seed), so the same data and seed give the same coordinates for any thread count.
/// Exact kNN costs O(n^2 d); the limit is kUmapMaxPoints points.
#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "moca/common/option_schema.hpp"

namespace moca::embed {

/// The most points umap_layout() accepts (exact kNN: 20000 points of dimension 192 take about
/// 80 GFLOP; beyond that an approximate graph would be needed).
inline constexpr int kUmapMaxPoints = 20000;

struct UmapOptions {
  int neighbors = 15;          ///< k, counting the point itself (as umap-learn's n_neighbors)
  double min_dist = 0.1;       ///< the curve's flat part
  double spread = 1.0;         ///< the curve's scale
  int epochs = 0;              ///< 0: 500 for n <= 10000 points, else 200
  int negative_samples = 5;    ///< repulsive samples per attractive sample
  double learning_rate = 1.0;  ///< initial SGD step
  std::uint64_t seed = 0;      ///< the layout's random numbers
  int threads = 0;             ///< kNN search threads; 0 = hardware threads
  /// std::invalid_argument naming the field (`UmapOptions::neighbors`), its value and the rule.
  void validate() const;

  /// The options a user sets (option_schema.hpp): `moca embed --map umap`'s flags. The curve's
  /// spread, the negative samples and the learning rate keep umap-learn's defaults; the threads
  /// are the program's --threads.
  template <class O, class V>
  static void schema(O& o, V&& v) {
    constexpr const char* U = "UmapOptions";
    v(o.neighbors,
      Option{U, "neighbors", "--neighbors", "UMAP k (counting the point)", Range::at_least(2)});
    v(o.min_dist, Option{U, "min_dist", "--min-dist", "UMAP min_dist", Range::any(), kEveryScope,
                         "in [0, spread], spread 1"});
    v(o.epochs,
      Option{U, "epochs", "--umap-epochs", "0 = 500 (n <= 10000) or 200", Range::at_least(0)});
    v(o.seed, Option{U, "seed", "--map-seed", "UMAP layout seed"});
  }
};

/// The k nearest other points of every row of X (Euclidean), nearest first, ties by index.
struct KnnGraph {
  Eigen::MatrixXi index;     ///< n x k
  Eigen::MatrixXd distance;  ///< n x k
};
/// Exact search; std::invalid_argument unless 1 <= k < n.
KnnGraph exact_knn(const Eigen::MatrixXd& x, int k, int threads = 0);

/// One undirected edge of the fuzzy simplicial set (stored once per direction).
struct FuzzyEdge {
  int head = 0, tail = 0;
  double weight = 0.0;
};
/// The fuzzy union of the local fuzzy sets of `knn` (k - 1 = knn.index.cols() neighbours per
/// point): both directions of each edge with weight > 0, sorted by (head, tail).
std::vector<FuzzyEdge> fuzzy_simplicial_set(const KnnGraph& knn);

/// a, b of 1 / (1 + a d^(2b)) fitted by least squares to 1 for d < min_dist and
/// exp(-(d - min_dist) / spread) beyond, on 300 points of [0, 3 spread] (umap-learn's
/// find_ab_params; min_dist 0.1, spread 1 give a = 1.577, b = 0.895).
struct CurveParams {
  double a = 0.0, b = 0.0;
};
CurveParams fit_curve(double spread, double min_dist);

/// The 2-D UMAP layout of the rows of x (n x 2). std::invalid_argument for fewer than 2 or
/// more than kUmapMaxPoints points, neighbors > n, non-finite values or bad options.
Eigen::MatrixXd umap_layout(const Eigen::MatrixXd& x, const UmapOptions& options = {});

}  // namespace moca::embed
