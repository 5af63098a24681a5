"""Issue 38's Python contracts: `compare` and `score` answer in the call's order for any mix of
spec strings and Policy objects (item 2); a name that several scored schemes share is refused,
not resolved to the first (8); out-of-range integers are ValueErrors naming the keyword, any
real dtype is taken (5); `Policy.sample` takes no windows it would ignore (6); a policy of
another grid is refused before scoring."""
import numpy as np
import pytest

import moca


@pytest.fixture(scope="module")
def X():
    return moca.data.load("generator", windows=80, seed=1)[0]


OPTS = dict(seed=2, draws=4, pca=10)


@pytest.fixture(scope="module")
def strings(X):
    # two spec strings: the library's order is the call's (the CLI's order, test_cli.py)
    return moca.compare(X, "cross", "sync", **OPTS)


@pytest.mark.parametrize("a,b", [(lambda: moca.policy("cross"), lambda: "sync"),
                                 (lambda: "cross", lambda: moca.policy("sync")),
                                 (lambda: moca.policy("cross"), lambda: moca.policy("sync"))])
def test_compare_keeps_call_order(X, strings, a, b):
    d = moca.compare(X, a(), b(), **OPTS)
    assert (d["a"], d["b"]) == (strings["a"], strings["b"])
    assert d["difference"] == strings["difference"]
    assert d["ci"] == strings["ci"] and d["p_value"] == strings["p_value"]


def test_compare_reversed_is_negated(X, strings):
    # sync - cross, with the Policy first in the library's order and last in the call's
    d = moca.compare(X, "sync", moca.policy("cross"), **OPTS)
    assert (d["a"], d["b"]) == (strings["b"], strings["a"])
    assert d["difference"] == -strings["difference"]
    assert d["ci"] == [-strings["ci"][1], -strings["ci"][0]]
    assert d["p_value"] == strings["p_value"]


def test_score_keeps_call_order(X):
    r = moca.score(X, [moca.policy("random:ratio=0.5"), "cross", moca.policy("sync"), "temporal"],
                   **OPTS)
    assert [s["scheme"] for s in r.schemes] == ["random", "cross", "sync", "temporal"]
    pairs = [(c["a"].split(":")[0], c["b"].split(":")[0]) for c in r.comparisons]
    assert pairs == [("random", "cross"), ("random", "sync"), ("random", "temporal"),
                     ("cross", "sync"), ("cross", "temporal"), ("sync", "temporal")]
    # each comparison is the difference of the two scores' per-draw values, a - b
    for c in r.comparisons:
        va, vb = r[c["a"]]["values"], r[c["b"]]["values"]
        mean = sum(x - y for x, y in zip(va, vb)) / len(va)
        assert c["difference"] == pytest.approx(mean, rel=1e-12, abs=1e-15)


def test_ambiguous_name_is_refused(X):
    r = moca.score(X, ["cross:ratio=0.5", "cross"], **OPTS)
    with pytest.raises(KeyError, match="ambiguous.*cross:ratio=0.5,count=keep-floor, "
                                       "cross:ratio=0.75,count=keep-floor"):
        r["cross"]
    # a partial spec finds the canonical one whose keys include it; the full spec finds itself
    assert r["cross:ratio=0.5"]["spec"] == "cross:ratio=0.5,count=keep-floor"
    assert r["cross:ratio=0.75,count=keep-floor"]["spec"] == "cross:ratio=0.75,count=keep-floor"
    with pytest.raises(KeyError, match="no scheme 'cross:count=mask-floor'"):
        r["cross:count=mask-floor"]
    with pytest.raises(KeyError, match="ambiguous"):
        r.compare("cross", "cross")
    with pytest.raises(KeyError, match="with itself"):
        r.compare("cross:ratio=0.5", "cross:ratio=0.5")
    with pytest.raises(KeyError, match="no scheme 'sync'"):
        r["sync"]
    c = r.compare("cross:ratio=0.75", "cross:ratio=0.5")
    assert (c["a"], c["b"]) == ("cross:ratio=0.75,count=keep-floor",
                                "cross:ratio=0.5,count=keep-floor")


BAD_INTS = [
    (lambda X: moca.score(X, seed=-1, draws=3, pca=5),
     r"seed \(-1\) must be in \[0, 18446744073709551615\]"),
    (lambda X: moca.score(X, draws=2**31, pca=5), r"draws \(2147483648\) must be in"),
    (lambda X: moca.score(X, pca=2**40), r"pca \(1099511627776\) must be in"),
    (lambda X: moca.KCCA(seed=-1).fit(X[:, 0], X[:, 1]), r"seed \(-1\) must be in"),
    (lambda X: moca.policy("cross").sample(3, seed=-1), r"seed \(-1\) must be in"),
    (lambda X: moca.policy("cross").sample(2**31), r"n \(2147483648\) must be in"),
    (lambda X: moca.data.load("generator", seed=-1), r"seed \(-1\) must be in"),
    (lambda X: moca.data.load("generator", windows=2**33), r"windows \(8589934592\) must be in"),
    (lambda X: moca.data.synthetic_transitions(X, np.zeros(len(X), int), 3, seed=-1),
     r"seed \(-1\) must be in"),
    (lambda X: moca.data.synthetic_transitions(X, np.zeros(len(X), int), 2**31),
     r"n \(2147483648\) must be in"),
]


@pytest.mark.parametrize("call,message", BAD_INTS)
def test_out_of_range_ints_are_value_errors(X, call, message):
    with pytest.raises(ValueError, match=message):
        call(X)


def test_seeds_take_the_whole_uint64_range(X):
    a = moca.policy("random:ratio=0.5").sample(4, seed=2**64 - 1)
    b = moca.policy("random:ratio=0.5").sample(4, seed=2**64 - 2)
    assert a.shape == (4, 6, 10) and not np.array_equal(a, b)


def test_non_string_options_are_type_errors():
    with pytest.raises(TypeError, match=r"segment must be a str or path, not float"):
        moca.data.load("generator", segment=2.0)
    with pytest.raises(TypeError, match="seed"):
        moca.score(np.zeros((5, 6, 200), np.float32), seed=1.0)


@pytest.mark.parametrize("dtype", [np.float16, np.longdouble, np.int16, np.uint8])
def test_any_real_dtype_scores_as_float32(X, dtype):
    # the windows are converted once to float32 (docs/python.md): the same score as float32
    Xi = (X * 10).astype(dtype)
    ref = moca.score(Xi.astype(np.float64).astype(np.float32), ["cross"], **OPTS)
    got = moca.score(Xi, ["cross"], **OPTS)
    assert got["cross"]["values"] == ref["cross"]["values"]


@pytest.mark.parametrize("dtype", [np.bool_, np.complex64, object])
def test_non_real_dtypes_are_type_errors(X, dtype):
    with pytest.raises(TypeError, match="X: dtype"):
        moca.score(X.astype(dtype), **OPTS)


def test_float32_overflow_is_refused():
    X = np.full((6, 6, 200), 1e300)
    with pytest.raises(ValueError, match="beyond the range of float32"):
        moca.score(X, **OPTS)


def test_policy_sample_takes_no_windows(X):
    # issue 38.6: X= was accepted and ignored, even with a wrong shape
    with pytest.raises(TypeError, match="X"):
        moca.policy("cross").sample(3, X=np.zeros((2, 2, 2), np.float32))


@pytest.mark.parametrize("kw", [dict(channels=3), dict(length=100), dict(patch_length=10)])
def test_policy_of_another_grid_is_a_value_error(X, kw):
    p = moca.policy("cross", **kw)
    with pytest.raises(ValueError, match=r"schemes: policy cross:ratio=0.75,count=keep-floor was made for"):
        moca.score(X, [p, "sync"], **OPTS)


@pytest.mark.parametrize("key,value", [("channels", 7), ("length", 100), ("windows", 9)])
def test_meta_json_that_contradicts_x_is_refused(tmp_path, key, value):
    # issue 38.12: meta.json's counts were read past; now they must describe X.npy
    import json
    from conftest import run_tool
    X = np.zeros((6, 6, 200), np.float32)
    np.save(tmp_path / "X.npy", X)
    meta = {"sample_rate": 50, "windows": 6, "channels": 6, "length": 200}
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    assert moca.data.load(str(tmp_path)).X.shape == (6, 6, 200)  # agreeing counts are fine
    meta[key] = value
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=f"meta.json states {key} {value}, X.npy"):
        moca.data.load(str(tmp_path))
    p = run_tool("kcca_score", "--data", str(tmp_path), rc=2)
    assert f"meta.json states {key} {value}" in p.stderr


# Issue 39: kcca::AnalysisOptions has one schema; the estimators' keywords and the kcca tool's
# flags are its rows, so a keyword no row has, or a value of the wrong type, is refused, and the
# defaults are the tool's (its --print-config, an independent reading of the same rows).
def test_kcca_analysis_keywords_are_the_schema_rows():
    import subprocess, os, tomllib
    from moca import _core
    o = _core.KccaAnalysisOptions.from_keywords({"kernel": "poly", "degree": 3, "center": False})
    assert (o.kernel, o.degree, o.center) == ("poly", 3, False)
    with pytest.raises(TypeError, match="gama"):
        _core.KccaAnalysisOptions.from_keywords({"gama": 0.1})
    with pytest.raises(TypeError):
        _core.KccaAnalysisOptions.from_keywords({"degree": 2.5})
    with pytest.raises(ValueError):
        _core.KccaAnalysisOptions.from_keywords({"kernel": "gauss"})
    # the defaults the Python class holds are those the tool prints
    tool = os.path.join(os.environ["MOCA_BIN_DIR"], "kcca")
    cfg = tomllib.loads(subprocess.run([tool, "--u", "u", "--m", "m", "--print-config"],
                                       capture_output=True, text=True, check=True).stdout)
    d = _core.KccaAnalysisOptions()
    for key, value in cfg.items():
        if key in ("u", "m"):
            continue
        assert getattr(d, key.replace("-", "_")) == value, key
