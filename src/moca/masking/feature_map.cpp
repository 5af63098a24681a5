#include "moca/masking/feature_map.hpp"

#include <atomic>
#include <cmath>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/kcca/kernels.hpp"
#include "moca/kcca/view_kernel.hpp"

namespace moca::masking {

namespace detail {

/// Checks that windows fit the grid and masks are 1 or n masks on the grid.
void check_windows(const data::Windows& w, const Grid& grid, const std::string& who) {
  grid.validate();
  if (w.channels != grid.channels || w.length != grid.length()) {
    throw_invalid(who, "windows are " + std::to_string(w.channels) + " x " +
                           std::to_string(w.length) + " but the grid needs " +
                           std::to_string(grid.channels) + " x " + std::to_string(grid.length()));
  }
  if (w.size() < 2) {
    throw_invalid(who, "need at least 2 windows (" + std::to_string(w.size()) + ")");
  }
}

void check_masks(const std::vector<Mask>& masks, int n, const Grid& grid) {
  if (masks.size() != 1 && static_cast<int>(masks.size()) != n) {
    throw_invalid("ViewFeaturizer::features()",
                  std::to_string(masks.size()) + " masks for " + std::to_string(n) +
                      " windows (give 1 shared mask or one per window)");
  }
  for (const auto& m : masks) {
    if (m.channels() != grid.channels || m.patches() != grid.patches) {
      throw_invalid("ViewFeaturizer::features()",
                    "mask is " + std::to_string(m.channels()) + " x " +
                        std::to_string(m.patches()) + " but the grid is " +
                        std::to_string(grid.channels) + " x " + std::to_string(grid.patches));
    }
  }
}

/// z = (x - per-column mean) / per-channel pooled sd, as an n x C*L double matrix.
Eigen::MatrixXd standardise(const data::Windows& w, const std::string& who) {
  Eigen::MatrixXd z = w.x.cast<double>();
  const Eigen::RowVectorXd mean = z.colwise().mean();
  z.rowwise() -= mean;
  const int L = w.length;
  for (int c = 0; c < w.channels; ++c) {
    auto block = z.middleCols(static_cast<Eigen::Index>(c) * L, L);
    const double sd = std::sqrt(block.squaredNorm() / static_cast<double>(block.size()));
    if (!(sd > 1e-12)) {
      const std::string name =
          c < static_cast<int>(w.channel_names.size()) ? w.channel_names[c] : std::to_string(c);
      throw_invalid(who, "channel " + name + " does not vary over the windows (sd " +
                             std::to_string(sd) + "); it cannot be standardised");
    }
    block /= sd;
  }
  return z;
}

class RawFeaturizer : public ViewFeaturizer {
 public:
  RawFeaturizer(Eigen::MatrixXd z, const Grid& grid) : z_(std::move(z)), grid_(grid) {}
  int size() const override { return static_cast<int>(z_.rows()); }
  int dim() const override { return static_cast<int>(z_.cols()); }
  std::vector<int> column_channels() const override {
    std::vector<int> ch(static_cast<size_t>(dim()));
    for (int j = 0; j < dim(); ++j) ch[static_cast<size_t>(j)] = j / grid_.length();
    return ch;
  }
  Eigen::MatrixXd features(const std::vector<Mask>& masks, ViewSide side) const override {
    const int n = size();
    check_masks(masks, n, grid_);
    Eigen::MatrixXd out = z_;
    const int P = grid_.patches, Lp = grid_.patch_length, L = grid_.length();
    const bool keep_masked = side == ViewSide::kMasked;
    for (int i = 0; i < n; ++i) {
      const Mask& m = masks.size() == 1 ? masks[0] : masks[static_cast<size_t>(i)];
      for (int t = 0; t < grid_.tokens(); ++t) {
        if (m.masked(t) != keep_masked) {
          const int c = t / P, p = t % P;
          out.row(i).segment(static_cast<Eigen::Index>(c) * L + p * Lp, Lp).setZero();
        }
      }
    }
    return out;
  }
  const Eigen::MatrixXd* token_blocks() const override { return &z_; }

 private:
  Eigen::MatrixXd z_;
  Grid grid_;
};

class PatchMeanFeaturizer : public ViewFeaturizer {
 public:
  PatchMeanFeaturizer(const Eigen::MatrixXd& z, const Grid& grid) : grid_(grid) {
    const int n = static_cast<int>(z.rows()), C = grid.channels, P = grid.patches,
              Lp = grid.patch_length, L = grid.length();
    d0_ = PatchMeanFeatureMap::token_dim(Lp);
    tokens_.resize(n, static_cast<Eigen::Index>(C) * P * d0_);
    for (int i = 0; i < n; ++i) {
      for (int c = 0; c < C; ++c) {
        for (int p = 0; p < P; ++p) {
          const double a = M_PI * (p + 0.5) / P;
          const double tau[3] = {1.0, std::cos(a), std::sin(a)};
          const auto v = z.row(i).segment(static_cast<Eigen::Index>(c) * L + p * Lp, Lp);
          const double rms = std::sqrt(v.squaredNorm() / Lp);
          auto out = tokens_.row(i).segment((static_cast<Eigen::Index>(c) * P + p) * d0_, d0_);
          for (int k = 0; k < 3; ++k) {
            out.segment(k * (Lp + 1), Lp) = tau[k] * v;
            out(k * (Lp + 1) + Lp) = tau[k] * rms;
          }
        }
      }
    }
    tokens_.rowwise() -= tokens_.colwise().mean();  // centre each token's contribution
  }
  /// Shared embedding space: token t of window i has features tokens.row(i).segment(t*d0, d0)
  /// (already centred per token), all channels summed into one d0-block.
  PatchMeanFeaturizer(const Grid& grid, int d0,
                      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> tokens)
      : grid_(grid), d0_(d0), per_channel_(false), tokens_(std::move(tokens)) {}
  int size() const override { return static_cast<int>(tokens_.rows()); }
  int dim() const override { return per_channel_ ? grid_.channels * d0_ : d0_; }
  std::vector<int> column_channels() const override {
    if (!per_channel_) return {};
    std::vector<int> ch(static_cast<size_t>(dim()));
    for (int j = 0; j < dim(); ++j) ch[static_cast<size_t>(j)] = j / d0_;
    return ch;
  }
  Eigen::MatrixXd features(const std::vector<Mask>& masks, ViewSide side) const override {
    const int n = size();
    check_masks(masks, n, grid_);
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(n, dim());
    const int P = grid_.patches;
    const bool keep_masked = side == ViewSide::kMasked;
    for (int i = 0; i < n; ++i) {
      const Mask& m = masks.size() == 1 ? masks[0] : masks[static_cast<size_t>(i)];
      int count = 0;
      for (int t = 0; t < grid_.tokens(); ++t) {
        if (m.masked(t) == keep_masked) {
          out.row(i).segment(per_channel_ ? static_cast<Eigen::Index>(t / P) * d0_ : 0, d0_) +=
              tokens_.row(i).segment(static_cast<Eigen::Index>(t) * d0_, d0_);
          ++count;
        }
      }
      if (count == 0) {
        throw_invalid("", std::string("ViewFeaturizer::features(): the ") + to_string(side) +
                              " view of window " + std::to_string(i) +
                              " is empty (patch-mean needs >= 1 patch)");
      }
      out.row(i) /= count;
    }
    return out;
  }

 private:
  Grid grid_;
  int d0_ = 0;
  bool per_channel_ = true;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> tokens_;
};

class CallbackFeaturizer : public ViewFeaturizer {
 public:
  CallbackFeaturizer(const data::Windows& w, const Grid& grid, const FeatureCallback& cb, int batch,
                     bool safe, std::string name)
      : w_(w), grid_(grid), cb_(cb), batch_(batch), safe_(safe), name_(std::move(name)) {}
  int size() const override { return w_.size(); }
  int dim() const override { return dim_; }
  bool thread_safe() const override { return safe_; }
  Eigen::MatrixXd features(const std::vector<Mask>& masks, ViewSide side) const override {
    const int n = size();
    check_masks(masks, n, grid_);
    Eigen::MatrixXd out;
    for (int start = 0; start < n; start += batch_) {
      const int end = std::min(n, start + batch_);
      std::vector<int> rows;
      std::vector<std::vector<int>> tokens;
      for (int i = start; i < end; ++i) {
        rows.push_back(i);
        tokens.push_back(
            view_tokens(masks.size() == 1 ? masks[0] : masks[static_cast<size_t>(i)], side));
      }
      const Eigen::MatrixXd f = cb_(w_, rows, tokens);
      if (f.rows() != end - start || f.cols() < 1 || (start > 0 && f.cols() != out.cols())) {
        throw std::runtime_error("feature map " + name_ + ": callback returned " +
                                 std::to_string(f.rows()) + " x " + std::to_string(f.cols()) +
                                 " for a batch of " + std::to_string(end - start) + " windows");
      }
      if (!f.allFinite()) {
        throw std::runtime_error("feature map " + name_ + ": callback returned NaN or Inf");
      }
      if (start == 0) out.resize(n, f.cols());
      out.middleRows(start, end - start) = f;
    }
    dim_ = static_cast<int>(out.cols());
    return out;
  }

 private:
  const data::Windows& w_;
  Grid grid_;
  FeatureCallback cb_;
  int batch_;
  bool safe_;
  std::string name_;
  mutable std::atomic<int> dim_{0};
};

}  // namespace detail

std::unique_ptr<ViewFeaturizer> RawFeatureMap::prepare(const data::Windows& windows,
                                                       const Grid& grid) const {
  detail::check_windows(windows, grid, "RawFeatureMap::prepare()");
  return std::make_unique<detail::RawFeaturizer>(
      detail::standardise(windows, "RawFeatureMap::prepare()"), grid);
}

std::unique_ptr<ViewFeaturizer> PatchMeanFeatureMap::prepare(const data::Windows& windows,
                                                             const Grid& grid) const {
  detail::check_windows(windows, grid, "PatchMeanFeatureMap::prepare()");
  return std::make_unique<detail::PatchMeanFeaturizer>(
      detail::standardise(windows, "PatchMeanFeatureMap::prepare()"), grid);
}

CallbackFeatureMap::CallbackFeatureMap(std::string name, FeatureCallback callback, int batch_size,
                                       bool thread_safe)
    : name_(std::move(name)),
      callback_(std::move(callback)),
      batch_size_(batch_size),
      thread_safe_(thread_safe) {
  if (name_.empty()) throw_invalid("CallbackFeatureMap()", "name is empty");
  if (!callback_) throw_invalid("CallbackFeatureMap()", "callback is empty");
  if (batch_size_ < 1) {
    throw_invalid("CallbackFeatureMap()",
                  "batch_size (" + std::to_string(batch_size_) + ") must be >= 1");
  }
}

std::unique_ptr<ViewFeaturizer> CallbackFeatureMap::prepare(const data::Windows& windows,
                                                            const Grid& grid) const {
  detail::check_windows(windows, grid, "CallbackFeatureMap::prepare()");
  return std::make_unique<detail::CallbackFeaturizer>(windows, grid, callback_, batch_size_,
                                                      thread_safe_, name_);
}

RffMeanFeatureMap::RffMeanFeatureMap(int dimension, std::uint64_t seed, double sigma)
    : dimension_(dimension), seed_(seed), sigma_(sigma) {
  if (dimension_ < 1) {
    throw_invalid("RffMeanFeatureMap()",
                  "dimension (" + std::to_string(dimension_) + ") must be >= 1");
  }
  if (!(sigma_ >= 0.0) || !std::isfinite(sigma_)) {
    throw_invalid("RffMeanFeatureMap()", "sigma (" + std::to_string(sigma_) +
                                             ") must be finite and >= 0 (0 = median heuristic)");
  }
}

std::unique_ptr<ViewFeaturizer> RffMeanFeatureMap::prepare(const data::Windows& windows,
                                                           const Grid& grid) const {
  detail::check_windows(windows, grid, "RffMeanFeatureMap::prepare()");
  const Eigen::MatrixXd z = detail::standardise(windows, "RffMeanFeatureMap::prepare()");
  const int n = windows.size(), C = grid.channels, P = grid.patches, Lp = grid.patch_length,
            L = grid.length();
  // All patches as rows (window-major, token order), then psi = RFF of the patch values.
  Eigen::MatrixXd patches(static_cast<Eigen::Index>(n) * C * P, Lp);
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < C; ++c)
      for (int p = 0; p < P; ++p)
        patches.row((static_cast<Eigen::Index>(i) * C + c) * P + p) =
            z.row(i).segment(static_cast<Eigen::Index>(c) * L + p * Lp, Lp);
  const double sigma = sigma_ > 0 ? sigma_ : kcca::median_heuristic_sigma(patches, seed_, 1000);
  const Eigen::MatrixXd psi = kcca::rff_features(patches, sigma, dimension_, seed_);
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> tokens(
      n, static_cast<Eigen::Index>(C) * P * dimension_);
  for (int i = 0; i < n; ++i)
    for (int t = 0; t < C * P; ++t)
      tokens.row(i).segment(static_cast<Eigen::Index>(t) * dimension_, dimension_) =
          psi.row(static_cast<Eigen::Index>(i) * C * P + t);
  tokens.rowwise() -= tokens.colwise().mean();  // centre each token's embedding over windows
  return std::make_unique<detail::PatchMeanFeaturizer>(grid, dimension_, std::move(tokens));
}

std::vector<std::string> feature_map_names() {
  return {"raw", "patch-mean", "rff-mean"};
}

std::shared_ptr<const FeatureMap> make_feature_map(const std::string& name) {
  if (name == "raw") return std::make_shared<RawFeatureMap>();
  if (name == "patch-mean") return std::make_shared<PatchMeanFeatureMap>();
  if (name == "rff-mean") return std::make_shared<RffMeanFeatureMap>();
  throw_invalid("make_feature_map()",
                "unknown feature map '" + name +
                    "' (valid: raw, patch-mean, rff-mean; an encoder comes through "
                    "CallbackFeatureMap)");
}

}  // namespace moca::masking
