"""scikit-learn's estimator contract (clone, get/set_params, check_estimator, GridSearchCV with
GroupKFold) and the held-out score, against independent computations (NumPy correlations of the
canonical variates, an exhaustive loop over fit + score)."""
import functools

import numpy as np
import pytest

import moca
from conftest import correlated_views

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, GroupKFold  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

# Checks of check_estimator that cannot apply to a two-view estimator, with the reason.
NOT_APPLICABLE = {
    # It asserts that the second parameter of fit/score/fit_transform is *named* y or Y; moca
    # names the views U and M. Every positional call (what scikit-learn's tools make) works,
    # and the check's own calls succeed before its naming assertion.
    "check_fit_score_takes_y": "second argument is named M (the second view), not y",
}
# Checks that sklearn runs in their two-view form only for the estimators it names in
# CROSS_DECOMPOSITION (its own CCA, PLS*): fit_transform(U, M) returns the pair (Zu, Zm) as
# sklearn.cross_decomposition does, so these run under the name "CCA" for KCCA too (moca.CCA
# already has that name), which makes them compare transform(U, M) with fit_transform(U, M).
TWO_VIEW_FORM = {"check_transformer_general", "check_transformer_data_not_an_array"}

# The default bandwidth (sigma="auto", the median heuristic) is undefined when at least half the
# rows of a view coincide, as for the 0/1 labels these two checks pass as y: the library raises
# "median pairwise distance is 0 ...; set sigma explicitly". They run with sigma=1 below.
AUTO_SIGMA_NOT_APPLICABLE = {"check_fit2d_1feature", "check_fit_check_is_fitted"}

ESTIMATORS = [moca.KCCA(), moca.KCCA(sigma=1.0), moca.CCA(),
              moca.KCCA(kernel="linear", n_components=1), moca.CCA(ridge=0.1, seed=3),
              moca.KCCA(kernel="laplacian", method="lowrank", rank=5, n_components=2,
                        sigma=2.0)]


def _checks():
    for est in ESTIMATORS:
        for e, check in check_estimator(est, generate_only=True):
            name = getattr(check.func, "__name__", str(check.func))
            kw = ",".join(f"{k}={v}" for k, v in sorted(check.keywords.items()))
            yield pytest.param(e, check, id=f"{e!r}-{name}" + (f"[{kw}]" if kw else ""))


@pytest.mark.parametrize("est,check", list(_checks()))
def test_check_estimator(est, check):
    name = check.func.__name__
    if name in NOT_APPLICABLE:
        pytest.skip(NOT_APPLICABLE[name])
    if (name in AUTO_SIGMA_NOT_APPLICABLE and getattr(est, "sigma", None) == "auto"
            and est.kernel in ("rbf", "laplacian")):
        # (check_fit2d_1feature re-raises it as an AssertionError naming the messages it wants)
        with pytest.raises((ValueError, AssertionError), match="median pairwise distance is 0"):
            check(est)
        return
    if name in TWO_VIEW_FORM:
        check.func("CCA", est, **check.keywords)
    else:
        check(est)


def test_not_applicable_checks_fail_only_on_the_name():
    # the one check listed above fails on the parameter name and nothing else
    from sklearn.utils.estimator_checks import check_fit_score_takes_y
    with pytest.raises(AssertionError, match="Expected y or Y as second argument"):
        check_fit_score_takes_y("KCCA", moca.KCCA())


def test_clone_and_params_round_trip():
    k = moca.KCCA(kernel="poly", sigma=1.5, gamma=0.3, n_components=2, degree=3, seed=7,
                  permutations=9, bootstrap=5)
    c = clone(k)
    assert c is not k and c.get_params() == k.get_params()
    assert c.get_params()["gamma"] == 0.3 and c.get_params()["degree"] == 3
    assert set(k.get_params()) == {
        "kernel", "sigma", "gamma", "center", "n_components", "method", "rank", "gamma_u",
        "gamma_m", "degree", "coef0", "seed", "coefficients", "permutations", "bootstrap"}
    assert k.set_params(gamma=0.5, sigma="auto") is k and k.gamma == 0.5 and k.sigma == "auto"
    with pytest.raises(ValueError, match="Invalid parameter 'gama' for estimator"):
        k.set_params(gama=1)
    # parameters are stored unchanged, not validated or converted, until fit
    assert moca.KCCA(gamma=np.float32(2)).gamma.dtype == np.float32
    assert moca.CCA(pca=None).get_params() == {"n_components": 1, "pca": None, "ridge": 0.0,
                                               "weights": True, "permutations": 0,
                                               "bootstrap": 0, "seed": 0}
    assert repr(moca.KCCA(gamma=0.5)) == "KCCA(gamma=0.5)"
    # nested: inside a pipeline, and a fitted clone is unfitted
    p = Pipeline([("cca", moca.KCCA())]).set_params(cca__gamma=0.25)
    assert p.get_params()["cca__gamma"] == 0.25
    U, M = correlated_views(50, 3, 2, seed=0)
    fitted = moca.KCCA().fit(U, M)
    assert not hasattr(clone(fitted), "correlations_")


def test_transform_either_view(views):
    U, M = views
    k = moca.KCCA(n_components=2).fit(U, M)
    zu, zm = k.fit_transform(U, M)
    np.testing.assert_array_equal(k.transform(U), zu)
    np.testing.assert_array_equal(k.transform(M=M), zm)
    c = moca.CCA(n_components=2).fit(U, M)
    np.testing.assert_allclose(c.transform(M=M[:7]), (M[:7] - M.mean(0)) @ c.weights_m_)
    # a 1-d second view is one column
    np.testing.assert_array_equal(moca.CCA().fit(U, M[:, 0]).correlations_,
                                  moca.CCA().fit(U, M[:, :1]).correlations_)


def _corr_mean(a, b):
    return np.mean([np.corrcoef(a[:, i], b[:, i])[0, 1] for i in range(a.shape[1])])


def test_score_on_training_rows(views):
    U, M = views
    # linear CCA without ridge: the training variates' correlations are the fitted ones
    c = moca.CCA(n_components=3).fit(U, M)
    assert abs(c.score(U, M) - c.correlations_.mean()) < 1e-12
    # KCCA: the Pearson correlations of the variates K_c alpha, K_c beta (NumPy), which exceed
    # the regularised correlations (their denominators carry gamma alpha^T K alpha)
    k = moca.KCCA(method="exact", n_components=3, sigma=2.0).fit(U, M)
    n = len(U)
    H = np.eye(n) - 1.0 / n

    def gram(X):
        d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        return H @ np.exp(-d2 / 8.0) @ H

    ref = _corr_mean(gram(U) @ k.alpha_, gram(M) @ k.beta_)
    assert abs(k.score(U, M) - ref) < 1e-9
    assert k.score(U, M) >= k.correlations_.mean()


def test_held_out_score_and_shuffled_control():
    U, M = correlated_views(600, 6, 5, seed=0, shared=2, noise=1.0)
    tr, te = slice(0, 300), slice(300, 600)
    perm = np.random.default_rng(0).permutation(300)
    for est in (moca.CCA(n_components=2), moca.KCCA(n_components=2, gamma=0.1)):
        est.fit(U[tr], M[tr])
        train, test = est.score(U[tr], M[tr]), est.score(U[te], M[te])
        null = est.score(U[te], M[te][perm])
        # independent test rows: lower than on the training rows, far above the null; shuffled
        # test rows: the correlation of independent variates, 0 +- 1/sqrt(300) per component.
        # Measured: CCA 0.82 (train), 0.76 (test), 0.03 (shuffled); KCCA 0.92, 0.65, 0.04.
        assert test < train
        assert test > 0.5
        assert abs(null) < 0.15, (type(est).__name__, train, test, null)


def test_grid_search_with_group_kfold_picks_the_exhaustive_choice():
    rng = np.random.default_rng(5)
    U, M = correlated_views(240, 4, 3, seed=5, shared=1, noise=1.5)
    M[:, 0] += np.sin(2 * U[:, 0])
    groups = np.repeat(np.arange(12), 20)  # 12 "subjects" of 20 rows
    rng.shuffle(groups)
    grid = {"gamma": [0.001, 0.01, 0.1, 1.0, 10.0]}
    base = moca.KCCA(n_components=2, sigma=1.0)
    gs = GridSearchCV(base, grid, cv=GroupKFold(4)).fit(U, M, groups=groups)
    # exhaustive loop: mean held-out score over the same folds
    means = []
    for g in grid["gamma"]:
        s = [moca.KCCA(n_components=2, sigma=1.0, gamma=g).fit(U[a], M[a]).score(U[b], M[b])
             for a, b in GroupKFold(4).split(U, M, groups)]
        means.append(np.mean(s))
    assert gs.best_params_["gamma"] == grid["gamma"][int(np.argmax(means))]
    np.testing.assert_allclose(gs.cv_results_["mean_test_score"], means, rtol=0, atol=1e-12)
    assert isinstance(gs.best_estimator_, moca.KCCA)
