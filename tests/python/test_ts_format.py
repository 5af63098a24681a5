"""The UEA/UCR `.ts` reader (--data ts:DIR) against the format parsed here in plain Python and
numpy (sktime's and aeon's reading: '#' comments, '@' keys in any case, ':' between dimensions,
',' between values, the label last), and against sktime's own loader when it is installed; the
archive's TRAIN/TEST split through moca.data.load, `moca data export` (split.npy) and the
`predefined` protocol."""
import json

import numpy as np
import pytest

from conftest import run_tool

CLASSES = ["standing", "walking", "lying"]


def _write_ts(path, X, y, classes, name="Toy", header_case=str):
    with open(path, "w") as f:
        f.write("# written by the test\n")
        for key, value in [("@problemName", name), ("@timeStamps", "false"),
                           ("@missing", "false"), ("@univariate", "false"),
                           ("@dimensions", str(X.shape[1])), ("@equalLength", "true"),
                           ("@seriesLength", str(X.shape[2])),
                           ("@classLabel", "true " + " ".join(classes))]:
            f.write(header_case(key) + " " + value + "\n")
        f.write("\n@data\n")
        for case, label in zip(X, y):
            dims = [",".join(repr(float(v)) for v in series) for series in case]
            f.write(":".join(dims) + ":" + label + "\n")


def _parse_ts(path):
    """The format read by hand: the cases after @data, values as float64 -> float32."""
    X, y, declared, data = [], [], [], False
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not data:
            words = line.split()
            if words[0].lower() == "@classlabel":
                declared = words[2:]
            data = words[0].lower() == "@data"
            continue
        fields = line.split(":")
        X.append([[float(v) for v in d.split(",")] for d in fields[:-1]])
        y.append(fields[-1])
    return np.array(X, dtype=np.float64).astype(np.float32), y, declared


@pytest.fixture
def toy(tmp_path):
    rng = np.random.default_rng(7)
    X_train = rng.normal(0, 2, (7, 3, 30))
    X_test = rng.normal(0, 2, (5, 3, 30))
    y_train = [CLASSES[i] for i in rng.integers(0, 3, 7)]
    y_test = [CLASSES[i] for i in rng.integers(0, 3, 5)]
    d = tmp_path / "Toy"
    d.mkdir()
    _write_ts(d / "Toy_TRAIN.ts", X_train, y_train, CLASSES)
    # TEST declares the classes in another order, keys in upper case
    _write_ts(d / "Toy_TEST.ts", X_test, y_test, CLASSES[::-1], header_case=str.upper)
    return d


def test_ts_pair_equals_the_format_read_by_hand(toy):
    import moca
    Xa, ya, declared = _parse_ts(toy / "Toy_TRAIN.ts")
    Xb, yb, _ = _parse_ts(toy / "Toy_TEST.ts")
    d = moca.data.load(f"ts:{toy}")
    assert d.X.shape == (12, 3, 30)
    np.testing.assert_array_equal(d.X, np.concatenate([Xa, Xb]))
    assert d.meta["class_names"] == declared == CLASSES  # TRAIN's declared order
    assert [d.meta["class_names"][k] for k in d.y] == ya + yb
    assert d.meta["split"].tolist() == ["train"] * 7 + ["test"] * 5
    assert d.meta["channel_names"] == ["dim_0", "dim_1", "dim_2"]
    assert (d.pid == -1).all()
    # a bare folder is detected; one file is one file, without a split
    assert moca.data.load(toy).X.shape == (12, 3, 30)
    one = moca.data.load(toy / "Toy_TEST.ts")
    np.testing.assert_array_equal(one.X, Xb)
    assert one.meta["split"] is None


def test_ts_against_sktime(toy):
    """sktime's load_from_tsfile_to_dataframe reads the same values and labels."""
    sk = pytest.importorskip("sktime.datasets")
    import moca
    X, y = sk.load_from_tsfile_to_dataframe(str(toy / "Toy_TRAIN.ts"))
    want = np.stack([np.stack([X.iloc[i, c].to_numpy() for c in range(X.shape[1])])
                     for i in range(len(X))]).astype(np.float32)
    d = moca.data.load(toy / "Toy_TRAIN.ts")
    np.testing.assert_array_equal(d.X, want)
    assert [d.meta["class_names"][k] for k in d.y] == list(y)


def test_ts_control_reordered_cases_move_their_labels(toy, tmp_path):
    """Control: TEST's cases written in reverse order come back reversed, labels with them; the
    TRAIN part does not move."""
    import moca
    Xb, yb, declared = _parse_ts(toy / "Toy_TEST.ts")
    rev = tmp_path / "rev"
    rev.mkdir()
    (rev / "Toy_TRAIN.ts").write_text((toy / "Toy_TRAIN.ts").read_text())
    _write_ts(rev / "Toy_TEST.ts", Xb[::-1].astype(np.float64), yb[::-1], declared)
    a, b = moca.data.load(toy), moca.data.load(rev)
    np.testing.assert_array_equal(a.X[:7], b.X[:7])
    np.testing.assert_array_equal(a.X[7:], b.X[7:][::-1])
    np.testing.assert_array_equal(a.y[7:], b.y[7:][::-1])


def test_ts_unequal_lengths_and_bad_input(tmp_path):
    import moca
    p = tmp_path / "u.ts"
    p.write_text("@dimensions 1\n@equalLength false\n@classLabel true a b\n@data\n"
                 "1,2,3:a\n4,5:b\n")
    with pytest.raises(ValueError, match="cases of different lengths, 2 .* to 3"):
        moca.data.load(p)
    padded = moca.data.load(p, ts_unequal="pad")
    np.testing.assert_array_equal(padded.X[:, 0], [[1, 2, 3], [4, 5, 5]])
    cut = moca.data.load(p, ts_unequal="truncate")
    np.testing.assert_array_equal(cut.X[:, 0], [[1, 2], [4, 5]])
    bad = tmp_path / "bad.ts"
    bad.write_text("@dimensions 2\n@classLabel true a b\n@data\n1,2:3,4:c\n")
    with pytest.raises(ValueError, match=r"bad.ts:4: class label 'c' is not declared"):
        moca.data.load(bad)
    bad.write_text("@dimensions 2\n@classLabel true a b\n@data\n1,2:a\n")
    with pytest.raises(ValueError, match=r"bad.ts:4: the case has 1 dimension"):
        moca.data.load(bad)
    # ts_unequal beside data that is not .ts takes no effect: refused
    with pytest.raises(ValueError, match="ts_unequal"):
        moca.data.load("generator:windows=4", ts_unequal="pad")


def test_ts_export_writes_split_npy_and_reads_it_back(toy, tmp_path):
    import moca
    r = run_tool("moca", "data", "export", "--data", f"ts:{toy}", "--sample-rate", "25",
                 "--out", str(tmp_path / "npy"))
    assert r.returncode == 0, r.stderr
    split = np.load(tmp_path / "npy" / "split.npy")
    assert split.tolist() == ["train"] * 7 + ["test"] * 5
    back = moca.data.load(tmp_path / "npy")
    assert back.meta["split"].tolist() == split.tolist()


def test_predefined_protocol_trains_on_train_and_tests_on_test(toy, tmp_path):
    import moca
    if not moca.with_torch:
        pytest.skip("built without LibTorch")
    d = moca.data.load(toy, rate=50, length=40, sample_rate=25)
    kw = dict(channel_names=d.meta["channel_names"], class_names=d.meta["class_names"],
              mode="scratch", protocol="predefined", epochs=1, warmup_epochs=0, batch_size=4,
              threads=1, patch_length=20)
    r = moca.run_protocol(None, d.X, d.y, split=d.meta["split"], **kw)
    assert len(r["folds"]) == 1
    assert r["folds"][0]["train_windows"] == 7 and r["folds"][0]["test_windows"] == 5
    assert r["folds"][0]["truth"] == d.y[7:].tolist()
    with pytest.raises(ValueError, match="needs the data's own split"):
        moca.run_protocol(None, d.X, d.y, **kw)
    with pytest.raises(ValueError, match="split takes no effect: only protocol='predefined'"):
        moca.run_protocol(None, d.X, d.y, split=d.meta["split"], **dict(kw, protocol="random"))
    # the shuffled-label control keeps the parts and the test truth
    ctl = moca.run_protocol(None, d.X, d.y, split=d.meta["split"], shuffle_labels=True, **kw)
    assert ctl["folds"][0]["truth"] == r["folds"][0]["truth"]
    # and `moca linprobe --protocol predefined` reads the archive's split from the folder
    out = tmp_path / "lp.json"
    res = run_tool("moca", "finetune", "--from-scratch", "--data", f"ts:{toy}",
                   "--sample-rate", "25", "--window-length", "40", "--protocol", "predefined",
                   "--epochs", "1", "--warmup-epochs", "0", "--batch", "4", "--threads", "1",
                   "--no-progress", "--json", str(out), rc=None)
    assert res.returncode == 0, res.stderr
    folds = json.loads(out.read_text())["folds"]
    assert folds[0]["train_windows"] == 7 and folds[0]["test_windows"] == 5


def test_transfer_study_takes_the_archive_split_by_default(toy, tmp_path):
    """transfer_study's auto protocol is the data's own split for a .ts pair (the set has no
    subjects for the subject-wise ones)."""
    r = run_tool("transfer_study", "--out", str(tmp_path / "st"), "--data", f"t=ts:{toy}",
                 "--set", "t.sample-rate=25", "--settings", "ft", "--scratch-preset", "tiny",
                 "--max-units", "0", "--threads", "1")
    assert "protocol predefined" in r.stdout + r.stderr, r.stdout + r.stderr
