"""moca.data and moca.policy: known answers (shapes, exact mask counts, labels), the .npy
reader round trip, HAPT when present, and a Python callable scored as a policy."""
import os

import numpy as np
import pytest

import moca


def test_generator_matches_its_spec():
    X, y, pid, meta = moca.data.load("generator", windows=50, coupling=0.8, seed=3)
    assert X.shape == (50, 6, 200) and X.dtype == np.float32
    assert y.shape == pid.shape == (50,)
    assert meta["channel_names"] == ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
    X2 = moca.data.load("generator", windows=50, coupling=0.8, seed=3).X
    np.testing.assert_array_equal(X, X2)
    assert not np.array_equal(X, moca.data.load("generator", windows=50, seed=4).X)


def test_npy_folder_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((7, 3, 40)).astype(np.float32)
    y = np.array([0, 1, 2, 1, 0, 2, 1])
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "Y.npy", y)
    np.save(tmp_path / "pid.npy", np.arange(7) % 2)
    d = moca.data.load(str(tmp_path))
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, y)
    np.testing.assert_array_equal(d.pid, np.arange(7) % 2)
    # channels-last (N x L x C) is recognised by the smaller trailing axis
    np.save(tmp_path / "X.npy", X.transpose(0, 2, 1).copy())
    np.testing.assert_array_equal(moca.data.load(str(tmp_path)).X, X)


@pytest.mark.skipif(not os.environ.get("MOCA_HAPT_DIR"), reason="MOCA_HAPT_DIR not set")
def test_hapt():
    X, y, pid, meta = moca.data.load(os.environ["MOCA_HAPT_DIR"])
    assert X.shape[1:] == (6, 200)
    assert set(np.unique(pid)) <= set(range(1, 31)) and len(np.unique(pid)) == 30
    assert meta["sample_rate_hz"] == 50


def test_synthetic_transitions():
    X, y, pid, _ = moca.data.load("generator", windows=200, seed=1)
    T = moca.data.synthetic_transitions(X, y, 25, seed=2)
    assert T.X.shape == (25, 6, 200)
    assert set(T.y) <= set(y)  # a splice keeps its first window's label (augment.hpp)
    assert not any((T.X[i] == X).all(axis=(1, 2)).any() for i in range(25))  # all spliced
    np.testing.assert_array_equal(T.X, moca.data.synthetic_transitions(X, y, 25, seed=2).X)


@pytest.mark.parametrize("spec,count", [("cross:ratio=0.75", 45), ("random:ratio=0.7", 42),
                                        ("sync:ratio=0.5", 30)])
def test_policies_mask_exactly_floor_ratio_cells(spec, count):
    p = moca.policy(spec)
    assert (p.C, p.P, p.patch_length) == (6, 10, 20)
    m = p.sample(100, seed=1)
    assert (m.reshape(100, -1).sum(1) == count).all()


def test_sync_masks_whole_time_columns():
    m = moca.policy("sync:ratio=0.5").sample(50, seed=2)
    assert (m.all(axis=1) | ~m.any(axis=1)).all()  # every patch column all or nothing


def test_ratio_fills_in_and_spec_is_canonical():
    assert moca.policy("cross", ratio=0.5).spec == "cross:ratio=0.5"
    assert moca.policy("cross:ratio=0.25", ratio=0.5).spec == "cross:ratio=0.25"


def test_callable_policy_is_scored_reproducibly():
    X, y, _, meta = moca.data.load("generator", windows=150, seed=0)

    def first_half(seed):  # masks the first 5 patches of channels chosen from the seed
        rng = np.random.default_rng(seed)
        m = np.zeros((6, 10), bool)
        m[rng.choice(6, 3, replace=False), :5] = True
        return m

    p = moca.policy(first_half, name="first-half")
    masks = p.sample(20, seed=4)
    assert (masks.reshape(20, -1).sum(1) == 15).all()
    np.testing.assert_array_equal(masks, p.sample(20, seed=4))
    r1 = moca.score(X, ["cross", p], draws=3, seed=1, pca=10)
    r2 = moca.score(X, [p], draws=3, seed=1, pca=10)
    assert r1["first-half"]["values"] == r2["first-half"]["values"]
    assert r1["first-half"]["masked_fraction"] == pytest.approx(0.25)
    assert r1.compare("first-half", "cross")["difference"] == pytest.approx(
        r1["first-half"]["score"] - r1["cross"]["score"], abs=1e-12)


def test_score_result_frame_and_dict():
    X = moca.data.load("generator", windows=100).X
    r = moca.score(X, draws=2, pca=5)
    d = r.to_dict()
    assert [s["scheme"] for s in d["schemes"]] == ["cross", "sync"]
    assert d["comparisons"][0]["a"] == "cross"
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            r.to_frame()
    else:
        assert list(r.to_frame().index) == ["cross", "sync"]
