"""Python results equal the command-line tools' JSON for the same options and seed (every
printed digit: JSON carries the shortest round-trip form of each double), and policies sample
the masks the C++ scorer draws."""
import json
import os
import subprocess

import numpy as np
import pytest

import moca
from conftest import run_tool


@pytest.mark.parametrize("args,kw", [
    (["--kernel", "rbf", "--gamma", "0.1", "--components", "3"],
     dict(kernel="rbf", gamma=0.1, n_components=3)),
    (["--kernel", "rbf", "--sigma", "2.5", "--gamma", "0.3", "--components", "2", "--method",
      "iterative"], dict(kernel="rbf", sigma=2.5, gamma=0.3, n_components=2, method="iterative")),
    (["--kernel", "laplacian", "--components", "2", "--method", "lowrank", "--rank", "50",
      "--seed", "4"], dict(kernel="laplacian", n_components=2, method="lowrank", rank=50, seed=4)),
    (["--kernel", "poly", "--degree", "3", "--coef0", "0.5", "--no-center"],
     dict(kernel="poly", degree=3, coef0=0.5, center=False, n_components=1)),
])
def test_kcca_equals_cli(tmp_path, views, args, kw):
    U, M = views
    np.save(tmp_path / "U.npy", U)
    np.save(tmp_path / "M.npy", M)
    p = run_tool("kcca", "--u", str(tmp_path / "U.npy"), "--m", str(tmp_path / "M.npy"),
                 "--json", *args)
    cli = json.loads(p.stdout)
    # coefficients=False is the tool's own computation: every digit of the JSON
    m = moca.KCCA(coefficients=False, **kw).fit(U, M)
    assert m.correlations_.tolist() == cli["correlations"]
    for key in ("status", "sigma_u", "sigma_m", "rank_u", "rank_m", "iterations", "settings"):
        assert m.result_.get(key) == cli.get(key), key
    # the default also computes alpha, beta (another SVD path): the 12 digits the tool prints
    text = run_tool("kcca", "--u", str(tmp_path / "U.npy"), "--m", str(tmp_path / "M.npy"),
                    *args).stdout
    printed = next(l for l in text.splitlines() if l.startswith("correlations:")).split()[1:]
    full = moca.KCCA(**kw).fit(U, M)
    assert ["%.12g" % v for v in full.correlations_] == printed
    np.testing.assert_allclose(full.correlations_, cli["correlations"], rtol=1e-14, atol=0)


def test_cca_equals_cli(tmp_path, views):
    U, M = views
    np.save(tmp_path / "U.npy", U)
    np.save(tmp_path / "M.npy", M)
    cli = json.loads(run_tool("kcca", "--u", str(tmp_path / "U.npy"), "--m",
                              str(tmp_path / "M.npy"), "--json", "--cca", "--pca", "4",
                              "--components", "3").stdout)
    c = moca.CCA(n_components=3, pca=4, weights=False).fit(U, M)
    assert c.correlations_.tolist() == cli["correlations"]
    assert c.null_level_ == cli["null_level"]
    assert c.bartlett_ == cli["bartlett"]
    assert c.explained_variance_u_.tolist() == cli["explained_variance_u"]
    # the default also computes the weights (SVD with vectors): the 12 digits the tool prints
    full = moca.CCA(n_components=3, pca=4).fit(U, M)
    assert ["%.12g" % v for v in full.correlations_] == ["%.12g" % v for v in cli["correlations"]]


def _generator_windows(samples, seed, coupling=0.8):
    # kcca_score without --data: the generator with seed derive_seed(seed, "data")
    return moca.data.load("generator", windows=samples, coupling=coupling,
                          seed=moca._core.derive_seed(seed, 0x64617461))


@pytest.mark.parametrize("extra,kw", [
    (["--pca", "10"], dict(pca=10)),
    (["--features", "patch-mean", "--estimator", "kcca", "--scheme", "cross,sync:ratio=0.5",
      "--mask-mode", "shared"],
     dict(features="patch-mean", estimator="kcca", schemes=["cross", "sync:ratio=0.5"],
          mask_mode="shared")),
])
def test_score_equals_cli(tmp_path, extra, kw):
    samples, seed, draws = 120, 5, 4
    out = tmp_path / "s.json"
    run_tool("kcca_score", "--samples", str(samples), "--seed", str(seed), "--draws", str(draws),
             "--json", str(out), *extra)
    cli = json.loads(out.read_text())
    X, y, pid, meta = _generator_windows(samples, seed)
    r = moca.score(X, seed=seed, draws=draws, y=y, channel_names=meta["channel_names"], **kw)
    strip = lambda d: {k: v for k, v in d.items() if k != "seconds"}
    assert [strip(s) for s in r.schemes] == [strip(s) for s in cli["schemes"]]
    assert r.comparisons == cli["comparisons"]
    for key in ("estimator", "features", "pca", "draws", "mask_mode", "grid", "null_level"):
        assert r.settings[key] == cli["settings"][key], key
    d = moca.compare(X, *(kw.get("schemes") or ["cross", "sync"]), seed=seed, draws=draws,
                     **{k: v for k, v in kw.items() if k != "schemes"})
    assert d == cli["comparisons"][0]


@pytest.mark.parametrize("spec,seed,draw", [("cross", 0, 0), ("sync:ratio=0.5", 3, 2),
                                            ("random:ratio=0.3", 11, 1), ("sensor:keep=2", 5, 0),
                                            ("temporal", 9, 3)])
def test_policy_masks_equal_cpp_scorer(spec, seed, draw):
    exe = os.environ.get("MOCA_MASK_DUMP")
    if not exe or not os.path.exists(exe):
        pytest.skip("mask_dump helper not built (run through ctest)")
    n = 30
    out = subprocess.run([exe, spec, str(seed), str(draw), str(n)], capture_output=True,
                         text=True, check=True).stdout.split()
    ref = np.array([[c == "1" for c in line] for line in out]).reshape(n, 6, 10)
    got = moca.policy(spec).sample(n, seed=seed, draw=draw)
    assert got.dtype == np.bool_ and got.shape == (n, 6, 10)
    np.testing.assert_array_equal(got, ref)
    # and they differ between seeds (the comparison above can fail)
    assert not np.array_equal(moca.policy(spec).sample(n, seed=seed + 1, draw=draw), ref)
