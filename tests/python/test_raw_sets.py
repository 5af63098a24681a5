"""The raw-set readers (--data pamap2:DIR, opportunity:DIR) against ssl-wearables' preparation
re-done here in numpy (data_parsing/pamap.py and oppo.py: the reshape of two grids half a window
apart, windows more than half label 0 dropped, the mode label, units to g, clip ±3, the classes
kept, PAMAP2's subject 109 left out, OPPORTUNITY's lie 5 -> 3), on random files in each
download's layout: blank-separated columns, NaN cells, dropped packets as NaN rows."""
import numpy as np
import pytest

G = 9.80665
KEEP = (1, 2, 3, 4, 12, 13, 16, 17)


def _write_subject(path, rows, rng):
    ids = np.array([0, 1, 2, 3, 4, 5, 12, 13, 16, 17, 24])
    labels = []
    while len(labels) < rows:
        labels += [int(rng.choice(ids))] * int(rng.integers(150, 2500))
    labels = np.array(labels[:rows])
    data = rng.normal(0, 1, (rows, 54))
    data[:, 0] = 5 + np.arange(rows) / 100
    data[:, 1] = labels
    data[:, 2] = np.where(np.arange(rows) % 11 == 0, 100.0, np.nan)
    data[:, 4:7] = rng.normal(0, 8, (rows, 3)).round(5)  # m/s², some beyond ±3 g
    lost = rng.random(rows) < 0.01
    data[lost, 4:7] = np.nan
    data[rng.random(rows) < 0.02, 21] = np.nan  # another IMU's gap: not a dropped row
    with open(path, "w") as f:
        for r in data:
            f.write(" ".join("NaN" if np.isnan(v) else repr(float(v)) for v in r) + "\n")


def _ssl_wearables(path, epoch_len=10, rate=100, overlap=5, cols=(0, 1, 4, 5, 6), unit=G,
                   classes=KEEP):
    """pamap.py's (oppo.py's) steps for one file; returns X (n, W, 3) in g, labels, starts."""
    d = np.loadtxt(path)[:, list(cols)]
    d = d[~np.isnan(d).any(axis=1)]
    w = epoch_len * rate
    d = d[:len(d) // w * w]
    off = overlap * rate
    base, shifted = d, d[off:-off]
    X = np.concatenate([base[:, 2:5].reshape(-1, w, 3), shifted[:, 2:5].reshape(-1, w, 3)])
    lab = np.concatenate([base[:, 1].reshape(-1, w), shifted[:, 1].reshape(-1, w)])
    starts = np.concatenate([np.arange(len(base) // w) * w, off + np.arange(len(shifted) // w) * w])
    keep = (lab == 0).sum(axis=1) <= 0.5 * w
    X, lab, starts = X[keep], lab[keep], starts[keep]
    mode = []
    for row in lab.astype(int):
        vals, counts = np.unique(row, return_counts=True)
        mode.append(vals[np.argmax(counts)])  # ties: the smallest, as scipy.stats.mode
    mode = np.array(mode)
    X = np.clip(X / unit, -3, 3)
    keep = np.isin(mode, classes)
    return X[keep], mode[keep], starts[keep]


def _check_against_script(d, parts, names, prefix):
    """`parts`: (subject, (X, labels, starts)) per file in moca's file order; the script's windows
    in moca's order (by start within a file) must be moca's: samples, class names, subjects."""
    want_x, want_y, want_pid, subjects = [], [], [], []
    for s, (X, y, starts) in parts:
        order = np.argsort(starts, kind="stable")
        if f"{prefix}{s}" not in subjects:
            subjects.append(f"{prefix}{s}")
        want_x.append(X[order])
        want_y += [names[v] for v in y[order]]
        want_pid += [subjects.index(f"{prefix}{s}")] * len(y)
    want = np.concatenate(want_x).transpose(0, 2, 1)
    assert len(want) > 10
    assert d.X.shape == want.shape
    np.testing.assert_allclose(d.X, want, rtol=1e-6, atol=1e-6)
    assert [d.meta["class_names"][i] for i in d.y] == want_y
    assert list(d.pid) == want_pid
    assert d.meta["subject_names"] == subjects


def test_pamap2_reader_equals_ssl_wearables_preparation(tmp_path):
    moca = pytest.importorskip("moca")
    rng = np.random.default_rng(3)
    root = tmp_path / "PAMAP2_Dataset"
    (root / "Protocol").mkdir(parents=True)
    (root / "Optional").mkdir()
    files = [("Protocol", 101, 9000), ("Protocol", 105, 7300), ("Protocol", 109, 4000),
             ("Optional", 105, 5200)]
    for folder, s, rows in files:
        _write_subject(root / folder / f"subject{s}.dat", rows, rng)
    d = moca.data.load(f"pamap2:{tmp_path}", rate=100, length=1000)
    names = dict(zip(KEEP, ["lying", "sitting", "standing", "walking", "ascending stairs",
                            "descending stairs", "vacuum cleaning", "ironing"]))
    parts = [(s, _ssl_wearables(root / folder / f"subject{s}.dat"))
             for folder, s, _ in sorted(files, key=lambda f: (f[1], f[0] != "Protocol"))
             if s != 109]
    _check_against_script(d, parts, names, "subject")
    assert any(n.startswith("PAMAP2: ") and "rows with NaN in the kept columns dropped" in n
               for n in d.meta["notes"])


def test_opportunity_reader_equals_ssl_wearables_preparation(tmp_path):
    moca = pytest.importorskip("moca")
    rng = np.random.default_rng(5)
    folder = tmp_path / "OpportunityUCIDataset" / "dataset"
    folder.mkdir(parents=True)
    files = [("S1-ADL1.dat", 1, 3000), ("S1-Drill.dat", 1, 2100), ("S3-ADL2.dat", 3, 2600)]
    for name, _, rows in files:
        labels = []
        while len(labels) < rows:
            labels += [int(rng.choice([0, 1, 2, 4, 5]))] * int(rng.integers(60, 700))
        data = rng.normal(0, 300, (rows, 250)).round(1)
        data[:, 0] = np.arange(rows) * 33
        data[:, 22:25] = rng.normal(0, 1500, (rows, 3)).round(0)  # milli g, some beyond 3 g
        data[:, 243] = labels[:rows]
        data[:, 244:] = 0
        data[rng.random(rows) < 0.01, 23] = np.nan
        data[rng.random(rows) < 0.03, 60] = np.nan  # another sensor's gap: not a dropped row
        with open(folder / name, "w") as f:
            for r in data:
                f.write(" ".join("NaN" if np.isnan(v) else repr(float(v)) for v in r) + "\n")
    d = moca.data.load(f"opportunity:{tmp_path}", rate=30, length=330)
    names = {1: "stand", 2: "walk", 5: "lie", 4: "sit"}
    parts = [(s, _ssl_wearables(folder / name, rate=33, cols=(0, 243, 22, 23, 24), unit=1000,
                                classes=(1, 2, 4, 5)))
             for name, s, _ in sorted(files, key=lambda f: f[1])]
    _check_against_script(d, parts, names, "S")


def test_wisdm_reader_equals_its_stated_grid_rule(tmp_path):
    """WISDM 2019's watch accelerometer: the 20 Hz grid (nearest sample within 25 ms, else
    missing), 10-s windows every 5 s with no missing point, /9.81, linear resize to 300 — re-done
    here with numpy (searchsorted, interp) on jittered streams with gaps."""
    moca = pytest.importorskip("moca")
    rng = np.random.default_rng(11)
    folder = tmp_path / "wisdm-dataset" / "raw" / "watch" / "accel"
    folder.mkdir(parents=True)
    P = 50_000_000
    codes = "ABCDEFGHIJKLMOPQRS"
    expect = {}
    for subject in (1600, 1603, 1616):
        lines = []
        for code in rng.choice(list(codes), 3, replace=False):
            n = int(rng.integers(300, 900))
            t = 10**13 + np.arange(n) * P + rng.integers(-20_000_000, 20_000_000, n)
            t[0] = 10**13
            keep = rng.random(n) > 0.004  # a few lost samples
            keep[0] = True
            t = np.sort(t[keep])
            xyz = rng.normal(0, 5, (len(t), 3)).round(4)
            lines += [f"{subject},{code},{ti},{x},{y},{z};" for ti, (x, y, z) in zip(t, xyz)]
            expect[(subject, code)] = (t, xyz)
        rng.shuffle(lines)  # any order: each activity's stream is sorted by time
        (folder / f"data_{subject}_accel_watch.txt").write_text("\n".join(lines) + "\n")
    d = moca.data.load(f"wisdm:{tmp_path}", rate=30, length=300)
    want_x, want_y, want_pid, subjects = [], [], [], []
    for subject in (1600, 1603):
        for code in sorted(c for s, c in expect if s == subject):
            t, xyz = expect[(subject, code)]
            grid = t[0] + np.arange((t[-1] - t[0]) // P + 1) * P
            j = np.clip(np.searchsorted(t, grid, side="right") - 1, 0, len(t) - 1)
            right = np.minimum(j + 1, len(t) - 1)
            pick = np.where((t[right] - grid < grid - t[j]) & (right > j), right, j)
            ok = 2 * np.abs(t[pick] - grid) <= P
            g = xyz[pick]
            for s in range(0, len(grid) - 199, 100):
                if not ok[s:s + 200].all():
                    continue
                pos = np.arange(300) * 199 / 299
                want_x.append(np.stack([np.interp(pos, np.arange(200), g[s:s + 200, c])
                                        for c in range(3)]) / 9.81)
                want_y.append(codes.index(code))
                if str(subject) not in subjects:
                    subjects.append(str(subject))
                want_pid.append(subjects.index(str(subject)))
    assert len(want_x) > 10
    assert d.X.shape == (len(want_x), 3, 300)
    np.testing.assert_allclose(d.X, np.array(want_x), rtol=1e-5, atol=1e-5)
    assert list(d.y) == want_y and list(d.pid) == want_pid
    assert d.meta["subject_names"] == subjects  # 1616 left out


# RealWorld: the download's archives written with Python's zipfile (deflated; one activity an
# archive of session archives; the script's five `_2_` file names), against
# realworld_raw_preprocess.py + make_realworld.py re-done here with zipfile and numpy.
RW_ACTIVITIES = ["climbingdown", "climbingup", "jumping", "lying", "running", "sitting",
                 "standing", "walking"]
RW_PARTS = ["chest", "forearm", "head", "shin", "thigh", "upperarm", "waist"]
RW_SECOND = {(4, "walking"), (6, "sitting"), (7, "sitting"), (8, "standing"), (13, "walking")}


def _rw_session(rng, label, prefix, drop_forearm=False):
    """One session's archive bytes: the readMe stating a random length per position, and the
    forearm's CSV (the only position either side reads)."""
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        lines = []
        for part in RW_PARTS:
            rows = int(rng.integers(700, 2600))
            lines.append(f"> entries: {rows}")
            if part != "forearm" or drop_forearm:
                continue
            xyz = rng.normal(0, 6, (rows, 3)).round(6)
            if rng.random() < 0.2:
                xyz[rng.integers(0, rows), 0] = np.nan  # an empty cell
            body = "id,attr_time,attr_x,attr_y,attr_z\n" + "".join(
                f"{r + 1},{1435000000000 + 20 * r}," +
                ",".join("" if np.isnan(v) else repr(float(v)) for v in xyz[r]) + "\n"
                for r in range(rows))
            z.writestr(f"{prefix}_{part}.csv", body)
        z.writestr("readMe", "\n".join(lines) + "\n")
    return buf.getvalue()


def _write_realworld(root, rng):
    import io
    import zipfile
    for p in (1, 4, 6):
        data = root / "realworld2016_dataset" / f"proband{p}" / "data"
        data.mkdir(parents=True)
        for a in RW_ACTIVITIES:
            path = data / f"acc_{a}_csv.zip"
            if p == 6 and a in ("climbingup", "climbingdown"):
                with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                    for i in (1, 2, 3):
                        z.writestr(f"acc_{a}_{i}_csv.zip",
                                   _rw_session(rng, a, f"acc_{a}_{i}"))
                continue
            second = "_2" if (p, a) in RW_SECOND else ""
            path.write_bytes(_rw_session(rng, a, f"acc_{a}{second}",
                                         drop_forearm=(p == 1 and a == "jumping")))


def _rw_script(root):
    """The two scripts' steps: per session the forearm, cut to the readMe's shortest entries,
    windows of 500 every 250 (whole, no NaN), / 9.81, resized to 300 (scipy's interp1d linear =
    numpy's interp on linspace)."""
    import io
    import zipfile

    def xyz_of(z, csv, n):
        lines = z.read(csv).decode().splitlines()[1:]
        rows = [[float(v) if v else np.nan for v in line.split(",")[2:5]] for line in lines]
        return np.array(rows)[:n]

    def min_len(z):
        return min(int(line[11:16]) for line in z.read("readMe").decode().splitlines(True)
                   if line.startswith("> entries"))

    X, Y, P = [], [], []
    for p in (1, 4, 6):
        data = root / "realworld2016_dataset" / f"proband{p}" / "data"
        for a in RW_ACTIVITIES:
            z = zipfile.ZipFile(data / f"acc_{a}_csv.zip")
            sessions = []
            if z.namelist()[0].endswith("zip"):
                for i in range(1, len(z.namelist()) + 1):
                    inner = zipfile.ZipFile(io.BytesIO(z.read(f"acc_{a}_{i}_csv.zip")))
                    sessions.append((inner, f"acc_{a}_{i}_forearm.csv"))
            else:
                second = "_2" if (p, a) in RW_SECOND else ""
                sessions.append((z, f"acc_{a}{second}_forearm.csv"))
            for s, csv in sessions:
                n = min_len(s)
                if csv not in s.namelist():
                    continue  # the script's NaN position
                d = xyz_of(s, csv, n)
                for i in range(0, len(d), 250):
                    w = d[i:i + 500]
                    if len(w) != 500 or np.isnan(w).any():
                        continue
                    X.append(w)
                    Y.append(a)
                    P.append(p)
    X = np.asarray(X) / 9.81
    t0, t1 = np.linspace(0, 1, 500), np.linspace(0, 1, 300)
    X = np.stack([np.stack([np.interp(t1, t0, w[:, c]) for c in range(3)]) for w in X])
    return X.astype(np.float32), Y, P


def test_realworld_reader_equals_ssl_wearables_preparation(tmp_path):
    import moca
    rng = np.random.default_rng(11)
    _write_realworld(tmp_path, rng)
    want, labels, probands = _rw_script(tmp_path)
    assert len(want) > 50
    d = moca.data.load(f"realworld:{tmp_path}", rate=30, length=300)
    assert d.X.shape == want.shape
    np.testing.assert_allclose(d.X, want, rtol=1e-6, atol=1e-6)
    assert [d.meta["class_names"][k] for k in d.y] == labels
    assert [int(d.meta["subject_names"][k]) for k in d.pid] == probands
    # a bare folder is detected as RealWorld
    assert moca.data.load(tmp_path, rate=30, length=300).X.shape == want.shape
