"""Issue 38, item 1: `moca.score` settles modality groups as `kcca_score --data` does (from
channel names, or `modalities=` as `--modalities`), so its scores equal the tool's JSON on the
same windows for `per-modality` and `cross_modal` — on data whose groups are not the channel
halves, and with the same refusal on one-group data."""
import json

import numpy as np
import pytest

import moca
from conftest import run_tool

NAMES = ["acc_x", "acc_y", "gyro_x", "gyro_y", "mag_x", "mag_y"]  # groups 0-1 / 2-3 / 4-5
N, SEED, DRAWS = 90, 4, 3


@pytest.fixture(scope="module")
def windows():
    X, y, _, _ = moca.data.load("generator", windows=N, seed=5)
    return np.ascontiguousarray(X, np.float32), y


def _folder(path, X, y, names):
    path.mkdir()
    np.save(path / "X.npy", X)
    np.save(path / "y.npy", y.astype(np.int64))
    np.save(path / "pid.npy", np.zeros(len(y), np.int64))
    meta = {"sample_rate": 50}
    if names is not None:
        meta["channel_names"] = names
    (path / "meta.json").write_text(json.dumps(meta))
    return path


def _cli(folder, out, *extra, rc=0):
    p = run_tool("kcca_score", "--data", str(folder), "--samples", str(N), "--seed", str(SEED),
                 "--draws", str(DRAWS), "--pca", "8", "--json", str(out), *extra, rc=rc)
    return json.loads(out.read_text()) if rc == 0 else p


def _strip(schemes):
    return [{k: v for k, v in s.items() if k != "seconds"} for s in schemes]


@pytest.mark.parametrize("extra,kw", [
    (["--scheme", "per-modality,cross"], dict(schemes=["per-modality", "cross"])),
    (["--scheme", "cross,sync", "--cross-modal"], dict(schemes=["cross", "sync"],
                                                       cross_modal=True)),
    (["--scheme", "per-modality,sync", "--modalities", "a=0+3,b=1+4,c=2+5"],
     dict(schemes=["per-modality", "sync"], modalities="a=0+3,b=1+4,c=2+5")),
    (["--scheme", "cross", "--cross-modal", "--modalities", "a=0-3,b=4-5"],
     dict(schemes=["cross"], cross_modal=True, modalities={"a": [0, 1, 2, 3], "b": [4, 5]})),
])
def test_groups_equal_kcca_score(tmp_path, windows, extra, kw):
    X, y = windows
    cli = _cli(_folder(tmp_path / "d", X, y, NAMES), tmp_path / "s.json", *extra)
    r = moca.score(X, seed=SEED, draws=DRAWS, pca=8, y=y, channel_names=NAMES, **kw)
    assert _strip(r.schemes) == _strip(cli["schemes"])
    assert r.comparisons == cli["comparisons"]
    assert r.settings.get("views") == cli["settings"].get("views")


def test_groups_matter(windows):
    # control: the halves (the old Python behaviour) score otherwise than the names' groups
    X, y = windows
    opts = dict(seed=SEED, draws=DRAWS, pca=8, y=y, channel_names=NAMES)
    by_names = moca.score(X, ["cross"], cross_modal=True, **opts)
    halves = moca.score(X, ["cross"], cross_modal=True, modalities="a=0-2,b=3-5", **opts)
    assert by_names["cross"]["values"] != halves["cross"]["values"]
    assert "channels 0,1 " in by_names.settings["views"]


@pytest.mark.parametrize("extra,kw", [
    (["--scheme", "per-modality"], dict(schemes=["per-modality"])),
    (["--scheme", "cross", "--cross-modal"], dict(schemes=["cross"], cross_modal=True)),
])
def test_one_group_is_refused_both_ways(tmp_path, windows, extra, kw):
    X, y = windows
    names = [f"ch{c}" for c in range(6)]  # no prefix: one group, as the tool names a bare folder
    p = _cli(_folder(tmp_path / "d", X, y, names), tmp_path / "s.json", *extra, rc=None)
    assert p.returncode != 0 and "modality groups" in p.stderr, p.stderr
    with pytest.raises(ValueError, match="modality groups"):
        moca.score(X, seed=SEED, draws=DRAWS, pca=8, y=y, channel_names=names, **kw)
    with pytest.raises(ValueError, match="modality groups.*from Python: modalities="):
        moca.score(X, seed=SEED, draws=DRAWS, pca=8, y=y, **kw)  # unnamed: ch0, ch1, ...


def test_bad_modalities_keyword(windows):
    X, _ = windows
    with pytest.raises(TypeError, match="modalities"):
        moca.score(X, modalities=3)
    with pytest.raises(ValueError, match="modalities"):
        moca.score(X, modalities={"a": []})
    with pytest.raises(ValueError, match="modalities"):
        moca.score(X, modalities="a=0-9")
