"""Memory-mapped and sharded .npy folders (moca.data.open_stream, moca.data.write_shards,
`moca pretrain --stream`, `moca data export --shard-mb`, `moca data inspect`) against the same
arrays written and read by numpy: float16 widening and rounding as numpy does them, shards in
order, string labels across shards, the block shuffle's order, and each refusal of a folder that
disagrees with itself."""
import json
import os

import numpy as np
import pytest

import moca
from conftest import run_tool


def _folder(path, shards, C=3, L=20, dtype=np.float32, layout="NCL", seed=0, strings=False):
    """Shards X_000.npy, ... written by numpy, with Y_k (ints or strings) and pid_k."""
    rng = np.random.default_rng(seed)
    os.makedirs(path, exist_ok=True)
    X, y, pid = [], [], []
    for k, n in enumerate(shards):
        x = rng.standard_normal((n, C, L)).astype(np.float32)
        X.append(x)
        stored = x if layout == "NCL" else np.ascontiguousarray(x.transpose(0, 2, 1))
        np.save(os.path.join(path, f"X_{k:03d}.npy"), stored.astype(dtype))
        labels = rng.integers(0, 3, n)
        y.append(labels)
        np.save(os.path.join(path, f"Y_{k:03d}.npy"),
                np.array(["sit", "stand", "walk"])[labels] if strings else labels)
        p = rng.integers(0, 5, n)
        pid.append(p)
        np.save(os.path.join(path, f"pid_{k:03d}.npy"), p)
    with open(os.path.join(path, "meta.json"), "w") as f:
        json.dump({"sample_rate": 50.0, "layout": layout}, f)
    return np.concatenate(X), np.concatenate(y), np.concatenate(pid)


def _tiny_model(path):
    """A tiny MAE at 50 Hz x 200, pre-trained for one epoch on 120 generated windows."""
    run_tool("moca", "pretrain", "--preset", "tiny", "--synthetic-windows", "120", "--epochs", "1",
             "--batch", "20", "--threads", "1", "--no-progress", "--checkpoint", str(path))


def _walks(n, length, seed):
    """n windows of 6 random walks (float32), 7 classes, 4 subjects."""
    rng = np.random.default_rng(seed)
    X = np.cumsum(rng.standard_normal((n, 6, length)).astype(np.float32) * 0.05, axis=2)
    return X, rng.integers(0, 7, n), rng.integers(0, 4, n)


@pytest.mark.parametrize("dtype,layout", [(np.float32, "NCL"), (np.float16, "NLC")])
def test_mapped_reads_what_numpy_wrote(tmp_path, dtype, layout):
    X, y, pid = _folder(tmp_path / "d", [7, 5, 9], dtype=dtype, layout=layout, strings=True)
    f = moca.data.open_stream(tmp_path / "d")
    assert len(f) == 21 and (f.channels, f.length) == (3, 20)
    assert f.dtype == ("<f2" if dtype == np.float16 else "<f4")
    assert [s[1] for s in f.shards] == [7, 5, 9]
    # numpy's own widening of its float16 values is the known answer
    want = X.astype(dtype).astype(np.float32)
    rows = [20, 0, 7, 12, 6]
    np.testing.assert_array_equal(f.read(rows), want[rows])
    # control: other rows are other windows
    assert not np.array_equal(f.read([1]), want[[0]])
    meta = f.labels()
    assert meta["meta"]["class_names"] == ["sit", "stand", "walk"]  # one mapping for all shards
    np.testing.assert_array_equal(meta["y"], y)
    np.testing.assert_array_equal(meta["pid"], pid)
    # the whole folder through moca.data.load (every command but pretrain reads it into memory)
    d = moca.data.load(f"npy:{tmp_path / 'd'}")
    np.testing.assert_array_equal(d.X, want)


def test_write_shards_rounds_as_numpy(tmp_path):
    rng = np.random.default_rng(4)
    X = (rng.standard_normal((50, 2, 30)) * 1000).astype(np.float32)
    X[0, 0, :4] = [65519.0, 65520.0, 1e-8, -3e-6]  # below and at the overflow, subnormals
    y = rng.integers(0, 4, 50)
    pid = rng.integers(0, 3, 50)
    out = tmp_path / "s"
    os.makedirs(out)
    n = moca.data.write_shards(X, y, pid, out=out, shard_mb=20 * 2 * 30 * 2 / 2**20, float16=True)
    assert n == 3
    back = np.concatenate([np.load(out / f"X_{k:03d}.npy") for k in range(3)])
    assert back.dtype == np.float16
    with np.errstate(over="ignore"):  # 65520 overflows to inf, as intended
        want = X.astype(np.float16)
    np.testing.assert_array_equal(back.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(np.concatenate([np.load(out / f"Y_{k:03d}.npy")
                                                  for k in range(3)]), y)
    np.testing.assert_array_equal(np.concatenate([np.load(out / f"pid_{k:03d}.npy")
                                                  for k in range(3)]), pid)
    with pytest.raises(ValueError, match="shard_mb"):
        moca.data.write_shards(X, out=out, shard_mb=0)
    assert json.loads((out / "meta.json").read_text())["channel_names"] == ["ch0", "ch1"]
    # channel names: kept in meta.json, and their prefixes group the channels when read
    named = tmp_path / "named"
    os.makedirs(named)
    X6 = rng.standard_normal((10, 6, 30)).astype(np.float32)
    names = ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
    moca.data.write_shards(X6, out=named, shard_mb=1.0, channel_names=names)
    assert moca.data.open_stream(named).labels()["meta"]["channel_names"] == names
    assert moca.data.load(f"npy:{named}").meta["modalities"] == {"acc": [0, 1, 2],
                                                                  "gyro": [3, 4, 5]}
    for bad in (names[:5], names[:5] + ["acc_x"], "acc_x", [*names[:5], ""]):
        with pytest.raises(ValueError, match="channel_names"):
            moca.data.write_shards(X6, out=named, shard_mb=1.0, channel_names=bad)


def test_block_order_is_a_seeded_permutation(tmp_path):
    _folder(tmp_path / "d", [40, 40, 24])
    f = moca.data.open_stream(tmp_path / "d")
    a = f.block_order(3, block=8, pool=2)
    assert sorted(a) == list(range(104))
    assert a == f.block_order(3, block=8, pool=2)
    assert a != f.block_order(4, block=8, pool=2)
    # pools of 2 whole blocks of 8 stored rows: each 16 of the order are two blocks, complete
    for start in range(0, 104, 16):
        chunk = a[start:start + 16]
        blocks = {r // 8 for r in chunk}
        assert len(blocks) == len(chunk) // 8
        assert sorted(chunk) == sorted(r for b in blocks for r in range(8 * b, 8 * b + 8))
    # control: the full shuffle (block 0) mixes rows of many blocks in any 16
    full = f.block_order(3, block=0)
    assert max(len({r // 8 for r in full[s:s + 16]}) for s in range(0, 96, 16)) > 4


def test_refusals_name_the_file(tmp_path):
    d = tmp_path / "d"
    _folder(d, [4, 4])
    np.save(d / "X_001.npy", np.asfortranarray(np.ones((4, 3, 20), np.float32)))
    with pytest.raises(ValueError, match="X_001.npy.*Fortran"):
        moca.data.open_stream(d)
    np.save(d / "X_001.npy", np.ones((4, 3, 20), np.float64))
    with pytest.raises(ValueError, match="X_001.npy.*float64|X_001.npy.*'<f8'"):
        moca.data.open_stream(d)
    np.save(d / "X_001.npy", np.ones((4, 3, 20), np.float32))
    raw = (d / "X_001.npy").read_bytes()
    (d / "X_001.npy").write_bytes(raw[:-8])
    with pytest.raises(ValueError, match="X_001.npy: truncated data"):
        moca.data.open_stream(d)
    np.save(d / "X_001.npy", np.ones((4, 3, 20), np.float32))
    np.save(d / "Y_001.npy", np.zeros(5, np.int64))
    with pytest.raises(ValueError, match="Y_001.npy.*one entry per window"):
        moca.data.open_stream(d)
    np.save(d / "Y_001.npy", np.zeros(4, np.int64))
    f = moca.data.open_stream(d)
    bad = np.ones((4, 3, 20), np.float32)
    bad[2, 1, 5] = np.nan
    np.save(d / "X_001.npy", bad)  # same size: the change shows in the modification time
    os.utime(d / "X_001.npy", ns=(0, 4_000_000_000_000_000_000))
    with pytest.raises(RuntimeError, match="X_001.npy changed while it was read"):
        f.check_unchanged()
    g = moca.data.open_stream(d)
    with pytest.raises(RuntimeError, match="X_001.npy: window 2 .row 6 of the folder."):
        g.read([6])


def test_tools_stream_a_sharded_folder(tmp_path):
    d = tmp_path / "d"
    _folder(d, [30, 30, 20], C=6, L=20)
    r = run_tool("moca", "data", "inspect", "--data", str(d), "--json", str(tmp_path / "i.json"))
    j = json.loads((tmp_path / "i.json").read_text())
    assert j["shards"] == 3 and j["windows"] == 80 and j["nonfinite_windows"] is None
    assert "not scanned" in r.stdout
    # what the programs do, in the JSON too: 7:3 of 80 windows, labels 0-2, subjects 0-4
    assert j["programs"]["split"]["random"] == {"train": 56, "test": 24, "train_fraction": 0.7,
                                                "seed": 1004}
    assert j["programs"]["kcca_score"]["patches"] == 1  # 20 samples, patches of 20
    assert j["programs"]["classifiers"] == {"classes": 3, "subjects": 5, "refused": False,
                                            "subject_protocols": True}
    run_tool("moca", "pretrain", "--data", str(d), "--preset", "cpu-small", "--patch-length", "10",
             "--epochs", "1", "--batch", "16", "--split", "all", "--threads", "1",
             "--no-progress", "--checkpoint", str(tmp_path / "m.pt"), "--json",
             str(tmp_path / "p.json"))
    p = json.loads((tmp_path / "p.json").read_text())
    assert p["iterations"] == 5 and p["windows_read"] == 80
    assert p["bytes_read"] == 80 * 6 * 20 * 4
    assert "3 shards" in p["storage"]
    metrics = [json.loads(line) for line in open(str(tmp_path / "m.pt") + ".metrics.jsonl")]
    assert metrics[0]["read_windows"] == 80 and metrics[0]["read_windows_per_s"] > 0
    # re-sharded as float16 in constant memory, read back as numpy rounds it
    run_tool("moca", "data", "export", "--stream", "--data", str(d), "--shard-mb", "0.01",
             "--float16", "--out", str(tmp_path / "h"))
    h = moca.data.open_stream(tmp_path / "h")
    src = moca.data.open_stream(d)
    rows = list(range(80))
    np.testing.assert_array_equal(h.read(rows),
                                  src.read(rows).astype(np.float16).astype(np.float32))
    assert len(h.shards) == 80 * 6 * 20 * 2 // int(0.01 * 2**20) + 1


def test_kcca_score_streams_the_same_scores(tmp_path):
    d = tmp_path / "d"
    _folder(d, [90, 90, 60], C=6, L=200)  # 50 Hz x 200: in memory too, read as stored
    single = tmp_path / "one"
    os.makedirs(single)
    X = np.concatenate([np.load(d / f"X_{k:03d}.npy") for k in range(3)])
    np.save(single / "X.npy", X)
    np.save(single / "Y.npy", np.concatenate([np.load(d / f"Y_{k:03d}.npy") for k in range(3)]))
    np.save(single / "pid.npy", np.concatenate([np.load(d / f"pid_{k:03d}.npy")
                                                for k in range(3)]))
    (single / "meta.json").write_text((d / "meta.json").read_text())
    base = ["--scheme", "cross", "--draws", "2", "--samples", "100", "--threads", "1"]
    scores = []
    for data, extra in ((d, []), (single, ["--stream"]), (single, [])):
        out = tmp_path / f"k{len(scores)}.json"
        run_tool("kcca_score", *base, "--data", str(data), *extra, "--json", str(out))
        j = json.loads(out.read_text())
        scores.append([s["ci"] for s in j["schemes"]])
    assert scores[0] == scores[1] == scores[2]  # a sample of 100 of 240, read alike
    # control: another sample size scores other windows
    run_tool("kcca_score", "--scheme", "cross", "--draws", "2", "--samples", "90", "--threads",
             "1", "--data", str(d), "--json", str(tmp_path / "k90.json"))
    assert [s["ci"] for s in json.loads((tmp_path / "k90.json").read_text())["schemes"]] \
        != scores[0]
    p = run_tool("kcca_score", *base, "--stream", rc=2)
    assert "--stream (true) takes no effect: only a .npy folder is streamed" in p.stderr


def test_kcca_score_takes_a_streamed_folders_own_length(tmp_path):
    """A streamed folder keeps its windows' length (150 here): the patch length must divide 150,
    not the default 200."""
    d = tmp_path / "d"
    _folder(d, [60, 60], C=6, L=150)
    base = ["--scheme", "cross", "--draws", "2", "--samples", "100", "--threads", "1", "--pca",
            "8", "--data", str(d)]
    run_tool("kcca_score", *base, "--patch-length", "30", "--json", str(tmp_path / "k.json"))
    settings = json.loads((tmp_path / "k.json").read_text())["settings"]
    assert settings["grid"] == {"channels": 6, "patch_length": 30, "patches": 5}  # 150 / 30
    # control: 40 divides 200 but not 150; the message lists what divides 150
    p = run_tool("kcca_score", *base, "--patch-length", "40", rc=2)
    assert ("--patch-length (40) must divide the window length 150 (1, 2, 3, 5, 6, 10, 15, 25, "
            "30, 50, 75, 150)") in p.stderr
    # moca data inspect says so before a run: the default 20 does not divide 150
    r = run_tool("moca", "data", "inspect", "--data", str(d), "--json", str(tmp_path / "i.json"))
    assert ("--patch-length 20 does not divide L = 150; pass one of 1, 2, 3, 5, 6, 10, 15, 25, "
            "30, 50, 75, 150") in r.stdout
    assert json.loads((tmp_path / "i.json").read_text())["programs"]["kcca_score"]["patches"] \
        is None


def test_predict_streams_the_same_predictions(tmp_path):
    """A kept classifier on a sharded folder (read 1024 windows at a time) and on the same
    windows in memory: the same predictions. The folder is at 25 Hz x 100, so each chunk is resampled
    to the classifier's 50 Hz x 200 as open_dataset resamples in memory."""
    _tiny_model(tmp_path / "m.pt")
    run_tool("moca", "linprobe", "--synthetic-windows", "120", "--checkpoint", str(tmp_path / "m.pt"),
             "--epochs", "1", "--threads", "1", "--no-progress", "--save-model",
             str(tmp_path / "clf.pt"))
    rng = np.random.default_rng(8)
    n = 1100
    X = np.cumsum(rng.standard_normal((n, 6, 100)).astype(np.float32) * 0.05, axis=2)
    y = rng.integers(0, 7, n)
    pid = rng.integers(0, 4, n)
    meta = {"sample_rate": 25.0, "channel_names": ["acc_x", "acc_y", "acc_z", "gyro_x",
                                                   "gyro_y", "gyro_z"],
            "class_names": ["transition", "walking", "upstairs", "downstairs", "sitting",
                            "standing", "laying"]}
    one = tmp_path / "one"
    os.makedirs(one)
    np.save(one / "X.npy", X)
    np.save(one / "Y.npy", y)
    np.save(one / "pid.npy", pid)
    (one / "meta.json").write_text(json.dumps(meta))
    shards = tmp_path / "shards"
    os.makedirs(shards)
    assert moca.data.write_shards(X, y, pid, out=shards, shard_mb=1.0, rate=25.0) == 3
    (shards / "meta.json").write_text(json.dumps(dict(meta, windows=n)))
    out, logs = {}, {}
    for name, data in (("memory", one), ("stream", shards)):
        p = run_tool("moca", "predict", "--model", str(tmp_path / "clf.pt"), "--data", str(data),
                     "--proba", "--threads", "1", "--out", str(tmp_path / f"{name}.csv"))
        out[name] = (tmp_path / f"{name}.csv").read_text()
        logs[name] = p.stdout + p.stderr
    # the stream says that it resamples, as embed and impute do
    assert "25 Hz x 100 windows resampled as they are read to 50 Hz x 200" in logs["stream"]
    # The probe's head runs on 1024 windows' features at a time instead of all 1100: float32
    # sums in another blocking, so the probabilities agree to a stated 1e-6, the classes exactly.
    rows = {k: [line.split(",") for line in v.splitlines()[1:]] for k, v in out.items()}
    assert len(rows["memory"]) == len(rows["stream"]) == n
    assert [r[:4] for r in rows["stream"]] == [r[:4] for r in rows["memory"]]
    pm = np.array([[float(x) for x in r[4:]] for r in rows["memory"]])
    ps = np.array([[float(x) for x in r[4:]] for r in rows["stream"]])
    assert np.abs(pm - ps).max() < 1e-6
    # control: other windows, other predictions
    np.save(one / "X.npy", X[::-1].copy())
    run_tool("moca", "predict", "--model", str(tmp_path / "clf.pt"), "--data", str(one),
             "--proba", "--threads", "1", "--out", str(tmp_path / "reversed.csv"))
    assert (tmp_path / "reversed.csv").read_text() != out["memory"]


def test_shuffle_pool_beside_the_full_shuffle_is_refused(tmp_path):
    args = ["pretrain", "--synthetic-windows", "40", "--epochs", "1", "--batch", "10",
            "--preset", "tiny", "--threads", "1", "--no-progress",
            "--checkpoint", str(tmp_path / "m.pt")]
    p = run_tool("moca", *args, "--shuffle-pool", "8", rc=2)
    assert "--shuffle-pool (8) takes no effect: the full shuffle" in p.stderr
    run_tool("moca", *args, "--shuffle-pool", "8", "--shuffle-block", "4")  # the control


def _hapt_like(path, X, y, pid, shard_mb=None):
    """X (n, 6, L) at 50 Hz as one X.npy (numpy) or as shards (moca.data.write_shards), with the
    HAPT channel and class names, so that the modality groups are acc and gyro."""
    meta = {"sample_rate": 50.0, "channel_names": ["acc_x", "acc_y", "acc_z", "gyro_x",
                                                   "gyro_y", "gyro_z"],
            "class_names": ["transition", "walking", "upstairs", "downstairs", "sitting",
                            "standing", "laying"]}
    os.makedirs(path)
    if shard_mb is None:
        np.save(path / "X.npy", X)
        np.save(path / "Y.npy", y)
        np.save(path / "pid.npy", pid)
    else:
        assert moca.data.write_shards(X, y, pid, out=path, shard_mb=shard_mb, rate=50.0) > 1
        meta["windows"] = len(X)
    (path / "meta.json").write_text(json.dumps(meta))


def test_embed_and_impute_stream_as_in_memory(tmp_path):
    """moca embed and moca impute on 1100 windows read 1024 at a time from shards, against the
    same windows in memory: the same masks, features, labels and error sums (the features to a
    stated 1e-5: the encoder runs on other batches), and the target variance of numpy's
    np.var(ddof=1). MICE is fitted per chunk streamed (documented): it must differ, and only
    it."""
    _tiny_model(tmp_path / "m.pt")
    n = 1100
    X, y, pid = _walks(n, 200, seed=9)
    _hapt_like(tmp_path / "one", X, y, pid)
    _hapt_like(tmp_path / "shards", X, y, pid, shard_mb=2.0)
    common = ["--checkpoint", str(tmp_path / "m.pt"), "--split", "all", "--threads", "1",
              "--no-progress"]
    emb = {}
    for name in ("one", "shards"):
        run_tool("moca", "embed", *common, "--data", str(tmp_path / name), "--policy",
                 "random:ratio=0.5", "--out", str(tmp_path / f"e_{name}"))
        run_tool("moca", "embed", *common, "--data", str(tmp_path / name), "--pool", "mean",
                 "--out", str(tmp_path / f"p_{name}"))
        emb[name] = {f: np.load(tmp_path / f"e_{name}" / f) for f in ("Z_U.npy", "Z_M.npy",
                                                                      "labels.npy")}
        emb[name]["masks"] = (tmp_path / f"e_{name}" / "masks.txt").read_text()
        emb[name]["pooled"] = np.load(tmp_path / f"p_{name}" / "embedding_m.npy")
    one, sh = emb["one"], emb["shards"]
    assert one["Z_U.npy"].shape == (n, one["Z_U.npy"].shape[1])
    assert sh["masks"] == one["masks"] and len(one["masks"].splitlines()) == n
    np.testing.assert_array_equal(sh["labels.npy"], y)
    for key in ("Z_U.npy", "Z_M.npy", "pooled"):
        np.testing.assert_allclose(sh[key], one[key], rtol=0, atol=1e-5)
    # control: another seed draws other masks, and so other masked-view features
    run_tool("moca", "embed", *common, "--data", str(tmp_path / "shards"), "--policy",
             "random:ratio=0.5", "--seed", "1", "--out", str(tmp_path / "e_seed1"))
    assert (tmp_path / "e_seed1" / "masks.txt").read_text() != one["masks"]
    assert np.abs(np.load(tmp_path / "e_seed1" / "Z_M.npy") - one["Z_M.npy"]).max() > 1e-3

    imp = {}
    for name in ("one", "shards"):
        run_tool("moca", "impute", *common, "--data", str(tmp_path / name), "--task",
                 "random:ratio=0.5", "sensor:keep=1", "--mice-draws", "1", "--mice-iterations",
                 "2", "--json", str(tmp_path / f"i_{name}.json"))
        j = json.loads((tmp_path / f"i_{name}.json").read_text())
        imp[name] = {(c["method"], c["task"]): c for c in j["table"]["cells"]}
        assert j["data"]["evaluated_windows"] == n
        assert j["table"]["target_variance"] == pytest.approx(
            np.var(X.astype(np.float64), ddof=1), rel=1e-12)
    assert imp["one"].keys() == imp["shards"].keys() and len(imp["one"]) == 8
    for key, c in imp["one"].items():
        s = imp["shards"][key]
        assert s["count"] == c["count"] > 0
        if key[0] == "MICE":
            assert s["mse"] != c["mse"] and np.isfinite(s["mse"])  # fitted per chunk
        elif key[0] == "m.pt":  # the model's reconstructions: other batches, float32
            assert s["mse"] == pytest.approx(c["mse"], rel=1e-5)
        else:
            assert s["mae"] == pytest.approx(c["mae"], rel=1e-12)
            assert s["mse"] == pytest.approx(c["mse"], rel=1e-12)


def test_embed_resamples_a_streamed_folder_as_in_memory(tmp_path):
    """A folder at 25 Hz x 100 and a model at 50 Hz x 200: streamed, each window is resampled as
    it is read (ResampledSource), in memory as open_dataset fits the set. The same masks and
    features (to 1e-5), and the log says so; the control: the windows brought to the model's
    geometry another way give other features."""
    _tiny_model(tmp_path / "m.pt")
    n = 1100
    X, y, pid = _walks(n, 100, seed=10)
    names = ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"]
    one, sh = tmp_path / "one", tmp_path / "shards"
    os.makedirs(one)
    np.save(one / "X.npy", X)
    np.save(one / "Y.npy", y)
    np.save(one / "pid.npy", pid)
    (one / "meta.json").write_text(json.dumps({"sample_rate": 25.0, "channel_names": names}))
    os.makedirs(sh)
    moca.data.write_shards(X, y, pid, out=sh, shard_mb=1.0, rate=25.0, channel_names=names)
    out = {}
    for name, data in (("one", one), ("shards", sh)):
        p = run_tool("moca", "embed", "--checkpoint", str(tmp_path / "m.pt"), "--data", str(data),
                     "--split", "all", "--threads", "1", "--policy", "random:ratio=0.5",
                     "--out", str(tmp_path / f"e_{name}"))
        out[name] = p.stderr
    assert "25 Hz x 100 windows resampled as they are read to 50 Hz x 200" in out["shards"]
    assert (tmp_path / "e_one" / "masks.txt").read_text() == \
        (tmp_path / "e_shards" / "masks.txt").read_text()
    for f in ("Z_U.npy", "Z_M.npy"):
        a, b = np.load(tmp_path / "e_one" / f), np.load(tmp_path / "e_shards" / f)
        assert a.shape == (n, a.shape[1])
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-5)
    # the control: the windows brought to 50 Hz x 200 another way (each sample repeated) give
    # other features, so the agreement above is the resampling's
    rep = tmp_path / "rep"
    os.makedirs(rep)
    np.save(rep / "X.npy", np.repeat(X, 2, axis=2))
    np.save(rep / "Y.npy", y)
    np.save(rep / "pid.npy", pid)
    (rep / "meta.json").write_text(json.dumps({"sample_rate": 50.0, "channel_names": names}))
    run_tool("moca", "embed", "--checkpoint", str(tmp_path / "m.pt"), "--data", str(rep),
             "--split", "all", "--threads", "1", "--policy", "random:ratio=0.5",
             "--out", str(tmp_path / "e_rep"))
    assert np.abs(np.load(tmp_path / "e_rep" / "Z_U.npy") -
                  np.load(tmp_path / "e_one" / "Z_U.npy")).max() > 1e-3
