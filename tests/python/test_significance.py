"""Permutation p-values and bootstrap intervals of the canonical correlations: uniform under
independence (Kolmogorov-Smirnov), tiny under a planted correlation, family-wise control of the
step-down rule, bootstrap standard error against the asymptotic formula, equal to the kcca
tool's."""
import json

import numpy as np
import pytest
import scipy.stats

import moca
from conftest import run_tool


def test_p_values_uniform_under_independence():
    # 200 data sets of independent views; KCCA (exact, n = 30) with 49 permutations each.
    # Under H0 the p-value of each component is uniform on {1/50, ..., 1}.
    p1, p2, sd_min = [], [], []
    for s in range(200):
        rng = np.random.default_rng(1000 + s)
        U, M = rng.standard_normal((30, 3)), rng.standard_normal((30, 2))
        k = moca.KCCA(n_components=2, method="exact", permutations=49, seed=s,
                      coefficients=False).fit(U, M)
        p1.append(k.p_values_[0])
        p2.append(k.p_values_[1])
        sd_min.append(k.p_values_step_down_.min())
        assert np.all(k.p_values_step_down_ >= k.p_values_)
    for p in (p1, p2):
        assert scipy.stats.kstest(p, "uniform").pvalue > 0.001
    # family-wise: P(some step-down p <= 0.1) <= 0.1 (+ 3 binomial sd); uncorrected more
    assert np.mean(np.asarray(sd_min) <= 0.1) <= 0.1 + 3 * np.sqrt(0.09 / 200)


def test_p_values_tiny_under_a_planted_correlation():
    # a nonlinear pair (KCCA) and a linear one (CCA), each beside a noise column
    rng = np.random.default_rng(2)
    n = 120
    z = rng.standard_normal((n, 1))
    U = np.hstack([z + 0.1 * rng.standard_normal((n, 1)), rng.standard_normal((n, 1))])
    M = np.hstack([np.sin(2 * z) + 0.1 * rng.standard_normal((n, 1)),
                   rng.standard_normal((n, 1))])
    k = moca.KCCA(n_components=2, permutations=99, seed=1).fit(U, M)
    assert k.p_values_[0] == pytest.approx(0.01)  # the minimum, 1 / (P + 1)
    assert k.p_values_step_down_[0] == pytest.approx(0.01)
    # (a nonlinear relation shows in several kernel pairs, so KCCA's second p-value is not
    # a null one here; linear CCA of a linear pair has exactly one)
    c = moca.CCA(n_components=2, permutations=99).fit(U, np.hstack([z, M[:, 1:]]))
    assert c.p_values_[0] == pytest.approx(0.01) and c.p_values_[1] > 0.05


def test_bootstrap_standard_error_matches_the_asymptotic_formula():
    # one planted pair with population canonical correlation rho = 1/2 (U1 = z + e, M1 = z + f,
    # all unit variances), the rest noise: sd(rho_hat) ~ (1 - rho^2) / sqrt(n)
    rng = np.random.default_rng(3)
    n = 500
    z = rng.standard_normal(n)
    U = np.column_stack([z + rng.standard_normal(n), rng.standard_normal(n)])
    M = np.column_stack([z + rng.standard_normal(n), rng.standard_normal(n)])
    c = moca.CCA(n_components=2, bootstrap=300, seed=1).fit(U, M)
    assert c.bootstrap_ci_.shape == (2, 2)
    lo, hi = c.bootstrap_ci_[0]
    assert lo < 0.5 < hi
    assert c.bootstrap_std_error_[0] == pytest.approx(0.75 / np.sqrt(n), rel=0.3)
    assert np.all(c.bootstrap_ci_[:, 0] <= c.bootstrap_ci_[:, 1])
    none = moca.CCA(n_components=2).fit(U, M)
    assert none.bootstrap_ci_ is None and none.p_values_ is None


def test_significance_equals_the_tool(tmp_path):
    rng = np.random.default_rng(4)
    U, M = rng.standard_normal((60, 3)), rng.standard_normal((60, 2))
    M[:, 0] += U[:, 0] ** 2
    np.save(tmp_path / "u.npy", U)
    np.save(tmp_path / "m.npy", M)
    for flags, est in ((["--components", "2"], moca.KCCA(n_components=2, seed=4,
                                                          permutations=19, bootstrap=20)),
                       (["--cca", "--components", "2"], moca.CCA(n_components=2, seed=4,
                                                                 permutations=19,
                                                                 bootstrap=20))):
        out = run_tool("kcca", "--u", str(tmp_path / "u.npy"), "--m", str(tmp_path / "m.npy"),
                       *flags, "--permutations", "19", "--bootstrap", "20", "--seed", "4",
                       "--json").stdout
        doc = json.loads(out)
        est.fit(U, M)
        np.testing.assert_array_equal(est.p_values_, doc["permutation"]["p_values"])
        np.testing.assert_array_equal(est.p_values_step_down_,
                                      doc["permutation"]["p_values_step_down"])
        np.testing.assert_allclose(est.bootstrap_ci_, doc["bootstrap"]["intervals"],
                                   rtol=0, atol=1e-12)
