"""KCCA and CCA against independent references (scikit-learn, a dense SciPy generalised
eigenproblem written here), agreement of the solver methods, transform, and the control: a
shuffled-row fit sits at the null level."""
import numpy as np
import pytest
import scipy.linalg

import moca
from conftest import correlated_views


def centred(K):
    n = K.shape[0]
    H = np.eye(n) - np.ones((n, n)) / n
    return H @ K @ H


def rbf_gram(X, sigma):
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * sigma**2))


def dense_kcca(Ku, Km, gamma, k):
    """Paper's regularised KCCA as a dense symmetric-definite generalised eigenproblem:
    K_u K_m beta = rho (K_u^2 + gamma K_u) alpha and back, eliminating alpha:
    K_m S_u K_m beta = rho^2 (K_m^2 + gamma K_m) beta with S_u = K_u (K_u + gamma I)^{-1},
    solved on the complement of the constant vector (the centred Grams' null space)."""
    n = Ku.shape[0]
    Su = Ku @ np.linalg.inv(Ku + gamma * np.eye(n))
    A = Km @ Su @ Km
    B = Km @ Km + gamma * Km
    Q = scipy.linalg.null_space(np.ones((1, n)))  # n x (n - 1) orthonormal, orthogonal to 1
    w = scipy.linalg.eigh(Q.T @ A @ Q, Q.T @ B @ Q, eigvals_only=True)
    return np.sqrt(np.clip(np.sort(w)[::-1][:k], 0, None))


def test_linear_cca_matches_sklearn(views):
    from sklearn.cross_decomposition import CCA as SkCCA
    U, M = views
    sk = SkCCA(n_components=3, scale=False, max_iter=5000, tol=1e-12).fit(U, M)
    xs, ys = sk.transform(U, M)
    ref = [abs(np.corrcoef(xs[:, i], ys[:, i])[0, 1]) for i in range(3)]
    ours = moca.CCA(n_components=3).fit(U, M).correlations_
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-6)


def test_cca_weights_and_transform_match_sklearn(views):
    # sklearn's CCA scores are the canonical variates up to sign and scale; ours are
    # (U - mean) @ weights_u_ with unit sum of squares and correlation rho_i between the views.
    from sklearn.cross_decomposition import CCA as SkCCA
    U, M = views
    sk = SkCCA(n_components=2, scale=False, max_iter=5000, tol=1e-12).fit(U, M)
    xs, ys = sk.transform(U, M)
    c = moca.CCA(n_components=2).fit(U, M)
    a, b = c.transform(U, M)
    assert a.shape == (U.shape[0], 2) and c.weights_u_.shape == (U.shape[1], 2)
    for i in range(2):
        assert abs(abs(np.corrcoef(a[:, i], xs[:, i])[0, 1]) - 1) < 1e-6
        assert abs(abs(np.corrcoef(b[:, i], ys[:, i])[0, 1]) - 1) < 1e-6
        assert abs(np.corrcoef(a[:, i], b[:, i])[0, 1] - c.correlations_[i]) < 1e-10
        assert abs(a[:, i] @ a[:, i] - 1) < 1e-10
    assert abs(a[:, 0] @ a[:, 1]) < 1e-10
    with pytest.raises(ValueError, match="weights=False"):
        moca.CCA(n_components=2, weights=False).fit(U, M).transform(U, M)
    with pytest.raises(ValueError, match="U: X has 5 features, but CCA is expecting 6"):
        c.transform(U[:, :-1], M)


def test_linear_kernel_kcca_equals_ridge_cca(views):
    # kcca.md: linear-kernel KCCA with gamma equals linear CCA with ridge gamma
    U, M = views
    k = moca.KCCA(kernel="linear", gamma=0.5, n_components=3).fit(U, M).correlations_
    c = moca.CCA(n_components=3, ridge=0.5).fit(U, M).correlations_
    np.testing.assert_allclose(k, c, rtol=0, atol=1e-9)


def test_rbf_kcca_matches_dense_eigenproblem(small_views):
    U, M = small_views
    m = moca.KCCA(kernel="rbf", sigma=1.5, gamma=0.1, n_components=4).fit(U, M)
    ref = dense_kcca(centred(rbf_gram(U, 1.5)), centred(rbf_gram(M, 1.5)), 0.1, 4)
    np.testing.assert_allclose(m.correlations_, ref, rtol=0, atol=1e-8)
    assert m.status_ == "success"


def test_methods_agree(small_views):
    U, M = small_views
    kw = dict(kernel="rbf", sigma=1.0, gamma=0.2, n_components=3)
    exact = moca.KCCA(method="exact", **kw).fit(U, M).correlations_
    it = moca.KCCA(method="iterative", **kw).fit(U, M).correlations_
    low = moca.KCCA(method="lowrank", rank=40, **kw).fit(U, M).correlations_  # full rank
    np.testing.assert_allclose(it, exact, atol=1e-8)
    np.testing.assert_allclose(low, exact, atol=1e-6)


def test_auto_method_picks_the_iterative_solver_for_few_components():
    # auto = iterative for n >= 200 and n_components <= n / 10, else exact; the same
    # correlations either way (the exact solver is the independent computation here)
    U, M = correlated_views(400, 6, 6, seed=11, shared=2, noise=0.5)
    kw = dict(kernel="rbf", sigma=2.0, gamma=0.1)
    auto = moca.KCCA(n_components=3, **kw).fit(U, M)
    exact = moca.KCCA(method="exact", n_components=3, **kw).fit(U, M)
    assert auto.solver_ == "iterative" and exact.solver_ == "exact"
    np.testing.assert_allclose(auto.correlations_, exact.correlations_, rtol=0, atol=1e-8)
    assert moca.KCCA(n_components=41, **kw).fit(U, M).solver_ == "exact"
    assert moca.KCCA(n_components=1, **kw).fit(U[:150], M[:150]).solver_ == "exact"


def test_alpha_normalisation_and_transform(small_views):
    # alpha^T (K^2 + gamma K) alpha = 1 on the centred Gram, and transform(U) = K_c alpha
    U, M = small_views
    m = moca.KCCA(kernel="rbf", sigma=1.2, gamma=0.1, n_components=2).fit(U, M)
    Ku = centred(rbf_gram(U, 1.2))
    for i in range(2):
        a = m.alpha_[:, i]
        assert abs(a @ (Ku @ Ku + 0.1 * Ku) @ a - 1) < 1e-8
    zu, zm = m.transform(U, M)
    np.testing.assert_allclose(zu, Ku @ m.alpha_, atol=1e-9)
    np.testing.assert_allclose(zm, centred(rbf_gram(M, 1.2)) @ m.beta_, atol=1e-9)
    # and the regularised objective: alpha^T K_u K_m beta = rho
    Km = centred(rbf_gram(M, 1.2))
    np.testing.assert_allclose(np.diag(m.alpha_.T @ Ku @ Km @ m.beta_), m.correlations_,
                               atol=1e-8)


def test_layouts_and_dtypes_give_the_same_fit(views):
    U, M = views
    a = moca.KCCA(n_components=2).fit(U, M).correlations_
    b = moca.KCCA(n_components=2).fit(np.asfortranarray(U), np.asfortranarray(M)).correlations_
    np.testing.assert_array_equal(a, b)
    c = moca.KCCA(n_components=2).fit(U.astype(np.float32), M.astype(np.float32)).correlations_
    np.testing.assert_allclose(c, a, atol=1e-5)


def test_shuffled_rows_control():
    """Control: with the rows of M permuted there is no signal; KCCA's rho_1 falls from its
    signal value to the level of independent views of the same size (what the scorer calls the
    null level), while the CCA's sigma_1 falls to the Wachter edge it reports."""
    U, M = correlated_views(300, 8, 8, seed=7, shared=2, noise=0.7)
    rng = np.random.default_rng(3)
    perm = rng.permutation(len(M))
    k = moca.KCCA(kernel="rbf", gamma=0.1, n_components=1)
    signal = k.fit(U, M).correlations_[0]
    shuffled = k.fit(U, M[perm]).correlations_[0]
    # null reference: views that are independent by construction (fresh noise)
    nulls = [moca.KCCA(kernel="rbf", gamma=0.1, n_components=1).fit(
        U, np.random.default_rng(s).standard_normal(M.shape)).correlations_[0]
        for s in range(5)]
    # measured: signal 0.97, shuffled 0.60, independent views 0.65-0.67
    assert signal > max(nulls) + 0.2
    assert shuffled < max(nulls) + 0.05
    assert abs(shuffled - np.mean(nulls)) < 0.15
    c = moca.CCA(n_components=1)
    assert c.fit(U, M).correlations_[0] > 0.8
    assert c.fit(U, M[perm]).correlations_[0] < c.null_level_ + 0.1


def test_fit_releases_the_gil():
    """While a fit runs in a thread the main thread keeps running Python code (if the GIL were
    held for the whole solve, the loop below would get a tick or two)."""
    import threading
    import time
    U, M = correlated_views(1200, 20, 20, seed=0)
    done = threading.Event()

    def work():
        # Fits until 0.3 s have passed, so that the check means something on a fast machine too
        # (one fit took 0.09-0.2 s on the 2-core VM, depending on its BLAS kernels).
        start = time.perf_counter()
        while time.perf_counter() - start < 0.3:
            moca.KCCA(n_components=3).fit(U, M)
        done.set()

    t0 = time.perf_counter()
    ticks = 0
    th = threading.Thread(target=work)
    th.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.002)
    th.join()
    elapsed = time.perf_counter() - t0
    assert elapsed >= 0.3
    assert ticks > 0.25 * elapsed / 0.002
