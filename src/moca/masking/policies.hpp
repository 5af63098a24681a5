#pragma once
/// \file policies.hpp
/// The built-in masking policies. Each draws masks on a C x P grid; "count" below is the exact
/// number of masked cells of every mask it draws (docs/masking.md, "Policies"). A policy with a
/// ratio turns it into a count of N units (cells for cross, time columns for the column
/// policies) by its count rule (the `count` key, CountRule below):
///
/// * `keep-floor` (the default; the authors' code, models_mae.py:149): keep floor(N*(1-rho))
///   units and mask the rest, k(rho, N) = N - floor(N*(1-rho) + 1e-9), so `sync:ratio=0.75`
///   masks 8 of 10 columns. The guard is moca's, as below: the authors' int() of the bare double
///   keeps one unit fewer where 1 - rho falls just below a multiple of 1/N in binary (0.55, 0.8,
///   0.9 over 60 cells; 0.8, 0.9 over 10 columns, where it would keep none);
/// * `mask-floor` (moca's rule before issue 40): mask floor(rho*N + 1e-9) units (the 1e-9 so that
///   0.7 * 60 gives 42 despite binary rounding); `sync:ratio=0.75,count=mask-floor` masks 7.
///
/// The two agree whenever rho*N is whole. Every constructor rejects a ratio outside (0, 1) and a
/// count that would leave either view empty (std::invalid_argument naming the policy, the count
/// and the rule).
///
// clang-format off
/// | policy | definition | count |
/// | --- | --- | --- |
/// | cross (MoCA) | uniform over all k-subsets of the C*P cells, k = k(rho, C*P) | k(rho, C*P) |
/// | random (imputation) | the same distribution as cross (an alias; default rho = 0.7) | k(rho, C*P) |
/// | sync | k(rho, P) time columns chosen uniformly without replacement, masked in every channel | C*k(rho, P) |
/// | temporal | one contiguous block of k(rho, P) columns, uniform start, all channels | C*k(rho, P) |
/// | extrapolation | the last k(rho, P) columns, all channels (deterministic) | C*k(rho, P) |
/// | sensor | C-keep whole channels chosen uniformly; `keep` channels stay visible (no ratio, no count rule) | (C-keep)*P |
/// | per-modality | one contiguous block of k(rho, P) columns (uniform start) in one sensor group chosen uniformly | |g|*k(rho, P) |
/// | fixed | the same given mask every time (no ratio, no count rule) | as given |
// clang-format on
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "moca/common/enum_names.hpp"
#include "moca/masking/policy.hpp"

namespace moca::masking {

/// How a ratio becomes a count of masked units (the `count` key; rules in the file comment).
enum class CountRule {
  kKeepFloor,  ///< keep floor(n*(1-rho)), mask the rest (the authors' rule; the default)
  kMaskFloor   ///< mask floor(rho*n + 1e-9) (moca before issue 40)
};
// clang-format off
/// The names of the count rules (the `count` key, canonical specs).
inline constexpr EnumName<CountRule> kCountRuleNames[] = {
    {CountRule::kKeepFloor, "keep-floor"},
    {CountRule::kMaskFloor, "mask-floor"}};
// clang-format on
/// "keep-floor" or "mask-floor".
std::string to_string(CountRule rule);

/// Number of masked items out of `n` for ratio `ratio` under `rule` (rules in the file comment).
int masked_count_for(double ratio, int n, CountRule rule = CountRule::kKeepFloor);

/// Uniform random k-subset of {0..n-1} (partial Fisher–Yates with uniform_int), ascending.
std::vector<int> choose_subset(Rng& rng, int n, int k);

/// `cross` (MoCA cross-modality masking) and its alias `random` (the imputation task's random
/// masking): every mask with exactly k(rho, C*P) masked cells is equally likely, so cells of
/// different channels are masked independently of time alignment. `random` differs only in
/// its name and default ratio (0.7, the paper's imputation setting).
class CrossPolicy : public MaskPolicy {
 public:
  /// \param ratio rho in (0, 1); \param name "cross" or "random"; \param rule the count rule.
  CrossPolicy(const Grid& grid, double ratio, std::string name = "cross",
              CountRule rule = CountRule::kKeepFloor);
  std::string name() const override { return name_; }
  std::string spec() const override;
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;
  double ratio() const { return ratio_; }
  CountRule count_rule() const { return rule_; }
  /// Masked cells per mask: k(rho, C*P).
  int count() const { return count_; }

 private:
  Grid grid_;
  double ratio_;
  std::string name_;
  CountRule rule_;
  int count_;
};

/// How the columns of a column policy are chosen.
enum class ColumnRule {
  kUniformSet,  ///< `sync`: k(rho, P) columns, a uniform subset (not necessarily contiguous)
  kContiguous,  ///< `temporal`: one block of k(rho, P) columns, start ~ U{0..P-k}
  kLast,        ///< `extrapolation`: the last k(rho, P) columns
};

/// `sync`, `temporal`, `extrapolation`: whole time columns masked across all C channels.
/// Count C*k(rho, P), not k(rho, C*P): e.g. C=6, P=10, rho=0.75 masks 8 columns = 48 cells
/// (7 = 42 under mask-floor) where cross masks 45.
class ColumnPolicy : public MaskPolicy {
 public:
  ColumnPolicy(const Grid& grid, double ratio, ColumnRule rule,
               CountRule count = CountRule::kKeepFloor);
  std::string name() const override;
  std::string spec() const override;
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;
  double ratio() const { return ratio_; }
  CountRule count_rule() const { return count_rule_; }
  /// Masked columns k(rho, P); masked cells are C times this.
  int columns() const { return columns_; }

 private:
  Grid grid_;
  double ratio_;
  ColumnRule rule_;
  CountRule count_rule_;
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

/// `per-modality`: a contiguous block of k = k(rho, P) columns (start ~ U{0..P-k}) masked in
/// the channels of one sensor group only, the group chosen uniformly. Groups default to two
/// halves (channels [0, C/2) and [C/2, C): acc / gyro for UCI-HAPT); `groups=0-2/3-5` sets them
/// ('/' between groups, '+' between ranges or channels in a group, e.g. `0+2/1-1/3-5`).
/// Count |g|*k(rho, P) for the chosen group g.
class PerModalityPolicy : public MaskPolicy {
 public:
  /// \param groups non-empty, disjoint channel lists within [0, C).
  PerModalityPolicy(const Grid& grid, double ratio, std::vector<std::vector<int>> groups,
                    CountRule count = CountRule::kKeepFloor);
  std::string name() const override { return "per-modality"; }
  std::string spec() const override;
  const Grid& grid() const override { return grid_; }
  Mask sample(Rng& rng, const WindowRef& window) const override;
  const std::vector<std::vector<int>>& groups() const { return groups_; }
  CountRule count_rule() const { return count_rule_; }
  int columns() const { return columns_; }

 private:
  Grid grid_;
  double ratio_;
  std::vector<std::vector<int>> groups_;
  CountRule count_rule_;
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
  bool reads_window() const override { return true; }

 private:
  std::string name_;
  Grid grid_;
  SampleFunction function_;
};

}  // namespace moca::masking
