#include "moca/embed/umap.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"
#include "moca/embed/pca_map.hpp"

namespace moca::embed {

namespace {

constexpr const char* kWhere = "umap_layout()";

int thread_count(int threads, Eigen::Index rows) {
  int t = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  return static_cast<int>(std::max<Eigen::Index>(1, std::min<Eigen::Index>(std::max(t, 1), rows)));
}

// Rows [begin, end) of the kNN graph: squared distances to every point by ||a||^2 + ||b||^2 -
// 2 a.b in blocks of rows, the k smallest other points by (distance, index).
void knn_rows(const Eigen::MatrixXd& x, const Eigen::VectorXd& sq, int k, Eigen::Index begin,
              Eigen::Index end, KnnGraph& g) {
  constexpr Eigen::Index kBlock = 256;
  const Eigen::Index n = x.rows();
  std::vector<std::pair<double, int>> cand(static_cast<size_t>(n));
  for (Eigen::Index b0 = begin; b0 < end; b0 += kBlock) {
    const Eigen::Index rows = std::min(kBlock, end - b0);
    const Eigen::MatrixXd dots = x.middleRows(b0, rows) * x.transpose();
    for (Eigen::Index r = 0; r < rows; ++r) {
      const Eigen::Index i = b0 + r;
      size_t m = 0;
      for (Eigen::Index j = 0; j < n; ++j) {
        if (j == i) continue;
        cand[m++] = {std::max(0.0, sq(i) + sq(j) - 2.0 * dots(r, j)), static_cast<int>(j)};
      }
      std::partial_sort(cand.begin(), cand.begin() + k, cand.begin() + static_cast<long>(m));
      for (int c = 0; c < k; ++c) {
        g.index(i, c) = cand[static_cast<size_t>(c)].second;
        g.distance(i, c) = std::sqrt(cand[static_cast<size_t>(c)].first);
      }
    }
  }
}

// umap-learn's smooth_knn_dist for one point: sigma with sum_j exp(-max(0, d_j - rho) / sigma)
// = log2(k) by bisection (64 steps, tolerance 1e-5), at least 1e-3 of the mean distance.
double smooth_sigma(const Eigen::Ref<const Eigen::RowVectorXd>& d, double rho, double mean_all) {
  const double target = std::log2(static_cast<double>(d.size() + 1));
  double lo = 0.0, hi = std::numeric_limits<double>::infinity(), mid = 1.0;
  for (int it = 0; it < 64; ++it) {
    double psum = 0.0;
    for (Eigen::Index j = 0; j < d.size(); ++j) {
      const double t = d(j) - rho;
      psum += t > 0 ? std::exp(-t / mid) : 1.0;
    }
    if (std::abs(psum - target) < 1e-5) break;
    if (psum > target) {
      hi = mid;
      mid = (lo + hi) / 2.0;
    } else {
      lo = mid;
      mid = std::isinf(hi) ? mid * 2.0 : (lo + hi) / 2.0;
    }
  }
  const double floor = 1e-3 * (rho > 0.0 ? d.mean() : mean_all);
  return std::max(mid, floor);
}

double clip4(double v) {
  return std::max(-4.0, std::min(4.0, v));
}

}  // namespace

void UmapOptions::validate() const {
  check_ranges(*this);
  if (!(min_dist >= 0.0) || !(spread > 0.0) || !(min_dist <= spread)) {
    throw_invalid("", "UmapOptions::min_dist", std::to_string(min_dist),
                  "must be in [0, spread] with spread (" + std::to_string(spread) + ") > 0");
  }
  if (negative_samples < 0) {
    throw_invalid("", "UmapOptions::negative_samples", std::to_string(negative_samples),
                  "must be >= 0");
  }
  if (!(learning_rate > 0.0)) {
    throw_invalid("", "UmapOptions::learning_rate", std::to_string(learning_rate), "must be > 0");
  }
  if (threads < 0) {
    throw_invalid("", "UmapOptions::threads", std::to_string(threads), "must be >= 0");
  }
}

KnnGraph exact_knn(const Eigen::MatrixXd& x, int k, int threads) {
  const Eigen::Index n = x.rows();
  if (k < 1 || k >= n) {
    throw_invalid("exact_knn()", "k", std::to_string(k),
                  "must be in [1, " + std::to_string(n) + ") (fewer than the points)");
  }
  KnnGraph g;
  g.index.resize(n, k);
  g.distance.resize(n, k);
  const Eigen::VectorXd sq = x.rowwise().squaredNorm();
  const int t = thread_count(threads, n);
  std::vector<std::thread> pool;
  for (int w = 0; w < t; ++w) {
    const Eigen::Index begin = n * w / t, end = n * (w + 1) / t;
    pool.emplace_back([&, begin, end] { knn_rows(x, sq, k, begin, end, g); });
  }
  for (auto& th : pool) th.join();
  return g;
}

std::vector<FuzzyEdge> fuzzy_simplicial_set(const KnnGraph& knn) {
  const Eigen::Index n = knn.index.rows(), k = knn.index.cols();
  const double mean_all = knn.distance.mean();
  std::map<std::pair<int, int>, double> w;  // directed memberships
  for (Eigen::Index i = 0; i < n; ++i) {
    double rho = 0.0;
    for (Eigen::Index j = 0; j < k; ++j) {
      if (knn.distance(i, j) > 0.0) {
        rho = knn.distance(i, j);
        break;
      }
    }
    const double sigma = smooth_sigma(knn.distance.row(i), rho, mean_all);
    for (Eigen::Index j = 0; j < k; ++j) {
      const double t = knn.distance(i, j) - rho;
      w[{static_cast<int>(i), knn.index(i, j)}] = t > 0 ? std::exp(-t / sigma) : 1.0;
    }
  }
  std::vector<FuzzyEdge> edges;
  for (const auto& [ij, a] : w) {
    const auto back = w.find({ij.second, ij.first});
    const double b = back == w.end() ? 0.0 : back->second;
    const double u = a + b - a * b;
    if (u > 0.0) edges.push_back({ij.first, ij.second, u});
    if (back == w.end() && u > 0.0) edges.push_back({ij.second, ij.first, u});
  }
  std::sort(edges.begin(), edges.end(), [](const FuzzyEdge& l, const FuzzyEdge& r) {
    return l.head != r.head ? l.head < r.head : l.tail < r.tail;
  });
  return edges;
}

CurveParams fit_curve(double spread, double min_dist) {
  if (!(spread > 0.0) || !(min_dist >= 0.0)) {
    throw_invalid("fit_curve()", "spread, min_dist",
                  std::to_string(spread) + ", " + std::to_string(min_dist), "must be > 0 and >= 0");
  }
  constexpr int kPoints = 300;
  std::vector<double> xs(kPoints), ys(kPoints);
  for (int i = 0; i < kPoints; ++i) {
    xs[i] = 3.0 * spread * i / (kPoints - 1);
    ys[i] = xs[i] < min_dist ? 1.0 : std::exp(-(xs[i] - min_dist) / spread);
  }
  auto sse = [&](double a, double b) {
    double s = 0.0;
    for (int i = 0; i < kPoints; ++i) {
      const double r = 1.0 / (1.0 + a * std::pow(xs[i], 2.0 * b)) - ys[i];
      s += r * r;
    }
    return s;
  };
  // Levenberg-Marquardt from (1, 1), as scipy's curve_fit starts.
  double a = 1.0, b = 1.0, lambda = 1e-3, cost = sse(a, b);
  for (int it = 0; it < 500; ++it) {
    Eigen::Matrix2d jtj = Eigen::Matrix2d::Zero();
    Eigen::Vector2d jtr = Eigen::Vector2d::Zero();
    for (int i = 0; i < kPoints; ++i) {
      if (xs[i] <= 0.0) continue;  // f = 1 there for every (a, b)
      const double u = std::pow(xs[i], 2.0 * b), den = 1.0 + a * u;
      const double f = 1.0 / den;
      const Eigen::Vector2d grad(-u / (den * den), -a * u * 2.0 * std::log(xs[i]) / (den * den));
      jtj += grad * grad.transpose();
      jtr += grad * (f - ys[i]);
    }
    Eigen::Matrix2d lhs = jtj;
    lhs.diagonal() *= 1.0 + lambda;
    const Eigen::Vector2d step = lhs.ldlt().solve(-jtr);
    const double na = a + step(0), nb = b + step(1);
    const double ncost = na > 0 && nb > 0 ? sse(na, nb) : std::numeric_limits<double>::infinity();
    if (ncost < cost) {
      const bool done = cost - ncost < 1e-15 * std::max(1.0, cost);
      a = na;
      b = nb;
      cost = ncost;
      lambda = std::max(lambda / 10.0, 1e-12);
      if (done) break;
    } else {
      lambda *= 10.0;
      if (lambda > 1e12) break;
    }
  }
  return {a, b};
}

Eigen::MatrixXd umap_layout(const Eigen::MatrixXd& x, const UmapOptions& o) {
  o.validate();
  const Eigen::Index n = x.rows();
  if (n < 2) throw_invalid(kWhere, "points", std::to_string(n), "must be >= 2 to make a map");
  if (n > kUmapMaxPoints) {
    throw_invalid(kWhere, "points", std::to_string(n),
                  "must be <= " + std::to_string(kUmapMaxPoints) +
                      " (exact nearest neighbours cost n^2; subsample, or use the PCA map)");
  }
  if (o.neighbors > n) {
    throw_invalid(kWhere, "neighbors", std::to_string(o.neighbors),
                  "must be <= the number of points (" + std::to_string(n) + ")");
  }
  if (!x.allFinite()) throw_invalid(kWhere, "the points contain NaN or Inf");

  const std::vector<FuzzyEdge> edges =
      fuzzy_simplicial_set(exact_knn(x, o.neighbors - 1, o.threads));
  const CurveParams ab = fit_curve(o.spread, o.min_dist);
  const int epochs = o.epochs > 0 ? o.epochs : (n <= 10000 ? 500 : 200);

  // Initialisation: the PCA map, each coordinate scaled to [0, 10] (umap-learn rescales its
  // initialisation so before the layout).
  Eigen::MatrixXd init = x.cols() >= 2 ? pca_layout(x, 2) : Eigen::MatrixXd::Zero(n, 2);
  std::vector<double> y(static_cast<size_t>(2 * n));
  for (int c = 0; c < 2; ++c) {
    const double lo = init.col(c).minCoeff(), hi = init.col(c).maxCoeff();
    for (Eigen::Index i = 0; i < n; ++i) {
      y[static_cast<size_t>(2 * i + c)] = hi > lo ? 10.0 * (init(i, c) - lo) / (hi - lo) : 0.0;
    }
  }
  Rng rng(o.seed);
  if (x.cols() < 2 || init.col(1).maxCoeff() == init.col(1).minCoeff()) {
    for (auto& v : y) v += 1e-4 * standard_normal(rng);  // break an exactly degenerate start
  }

  // Edge sampling (umap-learn's make_epochs_per_sample): edge e is sampled every
  // max_w / w_e epochs; edges below max_w / epochs are never sampled.
  double max_w = 0.0;
  for (const auto& e : edges) max_w = std::max(max_w, e.weight);
  std::vector<FuzzyEdge> used;
  std::vector<double> every, next, neg_every, next_neg;
  for (const auto& e : edges) {
    if (e.weight < max_w / epochs) continue;
    used.push_back(e);
    every.push_back(max_w / e.weight);
  }
  next = every;
  const double neg_rate = std::max(o.negative_samples, 1);
  for (double e : every) neg_every.push_back(e / neg_rate);
  next_neg = neg_every;

  const double a = ab.a, b = ab.b;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    const double alpha = o.learning_rate * (1.0 - static_cast<double>(epoch) / epochs);
    for (size_t e = 0; e < used.size(); ++e) {
      if (next[e] > epoch) continue;
      double* cur = &y[static_cast<size_t>(2 * used[e].head)];
      double* oth = &y[static_cast<size_t>(2 * used[e].tail)];
      double d2 = (cur[0] - oth[0]) * (cur[0] - oth[0]) + (cur[1] - oth[1]) * (cur[1] - oth[1]);
      double coef = 0.0;
      if (d2 > 0.0) {
        coef = -2.0 * a * b * std::pow(d2, b - 1.0) / (a * std::pow(d2, b) + 1.0);
      }
      for (int c = 0; c < 2; ++c) {
        const double g = clip4(coef * (cur[c] - oth[c]));
        cur[c] += g * alpha;
        oth[c] -= g * alpha;
      }
      next[e] += every[e];
      if (o.negative_samples == 0) continue;
      const int n_neg = static_cast<int>((epoch - next_neg[e]) / neg_every[e]);
      for (int p = 0; p < n_neg; ++p) {
        const auto k = static_cast<size_t>(uniform_int(rng, 0, n - 1));
        if (static_cast<int>(k) == used[e].head) continue;
        const double* far = &y[2 * k];
        d2 = (cur[0] - far[0]) * (cur[0] - far[0]) + (cur[1] - far[1]) * (cur[1] - far[1]);
        for (int c = 0; c < 2; ++c) {
          double g = 4.0;
          if (d2 > 0.0) {
            const double rc = 2.0 * b / ((0.001 + d2) * (a * std::pow(d2, b) + 1.0));
            g = clip4(rc * (cur[c] - far[c]));
          }
          cur[c] += g * alpha;
        }
      }
      next_neg[e] += n_neg * neg_every[e];
    }
  }
  Eigen::MatrixXd out(n, 2);
  for (Eigen::Index i = 0; i < n; ++i) {
    out(i, 0) = y[static_cast<size_t>(2 * i)];
    out(i, 1) = y[static_cast<size_t>(2 * i + 1)];
  }
  return out;
}

}  // namespace moca::embed
