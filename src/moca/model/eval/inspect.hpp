#pragma once
/// \file inspect.hpp
/// What an encoder learned (torch-free API): attention maps from an explicit inspection pass,
/// attention rollout, and pooled window embeddings (`moca attention`, `moca embed --pool`).
///
/// The inspection pass runs the checkpoint's own encoder layers (patch embedding, positions,
/// LayerNorms, qkv, projection and MLP through the same calls as the model's forward pass) and
/// additionally forms every head's attention matrix softmax(q k^T / sqrt(d)) in double precision
/// from the same q and k. The block outputs come from the same attention call the model makes
/// (moca's CPU kernel or LibTorch's), so the pass returns exactly the model's encoder output;
/// training keeps its fused kernels and never forms the matrices.
///
/// Every moca checkpoint's encoder has a cls token (MAE encoders prepend one, as MAE does, and a
/// linear probe reads it), so both kinds have cls attention; "received" attention (the mean over
/// the query rows of a token's column) is given beside it.
#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/data/windows.hpp"
#include "moca/masking/mask.hpp"
#include "moca/model/eval/imputation.hpp"
#include "moca/model/io/checkpoint.hpp"

namespace moca::model {

/// How a window's encoder outputs become one vector.
enum class Pool {
  kCls,   ///< the cls row of the final norm (what the classifiers and the linear probe read)
  kMean,  ///< the mean of the token rows (cls excluded)
};
inline constexpr EnumName<Pool> kPoolNames[] = {{Pool::kCls, "cls"}, {Pool::kMean, "mean"}};
std::string pool_name(Pool pool);

/// One window's attention on the full token grid. Rows and columns are indexed 0 = cls and
/// 1 + t = grid token t (t = c * P + p in the modality layout, p in the stacked one).
struct WindowAttention {
  int layers = 0;
  int heads = 0;
  int tokens = 0;             ///< T grid tokens
  int channels = 0;           ///< C of the windows
  int patches = 0;            ///< P
  bool stacked = false;       ///< stacked layout: token p covers every channel of patch p
  std::vector<bool> visible;  ///< T: whether token t entered the encoder
  /// layers x heads x (1 + T) x (1 + T), row-major: entry (l, h, i, j) is query i's attention
  /// to key j. Rows of the cls and visible tokens sum to 1; rows and columns of masked tokens
  /// are 0 (they never enter the encoder).
  std::vector<double> weights;
  /// Attention rollout (Abnar & Zuidema 2020) of the head means, (1 + T) x (1 + T), masked rows
  /// and columns 0.
  Eigen::MatrixXd rollout;
  /// The inspection pass's encoder output (final norm), (1 + K) x D for the K visible tokens.
  Eigen::MatrixXf output;

  int size() const { return tokens + 1; }
  double weight(int layer, int head, int query, int key) const;
  /// The head mean of one layer, (1 + T) x (1 + T).
  Eigen::MatrixXd head_mean(int layer) const;
  /// The grid token of cell (c, p).
  int token_of(int channel, int patch) const;
  /// C x P: a row of attention (1 + T values, index 1 + t) laid on the (channel, patch) grid.
  Eigen::MatrixXd on_grid(const Eigen::VectorXd& row) const;
};

/// Attention rollout: R = A'_L ... A'_1 with A'_l = residual I + (1 - residual) A_l for the
/// row-stochastic head means A_l (Abnar & Zuidema's 0.5 by default). std::invalid_argument for
/// no layers, non-square or unequal matrices, residual outside [0, 1].
Eigen::MatrixXd attention_rollout(const std::vector<Eigen::MatrixXd>& layers,
                                  double residual = 0.5);

/// A loaded encoder (MAE or classifier checkpoint) for inspection. Not meant for parallel use.
class EncoderInspector {
 public:
  /// Loads the encoder; std::runtime_error for checkpoint problems.
  explicit EncoderInspector(const std::string& checkpoint, const InferenceOptions& options = {});
  ~EncoderInspector();
  EncoderInspector(const EncoderInspector&) = delete;
  EncoderInspector& operator=(const EncoderInspector&) = delete;

  const CheckpointInfo& info() const;
  int dim() const;

  /// The inspection pass of window `row` of `windows`; with `mask`, only its visible tokens
  /// enter the encoder (as in pre-training), else every token. std::invalid_argument for a row
  /// out of range, a mask of another grid, windows that do not fit the model.
  WindowAttention attention(const data::Windows& windows, int row,
                            const masking::Mask* mask = nullptr) const;

  /// Pooled embeddings of every window (n x D) from the model's own forward pass over all
  /// tokens, in batches of InferenceOptions::batch_size.
  Eigen::MatrixXd embed(const data::Windows& windows, Pool pool) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moca::model
