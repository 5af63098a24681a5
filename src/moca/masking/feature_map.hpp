#pragma once
/// \file feature_map.hpp
/// Feature maps Phi that turn one view of each window into a feature vector (the paper's
/// Phi_u, Phi_m of the linear special case; the encoder f for deep features).
///
/// A map is used in two steps: prepare(windows, grid) does the per-window work once (scaling,
/// per-token features) and returns a ViewFeaturizer; ViewFeaturizer::features(masks, side)
/// then builds the n x d feature matrix of one view for one draw of masks.
///
/// Built-in maps (both work on standardised data and on per-token contributions centred over
/// the windows — see "Why centre per token" in docs/masking.md):
/// * `raw`: the zero-filled flattened view, Phi(x^U)_{c*L+t} = z_{c,t} (1 - m_{c,p(t)}), where
///   z = (x - mean window) / sd_c is x standardised per cell mean and per channel sd; d = C*L.
/// * `patch-mean`: the mean of position-aware patch features over the view's patches,
///   Phi(x^V) = (1/|V|) sum_{(c,p) in V} psi~(c,p), psi(c,p) = e_c (x) tau(p) (x) g(z_{c,p}),
///   with e_c the one-hot modality code, tau(p) = (1, cos(pi (p+1/2)/P), sin(pi (p+1/2)/P)) a
///   low-frequency time code, g(v) = (v_1..v_Lp, rms(v)) the patch values and their RMS, and
///   psi~ = psi minus its mean over windows for that token; d = C * 3 * (Lp + 1). The codes
///   multiply the values rather than being concatenated: a concatenated code's mean depends on
///   the mask alone, and the two views' codes are complementary, so CCA would find a
///   correlation of 1 from the mask pattern without looking at the data.
/// * `rff-mean`: the mean embedding of a Gaussian patch kernel (paper, Remark on view kernels:
///   psi_view = mean of psi_patch over the view), psi_patch = random Fourier features of the
///   standardised patch values (kcca::rff_features, D = 256, bandwidth = median distance
///   between patches), again centred per token over the windows; d = D. The linear Gram of
///   these features approximates the mean-embedding view kernel k_view(A, B) =
///   mean_{p in A, q in B} exp(-|p - q|^2 / (2 sigma^2)) (with centred token embeddings), so
///   `--estimator kcca --kernel linear --features rff-mean` is KCCA on Gaussian mean-embedding
///   view kernels. Positions are not used (all channels share one embedding space).
/// * a callback (CallbackFeatureMap): any batched function of (windows, rows, view tokens),
///   e.g. a trained encoder that sees only the view's tokens.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "moca/data/windows.hpp"
#include "moca/masking/views.hpp"

namespace moca::masking {

/// Per-window state of a feature map on one window set: builds the features of one view.
class ViewFeaturizer {
 public:
  virtual ~ViewFeaturizer() = default;
  /// Number of windows n.
  virtual int size() const = 0;
  /// Feature dimension d (a callback map reports 0 until its first features() call).
  virtual int dim() const = 0;
  /// n x d features of view `side`: row i from window i with mask masks[i]; a single mask
  /// (masks.size() == 1) is shared by every window. Throws std::invalid_argument on a mask
  /// count other than 1 or n, or a mask not on the grid.
  virtual Eigen::MatrixXd features(const std::vector<Mask>& masks, ViewSide side) const = 0;
  /// True when features() may be called from several threads at once.
  virtual bool thread_safe() const { return true; }
  /// The modality (channel) each feature column belongs to (d entries), or empty when columns
  /// mix modalities (callbacks). Used to restrict a view to some channels (cross-modal scores).
  virtual std::vector<int> column_channels() const { return {}; }
  /// The token-block layout, where the map has one (`raw`): features(masks, side) equals this
  /// n x d matrix with, in row i, the column block of every token outside window i's view set
  /// to zero; token t = c*P + p owns columns [t w, (t + 1) w), w = d / tokens. nullptr for
  /// other maps. Lets the scorer form view Grams from per-token products.
  virtual const Eigen::MatrixXd* token_blocks() const { return nullptr; }
};

/// A feature map Phi (immutable; prepare() may be called for several window sets).
class FeatureMap {
 public:
  virtual ~FeatureMap() = default;
  /// "raw", "patch-mean", or the callback's name.
  virtual std::string name() const = 0;
  /// Does the per-window work once. The windows must outlive the result (it may keep a
  /// reference). Throws std::invalid_argument if the windows do not fit the grid or a channel
  /// is constant over the windows (raw and patch-mean standardise per channel).
  virtual std::unique_ptr<ViewFeaturizer> prepare(const data::Windows& windows,
                                                  const Grid& grid) const = 0;
};

/// `raw`: the zero-filled standardised view (see the file comment).
class RawFeatureMap : public FeatureMap {
 public:
  std::string name() const override { return "raw"; }
  std::unique_ptr<ViewFeaturizer> prepare(const data::Windows& windows,
                                          const Grid& grid) const override;
};

/// `patch-mean`: the mean of position-aware patch features (see the file comment).
class PatchMeanFeatureMap : public FeatureMap {
 public:
  std::string name() const override { return "patch-mean"; }
  std::unique_ptr<ViewFeaturizer> prepare(const data::Windows& windows,
                                          const Grid& grid) const override;
  /// Width of the per-token block: 3 * (Lp + 1).
  static int token_dim(int patch_length) { return 3 * (patch_length + 1); }
};

/// `rff-mean`: the mean of random-Fourier patch embeddings (see the file comment).
class RffMeanFeatureMap : public FeatureMap {
 public:
  /// \param dimension D >= 1 random features; \param seed of the features and of the median
  /// bandwidth's sample; \param sigma Gaussian bandwidth, 0 = median heuristic.
  explicit RffMeanFeatureMap(int dimension = 256, std::uint64_t seed = 0, double sigma = 0.0);
  std::string name() const override { return "rff-mean"; }
  std::unique_ptr<ViewFeaturizer> prepare(const data::Windows& windows,
                                          const Grid& grid) const override;

 private:
  int dimension_;
  std::uint64_t seed_;
  double sigma_;
};

/// A batched feature function: returns one row per entry of `rows`, row k = Phi of the view of
/// window rows[k] made of the tokens tokens[k] (ascending c*P + p; for the unmasked view these
/// are the visible tokens, for the masked view the masked ones). All rows must have the same
/// width. The window values are the original ones (not standardised).
using FeatureCallback =
    std::function<Eigen::MatrixXd(const data::Windows& windows, const std::vector<int>& rows,
                                  const std::vector<std::vector<int>>& tokens)>;

/// A feature map from a callback, e.g. a trained MoCA encoder (src/moca/model fills it). The
/// callback is called with batches of at most `batch_size` windows, from one thread at a time
/// unless `thread_safe` is set.
class CallbackFeatureMap : public FeatureMap {
 public:
  /// \param name shown in outputs; \param batch_size >= 1 windows per call.
  CallbackFeatureMap(std::string name, FeatureCallback callback, int batch_size = 256,
                     bool thread_safe = false);
  std::string name() const override { return name_; }
  std::unique_ptr<ViewFeaturizer> prepare(const data::Windows& windows,
                                          const Grid& grid) const override;

 private:
  std::string name_;
  FeatureCallback callback_;
  int batch_size_;
  bool thread_safe_;
};

/// The names make_feature_map() knows: "raw", "patch-mean", "rff-mean".
std::vector<std::string> feature_map_names();

/// Builds a built-in map by name; throws std::invalid_argument listing the valid names.
std::shared_ptr<const FeatureMap> make_feature_map(const std::string& name);

}  // namespace moca::masking
