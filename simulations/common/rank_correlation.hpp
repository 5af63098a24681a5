#pragma once
/// \file rank_correlation.hpp
/// Rank correlations between a theoretical score and what training achieves (Spearman, Kendall
/// tau-b; policy_study's two-level bootstrap is in study_statistics.hpp).
#include <vector>

namespace moca::sim {

/// Average ranks (1-based; ties get the mean of the ranks they span).
std::vector<double> average_ranks(const std::vector<double>& v);

/// Spearman's rho: the Pearson correlation of the average ranks (ties handled). Throws
/// std::invalid_argument if the sizes differ or n < 3, and returns NaN-free 0 when either
/// variable is constant (no ordering information) — the caller is told through `degenerate`.
double spearman(const std::vector<double>& x, const std::vector<double>& y,
                bool* degenerate = nullptr);

/// Kendall's tau-b = (concordant - discordant) / sqrt((n0 - n1)(n0 - n2)), with n0 = n(n-1)/2
/// and n1, n2 the tied pairs in x and y. O(n^2), fine for the dozens of policies compared.
double kendall_tau_b(const std::vector<double>& x, const std::vector<double>& y,
                     bool* degenerate = nullptr);

}  // namespace moca::sim
