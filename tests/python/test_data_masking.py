"""moca.data and moca.policy: known answers (shapes, exact mask counts, labels), the .npy
reader round trip, HAPT when present, and a Python callable scored as a policy."""
import math
import os

import numpy as np
import pytest

import moca
from conftest import run_tool


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


def test_synthetic_transitions_draw_pairs_as_documented():
    # Two constant windows, 0 (label 0) and 1 (label 1): an output is x1's constant with a run
    # of x2's. The docs (python.md, data.md, Algorithm 1): x1, x2 independent and uniform, so
    # half of the pairs mix the two windows and half splice a window with itself; the run is
    # 20-50% of L at one place, across all channels.
    L, n = 200, 2000
    X = np.stack([np.zeros((3, L)), np.ones((3, L))]).astype(np.float32)
    T = moca.data.synthetic_transitions(X, np.array([0, 1]), n, seed=7)
    mixed = 0
    for x, label in zip(T.X, T.y):
        other = x != label
        assert (other == other[0]).all()  # the same samples on every channel
        if other[0].any():
            mixed += 1
            run = np.flatnonzero(other[0])
            assert run[-1] - run[0] + 1 == len(run)  # one contiguous segment
            assert int(np.ceil(0.2 * L)) <= len(run) <= L // 2
    assert abs(mixed / n - 0.5) < 0.05  # 0.5 +- 4.5 standard errors (sqrt(0.25 / n) = 0.011)
    assert abs(np.mean(T.y) - 0.5) < 0.05  # x1 uniform
    with pytest.raises(ValueError, match="needs >= 2 windows"):
        moca.data.synthetic_transitions(X[:1], np.array([0]), 5)


@pytest.mark.parametrize("spec,count", [("cross:ratio=0.75", 45), ("random:ratio=0.7", 42),
                                        ("sync:ratio=0.5", 30)])
def test_policies_mask_exactly_floor_ratio_cells(spec, count):
    p = moca.policy(spec)
    assert (p.C, p.P, p.patch_length) == (6, 10, 20)
    m = p.sample(100, seed=1)
    assert (m.reshape(100, -1).sum(1) == count).all()


@pytest.mark.parametrize("name,units", [("cross", 60), ("random", 60), ("sync", 10),
                                        ("temporal", 10), ("extrapolation", 10),
                                        ("per-modality", 10)])
def test_count_rules_at_every_5_percent_match_the_authors_formula(name, units):
    # The authors' len_keep = int(L * (1 - mask_ratio)) (models_mae.py:149) and the older rule
    # floor(ratio * L), both with moca's 1e-9 guard against binary rounding (docs/masking.md); a
    # count that leaves a view empty must be refused.
    for k in range(1, 20):
        r = float(f"{k / 20:.2f}")
        keep = math.floor(units * (1 - r) + 1e-9)
        for rule, masked in (("", units - keep), ("keep-floor", units - keep),
                             ("mask-floor", math.floor(r * units + 1e-9))):
            spec = f"{name}:ratio={r}" + (f",count={rule}" if rule else "")
            cells = masked * (1 if units == 60 else (3 if name == "per-modality" else 6))
            high = units if name == "per-modality" else units - 1
            if not 1 <= masked <= high:
                with pytest.raises(ValueError, match="count="):
                    moca.policy(spec)
                continue
            p = moca.policy(spec)
            assert f"count={rule or 'keep-floor'}" in p.spec
            m = p.sample(20, seed=k)
            assert (m.reshape(20, -1).sum(1) == cells).all(), spec


def test_sync_masks_whole_time_columns():
    m = moca.policy("sync:ratio=0.5").sample(50, seed=2)
    assert (m.all(axis=1) | ~m.any(axis=1)).all()  # every patch column all or nothing


def test_ratio_fills_in_and_spec_is_canonical():
    assert moca.policy("cross", ratio=0.5).spec == "cross:ratio=0.5,count=keep-floor"
    assert moca.policy("cross:ratio=0.25", ratio=0.5).spec == "cross:ratio=0.25,count=keep-floor"
    assert (moca.policy("sync:count=mask-floor").spec ==
            "sync:ratio=0.75,count=mask-floor")


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
    assert d["comparisons"][0]["a"] == "cross:ratio=0.75,count=keep-floor"  # the spec
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            r.to_frame()
    else:
        assert list(r.to_frame().index) == ["cross", "sync"]


def _own_folder(path, rate=25.0, length=100, n=12):
    """A .npy folder as a user would write it: 7 channels in 3 groups, string labels and pids."""
    rng = np.random.default_rng(5)
    t = np.arange(length) / rate
    X = rng.standard_normal((n, 7, length)).astype(np.float32) * 0.1
    X += np.sin(2 * np.pi * 2.0 * t).astype(np.float32)  # a 2 Hz tone in every channel
    np.save(path / "X.npy", X)
    np.save(path / "Y.npy", np.array(["walk", "sit", "run"] * (n // 3)))
    np.save(path / "pid.npy", np.array([f"s{i % 4}" for i in range(n)]))
    (path / "meta.json").write_text(
        '{"modalities": {"acc": [0, 1, 2], "gyro": [3, 4, 5], "baro": [6]}, "sample_rate": 25}')
    return X


def test_labels_keyword_reads_a_label_scheme_and_groups_take_names(tmp_path):
    """labels= (--labels) reads Y_<scheme>.npy instead of Y.npy; modalities= takes channel names
    (issue 41). Known answers: the arrays written here, compared with NumPy."""
    X = _own_folder(tmp_path)
    scheme = np.array(["rest", "move"] * 6)
    np.save(tmp_path / "Y_coarse.npy", scheme)
    d = moca.data.load(str(tmp_path), labels="Y_coarse.npy")
    np.testing.assert_array_equal(d.X, X)
    assert [d.meta["class_names"][k] for k in d.y] == list(scheme)
    with pytest.raises(ValueError, match=r"labels \(Y_fine.npy\): no such file .* \(it holds "
                                         r"Y.npy, Y_coarse.npy\)"):
        moca.data.load(str(tmp_path), labels="Y_fine.npy")
    with pytest.raises(ValueError, match="labels.*takes no effect"):
        moca.data.load("generator", labels="Y.npy")
    g = moca.data.load(str(tmp_path), channel_names=[f"c{i}" for i in range(7)],
                       modalities="a=c0,c1,c2;b=c6")
    assert g.meta["modalities"] == {"a": [0, 1, 2], "b": [3]}
    np.testing.assert_array_equal(g.X, X[:, [0, 1, 2, 6], :])


def test_load_own_folder_as_stored_and_as_the_programs_see_it(tmp_path):
    X = _own_folder(tmp_path)
    d = moca.data.load(str(tmp_path))
    np.testing.assert_array_equal(d.X, X)  # as stored: no resampling or padding
    assert d.meta["modalities"] == {"acc": [0, 1, 2], "gyro": [3, 4, 5], "baro": [6]}
    assert d.meta["sample_rate_hz"] == 25.0
    assert sorted(set(d.meta["class_names"])) == ["run", "sit", "walk"]
    assert [d.meta["class_names"][k] for k in d.y[:3]] == ["walk", "sit", "run"]
    assert [d.meta["subject_names"][k] for k in d.pid[:2]] == ["s0", "s1"]

    # rate/length given: the programs' view, 25 -> 50 Hz band-limited (100 -> 200 samples)
    p = moca.data.load(str(tmp_path), rate=50.0, length=200)
    assert p.X.shape == (12, 7, 200) and p.meta["sample_rate_hz"] == 50.0
    assert any("resampled 25 -> 50 Hz" in note for note in p.meta["notes"])
    # the 2 Hz tone keeps its frequency: 8 periods in 4 s at either rate (zero crossings of the
    # clean mean over windows, away from the window edges)
    mean = p.X.mean(axis=(0, 1))[20:180]
    crossings = np.count_nonzero(np.diff(np.sign(mean)) != 0)
    assert 12 <= crossings <= 14, crossings  # 160 samples = 3.2 s = 6.4 periods -> 12-13

    # the same windows the `moca` program exports for the same flags (one code path)
    out = tmp_path / "exported"
    run_tool("moca", "data", "export", "--data", str(tmp_path), "--out", str(out))
    np.testing.assert_array_equal(np.load(out / "X.npy"), p.X)

    # options: channel groups, class selection; errors name the rule
    a = moca.data.load(str(tmp_path), modalities="acc=0-2")
    assert a.X.shape[1] == 3 and a.meta["modalities"] == {"acc": [0, 1, 2]}
    k = moca.data.load(str(tmp_path), keep_classes=["sit", "walk"])
    assert k.meta["class_names"] == ["sit", "walk"] and len(k.y) == 8
    with pytest.raises(ValueError, match="channel"):
        moca.data.load(str(tmp_path), modalities="acc=0-9")
    with pytest.raises(ValueError, match="data_format"):
        moca.data.load(str(tmp_path), data_format="nope")
    with pytest.raises(TypeError, match="keep_classes"):
        moca.data.load(str(tmp_path), keep_classes="sit")


def test_load_keywords_are_the_data_flags(tmp_path):
    """moca.data.load's keywords are made from the rows of data::DatasetOptions' schema that
    make every program's --data-* flags (issue 39): each default is what kcca_score's own
    --print-config reports for the flag."""
    import inspect
    import tomllib
    params = inspect.signature(moca.data.load).parameters
    doc = moca.data.load.__doc__
    # (an .npy folder: beside the generator --sample-rate and --npy-layout take no effect, and
    # --print-config leaves them out)
    folder = tmp_path / "own"
    folder.mkdir()
    _own_folder(folder)
    cli = tomllib.loads(run_tool("kcca_score", "--data", str(folder), "--print-config",
                                 cwd=tmp_path).stdout)
    compared = 0
    for key in ("data_format", "modalities", "sample_rate", "drop_nonfinite", "keep_classes",
                "channel_names", "segment", "npy_layout"):
        assert params[key].kind == inspect.Parameter.KEYWORD_ONLY, key
        line = [t for t in doc.splitlines() if t.strip().startswith(f"* ``{key}``")]
        assert len(line) == 1, key
        flag = line[0].split("(``")[1].split("``")[0]
        run_tool("kcca_score", "--help", cwd=tmp_path).stdout.index(flag)  # the program has it
        if params[key].default is None:  # empty text or list: "none"
            continue
        default = params[key].default  # --print-config leaves out a flag that is off
        name = flag.lstrip("-")
        assert (cli.get(name, False) if isinstance(default, bool) else cli[name]) == default, key
        compared += 1
    assert compared == 4, compared  # data_format, sample_rate, drop_nonfinite, npy_layout


def test_score_keywords_are_kcca_scores_flags(tmp_path):
    """moca.score's keywords are made from the rows of masking::ScoreRunOptions' schema that
    make kcca_score's flags (issue 39): each default is what kcca_score --print-config reports."""
    import inspect
    import tomllib
    params = inspect.signature(moca.score).parameters
    doc = moca.score.__doc__
    # (an .npy folder: beside the generator --sample-rate and --npy-layout take no effect, and
    # --print-config leaves them out)
    folder = tmp_path / "own"
    folder.mkdir()
    _own_folder(folder)
    cli = tomllib.loads(run_tool("kcca_score", "--data", str(folder), "--print-config",
                                 cwd=tmp_path).stdout)
    # (the kcca estimator's rows: --print-config lists them beside --estimator kcca only)
    kcca = tomllib.loads(run_tool("kcca_score", "--data", str(folder), "--estimator", "kcca",
                                  "--print-config", cwd=tmp_path).stdout)
    assert "sigma" not in cli and "pca" not in kcca
    cli.update({k: kcca[k] for k in ("kernel", "gamma", "sigma")})
    keys = ("ratio", "features", "mask_mode", "patch_length", "cross_modal", "estimator",
            "draws", "pca", "ridge", "kernel", "gamma", "sigma", "seed", "threads")
    for key in keys:
        line = [t for t in doc.splitlines() if t.strip().startswith(f"* ``{key}``")]
        assert len(line) == 1, key
        flag = line[0].split("(``")[1].split("``")[0].lstrip("-")
        default = params[key].default  # --print-config leaves out a flag that is off
        assert (cli.get(flag, False) if isinstance(default, bool) else cli[flag]) == default, key
    assert params["draws"].kind == inspect.Parameter.KEYWORD_ONLY


def test_load_refuses_bad_keywords_naming_them(tmp_path):
    """A bad keyword is refused naming the keyword, never a library field
    (DatasetOptions::sample_rate); the control gets the windows."""
    _own_folder(tmp_path)
    with pytest.raises(ValueError, match=r"^sample_rate \(-1\) must be >= 0$"):
        moca.data.load(str(tmp_path), sample_rate=-1)
    with pytest.raises(ValueError, match=r"^sample_rate \(30\) takes no effect: only npy and ts data uses it"):
        moca.data.load("generator:windows=20", sample_rate=30)
    with pytest.raises(TypeError, match="did you mean sample_rate"):
        moca.data.load(str(tmp_path), sample_rate_hz=30)
    with pytest.raises(TypeError, match="sample_rate must be a number, not str"):
        moca.data.load(str(tmp_path), sample_rate="30")
    with pytest.raises(TypeError, match="drop_nonfinite must be a bool"):
        moca.data.load(str(tmp_path), drop_nonfinite=1)
    with pytest.raises(ValueError, match="npy_layout"):
        moca.data.load(str(tmp_path), npy_layout="CLN")
    # control: the same keywords with good values (None is the default)
    d = moca.data.load(str(tmp_path), sample_rate=np.float64(25), drop_nonfinite=np.bool_(False),
                       npy_layout="NCL", segment=None,
                       channel_names=("a_x", "a_y", "a_z", "g_x", "g_y", "g_z", "b"))
    assert d.meta["channel_names"] == ["a_x", "a_y", "a_z", "g_x", "g_y", "g_z", "b"]


def test_load_shuffled_labels_control(tmp_path):
    """Control: the loader carries labels with their windows; shuffling Y.npy on disk changes
    the labels and nothing else."""
    _own_folder(tmp_path)
    d = moca.data.load(str(tmp_path))
    names = np.array(d.meta["class_names"])[d.y]
    perm = np.random.default_rng(1).permutation(len(names))
    np.save(tmp_path / "Y.npy", names[perm])
    s = moca.data.load(str(tmp_path))
    np.testing.assert_array_equal(s.X, d.X)
    np.testing.assert_array_equal(np.array(s.meta["class_names"])[s.y], names[perm])


def test_synthetic_transitions_equal_moca_data_export(tmp_path):
    # issue 38 parity: the Python call and `moca data export --transitions` are one library call
    # (data::synthetic_transitions) on the same windows with the same seed
    out = tmp_path / "t"
    run_tool("moca", "data", "export", "--synthetic-windows", "40", "--split", "all",
             "--transitions", "25", "--seed", "2", "--out", str(out))
    X, y, pid, _ = moca.data.load("generator", windows=40)
    T = moca.data.synthetic_transitions(X, y, 25, seed=2, pid=pid)
    back = moca.data.load(str(out))  # Y.npy holds class names: read back through the loader
    np.testing.assert_array_equal(back.X, T.X)
    np.testing.assert_array_equal(back.y, T.y)
    np.testing.assert_array_equal(back.pid, T.pid)
    # control: another seed splices other windows
    assert not np.array_equal(moca.data.synthetic_transitions(X, y, 25, seed=3).X, T.X)
    # the split flags choose the spliced windows (--split all was ignored: always 7:3), and
    # without --transitions, where they would do nothing, they are refused
    run_tool("moca", "data", "export", "--synthetic-windows", "40", "--transitions", "25",
             "--seed", "2", "--out", str(tmp_path / "r"))
    assert not np.array_equal(np.load(tmp_path / "r" / "X.npy"), T.X)
    p = run_tool("moca", "data", "export", "--synthetic-windows", "40", "--split", "all",
                 "--out", str(tmp_path / "s"), rc=2)
    assert "without --transitions every window is exported" in p.stderr
