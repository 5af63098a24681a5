#include "moca/kcca/view_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/common/random.hpp"
#include "moca/kcca/linalg.hpp"

namespace moca::kcca {

namespace {

// Sums the patch-level block P (rows: patches of views [va, vb), cols: all patches of `cols`)
// into view-level means: out(i - va, j) = mean over the block of view i x view j.
void reduce_block(const Eigen::MatrixXd& P, const ViewSet& rows, Eigen::Index va, Eigen::Index vb,
                  const ViewSet& cols, Eigen::MatrixXd& out) {
  const Eigen::Index m = cols.size();
  const Eigen::Index base = rows.offsets[static_cast<size_t>(va)];
#pragma omp parallel for schedule(static)
  for (Eigen::Index j = 0; j < m; ++j) {
    const Eigen::Index c0 = cols.offsets[static_cast<size_t>(j)];
    const Eigen::Index cn = cols.patches(j);
    for (Eigen::Index i = va; i < vb; ++i) {
      const Eigen::Index r0 = rows.offsets[static_cast<size_t>(i)] - base;
      const Eigen::Index rn = rows.patches(i);
      out(i, j) = P.block(r0, c0, rn, cn).sum() / static_cast<double>(rn * cn);
    }
  }
}

Eigen::MatrixXd exact_cross(const ViewSet& a, const ViewSet& b, const PatchKernel& k) {
  const Eigen::Index n = a.size(), m = b.size();
  const Eigen::Index total_b = b.features.rows();
  Eigen::MatrixXd out(n, m);
  // Block of views of `a` so that a block of patch pairs holds <= ~16M values (128 MiB).
  const Eigen::Index budget =
      std::max<Eigen::Index>(1, (Eigen::Index{1} << 24) / std::max<Eigen::Index>(1, total_b));
  Eigen::Index va = 0;
  while (va < n) {
    Eigen::Index vb = va + 1;
    while (vb < n &&
           a.offsets[static_cast<size_t>(vb + 1)] - a.offsets[static_cast<size_t>(va)] <= budget)
      ++vb;
    const Eigen::Index r0 = a.offsets[static_cast<size_t>(va)];
    const Eigen::Index rn = a.offsets[static_cast<size_t>(vb)] - r0;
    const Eigen::MatrixXd Xa = a.features.middleRows(r0, rn);
    const Eigen::MatrixXd Pa = a.positions.rows() > 0
                                   ? Eigen::MatrixXd(a.positions.middleRows(r0, rn))
                                   : Eigen::MatrixXd();
    const Eigen::MatrixXd P = cross_gram(Xa, Pa, b.features, b.positions, k);
    reduce_block(P, a, va, vb, b, out);
    va = vb;
  }
  return out;
}

Eigen::MatrixXd mean_rows(const Eigen::MatrixXd& F, const ViewSet& v) {
  const Eigen::Index n = v.size();
  Eigen::MatrixXd out(n, F.cols());
#pragma omp parallel for schedule(static)
  for (Eigen::Index i = 0; i < n; ++i) {
    out.row(i) = F.middleRows(v.offsets[static_cast<size_t>(i)], v.patches(i)).colwise().mean();
  }
  return out;
}

bool use_features(const PatchKernel& k, const ViewGramOptions& o) {
  if (o.method == ViewGramMethod::kExact) return false;
  if (o.method == ViewGramMethod::kRandomFeatures) {
    if (k.value.type != KernelType::kGaussian || !k.position.trivial()) {
      throw_invalid("view_gram()",
                    "method random-features needs a Gaussian patch kernel without a position "
                    "kernel (got " +
                        k.value.describe() + ")");
    }
    return true;
  }
  return k.value.type == KernelType::kLinear && k.position.trivial();
}

}  // namespace

Eigen::Index ViewSet::size() const {
  return offsets.empty() ? 0 : static_cast<Eigen::Index>(offsets.size()) - 1;
}

Eigen::Index ViewSet::patches(Eigen::Index i) const {
  return offsets[static_cast<size_t>(i + 1)] - offsets[static_cast<size_t>(i)];
}

void ViewSet::validate(const std::string& what) const {
  if (offsets.size() < 2 || offsets.front() != 0) {
    throw_invalid(what, "offsets must hold n + 1 >= 2 values starting at 0 (got " +
                            std::to_string(offsets.size()) + " values)");
  }
  for (size_t i = 0; i + 1 < offsets.size(); ++i) {
    if (offsets[i + 1] < offsets[i]) {
      throw_invalid(what, "offsets decrease at view " + std::to_string(i));
    }
    if (offsets[i + 1] == offsets[i]) {
      throw_invalid(what, "view " + std::to_string(i) +
                              " has zero patches (its mean embedding is undefined)");
    }
  }
  if (offsets.back() != features.rows()) {
    throw_invalid(what, "offsets end at " + std::to_string(offsets.back()) + " but features has " +
                            std::to_string(features.rows()) + " rows");
  }
  if (features.cols() < 1) {
    throw_invalid(what, "features have no columns");
  }
  if (positions.size() != 0 && (positions.rows() != features.rows() || positions.cols() != 2)) {
    throw_invalid(what, "positions are " + std::to_string(positions.rows()) + " x " +
                            std::to_string(positions.cols()) + " (must be " +
                            std::to_string(features.rows()) + " x 2 or empty)");
  }
  if (!features.allFinite() || !positions.allFinite()) {
    throw_invalid(what, "features or positions contain NaN or Inf");
  }
}

void ViewGramOptions::validate() const {
  if (rff_dimension < 1) {
    throw_invalid("ViewGramOptions::validate()",
                  "rff_dimension (" + std::to_string(rff_dimension) + ") must be >= 1");
  }
}

Eigen::MatrixXd rff_features(const Eigen::MatrixXd& X, double sigma, int dimension,
                             std::uint64_t seed) {
  if (!(std::isfinite(sigma) && sigma > 0.0)) {
    throw_invalid("rff_features()", "sigma (" + std::to_string(sigma) + ") must be finite and > 0");
  }
  if (dimension < 1) {
    throw_invalid("rff_features()", "dimension (" + std::to_string(dimension) + ") must be >= 1");
  }
  if (!X.allFinite()) throw_invalid("rff_features()", "X contains NaN or Inf");
  Rng rng(seed);
  Eigen::MatrixXd W(X.cols(), dimension);
  for (Eigen::Index j = 0; j < dimension; ++j) {
    for (Eigen::Index i = 0; i < X.cols(); ++i) W(i, j) = standard_normal(rng) / sigma;
  }
  Eigen::RowVectorXd b(dimension);
  for (Eigen::Index j = 0; j < dimension; ++j) b(j) = 2.0 * M_PI * uniform01(rng);
  Eigen::MatrixXd Z = X * W;
  const double scale = std::sqrt(2.0 / dimension);
#pragma omp parallel for schedule(static)
  for (Eigen::Index j = 0; j < Z.cols(); ++j) {
    for (Eigen::Index i = 0; i < Z.rows(); ++i) Z(i, j) = scale * std::cos(Z(i, j) + b(j));
  }
  return Z;
}

Eigen::MatrixXd view_features(const ViewSet& views, const PatchKernel& kernel,
                              const ViewGramOptions& options) {
  options.validate();
  kernel.validate();
  views.validate("view_features(): views");
  if (!kernel.position.trivial()) {
    throw_invalid("view_features()",
                  "a position kernel has no finite feature map "
                  "here; use view_gram with method exact");
  }
  if (kernel.value.type == KernelType::kLinear) return mean_rows(views.features, views);
  if (kernel.value.type == KernelType::kGaussian) {
    return mean_rows(
        rff_features(views.features, kernel.value.sigma, options.rff_dimension, options.seed),
        views);
  }
  throw_invalid("view_features()", "patch kernel " + kernel.value.describe() +
                                       " has no explicit feature map (linear or rbf only)");
}

Eigen::MatrixXd view_gram(const ViewSet& views, const PatchKernel& kernel,
                          const ViewGramOptions& options) {
  options.validate();
  kernel.validate();
  views.validate("view_gram(): views");
  if (use_features(kernel, options)) return outer_product(view_features(views, kernel, options));
  Eigen::MatrixXd K = exact_cross(views, views, kernel);
  return 0.5 * (K + K.transpose());
}

Eigen::MatrixXd cross_view_gram(const ViewSet& a, const ViewSet& b, const PatchKernel& kernel,
                                const ViewGramOptions& options) {
  options.validate();
  kernel.validate();
  a.validate("cross_view_gram(): first views");
  b.validate("cross_view_gram(): second views");
  if (a.features.cols() != b.features.cols()) {
    throw_invalid("cross_view_gram()", "feature dimensions differ (" +
                                           std::to_string(a.features.cols()) + " vs " +
                                           std::to_string(b.features.cols()) + ")");
  }
  if (use_features(kernel, options)) {
    return product_transpose(view_features(a, kernel, options), view_features(b, kernel, options));
  }
  return exact_cross(a, b, kernel);
}

}  // namespace moca::kcca
