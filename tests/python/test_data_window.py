"""moca data window on recordings as a new user downloads them (issue 41, part 1): one folder
per subject, one CSV of 27 channels from three IMUs plus an activity_label column at 20 Hz, with
gaps. Expected windows are computed here with numpy from the same table, independently of moca;
each bad input is one message, exit 2, and nothing written."""
import gzip
import json

import numpy as np

from conftest import run_tool

RATE = 20
IMUS = ("1", "2", "3")
AXES = ("ax", "ay", "az", "gx", "gy", "gz", "mx", "my", "mz")  # 9 per IMU: 27 columns


def _table(subject, rows, rng):
    """A subject's table: columns -> values (float, NaN where a cell is empty), labels."""
    cols = {f"{a}{i}": rng.normal(size=rows).round(4) for i in IMUS for a in AXES}
    labels = np.array(["walk"] * (rows // 2) + ["sit"] * (rows - rows // 2), dtype=object)
    labels[rows // 3: rows // 3 + 7] = ""  # an unlabelled stretch
    return cols, labels


def _write(path, cols, labels, holes=()):
    names = list(cols)
    lines = [",".join(["timestamp", *names, "activity_label"])]
    for t in range(len(labels)):
        cells = [f"{t / RATE:.3f}"]
        for n in names:
            cells.append("" if (t, n) in holes else repr(float(cols[n][t])))
        lines.append(",".join([*cells, labels[t]]))
    text = "\n".join(lines) + "\n"
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)


def _expected(cols, labels, channels, scale, length, stride, fill=()):
    """numpy's windows: inside labelled stretches, stride apart, majority label (ties by name)."""
    x = np.stack([cols[c] * scale.get(c, 1.0) for c in channels]).astype(np.float64)
    for t, n in fill:  # linear fill between the neighbouring rows (the gaps here are 1 row)
        k = channels.index(n)
        x[k, t] = (x[k, t - 1] + x[k, t + 1]) / 2
    out, lab = [], []
    t, T = 0, len(labels)
    while t < T:
        if labels[t] == "":
            t += 1
            continue
        b = t
        while b < T and labels[b] != "":
            b += 1
        for s in range(t, b - length + 1, stride):
            out.append(x[:, s:s + length])
            names, counts = np.unique(labels[s:s + length], return_counts=True)
            lab.append(names[np.argmax(counts)])
        t = b
    return np.array(out, dtype=np.float32), lab


def test_data_window_per_subject_folders_one_imu_groups_scale_and_gaps(tmp_path):
    rng = np.random.default_rng(7)
    raw = tmp_path / "raw"
    subjects = [f"subject{k}" for k in range(1, 4)]
    tables = {}
    for k, s in enumerate(subjects):
        (raw / s).mkdir(parents=True)
        tables[s] = _table(s, 200 + 37 * k, rng)
    # one-sample gaps in IMU 2's accelerometer: interpolated under interpolate:0.1
    holes = {"subject2": {(150, "ax2"), (171, "ay2")}}
    for s in subjects:
        name = "imu.csv.gz" if s == "subject3" else "imu.csv"
        _write(raw / s / name, *tables[s], holes=holes.get(s, ()))
    channels = ["ax2", "ay2", "az2", "gx2", "gy2", "gz2"]
    scale = {c: 0.101972 for c in channels[:3]}
    out = tmp_path / "w"
    p = run_tool("moca", "data", "window", "--from", raw, "--sample-rate", RATE,
                 "--window-seconds", "2", "--stride-seconds", "1", "--label-column",
                 "activity_label", "--time-column", "timestamp", "--channels", ",".join(channels),
                 "--groups", "acc=ax2,ay2,az2;gyro=gx2,gy2,gz2", "--scale", "acc=0.101972",
                 "--missing", "interpolate:0.1", "--out", out)
    assert "gaps: 2 (2 of" in p.stdout and "2 interpolated (2 rows), 0 dropped" in p.stdout
    X, Y, pid = (np.load(out / f, allow_pickle=False) for f in ("X.npy", "Y.npy", "pid.npy"))
    meta = json.loads((out / "meta.json").read_text())
    xs, ys, ps = [], [], []
    for k, s in enumerate(subjects):
        cols, labels = tables[s]
        x, y = _expected(cols, labels, channels, scale, 2 * RATE, RATE,
                         fill=sorted(holes.get(s, ())))
        xs.append(x)
        ys += y
        ps += [k] * len(y)
    want = np.concatenate(xs)
    assert X.shape == want.shape == (len(ys), 6, 40)
    np.testing.assert_allclose(X, want, rtol=1e-6, atol=1e-6)  # float32 of the same products
    assert list(Y) == ys and list(pid) == ps
    assert meta["subject_names"] == subjects
    assert meta["modalities"] == {"acc": [0, 1, 2], "gyro": [3, 4, 5]}
    assert meta["recordings"]["scale"] == {"acc": 0.101972}
    assert meta["recordings"]["stats"]["interpolated_gaps"] == 2
    # the default gap rule refuses, naming the cell and counting the file's gaps
    p = run_tool("moca", "data", "window", "--from", raw, "--sample-rate", RATE,
                 "--label-column", "activity_label", "--channels", ",".join(channels),
                 "--out", tmp_path / "e", rc=2)
    assert "subject2/imu.csv:152: column 'ax2' holds '', a missing value: the first of 2 gaps " \
        "(2 rows) in this file" in p.stderr, p.stderr
    assert "--missing error refuses gaps" in p.stderr
    assert not (tmp_path / "e").exists()
    # the control: a glob over the same files gives the same windows
    p = run_tool("moca", "data", "window", "--from", f"{raw}/subject*/imu.csv*",
                 "--sample-rate", RATE, "--window-seconds", "2", "--stride-seconds", "1",
                 "--label-column", "activity_label", "--time-column", "timestamp", "--channels",
                 ",".join(channels), "--groups", "acc=ax2,ay2,az2;gyro=gx2,gy2,gz2", "--scale",
                 "acc=0.101972", "--missing", "interpolate:0.1", "--out", tmp_path / "g")
    assert np.array_equal(np.load(tmp_path / "g" / "X.npy"), X)
    assert json.loads((tmp_path / "g" / "meta.json").read_text())["subject_names"] == subjects


def test_data_window_label_map_and_its_shuffled_control(tmp_path):
    """Capture-24's dictionary: raw annotations -> a scheme's labels. Permuting the map permutes
    the window labels and leaves X untouched."""
    rec = tmp_path / "rec"
    rec.mkdir()
    ann = ["7030 sleeping;MET 0.95", "walking, brisk;MET 3.5", "sitting;MET 1.5"]
    rows = ["time,x,y,z,annotation"]
    for t in range(90):
        a = ann[t // 30]
        rows.append(f"{t},{t},{2 * t},{-t}," + (f'"{a}"' if "," in a else a))
    (rec / "P001.csv").write_text("\n".join(rows) + "\n")
    d = tmp_path / "dict.csv"
    d.write_text('annotation,label:Walmsley2020\n7030 sleeping;MET 0.95,sleep\n'
                 '"walking, brisk;MET 3.5",light\nsitting;MET 1.5,sedentary\n')
    run_tool("moca", "data", "window", "--from", rec, "--sample-rate", "10", "--window-seconds",
             "3", "--label-map", f"{d}:Walmsley2020", "--out", tmp_path / "a")
    assert list(np.load(tmp_path / "a" / "Y.npy")) == ["sleep", "light", "sedentary"]
    s = tmp_path / "shuffled.csv"
    s.write_text('annotation,label:Walmsley2020\n7030 sleeping;MET 0.95,light\n'
                 '"walking, brisk;MET 3.5",sedentary\nsitting;MET 1.5,sleep\n')
    run_tool("moca", "data", "window", "--from", rec, "--sample-rate", "10", "--window-seconds",
             "3", "--label-map", s, "--out", tmp_path / "b")
    assert list(np.load(tmp_path / "b" / "Y.npy")) == ["light", "sedentary", "sleep"]
    assert np.array_equal(np.load(tmp_path / "a" / "X.npy"), np.load(tmp_path / "b" / "X.npy"))
    # a label the map lacks: refused under the default rule, unlabelled under drop
    d.write_text("annotation,label:Walmsley2020\n7030 sleeping;MET 0.95,sleep\n")
    p = run_tool("moca", "data", "window", "--from", rec, "--sample-rate", "10",
                 "--window-seconds", "3", "--label-map", d, "--out", tmp_path / "c", rc=2)
    assert "60 rows of this file carry 2 unmapped labels" in p.stderr, p.stderr
    assert "--unmapped error refuses them" in p.stderr
    assert not (tmp_path / "c").exists()
    p = run_tool("moca", "data", "window", "--from", rec, "--sample-rate", "10",
                 "--window-seconds", "3", "--label-map", d, "--unmapped", "drop", "--out",
                 tmp_path / "c")
    assert list(np.load(tmp_path / "c" / "Y.npy")) == ["sleep"]
    assert "label map: 60 rows with 2 labels the map lacks" in p.stdout


def test_data_window_bad_input_is_one_message_exit_2_nothing_written(tmp_path):
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "s1.csv").write_text("time,ax,ay,az,gx,gy,gz,label\n" +
                                "".join(f"{t},{t},0,0,0,0,0,walk\n" for t in range(30)))
    base = ["moca", "data", "window", "--sample-rate", "10", "--out", tmp_path / "o"]
    cases = [
        (["--from", f"{rec}/P*.csv"], "--from (" + f"{rec}/P*.csv" + ") is a glob that matches "
                                      "no file"),
        (["--channels", "ax,qx"], "--channels (qx): no such column in"),
        (["--groups", "acc=ax,ay;gyro=ay,gx"], "--modalities"),
        (["--groups", "acc=ax;mag=mx"], "--modalities"),
        (["--scale", "mag=2"], "--scale (mag=2) names no group 'mag' (the groups: all)"),
        (["--missing", "interpolate:0"], "--missing (interpolate:0) must be error, drop or "
                                         "interpolate:SECONDS with SECONDS > 0"),
        (["--missing", "interpolate:-1"], "--missing (interpolate:-1)"),
        (["--unmapped", "drop"], "--unmapped (drop) takes no effect"),
        (["--label-map", f"{tmp_path}/none.csv"], "no such file"),
    ]
    for extra, message in cases:
        where = [] if "--from" in extra else ["--from", rec]
        p = run_tool(*base, *where, *extra, rc=2)
        assert message in p.stderr, (extra, p.stderr)
        assert p.stderr.startswith("moca: "), p.stderr
        assert not (tmp_path / "o").exists(), extra


def test_window_recordings_from_python_matches_the_tool_and_names_keywords(tmp_path):
    """moca.data.window_recordings is the tool's call: the same windows as the folder moca data
    window writes, its counts in meta["recordings"], and its errors naming keywords."""
    import pytest

    moca = pytest.importorskip("moca")
    rec = tmp_path / "rec"
    (rec / "S1").mkdir(parents=True)
    (rec / "S2").mkdir()
    for k, s in enumerate(("S1", "S2")):
        rows = ["time,acc_x,acc_y,gyro_x,label"]
        for t in range(70):
            x = "" if (s == "S2" and t == 33) else str(t + 100 * k)
            rows.append(f"{t},{x},{-t},{t % 7},{'walk' if t < 40 else 'run'}")
        (rec / s / "a.csv").write_text("\n".join(rows) + "\n")
    kw = dict(sample_rate_hz=10, window_seconds=2, stride_seconds=1, missing="interpolate:0.1",
              scale="gyro=2")
    d = moca.data.window_recordings(rec, **kw)
    run_tool("moca", "data", "window", "--from", rec, "--sample-rate", "10", "--window-seconds",
             "2", "--stride-seconds", "1", "--missing", "interpolate:0.1", "--scale", "gyro=2",
             "--out", tmp_path / "o")
    X = np.load(tmp_path / "o" / "X.npy")
    assert np.array_equal(d.X, X)
    assert [d.meta["class_names"][i] for i in d.y] == list(np.load(tmp_path / "o" / "Y.npy"))
    assert list(d.pid) == list(np.load(tmp_path / "o" / "pid.npy"))
    assert d.meta["modalities"] == {"acc": [0, 1], "gyro": [2]}
    assert d.meta["recordings"]["stats"]["interpolated_gaps"] == 1
    # S2's acc_x at t = 33 lies on the line through its neighbours: 133
    i = [k for k in range(len(d.y)) if d.pid[k] == 1][3]  # S2's 4th window starts at t = 30
    assert d.X[i, 0, 3] == pytest.approx(133.0)
    assert np.array_equal(d.X[0, 2], 2 * (np.arange(20) % 7))  # gyro_x = t % 7, scaled by 2
    with pytest.raises(ValueError, match=r"missing \(interpolate:0\) must be error, drop"):
        moca.data.window_recordings(rec, **{**kw, "missing": "interpolate:0"})
    with pytest.raises(ValueError, match=r"unmapped \(drop\) takes no effect"):
        moca.data.window_recordings(rec, **kw, unmapped="drop")
    with pytest.raises(ValueError, match=r"source \(.*Q\*\) is a glob that matches no file"):
        moca.data.window_recordings(f"{rec}/Q*", **kw)
    with pytest.raises(TypeError):
        moca.data.window_recordings(rec, **kw, sample_rate=10)


def test_data_window_writes_shards_as_it_cuts(tmp_path):
    """--shard-mb: the windows of the one-X.npy run, in shards of the stated size written as
    they are cut (float16 as numpy rounds it), with the string labels as ids into meta.json's
    class names and the recordings' record kept; a producer that fails after some shards were
    written leaves nothing."""
    import moca
    rng = np.random.default_rng(3)
    raw = tmp_path / "raw"
    subjects = [f"subject{k}" for k in range(1, 4)]
    for k, s in enumerate(subjects):
        (raw / s).mkdir(parents=True)
        _write(raw / s / "imu.csv", *_table(s, 200 + 37 * k, rng))
    args = ["moca", "data", "window", "--from", raw, "--sample-rate", RATE, "--window-seconds",
            "2", "--stride-seconds", "1", "--label-column", "activity_label", "--channels",
            "ax1,ay1,az1,gx1,gy1,gz1", "--groups", "acc=ax1,ay1,az1;gyro=gx1,gy1,gz1"]
    run_tool(*args, "--out", tmp_path / "one")
    X = np.load(tmp_path / "one" / "X.npy")
    Y = np.load(tmp_path / "one" / "Y.npy")
    n = len(X)
    per_shard = int(0.004 * 2**20) // (6 * 40 * 4)  # 4 windows of 960 bytes in 4194 bytes
    p = run_tool(*args, "--shard-mb", "0.004", "--out", tmp_path / "sh")
    shards = -(-n // per_shard)
    assert f"{shards} shards X_000.npy" in p.stdout
    f = moca.data.open_stream(tmp_path / "sh")
    assert len(f.shards) == shards and [s[1] for s in f.shards][:-1] == [per_shard] * (shards - 1)
    np.testing.assert_array_equal(f.read(list(range(n))), X)
    lab = f.labels()
    assert [lab["meta"]["class_names"][i] for i in lab["y"]] == list(Y)
    np.testing.assert_array_equal(lab["pid"], np.load(tmp_path / "one" / "pid.npy"))
    meta = json.loads((tmp_path / "sh" / "meta.json").read_text())
    assert meta["recordings"]["columns"] == ["ax1", "ay1", "az1", "gx1", "gy1", "gz1"]
    assert meta["recordings"]["stats"]["labelled_rows"] == \
        json.loads((tmp_path / "one" / "meta.json").read_text())["recordings"]["stats"][
            "labelled_rows"]
    assert meta["modalities"] == {"acc": [0, 1, 2], "gyro": [3, 4, 5]}
    assert not (tmp_path / "sh" / "X.npy").exists()
    run_tool(*args, "--shard-mb", "0.004", "--float16", "--out", tmp_path / "h")
    h = moca.data.open_stream(tmp_path / "h")
    assert h.dtype == "<f2" and len(h.shards) == -(-n // (2 * per_shard))
    np.testing.assert_array_equal(h.read(list(range(n))),
                                  X.astype(np.float16).astype(np.float32))
    # float16 without shards takes no effect: refused, nothing written
    p = run_tool(*args, "--float16", "--out", tmp_path / "no", rc=2)
    assert "--float16 (true) takes no effect: only shards (--shard-mb) hold float16" in p.stderr
    assert not (tmp_path / "no").exists()
    # the control of the cleanup: a gap in the last subject stops the run after the shards of
    # the first two were written, and nothing is left
    cols, labels = _table("subject3", 274, np.random.default_rng(4))
    _write(raw / "subject3" / "imu.csv", cols, labels, holes={(250, "ax1")})
    p = run_tool(*args, "--shard-mb", "0.004", "--out", tmp_path / "fail", rc=2)
    assert "column 'ax1' holds ''" in p.stderr
    assert not (tmp_path / "fail").exists()
