// bound_terms(): torch-free part of bound_check (tested without the model layer).
#include <cmath>
#include <stdexcept>

#include "bound_check.hpp"

namespace moca::sim {

BoundTerms bound_terms(const std::vector<std::vector<double>>& h,
                       const std::vector<std::vector<double>>& hg,
                       const std::vector<std::vector<double>>& x, double c) {
  if (h.size() != hg.size() || h.size() != x.size()) {
    throw std::invalid_argument("bound_terms(): row counts differ (" + std::to_string(h.size()) +
                                ", " + std::to_string(hg.size()) + ", " + std::to_string(x.size()) +
                                ")");
  }
  if (!(c > 0.0))
    throw std::invalid_argument("bound_terms(): c (" + std::to_string(c) + ") must be > 0");
  BoundTerms t;
  double sl = 0, sa = 0, se = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    const auto& a = h[i];
    const auto& b = hg[i];
    const auto& v = x[i];
    if (a.size() != b.size() || a.size() != v.size()) {
      throw std::invalid_argument("bound_terms(): row " + std::to_string(i) +
                                  " has vectors of different lengths");
    }
    double na = 0, nb = 0, nv = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      na += a[k] * a[k];
      nb += b[k] * b[k];
      nv += v[k] * v[k];
    }
    if (na <= 0 || nb <= 0 || nv <= 0) continue;
    const double fa = c / std::sqrt(na), fb = c / std::sqrt(nb), fv = c / std::sqrt(nv);
    double l = 0, al = 0, e = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      const double ha = a[k] * fa, hb = b[k] * fb, xv = v[k] * fv;
      l += (ha - xv) * (ha - xv);
      al += ha * hb;
      e += (hb - xv) * (hb - xv);
    }
    sl += l;
    sa += al;
    se += e;
    ++t.windows;
  }
  if (t.windows == 0) throw std::invalid_argument("bound_terms(): no window with non-zero vectors");
  const double n = static_cast<double>(t.windows);
  t.loss = sl / n;
  t.alignment = sa / n;
  t.eps = se / n;
  t.gap = 2 * c * c - 2 * t.alignment;
  t.xi = t.loss - t.gap;
  t.bound = t.eps + 2 * std::sqrt(t.eps * std::max(t.gap, 0.0));
  t.holds = std::abs(t.xi) <= t.bound + 1e-9 * (1 + std::abs(t.loss));
  return t;
}

}  // namespace moca::sim
