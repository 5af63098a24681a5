"""scikit-learn's estimator contract (check_estimator with the version's own API, clone,
get/set_params, pickling, GridSearchCV with GroupKFold), the data validation against
scikit-learn's check_array and the numpy rules used without scikit-learn, and the held-out
score, against independent computations (NumPy correlations of the canonical variates, an
exhaustive loop over fit + score). Runs on Debian's scikit-learn 1.2 and on the latest release."""
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import moca
from conftest import correlated_views
from moca.estimators import expected_failed_checks

sklearn = pytest.importorskip("sklearn")
from sklearn.base import BaseEstimator, TransformerMixin, clone  # noqa: E402
from sklearn.exceptions import SkipTestWarning  # noqa: E402
from sklearn.model_selection import GridSearchCV, GroupKFold  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.utils import estimator_checks  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402
from sklearn.utils.validation import check_array  # noqa: E402

# check_estimator's API: 1.6 added expected_failed_checks= and on_fail=None (results returned);
# before, expected failures were the estimator's _xfail_checks tag, skipped with a warning.
SKLEARN_VERSION = tuple(int(p) for p in sklearn.__version__.split(".")[:2])
NEW_API = SKLEARN_VERSION >= (1, 6)

ESTIMATORS = [moca.KCCA(), moca.KCCA(sigma=1.0), moca.CCA(),
              moca.KCCA(kernel="linear", n_components=1), moca.CCA(ridge=0.1, seed=3),
              moca.KCCA(kernel="laplacian", method="lowrank", rank=5, n_components=2,
                        sigma=2.0)]

# Checks that check_estimator skips by itself when an optional package it wants is missing; any
# other skip fails the test.
OPTIONAL_SKIPS = {"check_array_api_input"}  # array-api-strict / array-api-compat


@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_check_estimator(est):
    expected = expected_failed_checks(est)
    if NEW_API:
        results = check_estimator(est, expected_failed_checks=expected, on_fail=None,
                                  on_skip=None)
        by_status = {}
        for r in results:
            by_status.setdefault(r["status"], []).append(r)
        failed = [f"{r['check_name']}: {type(r['exception']).__name__}: {r['exception']}"
                  for r in by_status.get("failed", [])]
        assert not failed, "\n".join(failed)
        # every expected failure fails (a stale entry would hide a check that now passes)
        xfail = {r["check_name"] for r in by_status.get("xfail", [])}
        assert xfail == set(expected), (xfail, set(expected))
        skipped = {r["check_name"] for r in by_status.get("skipped", [])}
        assert skipped <= OPTIONAL_SKIPS | set(expected), skipped
        assert len(by_status.get("passed", [])) > 40
    else:
        # 1.2: raises on the first failing check; the _xfail_checks tag's checks are skipped
        # with a SkipTestWarning that quotes the reason
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_estimator(est)
        skips = [str(w.message) for w in caught if issubclass(w.category, SkipTestWarning)]
        for name, reason in expected.items():
            assert any(name in m and reason in m for m in skips), (name, skips)
        assert est._get_tags()["_xfail_checks"] == expected


@pytest.mark.parametrize("est", ESTIMATORS, ids=repr)
def test_expected_failures_fail_for_their_reason(est):
    """Each expected failure is run by hand: it fails, and for the reason given; in the
    two-view form scikit-learn uses for its own cross-decomposition estimators (CCA, PLS*) the
    pair-returning checks pass."""
    for name, reason in expected_failed_checks(est).items():
        check = getattr(estimator_checks, name)
        if "CROSS_DECOMPOSITION" in reason:
            with pytest.raises(AssertionError):
                check(type(est).__name__, clone(est))
            check("CCA", clone(est))  # the two-view form passes
        elif "median heuristic" in reason:
            assert est.sigma == "auto"
            with pytest.raises((ValueError, AssertionError), match="median pairwise distance"):
                check(type(est).__name__, clone(est))
            check(type(est).__name__, clone(est).set_params(sigma=1.0))
        else:
            pytest.fail(f"no test for the reason of {name}: {reason}")


def test_estimators_derive_from_sklearn_and_carry_tags():
    for est in (moca.KCCA(), moca.CCA()):
        assert isinstance(est, BaseEstimator) and isinstance(est, TransformerMixin)
        if NEW_API:
            from sklearn.utils import get_tags
            tags = get_tags(est)
            assert tags.target_tags.required and tags.target_tags.multi_output
            assert tags.transformer_tags is not None
            assert tags.transformer_tags.preserves_dtype == ["float64"]
        else:
            tags = est._get_tags()
            assert tags["requires_y"] and tags["multioutput"]
    # the reasons: KCCA with the median heuristic also has the bandwidth ones, CCA only the
    # pair (scikit-learn already runs the two-view form for a class named CCA)
    assert set(expected_failed_checks(moca.KCCA())) > set(expected_failed_checks(
        moca.KCCA(sigma=1.0)))
    assert expected_failed_checks(moca.CCA()) == {}


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


def test_pickle_round_trip(views):
    U, M = views
    for est in (moca.KCCA(n_components=2, sigma=1.5, seed=4), moca.CCA(n_components=2)):
        unfitted = pickle.loads(pickle.dumps(est))
        assert unfitted.get_params() == est.get_params() and type(unfitted) is type(est)
        est.fit(U[:150], M[:150])
        back = pickle.loads(pickle.dumps(est))
        for a, b in zip(est.transform(U[150:], M[150:]), back.transform(U[150:], M[150:])):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(back.correlations_, est.correlations_)
        assert back.n_features_in_ == U.shape[1] and back.n_features_m_ == M.shape[1]


def test_feature_names_of_a_data_frame(views):
    pd = pytest.importorskip("pandas")
    U, M = views
    cols = [f"u{i}" for i in range(U.shape[1])]
    c = moca.CCA().fit(pd.DataFrame(U, columns=cols), pd.Series(M[:, 0]))
    assert list(c.feature_names_in_) == cols and c.n_features_in_ == U.shape[1]
    assert c.n_features_m_ == 1
    with pytest.raises(ValueError, match="^U: The feature names should match those that were "
                                         "passed during fit"):
        c.transform(pd.DataFrame(U[:, ::-1], columns=cols[::-1]))
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        c.transform(U)


def test_second_view_positionally_as_M_or_as_y(views):
    U, M = views
    ref = moca.CCA(n_components=2).fit(U, M)
    for kw in ({"M": M}, {"y": M}):
        c = moca.CCA(n_components=2).fit(U, **kw)
        np.testing.assert_array_equal(c.correlations_, ref.correlations_)
        assert c.score(U, **kw) == ref.score(U, M)
        for a, b in zip(c.transform(U, **kw), ref.fit_transform(U, **kw)):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ref.transform(M=M), ref.transform(y=M))
    for method in ("fit", "score", "transform", "fit_transform"):
        with pytest.raises(ValueError, match=rf"CCA.{method}\(\): give the second view as M "
                                             "or y, not both"):
            getattr(ref, method)(U, M, M=M)


# Bad inputs of fit, each with the array scikit-learn's check_array sees and the view it is.
def _bad_inputs():
    U, M = correlated_views(12, 3, 2, seed=0)
    nan, inf = U.copy(), M.copy()
    nan[3, 1] = np.nan
    inf[5, 0] = -np.inf
    return {
        "NaN in U": ("U", nan, M, {}),
        "Inf in M": ("M", U, inf, {}),
        "complex U": ("U", U.astype(complex), M, {}),
        "complex M": ("M", U, M.astype(np.complex64), {}),
        "1-d U": ("U", U[:, 0], M, {"ensure_2d": True}),
        "scalar U": ("U", np.float64(2.0), M, {"ensure_2d": True}),
        "3-d U": ("U", U.reshape(12, 3, 1), M, {}),
        "3-d M": ("M", U, M.reshape(12, 2, 1), {}),
        "1 sample": ("U", U[:1], M[:1], {"ensure_min_samples": 3}),
        "2 samples": ("U", U[:2], M[:2], {"ensure_min_samples": 3}),
        "0 samples": ("U", U[:0], M[:0], {"ensure_min_samples": 3}),
        "0 features U": ("U", U[:, :0], M, {}),
        "0 features M": ("M", U, M[:, :0], {}),
        "strings": ("U", np.full((12, 2), "abc"), M, {}),
        "object dict": ("U", np.array([[{"a": 1}, 2.0]] * 12, dtype=object), M, {}),
    }


def _check_array_error(a, cls, ensure_2d=False, ensure_min_samples=1):
    """scikit-learn's own error for an array (the expected answer)."""
    with pytest.raises((ValueError, TypeError)) as e:
        check_array(a, dtype=[np.float64, np.float32], ensure_2d=ensure_2d,
                    ensure_min_samples=ensure_min_samples, estimator=cls(), input_name="")
    return e.type, str(e.value)


@pytest.mark.parametrize("case", list(_bad_inputs()))
@pytest.mark.parametrize("cls", [moca.KCCA, moca.CCA])
def test_bad_input_is_scikit_learns_error_naming_the_view(cls, case):
    view, U, M, kw = _bad_inputs()[case]
    etype, msg = _check_array_error(U if view == "U" else M, cls, **kw)
    with pytest.raises(etype) as e:
        cls().fit(U, M)
    assert str(e.value) == f"{view}: {msg}"
    assert etype is ValueError or case in ("object dict",)


def test_wrong_shapes_after_fit_name_the_view(views):
    U, M = views
    for est in (moca.KCCA(n_components=2), moca.CCA(n_components=2)):
        est.fit(U, M)
        name = type(est).__name__
        # the words of scikit-learn's feature-count check (X, y: its names of the two places)
        with pytest.raises(ValueError, match=rf"^U: X has 2 features, but {name} is expecting "
                                             r"6 features as input\.$"):
            est.transform(U[:, :2])
        with pytest.raises(ValueError, match=rf"^M: y has 4 features, but {name} is expecting "
                                             r"5 features as input\.$"):
            est.transform(M=M[:, :4])
        with pytest.raises(ValueError, match=r"^U: Input contains NaN\.$"):
            est.score(np.full_like(U, np.nan), M)
        with pytest.raises(ValueError, match=r"^U has 200 rows, M has 199 \(the views must"):
            est.transform(U, M[:199])
    with pytest.raises(ValueError, match=r"^U has 200 rows, M has 199 \(the views must"):
        moca.KCCA().fit(U, M[:199])


# Without scikit-learn (import blocked), the numpy rules must give scikit-learn's errors.
_NO_SKLEARN = r"""
import pickle, sys
sys.modules["sklearn"] = None  # import sklearn raises ImportError
import numpy as np
import moca
from moca import estimators
assert not estimators._HAVE_SKLEARN and estimators._sk_validate_data is None
assert moca.KCCA.__mro__[1:] == (estimators._TwoViewEstimator, estimators._ParamsContract,
                                 object)
cases = pickle.loads(sys.stdin.buffer.read())
out = {}
for case, (view, U, M, kw) in cases.items():
    for cls in (moca.KCCA, moca.CCA):
        try:
            cls().fit(U, M)
            out[case, cls.__name__] = None
        except Exception as e:
            out[case, cls.__name__] = (type(e).__name__, str(e))
U, M = cases["NaN in U"][1:3]
U = np.nan_to_num(U)
k = moca.KCCA(n_components=2, sigma=1.0).fit(U, M)
out["params"] = k.get_params()
out["repr"] = repr(moca.KCCA(gamma=0.5))
out["transform"] = k.transform(U, M)
for bad in (U[:, :2], ):
    try:
        k.transform(bad)
    except ValueError as e:
        out["n_features"] = str(e)
try:
    moca.KCCA().transform(U)
except moca.NotFittedError as e:
    out["not_fitted"] = (isinstance(e, ValueError), isinstance(e, AttributeError))
sys.stdout.buffer.write(pickle.dumps(out))
"""


def test_without_sklearn_the_same_rules_and_messages():
    cases = _bad_inputs()
    p = subprocess.run([sys.executable, "-c", _NO_SKLEARN], input=pickle.dumps(cases),
                       capture_output=True, check=False)
    assert p.returncode == 0, p.stderr.decode()
    out = pickle.loads(p.stdout)
    # messages whose wording differs between scikit-learn versions: the type and the gist
    version_dependent = {"3-d U": "Found array with dim 3", "3-d M": "Found array with dim 3"}
    for case, (view, U, M, kw) in cases.items():
        for cls in (moca.KCCA, moca.CCA):
            etype, msg = _check_array_error(U if view == "U" else M, cls, **kw)
            name = cls.__name__
            got = out[case, name]
            assert got is not None and got[0] == etype.__name__, (case, got)
            if case in version_dependent:
                assert got[1].startswith(f"{view}: {version_dependent[case]}"), got
            else:
                assert got[1] == f"{view}: {msg}", (case, got)
    U, M = cases["NaN in U"][1:3]
    U = np.nan_to_num(U)
    k = moca.KCCA(n_components=2, sigma=1.0).fit(U, M)
    assert out["params"] == k.get_params()
    assert out["repr"] == repr(moca.KCCA(gamma=0.5)) == "KCCA(gamma=0.5)"
    for a, b in zip(out["transform"], k.transform(U, M)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError) as e:
        k.transform(U[:, :2])
    assert out["n_features"] == str(e.value) == ("U: X has 2 features, but KCCA is expecting "
                                                 "3 features as input.")
    assert out["not_fitted"] == (True, True)


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
    grid = {"gamma": [0.001, 0.01, 0.1, 1.0, 10.0], "sigma": [0.5, 2.0]}
    base = moca.KCCA(n_components=2, kernel="laplacian")
    gs = GridSearchCV(base, grid, cv=GroupKFold(4)).fit(U, M, groups=groups)
    # exhaustive loop in GridSearchCV's candidate order (ParameterGrid: keys sorted, the last
    # varying fastest), the held-out score computed with NumPy from the variates: the mean over
    # components of the Pearson correlation of each pair
    means = []
    for g in grid["gamma"]:
        for sigma in grid["sigma"]:
            s = []
            for a, b in GroupKFold(4).split(U, M, groups):
                est = moca.KCCA(n_components=2, kernel="laplacian", sigma=sigma, gamma=g)
                zu, zm = est.fit(U[a], M[a]).transform(U[b], M[b])
                s.append(_corr_mean(zu, zm))
            means.append(np.mean(s))
    np.testing.assert_allclose(gs.cv_results_["mean_test_score"], means, rtol=0, atol=1e-12)
    best = gs.cv_results_["params"][int(np.argmax(means))]
    assert gs.best_params_ == best
    assert isinstance(gs.best_estimator_, moca.KCCA)
    assert gs.best_estimator_.get_params() == base.set_params(**best).get_params()
    # refit on all rows: the same fit as by hand
    np.testing.assert_array_equal(gs.best_estimator_.correlations_,
                                  clone(base).set_params(**best).fit(U, M).correlations_)
