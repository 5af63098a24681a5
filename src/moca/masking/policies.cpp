#include "moca/masking/policies.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "moca/common/error_text.hpp"
#include "moca/masking/policy_spec.hpp"

namespace moca::masking {

namespace {

void check_ratio(const std::string& who, double ratio) {
  if (!(ratio > 0.0 && ratio < 1.0)) {
    throw_invalid("make_policy()", who + " ratio (" + format_number(ratio) + ") must be in (0, 1)");
  }
}

/// The count rule as a formula with its numbers, for messages: "count=keep-floor: keep
/// int(10*(1-0.95)) = 0".
std::string rule_text(CountRule rule, double ratio, int n, int count) {
  const std::string N = std::to_string(n), r = format_number(ratio);
  if (rule == CountRule::kKeepFloor) {
    return "count=keep-floor: keep floor(" + N + "*(1-" + r + ")) = " + std::to_string(n - count);
  }
  return "count=mask-floor: mask floor(" + r + "*" + N + ") = " + std::to_string(count);
}

/// `low`: the fewest masked units allowed (1); `high`: the most (n - 1 unless the policy leaves
/// other cells visible, as per-modality does).
void check_count(const std::string& who, double ratio, CountRule rule, int count, int n,
                 const char* unit, int high) {
  if (count < 1 || count > high) {
    throw_invalid("make_policy()",
                  who + " ratio (" + format_number(ratio) + ") masks " + std::to_string(count) +
                      " of " + std::to_string(n) + " " + unit + " (" +
                      rule_text(rule, ratio, n, count) + ")" +
                      (high < n ? std::string("; it must leave at least one masked and one "
                                              "visible ") +
                                      unit
                                : std::string("; it must mask at least one")));
  }
}

}  // namespace

std::string to_string(CountRule rule) {
  return enum_name(kCountRuleNames, rule);
}

int masked_count_for(double ratio, int n, CountRule rule) {
  if (rule == CountRule::kKeepFloor) {
    // The authors' len_keep = int(L * (1 - mask_ratio)), with the same 1e-9 guard as mask-floor
    // (policies.hpp: without it 1 - 0.8 = 0.19999999999999996 would keep 11 of 60).
    return n - static_cast<int>(std::floor(static_cast<double>(n) * (1.0 - ratio) + 1e-9));
  }
  return static_cast<int>(std::floor(ratio * static_cast<double>(n) + 1e-9));
}

std::vector<int> choose_subset(Rng& rng, int n, int k) {
  if (k < 0 || k > n) {
    throw_invalid("choose_subset()",
                  "k (" + std::to_string(k) + ") must be in [0, " + std::to_string(n) + "]");
  }
  std::vector<int> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  for (int i = 0; i < k; ++i) {
    const auto j = static_cast<int>(uniform_int(rng, i, n - 1));
    std::swap(idx[static_cast<size_t>(i)], idx[static_cast<size_t>(j)]);
  }
  idx.resize(static_cast<size_t>(k));
  std::sort(idx.begin(), idx.end());
  return idx;
}

// ---- cross / random -------------------------------------------------------------------------

CrossPolicy::CrossPolicy(const Grid& grid, double ratio, std::string name, CountRule rule)
    : grid_(grid), ratio_(ratio), name_(std::move(name)), rule_(rule) {
  grid_.validate();
  if (name_ != "cross" && name_ != "random") {
    throw_invalid("CrossPolicy()", "name (" + name_ + ") must be cross or random");
  }
  check_ratio(name_, ratio);
  count_ = masked_count_for(ratio, grid_.tokens(), rule_);
  check_count(name_, ratio, rule_, count_, grid_.tokens(), "cells", grid_.tokens() - 1);
}

std::string CrossPolicy::spec() const {
  return name_ + ":ratio=" + format_number(ratio_) + ",count=" + to_string(rule_);
}

Mask CrossPolicy::sample(Rng& rng, const WindowRef&) const {
  Mask m(grid_.channels, grid_.patches);
  for (int t : choose_subset(rng, grid_.tokens(), count_)) m.set(t, true);
  return m;
}

// ---- sync / temporal / extrapolation --------------------------------------------------------

ColumnPolicy::ColumnPolicy(const Grid& grid, double ratio, ColumnRule rule, CountRule count)
    : grid_(grid), ratio_(ratio), rule_(rule), count_rule_(count) {
  grid_.validate();
  check_ratio(name(), ratio);
  columns_ = masked_count_for(ratio, grid_.patches, count_rule_);
  check_count(name(), ratio, count_rule_, columns_, grid_.patches, "columns", grid_.patches - 1);
}

std::string ColumnPolicy::name() const {
  switch (rule_) {
    case ColumnRule::kUniformSet:
      return "sync";
    case ColumnRule::kContiguous:
      return "temporal";
    case ColumnRule::kLast:
      return "extrapolation";
  }
  return "sync";
}

std::string ColumnPolicy::spec() const {
  return name() + ":ratio=" + format_number(ratio_) + ",count=" + to_string(count_rule_);
}

Mask ColumnPolicy::sample(Rng& rng, const WindowRef&) const {
  const int P = grid_.patches;
  std::vector<int> cols;
  if (rule_ == ColumnRule::kUniformSet) {
    cols = choose_subset(rng, P, columns_);
  } else {
    const int start = rule_ == ColumnRule::kLast
                          ? P - columns_
                          : static_cast<int>(uniform_int(rng, 0, P - columns_));
    for (int p = start; p < start + columns_; ++p) cols.push_back(p);
  }
  Mask m(grid_.channels, P);
  for (int c = 0; c < grid_.channels; ++c)
    for (int p : cols) m.set(c, p, true);
  return m;
}

// ---- sensor ---------------------------------------------------------------------------------

SensorPolicy::SensorPolicy(const Grid& grid, int keep) : grid_(grid), keep_(keep) {
  grid_.validate();
  if (keep < 1 || keep > grid_.channels - 1) {
    throw_invalid("make_policy()", "sensor keep (" + std::to_string(keep) +
                                       ") must be in [1, C-1] = [1, " +
                                       std::to_string(grid_.channels - 1) + "]");
  }
}

std::string SensorPolicy::spec() const {
  return "sensor:keep=" + std::to_string(keep_);
}

Mask SensorPolicy::sample(Rng& rng, const WindowRef&) const {
  Mask m(grid_.channels, grid_.patches);
  for (int c : choose_subset(rng, grid_.channels, grid_.channels - keep_))
    for (int p = 0; p < grid_.patches; ++p) m.set(c, p, true);
  return m;
}

// ---- per-modality ---------------------------------------------------------------------------

std::vector<std::vector<int>> default_modality_groups(int channels) {
  if (channels < 2) {
    throw_invalid("default_modality_groups()",
                  "channels (" + std::to_string(channels) + ") must be >= 2");
  }
  std::vector<std::vector<int>> g(2);
  for (int c = 0; c < channels; ++c) g[c < channels / 2 ? 0 : 1].push_back(c);
  return g;
}

std::vector<std::vector<int>> parse_modality_groups(const std::string& text, int channels) {
  const std::string form =
      " (form 0-2/3-5: '/' between groups, '+' within a group, channels in [0, " +
      std::to_string(channels - 1) + "])";
  const std::string where = "make_policy()", field = "per-modality groups";
  auto to_int = [&](const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
      throw_invalid(where, field, text, "has a bad channel '" + s + "'" + form);
    const int v = std::stoi(s);
    if (v >= channels)
      throw_invalid(where, field, text, "names channel " + s + " out of range" + form);
    return v;
  };
  std::vector<std::vector<int>> groups;
  std::vector<int> seen(static_cast<size_t>(std::max(channels, 0)), 0);
  size_t start = 0;
  while (true) {
    const auto slash = text.find('/', start);
    const std::string g =
        text.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    std::vector<int> group;
    size_t s2 = 0;
    while (true) {
      const auto plus = g.find('+', s2);
      const std::string item =
          g.substr(s2, plus == std::string::npos ? std::string::npos : plus - s2);
      const auto dash = item.find('-');
      int lo, hi;
      if (dash == std::string::npos) {
        lo = hi = to_int(item);
      } else {
        lo = to_int(item.substr(0, dash));
        hi = to_int(item.substr(dash + 1));
        if (hi < lo)
          throw_invalid(where, field, text, "has a descending range '" + item + "'" + form);
      }
      for (int c = lo; c <= hi; ++c) {
        if (seen[static_cast<size_t>(c)])
          throw_invalid(where, field, text, "uses channel " + std::to_string(c) + " twice" + form);
        seen[static_cast<size_t>(c)] = 1;
        group.push_back(c);
      }
      if (plus == std::string::npos) break;
      s2 = plus + 1;
    }
    std::sort(group.begin(), group.end());
    groups.push_back(group);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return groups;
}

std::string format_modality_groups(const std::vector<std::vector<int>>& groups) {
  std::string s;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    if (gi) s += "/";
    const auto& g = groups[gi];
    for (size_t i = 0; i < g.size();) {
      size_t j = i;
      while (j + 1 < g.size() && g[j + 1] == g[j] + 1) ++j;
      if (i) s += "+";
      s += std::to_string(g[i]);
      if (j > i) s += "-" + std::to_string(g[j]);
      i = j + 1;
    }
  }
  return s;
}

PerModalityPolicy::PerModalityPolicy(const Grid& grid, double ratio,
                                     std::vector<std::vector<int>> groups, CountRule count)
    : grid_(grid), ratio_(ratio), groups_(std::move(groups)), count_rule_(count) {
  grid_.validate();
  check_ratio("per-modality", ratio);
  columns_ = masked_count_for(ratio, grid_.patches, count_rule_);
  // Every column may be masked: the other groups stay visible (a single group of every channel
  // is refused below).
  check_count("per-modality", ratio, count_rule_, columns_, grid_.patches, "columns",
              grid_.patches);
  if (groups_.empty()) throw_invalid("make_policy()", "per-modality needs >= 1 group");
  std::vector<int> seen(static_cast<size_t>(grid_.channels), 0);
  for (const auto& g : groups_) {
    if (g.empty()) throw_invalid("make_policy()", "per-modality group is empty");
    for (int c : g) {
      if (c < 0 || c >= grid_.channels || seen[static_cast<size_t>(c)]) {
        throw_invalid("make_policy()", "per-modality channel (" + std::to_string(c) +
                                           ") out of range [0, " + std::to_string(grid_.channels) +
                                           ") or repeated");
      }
      seen[static_cast<size_t>(c)] = 1;
    }
    if (static_cast<int>(g.size()) == grid_.channels && columns_ == grid_.patches) {
      throw_invalid("make_policy()", "per-modality masks every cell");
    }
  }
}

std::string PerModalityPolicy::spec() const {
  return "per-modality:ratio=" + format_number(ratio_) + ",count=" + to_string(count_rule_) +
         ",groups=" + format_modality_groups(groups_);
}

Mask PerModalityPolicy::sample(Rng& rng, const WindowRef&) const {
  const int start = static_cast<int>(uniform_int(rng, 0, grid_.patches - columns_));
  const auto& g =
      groups_[static_cast<size_t>(uniform_int(rng, 0, static_cast<int>(groups_.size()) - 1))];
  Mask m(grid_.channels, grid_.patches);
  for (int c : g)
    for (int p = start; p < start + columns_; ++p) m.set(c, p, true);
  return m;
}

// ---- fixed ----------------------------------------------------------------------------------

FixedPolicy::FixedPolicy(const Grid& grid, Mask mask, std::string source)
    : grid_(grid), mask_(std::move(mask)), source_(std::move(source)) {
  grid_.validate();
  if (mask_.channels() != grid_.channels || mask_.patches() != grid_.patches) {
    throw_invalid("make_policy()", "fixed mask is " + std::to_string(mask_.channels()) + " x " +
                                       std::to_string(mask_.patches()) + " but the grid is " +
                                       std::to_string(grid_.channels) + " x " +
                                       std::to_string(grid_.patches));
  }
  const int k = mask_.masked_count();
  if (k < 1 || k > grid_.tokens() - 1) {
    throw_invalid("make_policy()",
                  "fixed mask masks " + std::to_string(k) + " of " +
                      std::to_string(grid_.tokens()) +
                      " cells; it must leave at least one masked and one visible cell");
  }
}

Mask FixedPolicy::sample(Rng&, const WindowRef&) const {
  return mask_;
}

// ---- function ------------------------------------------------------------------------------

FunctionPolicy::FunctionPolicy(std::string name, const Grid& grid, SampleFunction function)
    : name_(std::move(name)), grid_(grid), function_(std::move(function)) {
  grid_.validate();
  if (name_.empty()) throw_invalid("FunctionPolicy()", "name is empty");
  if (!function_) throw_invalid("FunctionPolicy()", "function is empty");
}

Mask FunctionPolicy::sample(Rng& rng, const WindowRef& window) const {
  Mask m = function_(rng, window);
  if (m.channels() != grid_.channels || m.patches() != grid_.patches) {
    throw std::runtime_error("policy " + name_ + " drew a " + std::to_string(m.channels()) + " x " +
                             std::to_string(m.patches()) + " mask for a " +
                             std::to_string(grid_.channels) + " x " +
                             std::to_string(grid_.patches) + " grid");
  }
  const int k = m.masked_count();
  if (k < 1 || k > grid_.tokens() - 1) {
    throw std::runtime_error("policy " + name_ + " drew a mask with " + std::to_string(k) + " of " +
                             std::to_string(grid_.tokens()) +
                             " cells masked; both views must be non-empty");
  }
  return m;
}

}  // namespace moca::masking
