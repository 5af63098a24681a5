"""Property tests (issue 38, deliver 8): hypothesis draws shapes, dtypes, layouts, seeds and
ratios; the invariants are mathematical, not values the code under test produced.

* masks: shape, dtype, exact counts where the spec fixes them (or the documented refusal of a
  ratio that would leave a view empty), seed determinism, both views non-empty;
* score: the order of the windows (shared masks), the memory layout and the dtype of X do not
  change the score; spec strings and Policy objects give the same numbers;
* CCA/KCCA: canonical correlations are in [0, 1], descending, invariant to the order of the
  rows and (linear CCA) to an invertible affine map of either view.
"""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import moca  # noqa: E402

FAST = settings(max_examples=25, deadline=None, derandomize=True)
seeds = st.integers(min_value=0, max_value=2**64 - 1)
ratios = st.floats(min_value=0.2, max_value=0.8)


@FAST
@given(C=st.integers(2, 8), P=st.integers(2, 12), pl=st.sampled_from([5, 10, 20]), r=ratios,
       seed=seeds, n=st.integers(1, 6))
def test_random_masks_count_and_determinism(C, P, pl, r, seed, n):
    # the authors' count: keep floor(N * (1 - ratio)) (with moca's 1e-9 guard), mask the rest
    k = C * P - int(np.floor(C * P * (1 - r) + 1e-9))
    if not 0 < k < C * P:  # a mask must leave both views non-empty: refused when made
        with pytest.raises(ValueError, match="at least one masked and one visible"):
            moca.policy(f"random:ratio={r!r}", channels=C, length=P * pl, patch_length=pl)
        return
    p = moca.policy(f"random:ratio={r!r}", channels=C, length=P * pl, patch_length=pl)
    m = p.sample(n, seed=seed)
    assert m.dtype == np.bool_ and m.shape == (n, C, P)
    # random masks k cells of every window (docs/masking.md, "Count rules")
    assert (m.reshape(n, -1).sum(1) == k).all()
    np.testing.assert_array_equal(m, p.sample(n, seed=seed))


@FAST
@given(spec=st.sampled_from(["cross", "sync", "random", "temporal", "sensor:keep=1"]),
       C=st.integers(2, 8), P=st.integers(4, 12), r=ratios, seed=seeds)
def test_masks_split_every_window_into_two_views(spec, C, P, r, seed):
    try:
        p = moca.policy(spec, channels=C, length=P * 20, patch_length=20, ratio=r)
    except ValueError as e:  # the one refusal a valid spec may meet on a small grid
        assert "at least one masked and one visible" in str(e), e
        return
    m = p.sample(8, seed=seed)
    per_window = m.reshape(8, -1).sum(1)
    assert (per_window > 0).all() and (per_window < C * P).all()  # both views non-empty
    np.testing.assert_array_equal(m, p.sample(8, seed=seed))


@pytest.fixture(scope="module")
def data():
    X, y, _, meta = moca.data.load("generator", windows=60, seed=11)
    return X, y, meta["channel_names"]


OPTS = dict(draws=3, pca=6)


@FAST
@given(seed=st.integers(0, 2**32), perm_seed=st.integers(0, 2**32),
       spec=st.sampled_from(["cross", "sync", "random:ratio=0.5"]))
def test_score_ignores_window_order_with_shared_masks(data, seed, perm_seed, spec):
    X, _, names = data
    perm = np.random.default_rng(perm_seed).permutation(len(X))
    a = moca.score(X, [spec], seed=seed, mask_mode="shared", channel_names=names, **OPTS)
    b = moca.score(X[perm], [spec], seed=seed, mask_mode="shared", channel_names=names, **OPTS)
    np.testing.assert_allclose(a.schemes[0]["values"], b.schemes[0]["values"], rtol=1e-9,
                               atol=1e-12)


@FAST
@given(seed=st.integers(0, 2**32), fortran=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64, np.longdouble]))
def test_score_ignores_layout_and_dtype(data, seed, fortran, dtype):
    X, _, names = data
    Xv = X.astype(dtype)
    if fortran:
        Xv = np.asfortranarray(Xv)
    a = moca.score(X, ["cross"], seed=seed, channel_names=names, **OPTS)
    b = moca.score(Xv, ["cross"], seed=seed, channel_names=names, **OPTS)
    assert a.schemes[0]["values"] == b.schemes[0]["values"]  # the same float32 windows
    c = moca.score(X, [moca.policy("cross")], seed=seed, channel_names=names, **OPTS)
    assert c.schemes[0]["values"] == a.schemes[0]["values"]


views = st.tuples(st.integers(12, 40), st.integers(1, 4), st.integers(1, 4), seeds)


def _views(n, p, q, seed):
    rng = np.random.default_rng(seed % 2**32)
    U = rng.standard_normal((n, p))
    M = U[:, :1] @ rng.standard_normal((1, q)) + 0.5 * rng.standard_normal((n, q))
    return U, M


@FAST
@given(v=views, fortran=st.booleans(), perm_seed=st.integers(0, 2**32))
def test_cca_invariances(v, fortran, perm_seed):
    n, p, q, seed = v
    U, M = _views(n, p, q, seed)
    k = min(p, q)
    ref = moca.CCA(n_components=k).fit(U, M).correlations_
    assert ((ref >= -1e-12) & (ref <= 1 + 1e-12)).all() and (np.diff(ref) <= 1e-12).all()
    perm = np.random.default_rng(perm_seed).permutation(n)
    Uo = np.asfortranarray(U[perm]) if fortran else U[perm]
    np.testing.assert_allclose(moca.CCA(n_components=k).fit(Uo, M[perm]).correlations_, ref,
                               rtol=1e-9, atol=1e-10)
    # an invertible affine map of view u (well conditioned) leaves linear CCA unchanged
    A = np.eye(p) + 0.3 * np.random.default_rng(seed % 2**32 + 1).standard_normal((p, p))
    if abs(np.linalg.det(A)) > 0.1:
        np.testing.assert_allclose(moca.CCA(n_components=k).fit(U @ A + 3.0, M).correlations_,
                                   ref, rtol=1e-7, atol=1e-8)


@FAST
@given(v=views, perm_seed=st.integers(0, 2**32),
       kernel=st.sampled_from(["rbf", "laplacian", "linear"]))
def test_kcca_row_order_invariance(v, perm_seed, kernel):
    n, p, q, seed = v
    U, M = _views(n, p, q, seed)
    # sigma fixed: the median heuristic subsamples rows by seed, and row order would change it
    kw = dict(kernel=kernel, n_components=1, method="exact", sigma=1.5)
    ref = moca.KCCA(**kw).fit(U, M).correlations_
    assert 0.0 <= ref[0] <= 1.0 + 1e-12
    perm = np.random.default_rng(perm_seed).permutation(n)
    np.testing.assert_allclose(moca.KCCA(**kw).fit(U[perm], M[perm]).correlations_, ref,
                               rtol=1e-8, atol=1e-10)
