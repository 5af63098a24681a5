"""Bad input raises ValueError/TypeError (RuntimeError for I/O) with the tools' messages;
never 'Unknown'."""
import numpy as np
import pytest

import moca


@pytest.fixture
def UM():
    rng = np.random.default_rng(0)
    return rng.standard_normal((30, 3)), rng.standard_normal((30, 2))


@pytest.mark.parametrize("kw,exc,msg", [
    (dict(gamma=-1.0), ValueError, "AnalysisOptions::gamma_u (-1) must be > 0"),
    (dict(gamma=0.0), ValueError, "AnalysisOptions::gamma_u (0) must be > 0"),
    (dict(kernel="cosine"), ValueError, "cosine"),
    (dict(method="fast"), ValueError, "fast"),
    (dict(sigma=-2.0), ValueError, "AnalysisOptions::sigma (-2.0) must be a number > 0 or auto"),
    (dict(sigma="wide"), ValueError, "AnalysisOptions::sigma (wide) must be a number > 0 or auto"),
    (dict(n_components=0), ValueError, "AnalysisOptions::components (0) must be >= 1"),
    (dict(n_components=31), ValueError, "AnalysisOptions::components (31) exceeds n (30)"),
    (dict(rank=0, method="lowrank"), ValueError, "AnalysisOptions::rank (0) must be >= 1"),
    (dict(degree=0, kernel="poly"), ValueError, "AnalysisOptions::degree (0) must be >= 1"),
    (dict(n_components=2.5), TypeError, "n_components (2.5) must be an integer"),
    (dict(gamma="big"), TypeError, "gamma ('big') must be a number"),
    (dict(center="yes"), TypeError, "center ('yes') must be True or False"),
])
def test_kcca_bad_options(UM, kw, exc, msg):
    with pytest.raises(exc) as e:
        moca.KCCA(**kw).fit(*UM)
    assert msg in str(e.value)
    assert "Unknown" not in str(e.value)


def test_kcca_bad_arrays(UM):
    U, M = UM
    with pytest.raises(ValueError, match=r"U has 30 rows, M has 29 \(the views must have"):
        moca.KCCA().fit(U, M[:29])
    bad = U.copy()
    bad[3, 1] = np.nan
    # the data's errors are scikit-learn's check_array's (with or without scikit-learn),
    # after the name of the view
    with pytest.raises(ValueError, match=r"^U: Input contains NaN\.$"):
        moca.KCCA().fit(bad, M)
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match=r"^U: Input contains infinity or a value too large "
                                         r"for dtype\('float64'\)\.$"):
        moca.CCA().fit(bad, M)
    with pytest.raises(ValueError, match=r"^M: Complex data not supported\n"):
        moca.KCCA().fit(U, M.astype(complex))
    with pytest.raises(ValueError, match="^U: could not convert string to float: .*'abc'"):
        moca.KCCA().fit(np.full((30, 2), "abc"), M)
    with pytest.raises(TypeError, match="^U: (Sparse data|A sparse matrix) was passed, but "
                                        "dense data is required"):
        import scipy.sparse
        moca.CCA().fit(scipy.sparse.csr_matrix(U), M)
    with pytest.raises(ValueError, match="requires y to be passed"):
        moca.KCCA().fit(U)
    with pytest.raises(ValueError, match=r"AnalysisOptions::permutations \(-1\) must be >= 0"):
        moca.KCCA(permutations=-1).fit(U, M)
    with pytest.raises(ValueError, match=r"AnalysisOptions::bootstrap \(1\) must be 0 \(none\) or >= 2"):
        moca.CCA(bootstrap=1).fit(U, M)
    with pytest.raises(ValueError, match=r"^U: Expected 2D array, got 1D array instead"):
        moca.KCCA().fit(U[:, 0], M)
    with pytest.raises(ValueError, match=r"^U: Found array with 2 sample\(s\) \(shape=\(2, 3\)\) "
                                         r"while a minimum of 3 is required by KCCA\.$"):
        moca.KCCA().fit(U[:2], M[:2])
    with pytest.raises(ValueError, match="linear_cca|variance"):
        moca.CCA().fit(np.ones((30, 2)), M)
    with pytest.raises(moca.NotFittedError, match="call fit"):
        moca.KCCA().transform(U, M)
    with pytest.raises(ValueError, match="^U: X has 2 features, but KCCA is expecting 3 "
                                         "features as input"):
        moca.KCCA().fit(U, M).transform(U[:, :2])
    with pytest.raises(ValueError, match="fitted with coefficients=False"):
        moca.KCCA(coefficients=False).fit(U, M).score(U, M)


def test_cca_bad_options(UM):
    with pytest.raises(ValueError, match=r"AnalysisOptions::pca \(5\) exceeds min\(d_u, d_m, n - 1\) \(2\)"):
        moca.CCA(pca=5).fit(*UM)
    with pytest.raises(ValueError, match=r"AnalysisOptions::components \(3\) exceeds the 2 canonical"):
        moca.CCA(n_components=3).fit(*UM)
    with pytest.raises(ValueError, match=r"AnalysisOptions::ridge \(-1\) must be >= 0"):
        moca.CCA(ridge=-1).fit(*UM)


def test_policy_errors():
    with pytest.raises(ValueError, match="bogus") as e:
        moca.policy("bogus")
    assert "cross" in str(e.value)  # lists the valid names
    with pytest.raises(ValueError, match="ratio"):
        moca.policy("cross:ratio=1.5")
    with pytest.raises(ValueError, match="patch"):
        moca.policy("cross", patch_length=7)
    with pytest.raises(ValueError, match=r"sample\(\): n \(0\) must be >= 1"):
        moca.policy("cross").sample(0)
    with pytest.raises(TypeError, match="spec"):
        moca.policy(3)
    bad = moca.policy(lambda seed: np.zeros((2, 2), bool), name="bad")
    with pytest.raises(ValueError, match=r"must return a \(6, 10\) boolean array"):
        bad.sample(1)


def test_score_errors():
    X = moca.data.load("generator", windows=40).X
    with pytest.raises(ValueError, match=r"draws \(1\) must be >= 2"):
        moca.score(X, draws=1)
    with pytest.raises(ValueError, match=r"^features \(pixels\) must be one of"):
        moca.score(X, features="pixels")
    with pytest.raises(ValueError, match="estimator"):
        moca.score(X, estimator="svm")
    with pytest.raises(ValueError, match=r"X: must be a 3-d array"):
        moca.score(X[0])
    with pytest.raises(TypeError, match="X: dtype complex64"):
        moca.score(X.astype(np.complex64))  # real dtypes, integers included, are taken
    other = moca.policy("cross", patch_length=10)
    with pytest.raises(ValueError, match="was made for 6 channels x 20 patches of 10 samples"):
        moca.score(X, [other], draws=2)


def test_score_keywords_name_themselves():
    """moca.score's keywords are the rows of ScoreRunOptions' schema (issue 39): a bad value
    names the keyword, never a library struct; the control scores."""
    X = moca.data.load("generator", windows=40).X
    for kw, text in ((dict(estimator="kcca", gamma=0), r"^gamma \(0\) must be > 0$"),
                     (dict(ratio=1.5), r"^ratio \(1.5\) must be in \(0, 1\)$"),
                     (dict(estimator="kcca", sigma=-1.0), r"^sigma \(-1\) must be >= 0$"),
                     (dict(pca=0), r"^pca \(0\) must be >= 1$"),
                     (dict(mask_mode="both"), r"^mask_mode \(both\) must be one of")):
        with pytest.raises(ValueError, match=text):
            moca.score(X, **kw)
    with pytest.raises(TypeError, match="did you mean draws"):
        moca.score(X, draw=3)
    with pytest.raises(TypeError, match="draws must be an int, not str"):
        moca.score(X, draws="3")
    with pytest.raises(TypeError, match="cross_modal must be a bool"):
        moca.score(X, cross_modal=1)
    r = moca.score(X, ["cross"], draws=np.int64(2), estimator="kcca", gamma=np.float32(0.5),
                   ratio=None)
    assert r["cross"]["draws"] == 2 and r.to_dict()["settings"]["ratio"] == 0.75


def test_data_errors(tmp_path):
    with pytest.raises(RuntimeError) as e:
        moca.data.load(str(tmp_path / "missing"))
    assert "missing" in str(e.value)
    np.save(tmp_path / "X.npy", np.zeros((4, 2), dtype=np.float32) + np.nan)
    with pytest.raises(ValueError, match="X.npy"):
        moca.data.load(str(tmp_path))
    with pytest.raises(ValueError, match="coupling"):
        moca.data.load("generator", windows=10, coupling=2.0)
    with pytest.raises(TypeError, match="y: dtype float64"):
        moca.data.synthetic_transitions(np.zeros((4, 6, 200)), np.zeros(4), 3)


# Issue 39: the library names the data spec by its field (DataOptions::data), not by a flag;
# each program prints its flag, moca.data.load its keyword `spec`.
def test_a_spec_of_no_known_format_is_named_spec_in_python_and_data_in_the_tools(tmp_path):
    import os
    import subprocess
    (tmp_path / "notes.txt").write_text("not a data set\n")
    with pytest.raises(ValueError) as e:
        moca.data.load(str(tmp_path))
    assert str(e.value).startswith(f"spec: cannot tell the format of '{tmp_path}'"), str(e.value)
    assert "Options::" not in str(e.value) and "--data" not in str(e.value)
    with pytest.raises(RuntimeError, match=r"^spec: '.*' is not a folder"):
        moca.data.load(str(tmp_path / "missing"))
    tool = os.path.join(os.environ["MOCA_BIN_DIR"], "moca")
    p = subprocess.run([tool, "data", "inspect", "--data", str(tmp_path)], capture_output=True,
                       text=True)
    assert p.returncode == 2
    assert p.stderr.startswith(f"moca: --data: cannot tell the format of '{tmp_path}'"), p.stderr
    assert "--data-format" in p.stderr and "Options::" not in p.stderr
