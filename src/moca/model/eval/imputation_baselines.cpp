#include "moca/model/eval/imputation_baselines.hpp"

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"

namespace moca::model {

namespace {

using MissingMatrix = Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Adds the observed samples of `w` to per-channel sums and counts, window by window.
void add_observed(const data::Windows& w, const MissingMatrix& miss, Eigen::VectorXd& sum,
                  Eigen::VectorXd& cnt) {
  for (int i = 0; i < w.size(); ++i) {
    for (int c = 0; c < w.channels; ++c) {
      for (int t = 0; t < w.length; ++t) {
        const Eigen::Index col = static_cast<Eigen::Index>(c) * w.length + t;
        if (!miss(i, col)) {
          sum(c) += w.x(i, col);
          cnt(c) += 1.0;
        }
      }
    }
  }
}

/// Mean of the observed samples of each channel over the whole set (0 when never observed).
Eigen::VectorXd observed_channel_means(const data::Windows& w, const MissingMatrix& miss) {
  ObservedChannels o;
  o.sum = Eigen::VectorXd::Zero(w.channels);
  o.count = Eigen::VectorXd::Zero(w.channels);
  add_observed(w, miss, o.sum, o.count);
  return o.means();
}

enum class OneDim { kLinear, kNearest };

data::RowMatrixXf impute_1d(const data::Windows& w, const std::vector<masking::Mask>& masks,
                            const masking::Grid& grid, OneDim kind,
                            const Eigen::VectorXd* given_fallback) {
  const MissingMatrix miss = missing_samples(w, masks, grid);
  if (given_fallback && given_fallback->size() != w.channels) {
    throw_invalid("impute_linear()", "fallback has " + std::to_string(given_fallback->size()) +
                                         " values for " + std::to_string(w.channels) + " channels");
  }
  const Eigen::VectorXd fallback =
      given_fallback ? *given_fallback : observed_channel_means(w, miss);
  data::RowMatrixXf out = w.x;
  const int L = w.length;
  std::vector<int> obs;
#pragma omp parallel for schedule(static) private(obs)
  for (int i = 0; i < w.size(); ++i) {
    for (int c = 0; c < w.channels; ++c) {
      const Eigen::Index base = static_cast<Eigen::Index>(c) * L;
      obs.clear();
      for (int t = 0; t < L; ++t)
        if (!miss(i, base + t)) obs.push_back(t);
      if (static_cast<int>(obs.size()) == L) continue;
      if (obs.empty()) {
        for (int t = 0; t < L; ++t) out(i, base + t) = static_cast<float>(fallback(c));
        continue;
      }
      size_t k = 0;  // obs[k] is the first observed time >= t (or obs.size())
      for (int t = 0; t < L; ++t) {
        while (k < obs.size() && obs[k] < t) ++k;
        if (k < obs.size() && obs[k] == t) continue;
        const bool has_prev = k > 0, has_next = k < obs.size();
        const int tp = has_prev ? obs[k - 1] : -1, tn = has_next ? obs[k] : -1;
        double v;
        if (!has_prev) {
          v = w.x(i, base + tn);
        } else if (!has_next) {
          v = w.x(i, base + tp);
        } else if (kind == OneDim::kNearest) {
          v = (t - tp <= tn - t) ? w.x(i, base + tp) : w.x(i, base + tn);
        } else {
          const double a = static_cast<double>(t - tp) / static_cast<double>(tn - tp);
          v = (1.0 - a) * w.x(i, base + tp) + a * w.x(i, base + tn);
        }
        out(i, base + t) = static_cast<float>(v);
      }
    }
  }
  return out;
}

/// Gamma(shape, 1) by Marsaglia & Tsang (2000), shape >= 1.
double gamma_draw(double shape, Rng& rng) {
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = standard_normal(rng);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = uniform01(rng);
    if (u > 0.0 && std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

}  // namespace

MissingMatrix missing_samples(const data::Windows& w, const std::vector<masking::Mask>& masks,
                              const masking::Grid& grid) {
  grid.validate();
  if (w.channels != grid.channels || w.length != grid.length()) {
    throw_invalid("missing_samples()", "windows are " + std::to_string(w.channels) + " x " +
                                           std::to_string(w.length) + " but the grid is " +
                                           std::to_string(grid.channels) + " x " +
                                           std::to_string(grid.length()));
  }
  if (masks.size() != 1 && static_cast<int>(masks.size()) != w.size()) {
    throw_invalid("missing_samples()", std::to_string(masks.size()) + " masks for " +
                                           std::to_string(w.size()) +
                                           " windows (give one per window or one shared)");
  }
  for (size_t k = 0; k < masks.size(); ++k) {
    if (masks[k].channels() != grid.channels || masks[k].patches() != grid.patches) {
      throw_invalid("missing_samples()",
                    "mask " + std::to_string(k) + " is " + std::to_string(masks[k].channels()) +
                        " x " + std::to_string(masks[k].patches()) + ", the grid " +
                        std::to_string(grid.channels) + " x " + std::to_string(grid.patches));
    }
  }
  MissingMatrix miss(w.size(), static_cast<Eigen::Index>(w.channels) * w.length);
  for (int i = 0; i < w.size(); ++i) {
    const masking::Mask& m = masks.size() == 1 ? masks[0] : masks[static_cast<size_t>(i)];
    for (int c = 0; c < w.channels; ++c)
      for (int t = 0; t < w.length; ++t)
        miss(i, static_cast<Eigen::Index>(c) * w.length + t) =
            m.masked(c, t / grid.patch_length) ? 1 : 0;
  }
  return miss;
}

data::RowMatrixXf impute_linear(const data::Windows& w, const std::vector<masking::Mask>& masks,
                                const masking::Grid& grid, const Eigen::VectorXd* fallback) {
  return impute_1d(w, masks, grid, OneDim::kLinear, fallback);
}

data::RowMatrixXf impute_nearest(const data::Windows& w, const std::vector<masking::Mask>& masks,
                                 const masking::Grid& grid, const Eigen::VectorXd* fallback) {
  return impute_1d(w, masks, grid, OneDim::kNearest, fallback);
}

void ObservedChannels::add(const data::Windows& w, const std::vector<masking::Mask>& masks,
                           const masking::Grid& grid) {
  if (sum.size() == 0) {
    sum = Eigen::VectorXd::Zero(w.channels);
    count = Eigen::VectorXd::Zero(w.channels);
  }
  if (sum.size() != w.channels) {
    throw_invalid("ObservedChannels::add()", std::to_string(w.channels) + " channels, " +
                                                 std::to_string(sum.size()) + " before");
  }
  add_observed(w, missing_samples(w, masks, grid), sum, count);
}

Eigen::VectorXd ObservedChannels::means() const {
  Eigen::VectorXd m = sum;
  for (Eigen::Index c = 0; c < m.size(); ++c) m(c) = count(c) > 0 ? sum(c) / count(c) : 0.0;
  return m;
}

void MiceOptions::validate() const {
  if (iterations < 1) {
    throw_invalid("MiceOptions::validate()",
                  "iterations (" + std::to_string(iterations) + ") must be >= 1");
  }
  if (draws < 1) {
    throw_invalid("MiceOptions::validate()", "draws (" + std::to_string(draws) + ") must be >= 1");
  }
  if (!(ridge >= 0.0) || !std::isfinite(ridge)) {
    throw_invalid("MiceOptions::validate()", "ridge (" + std::to_string(ridge) + ") must be >= 0");
  }
}

namespace {

// The pooled samples of MICE: row i*L + t holds time t of window i, column c channel c; for
// each channel the rows where it is observed and where it is missing.
struct PooledSamples {
  Eigen::MatrixXd x;
  std::vector<std::vector<Eigen::Index>> observed, missing;
};

PooledSamples pool_samples(const data::Windows& w, const MissingMatrix& miss) {
  const int C = w.channels, L = w.length, n = w.size();
  const Eigen::Index rows = static_cast<Eigen::Index>(n) * L;
  PooledSamples p;
  p.x.resize(rows, C);
  Eigen::Matrix<std::uint8_t, Eigen::Dynamic, Eigen::Dynamic> M(rows, C);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < C; ++c)
      for (int t = 0; t < L; ++t) {
        const Eigen::Index col = static_cast<Eigen::Index>(c) * L + t;
        p.x(static_cast<Eigen::Index>(i) * L + t, c) = w.x(i, col);
        M(static_cast<Eigen::Index>(i) * L + t, c) = miss(i, col);
      }
  p.observed.resize(static_cast<size_t>(C));
  p.missing.resize(static_cast<size_t>(C));
  for (int c = 0; c < C; ++c)
    for (Eigen::Index r = 0; r < rows; ++r)
      (M(r, c) ? p.missing : p.observed)[static_cast<size_t>(c)].push_back(r);
  return p;
}

// One MICE step for channel j: regress it on an intercept and the current values of the other
// channels over its observed rows (ridge-stabilised), then impute its missing rows of Z from
// the fit, or with `posterior` from a posterior draw of the coefficients plus residual noise.
// A channel with too few observations or a singular system keeps its current values.
void mice_update_channel(int j, const PooledSamples& p, const MiceOptions& options, Rng& rng,
                         Eigen::MatrixXd& Z) {
  const auto& oj = p.observed[static_cast<size_t>(j)];
  const auto& mj = p.missing[static_cast<size_t>(j)];
  const int C = static_cast<int>(Z.cols());
  const int p_dim = C;  // intercept + (C - 1) other channels
  if (mj.empty()) return;
  if (static_cast<int>(oj.size()) <= p_dim) return;  // too few observations: keep the mean
  auto design = [&](Eigen::Index r, Eigen::VectorXd& a) {
    a(0) = 1.0;
    int k = 1;
    for (int c = 0; c < C; ++c)
      if (c != j) a(k++) = Z(r, c);
  };
  Eigen::MatrixXd AtA = Eigen::MatrixXd::Zero(p_dim, p_dim);
  Eigen::VectorXd Aty = Eigen::VectorXd::Zero(p_dim), a(p_dim);
  for (Eigen::Index r : oj) {
    design(r, a);
    AtA.selfadjointView<Eigen::Lower>().rankUpdate(a);
    Aty += a * Z(r, j);
  }
  AtA.triangularView<Eigen::Upper>() = AtA.transpose();
  const double lambda = options.ridge * AtA.diagonal().mean();
  AtA.diagonal().array() += lambda;
  Eigen::LLT<Eigen::MatrixXd> llt(AtA);
  if (llt.info() != Eigen::Success) return;
  Eigen::VectorXd beta = llt.solve(Aty);
  double rss = 0.0;
  for (Eigen::Index r : oj) {
    design(r, a);
    const double e = Z(r, j) - a.dot(beta);
    rss += e * e;
  }
  const double dof = static_cast<double>(oj.size() - static_cast<size_t>(p_dim));
  double sigma = std::sqrt(rss / dof);
  if (options.posterior) {
    const double g = 2.0 * gamma_draw(dof / 2.0, rng);
    sigma = std::sqrt(rss / g);
    Eigen::VectorXd z(p_dim);
    for (int k = 0; k < p_dim; ++k) z(k) = standard_normal(rng);
    // beta* = beta + sigma* L^-T z  has covariance sigma*^2 (A'A + lambda I)^-1.
    beta += sigma * llt.matrixU().solve(z);
  }
  for (Eigen::Index r : mj) {
    design(r, a);
    Z(r, j) = a.dot(beta) + (options.posterior ? sigma * standard_normal(rng) : 0.0);
  }
}

// Chain d of MICE: missing values start at their channel's observed mean, then `iterations`
// sweeps of mice_update_channel over the channels in order, from the chain's own stream.
Eigen::MatrixXd mice_chain(const PooledSamples& p, const Eigen::VectorXd& means,
                           const MiceOptions& options, int d) {
  Rng rng(derive_seed(options.seed, static_cast<std::uint64_t>(d)));
  const int C = static_cast<int>(p.x.cols());
  Eigen::MatrixXd Z = p.x;
  for (int c = 0; c < C; ++c)
    for (Eigen::Index r : p.missing[static_cast<size_t>(c)]) Z(r, c) = means(c);
  for (int it = 0; it < options.iterations; ++it) {
    for (int j = 0; j < C; ++j) mice_update_channel(j, p, options, rng, Z);
  }
  return Z;
}

}  // namespace

data::RowMatrixXf impute_mice(const data::Windows& w, const std::vector<masking::Mask>& masks,
                              const masking::Grid& grid, const MiceOptions& options) {
  options.validate();
  const MissingMatrix miss = missing_samples(w, masks, grid);
  const int C = w.channels, L = w.length, n = w.size();
  const PooledSamples pooled = pool_samples(w, miss);
  const Eigen::VectorXd means = observed_channel_means(w, miss);
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(pooled.x.rows(), C);
  for (int d = 0; d < options.draws; ++d) sum += mice_chain(pooled, means, options, d);
  sum /= static_cast<double>(options.draws);
  data::RowMatrixXf out = w.x;
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < C; ++c)
      for (int t = 0; t < L; ++t) {
        const Eigen::Index col = static_cast<Eigen::Index>(c) * L + t;
        if (miss(i, col))
          out(i, col) = static_cast<float>(sum(static_cast<Eigen::Index>(i) * L + t, c));
      }
  return out;
}

ImputationSums imputation_sums(const data::Windows& truth, const data::RowMatrixXf& imputed,
                               const std::vector<masking::Mask>& masks, const masking::Grid& grid) {
  if (imputed.rows() != truth.x.rows() || imputed.cols() != truth.x.cols()) {
    throw_invalid("imputation_error()", "imputed is " + std::to_string(imputed.rows()) + " x " +
                                            std::to_string(imputed.cols()) + ", the windows " +
                                            std::to_string(truth.x.rows()) + " x " +
                                            std::to_string(truth.x.cols()));
  }
  const MissingMatrix miss = missing_samples(truth, masks, grid);
  ImputationSums s;
  for (Eigen::Index i = 0; i < imputed.rows(); ++i)
    for (Eigen::Index j = 0; j < imputed.cols(); ++j)
      if (miss(i, j)) {
        const double d = static_cast<double>(imputed(i, j)) - truth.x(i, j);
        s.abs_sum += std::abs(d);
        s.sq_sum += d * d;
        ++s.count;
      }
  return s;
}

ImputationError ImputationSums::error(double target_var) const {
  ImputationError e;
  e.count = count;
  if (count > 0) {
    e.mae = abs_sum / static_cast<double>(count);
    e.mse = sq_sum / static_cast<double>(count);
    e.target_var = target_var;
    e.nmse = target_var > 0.0 ? e.mse / target_var : std::numeric_limits<double>::quiet_NaN();
  }
  return e;
}

ImputationError imputation_error(const data::Windows& truth, const data::RowMatrixXf& imputed,
                                 const std::vector<masking::Mask>& masks,
                                 const masking::Grid& grid) {
  const ImputationSums s = imputation_sums(truth, imputed, masks, grid);
  return s.error(s.count > 0 ? pooled_variance(truth.x) : 0.0);
}

void PooledMoments::add(const data::RowMatrixXf& x) {
  if (x.size() == 0) return;
  const double nb = static_cast<double>(x.size());
  const double mean_b = x.cast<double>().sum() / nb;
  const double m2_b = (x.cast<double>().array() - mean_b).square().sum();
  if (n == 0.0) {
    n = nb;
    mean = mean_b;
    m2 = m2_b;
    return;
  }
  const double total = n + nb, delta = mean_b - mean;
  mean += delta * nb / total;
  m2 += m2_b + delta * delta * n * nb / total;
  n = total;
}

double pooled_variance(const data::RowMatrixXf& x) {
  if (x.size() < 2) return 0.0;
  PooledMoments m;
  m.add(x);
  return m.variance();
}

}  // namespace moca::model
