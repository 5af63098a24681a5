#pragma once
/// \file view_kernel.hpp
/// Mean-embedding view kernels (paper, Remark in "Reproducing Kernel Hilbert Space
/// Representations"): a view is a set of patches with positions, and
///
///     k_view(A, B) = 1 / (|A| |B|) sum_{p in A} sum_{q in B} k_patch(p, q)
///                  = < mean_{p in A} psi(p), mean_{q in B} psi(q) >,
///
/// which is PSD whenever k_patch is. Exact evaluation costs O(total^2 d) kernel terms; with an
/// explicit feature map psi (linear patch kernel: psi = identity; Gaussian: random Fourier
/// features) the view Gram is the Gram of mean patch features, O(total D + n^2 D).
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "moca/kcca/kernels.hpp"

namespace moca::kcca {

/// The patch kernel of a view kernel: a value kernel times a position kernel over
/// (modality, time) (see ProductKernel; by default positions are ignored).
using PatchKernel = ProductKernel;

/// n views, each a set of patches stored contiguously: view i owns patch rows
/// offsets[i] .. offsets[i+1]-1 of `features` and `positions`.
struct ViewSet {
  Eigen::MatrixXd features;           ///< total x d patch feature rows
  Eigen::MatrixXd positions;          ///< total x 2 (modality, time); may be 0 x 0 if unused
  std::vector<Eigen::Index> offsets;  ///< n + 1 non-decreasing offsets, front 0, back total

  Eigen::Index size() const;                   ///< number of views n
  Eigen::Index patches(Eigen::Index i) const;  ///< |view i|
  /// Throws std::invalid_argument: bad offsets, size mismatches, non-finite values, or a view
  /// with zero patches (its mean embedding is undefined) — the message names the view index.
  /// `what` prefixes the message (e.g. "view_gram(): views").
  void validate(const std::string& what) const;
};

/// How view_gram evaluates the view kernel.
enum class ViewGramMethod {
  kAuto,            ///< mean features for a linear patch kernel without positions, else exact
  kExact,           ///< mean over all patch pairs (blocked, parallel)
  kRandomFeatures,  ///< Gaussian patch kernel without positions: seeded random Fourier features
};

/// Options of view_gram / view_features.
struct ViewGramOptions {
  ViewGramMethod method = ViewGramMethod::kAuto;  ///< evaluation path. Default auto.
  int rff_dimension = 2000;  ///< random Fourier features D; >= 1. Default 2000.
  std::uint64_t seed = 0;    ///< seed of the random Fourier features. Default 0.
  void validate() const;
};

/// The n x n view Gram K_ij = k_view(view i, view j) (symmetric, PSD). The exact path never
/// holds more than a block of patch-pair kernel values (O(block * total) memory).
/// Throws std::invalid_argument for an invalid ViewSet or kernel, or kRandomFeatures with a
/// non-Gaussian kernel or a non-trivial position kernel.
Eigen::MatrixXd view_gram(const ViewSet& views, const PatchKernel& kernel,
                          const ViewGramOptions& options = {});

/// The n x m cross view Gram between two view sets (same feature dimension).
Eigen::MatrixXd cross_view_gram(const ViewSet& a, const ViewSet& b, const PatchKernel& kernel,
                                const ViewGramOptions& options = {});

/// Random Fourier features of the Gaussian kernel exp(-|x - y|^2 / (2 sigma^2)) (Rahimi & Recht):
/// z(x) = sqrt(2 / D) cos(W x + b), W_ij ~ N(0, 1 / sigma^2), b ~ U[0, 2 pi), seeded; so
/// z(x)ᵀ z(y) -> k(x, y) with error O(1 / sqrt(D)). X is n x d, the result n x D.
Eigen::MatrixXd rff_features(const Eigen::MatrixXd& X, double sigma, int dimension,
                             std::uint64_t seed);

/// Mean patch embeddings (n x D): the mean of psi over each view's patches, psi = identity for a
/// linear patch kernel and random Fourier features for a Gaussian one (options.rff_dimension,
/// options.seed). view_gram's fast paths are the Gram of these. Requires a trivial position
/// kernel; throws std::invalid_argument otherwise or for other kernel types.
Eigen::MatrixXd view_features(const ViewSet& views, const PatchKernel& kernel,
                              const ViewGramOptions& options = {});

}  // namespace moca::kcca
