#pragma once
/// \file mask.hpp
/// A mask over the (modality, time patch) grid of one window.
///
/// Grid: C modalities (sensor axes) x P patches of length Lp, L = P * Lp. Token index
/// `c * P + p` (modality-major). Value 1 = masked (removed from the encoder's input, to be
/// reconstructed), 0 = visible, as in MAE.
#include <cstdint>
#include <string>
#include <vector>

namespace moca::masking {

/// The patch grid of a window: C channels x P patches of Lp samples each.
struct Grid {
  int channels = 0;      ///< C >= 1
  int patches = 0;       ///< P >= 1
  int patch_length = 0;  ///< Lp >= 1; the window length is P * Lp
  int tokens() const { return channels * patches; }
  int length() const { return patches * patch_length; }
  /// Throws std::invalid_argument naming the field when any is < 1.
  void validate() const;
  bool operator==(const Grid& o) const {
    return channels == o.channels && patches == o.patches && patch_length == o.patch_length;
  }
};

/// Grid for windows of `channels` x `length` with patches of `patch_length` samples.
/// Throws std::invalid_argument unless patch_length divides length.
Grid make_grid(int channels, int length, int patch_length);

/// A C x P boolean grid; 1 = masked.
class Mask {
 public:
  Mask() = default;
  /// All-visible mask of C x P cells.
  Mask(int channels, int patches);
  /// Mask from a 0/1 vector of C*P cells in token order c*P + p.
  Mask(int channels, int patches, std::vector<std::uint8_t> cells);

  int channels() const { return channels_; }
  int patches() const { return patches_; }
  int tokens() const { return channels_ * patches_; }
  bool masked(int c, int p) const { return cells_[static_cast<size_t>(c * patches_ + p)] != 0; }
  bool masked(int token) const { return cells_[static_cast<size_t>(token)] != 0; }
  void set(int c, int p, bool is_masked) {
    cells_[static_cast<size_t>(c * patches_ + p)] = is_masked ? 1 : 0;
  }
  void set(int token, bool is_masked) { cells_[static_cast<size_t>(token)] = is_masked ? 1 : 0; }
  /// Number of masked cells.
  int masked_count() const;
  /// Masked fraction masked_count() / tokens().
  double ratio() const;
  /// Ascending token indices of masked (resp. visible) cells.
  std::vector<int> masked_tokens() const;
  std::vector<int> visible_tokens() const;
  /// The complement (masked <-> visible).
  Mask complement() const;
  /// Cells in token order.
  const std::vector<std::uint8_t>& cells() const { return cells_; }
  /// C lines of P characters '1'/'0' separated by '\n'.
  std::string to_string() const;
  /// Parses the to_string() format (lines of 0/1; ',' or spaces allowed between cells).
  /// Throws std::invalid_argument on ragged lines or characters other than 0/1.
  static Mask parse(const std::string& text);
  bool operator==(const Mask& o) const {
    return channels_ == o.channels_ && patches_ == o.patches_ && cells_ == o.cells_;
  }
  bool operator!=(const Mask& o) const { return !(*this == o); }

 private:
  int channels_ = 0;
  int patches_ = 0;
  std::vector<std::uint8_t> cells_;
};

}  // namespace moca::masking
