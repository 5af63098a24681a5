#pragma once
/// \file token_grams.hpp
/// Internal (not installed): centred Grams of token-masked views from per-token products, for
/// the policy scorer's cca route.
///
/// A view of the `raw` feature map is Z with the column block of every token outside the view
/// zeroed, row by row: X_v(i, t-block) = a_v(i, t) Z(i, t-block), a_v(i, t) in {0, 1}. Its Gram
/// is therefore a masked sum of per-token Grams,
///   (X_v X_vᵀ)(i, j) = sum_t a_v(i, t) a_v(j, t) T_t(i, j),  T_t = Z_t Z_tᵀ,
/// so the T_t (n² w flops each, w = block width) are formed once per tile of (i, j) and shared
/// by every view of every draw in the batch, which then costs n² per token instead of the n² d
/// of a dense product. Centring the columns of X_v is the double centring of its Gram:
/// Xc Xcᵀ = H X Xᵀ H with H = I - 11ᵀ/n, i.e. G(i, j) - r_i - r_j + mean(r), r = row means of G.
#include <Eigen/Core>
#include <vector>

namespace moca::masking::detail {

/// Centred Grams Xc Xcᵀ (n x n, full) of the views X_v = Z (.) a_v as above: Z is n x (T w)
/// with token t owning columns [t w, (t + 1) w); in_view[v] is n x T with entries 0 or 1.
/// `grams` is resized to in_view.size() n x n matrices (existing storage is reused). Runs on
/// `threads` OpenMP threads (0 = OpenMP's default); the result does not depend on the count.
/// Throws std::invalid_argument on inconsistent sizes.
void token_masked_grams(const Eigen::MatrixXd& Z, int tokens,
                        const std::vector<Eigen::MatrixXd>& in_view, int threads,
                        std::vector<Eigen::MatrixXd>& grams);

}  // namespace moca::masking::detail
