#pragma once
/// \file policies.hpp
/// The built-in masking policies. Each draws masks on a C x P grid; "count" below is the exact
/// number of masked cells of every mask it draws (docs/masking.md, "Policies": floor(rho*C*P)
/// unless the definition says otherwise). Counts use floor(rho * N + 1e-9), so that e.g. 0.7 * 60
/// gives 42 despite binary rounding. Every constructor rejects a ratio outside (0, 1) and a count
/// that would leave either view empty (std::invalid_argument naming the policy).
///
// clang-format off
/// | policy | definition | count |
/// | --- | --- | --- |
/// | cross (MoCA) | uniform over all k-subsets of the C*P cells, k = floor(rho*C*P) | floor(rho*C*P) |
/// | random (imputation) | the same distribution as cross (an alias; default rho = 0.7) | floor(rho*C*P) |
/// | sync | floor(rho*P) time columns chosen uniformly without replacement, masked in every channel | C*floor(rho*P) |
/// | temporal | one contiguous block of floor(rho*P) columns, uniform start, all channels | C*floor(rho*P) |
/// | extrapolation | the last floor(rho*P) columns, all channels (deterministic) | C*floor(rho*P) |
/// | sensor | C-keep whole channels chosen uniformly; `keep` channels stay visible | (C-keep)*P |
/// | per-modality | one contiguous block of floor(rho*P) columns (uniform start) in one sensor group chosen uniformly | |g|*floor(rho*P) |
/// | fixed | the same given mask every time | as given |
// clang-format on
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "moca/masking/policy.hpp"

namespace moca::masking {

/// Number of masked items out of `n` for ratio `ratio`: floor(ratio * n + 1e-9).
int masked_count_for(double ratio, int n);

/// Uniform random k-subset of {0..n-1} (partial Fisher–Yates with uniform_int), ascending.
std::vector<int> choose_subset(Rng& rng, int n, int k);

/// `cross` (MoCA cross-modality masking) and its alias `random` (the imputation task's random
/// masking): every mask with exactly floor(rho*C*P) masked cells is equally likely, so cells of
/// different channels are masked independently of time alignment. `random` differs only in
/// its name and default ratio (0.7, the paper's imputation setting).
class CrossPolicy : public MaskPolicy {
 public:
  /// \param ratio rho in (0, 1); \param name "cross" or "random".
  CrossPolicy(const Grid& grid, double ratio, std::string name = "cross");
  std::string name() const override { return name_; }
  std::string spec() const override;
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;
  double ratio() const { return ratio_; }
  /// Masked cells per mask: floor(rho*C*P).
  int count() const { return count_; }

 private:
  Grid grid_;
  double ratio_;
  std::string name_;
  int count_;
};

/// How the columns of a column policy are chosen.
enum class ColumnRule {
  kUniformSet,  ///< `sync`: floor(rho*P) columns, a uniform subset (not necessarily contiguous)
  kContiguous,  ///< `temporal`: one block of floor(rho*P) columns, start ~ U{0..P-k}
  kLast,        ///< `extrapolation`: the last floor(rho*P) columns
};

/// `sync`, `temporal`, `extrapolation`: whole time columns masked across all C channels.
/// Count C*floor(rho*P) (not floor(rho*C*P): e.g. C=6, P=10, rho=0.75 masks 7 columns = 42
/// cells where cross masks 45).
class ColumnPolicy : public MaskPolicy {
 public:
  ColumnPolicy(const Grid& grid, double ratio, ColumnRule rule);
  std::string name() const override;
  std::string spec() const override;
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;
  double ratio() const { return ratio_; }
  /// Masked columns floor(rho*P); masked cells are C times this.
  int columns() const { return columns_; }

 private:
  Grid grid_;
  double ratio_;
  ColumnRule rule_;
  int columns_;
};

/// `sensor`: C - keep whole channels (all P patches) masked, the channels chosen uniformly;
/// `keep` channels stay visible (the paper's sensor imputation keeps one). Count (C-keep)*P.
class SensorPolicy : public MaskPolicy {
 public:
  /// \param keep visible channels, 1 <= keep <= C-1.
  SensorPolicy(const Grid& grid, int keep);
  std::string name() const override { return "sensor"; }
  std::string spec() const override;
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;
  int keep() const { return keep_; }

 private:
  Grid grid_;
  int keep_;
};

/// `per-modality`: a contiguous block of k = floor(rho*P) columns (start ~ U{0..P-k}) masked in
/// the channels of one sensor group only, the group chosen uniformly. Groups default to two
/// halves (channels [0, C/2) and [C/2, C): acc / gyro for UCI-HAPT); `groups=0-2/3-5` sets them
/// ('/' between groups, '+' between ranges or channels in a group, e.g. `0+2/1-1/3-5`).
/// Count |g|*floor(rho*P) for the chosen group g.
class PerModalityPolicy : public MaskPolicy {
 public:
  /// \param groups non-empty, disjoint channel lists within [0, C).
  PerModalityPolicy(const Grid& grid, double ratio, std::vector<std::vector<int>> groups);
  std::string name() const override { return "per-modality"; }
  std::string spec() const override;
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;
  const std::vector<std::vector<int>>& groups() const { return groups_; }
  int columns() const { return columns_; }

 private:
  Grid grid_;
  double ratio_;
  std::vector<std::vector<int>> groups_;
  int columns_;
};

/// Default groups: two halves [0, C/2) and [C/2, C) (C >= 2).
std::vector<std::vector<int>> default_modality_groups(int channels);
/// Parses `0-2/3-5` (see PerModalityPolicy); throws std::invalid_argument.
std::vector<std::vector<int>> parse_modality_groups(const std::string& text, int channels);
/// Canonical text of groups (ranges compressed), parsed back by parse_modality_groups().
std::string format_modality_groups(const std::vector<std::vector<int>>& groups);

/// `fixed`: returns the same mask every time (from `file=PATH` in Mask::parse format, or inline
/// `cells=0101/1010` with '/' between channel rows). Count: that of the mask.
class FixedPolicy : public MaskPolicy {
 public:
  /// \param source the spec option that produced the mask ("file=..." or "cells=...").
  FixedPolicy(const Grid& grid, Mask mask, std::string source);
  std::string name() const override { return "fixed"; }
  std::string spec() const override { return "fixed:" + source_; }
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;
  const Mask& mask() const { return mask_; }

 private:
  Grid grid_;
  Mask mask_;
  std::string source_;
};

/// A mask-drawing function: one mask of the policy's grid from the caller's stream.
using SampleFunction = std::function<Mask(Rng& rng, const WindowRef& window)>;

/// A policy from a function (for research on new masks without writing a class). The function
/// must only use `rng` for randomness (so seeds reproduce) and must be safe to call from
/// several threads. sample() checks that the mask fits the grid and leaves both views
/// non-empty (std::runtime_error otherwise). spec() is the name (not parsed by make_policy()).
class FunctionPolicy : public MaskPolicy {
 public:
  FunctionPolicy(std::string name, const Grid& grid, SampleFunction function);
  std::string name() const override { return name_; }
  std::string spec() const override { return name_; }
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;

 private:
  std::string name_;
  Grid grid_;
  SampleFunction function_;
};

}  // namespace moca::masking
