#!/usr/bin/python3
"""Read speed of `moca data window` on a raw recording against pandas and numpy reading the same
CSV file, in one run (issue 41: "the readers run at I/O speed").

    python3 bench/python/bench_recordings.py --moca build/bin/moca [--mb 128] [--rounds 3]
    python3 bench/python/bench_recordings.py --moca build/bin/moca --set pamap2|wisdm|ts|realworld \
        [--moca-python /usr/bin/python3 --moca-pythonpath build/python]

One subject's CSV (a time column, 27 channel columns of 4-decimal values from three IMUs, an
activity label in runs of 30 s; at 20 Hz) of about --mb MB is written once; then, interleaved in
each round so that they share the machine's state (the file stays in the page cache: this is
parsing, not the disk):

* ``moca``: ``moca data window`` of the folder, all 27 channels, 10-s windows (parses every
  cell, cuts the windows and writes X.npy, Y.npy, pid.npy and meta.json); the process's whole
  wall time, its start included (``moca_start_s``, measured on a 1-row file, is reported);
* ``pandas``: ``pandas.read_csv`` (the C engine) and ``to_numpy(float32)`` of the 27 channels;
* ``numpy``: ``numpy.loadtxt`` of the 27 channels as float32.

With ``--set pamap2`` the file is one PAMAP2 subject as the download has it (54 blank-separated
columns at 100 Hz, NaN heart rate on 10 of 11 rows) under ``PAMAP2_Dataset/Protocol/``, and moca's
run is ``moca.data.load("pamap2:DIR", rate=100, length=1000)`` in ``--moca-python`` (the
registry's reader: every line parsed, ssl-wearables' windows cut, nothing resampled; the
interpreter's start and import, timed on a 1-line file, is reported); pandas reads it with
``sep=" ", header=None`` and numpy with ``loadtxt``, all 54 columns (as the preparation scripts
read them).

With ``--set wisdm`` the file is one WISDM 2019 subject's watch accelerometer as the download has
it (``1600,A,<ns>,x,y,z;`` lines at 20 Hz, activities in turn), under
``wisdm-dataset/raw/watch/accel/``; moca's run is ``moca.data.load("wisdm:DIR", rate=30,
length=300)``; pandas
reads it with ``read_csv(header=None)`` and strips the ';' of the last column, numpy with
``loadtxt(delimiter=",", comments=";", usecols=(0, 2, 3, 4, 5))``.

With ``--set realworld`` the files are a RealWorld download's archives (2 probands x 8
activities, ``acc_<activity>_csv.zip`` deflated, each a forearm CSV of ``id,attr_time,attr_x,
attr_y,attr_z`` lines at 50 Hz and a readMe) holding about --mb MB of CSV text in all (the
figures are MB of CSV text per second); moca's run is ``moca.data.load("realworld:DIR",
rate=30, length=300)``; pandas (``read_csv``) and numpy (``loadtxt``) read every archive's
forearm CSV through Python's ``zipfile`` (inflating, as moca does).

With ``--set ts`` the files are a UEA/UCR archive pair (``Bench_TRAIN.ts`` of about --mb MB:
a full header, then cases of 3 dimensions x 300 values of 7 significant digits and a label;
``Bench_TEST.ts`` of 10 cases); moca's run is ``moca.data.load("ts:DIR")`` (the cases as
stored). The peers read TRAIN's cases: pandas ``read_csv(header=None)`` and numpy ``loadtxt``
of the data lines with ':' replaced by ',' (the replacement is timed with them), and, when the
interpreter has it, sktime's ``load_from_tsfile_to_dataframe`` (the loader the format's users
call; ``sktime_mb_s``).

Prints one JSON line: the best round's MB/s of each, and the ratios moca / pandas and moca / numpy
of the times (below 1: moca is faster). pandas is not one of Debian's packages here: run it with
an interpreter that has pandas (a venv from PyPI).
"""
import argparse
import json
import os
import platform
import subprocess
import tempfile
import time

import numpy as np


def write_recording(path, mb, seed=0):
    rng = np.random.default_rng(seed)
    names = [f"{s}{a}{i}" for i in (1, 2, 3) for s in ("a", "g", "m") for a in "xyz"]
    labels = ("walking", "sitting", "standing", "lying")
    block = 6000  # rows per write
    with open(path, "w") as f:
        f.write("time," + ",".join(names) + ",activity_label\n")
        t = 0
        while f.tell() < mb * 1_000_000:
            v = rng.standard_normal((block, 27))
            rows = np.arange(t, t + block)
            lines = [f"{r / 20:.2f}," + ",".join(f"{x:.4f}" for x in v[k]) + "," +
                     labels[(r // 600) % 4] for k, r in enumerate(rows)]
            f.write("\n".join(lines) + "\n")
            t += block
    return names


def write_pamap2(path, mb, seed=0):
    rng = np.random.default_rng(seed)
    block = 4000
    with open(path, "w") as f:
        t = 0
        while f.tell() < mb * 1_000_000:
            v = rng.standard_normal((block, 51))
            lines = []
            for k in range(block):
                r = t + k
                hr = "104" if r % 11 == 0 else "NaN"
                lines.append(f"{r / 100:.2f} {(r // 30000) % 5 + 1} {hr} " +
                             " ".join(f"{x:.5f}" for x in v[k]))
            f.write("\n".join(lines) + "\n")
            t += block


def write_wisdm(path, mb, seed=0):
    rng = np.random.default_rng(seed)
    block = 20000
    codes = "ABCDEFGHIJKLMOPQRS"
    with open(path, "w") as f:
        t = 0
        while f.tell() < mb * 1_000_000:
            v = rng.standard_normal((block, 3)) * 4
            lines = [f"1600,{codes[((t + k) // 3600) % 18]},{90426708196641 + (t + k) * 50_000_000},"
                     f"{v[k, 0]:.7g},{v[k, 1]:.7g},{v[k, 2]:.7g};" for k in range(block)]
            f.write("\n".join(lines) + "\n")
            t += block


def write_ts(path, mb, seed=0, cases=None):
    rng = np.random.default_rng(seed)
    labels = ("walking", "sitting", "standing", "lying")
    with open(path, "w") as f:
        f.write("#Bench: a UEA/UCR-format pair\n@problemName Bench\n@timeStamps false\n"
                "@missing false\n@univariate false\n@dimensions 3\n@equalLength true\n"
                "@seriesLength 300\n@classLabel true " + " ".join(labels) + "\n@data\n")
        k = 0
        while (f.tell() < mb * 1_000_000) if cases is None else (k < cases):
            v = rng.standard_normal((100, 3, 300))
            for case in v:
                f.write(":".join(",".join(f"{x:.7g}" for x in d) for d in case) + ":" +
                        labels[k % 4] + "\n")
                k += 1
                if cases is not None and k >= cases:
                    break


RW_ACTIVITIES = ("climbingdown", "climbingup", "jumping", "lying", "running", "sitting",
                 "standing", "walking")


def write_realworld(root, mb, seed=0):
    """2 probands x 8 archives; returns the CSV bytes written and the archives' paths."""
    import zipfile
    rng = np.random.default_rng(seed)
    rows = int(mb * 1_000_000 / 16 / 42)  # ~42 bytes a line
    total, paths = 0, []
    for p in (1, 2):
        data = os.path.join(root, "realworld2016_dataset", f"proband{p}", "data")
        os.makedirs(data)
        for a in RW_ACTIVITIES:
            v = rng.standard_normal((rows, 3)) * 4
            text = "id,attr_time,attr_x,attr_y,attr_z\n" + "".join(
                f"{r + 1},{1435000000000 + 20 * r},{v[r, 0]:.6f},{v[r, 1]:.6f},{v[r, 2]:.6f}\n"
                for r in range(rows))
            total += len(text)
            path = os.path.join(data, f"acc_{a}_csv.zip")
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr(f"acc_{a}_forearm.csv", text)
                z.writestr("readMe", f"> entries: {rows}\n")
            paths.append((path, f"acc_{a}_forearm.csv"))
    return total, paths


def bench_realworld(a) -> int:
    import zipfile
    import pandas as pd
    with tempfile.TemporaryDirectory() as tmp:
        size, paths = write_realworld(os.path.join(tmp, "raw"), a.mb)
        write_realworld(os.path.join(tmp, "tiny"), 0.02, seed=1)

        def run_moca(folder):
            code = f"import moca; moca.data.load({'realworld:' + folder!r}, rate=30, length=300)"
            subprocess.run([a.moca_python, "-c", code], check=True, capture_output=True,
                           env=dict(os.environ, PYTHONPATH=a.moca_pythonpath))

        def run_pandas():
            out = []
            for path, csv in paths:
                with zipfile.ZipFile(path) as z, z.open(csv) as f:
                    out.append(pd.read_csv(f)[["attr_x", "attr_y", "attr_z"]].to_numpy())
            return out

        def run_numpy():
            out = []
            for path, csv in paths:
                with zipfile.ZipFile(path) as z, z.open(csv) as f:
                    out.append(np.loadtxt(f, delimiter=",", skiprows=1, usecols=(2, 3, 4)))
            return out

        best = {"moca": 1e9, "pandas": 1e9, "numpy": 1e9, "moca_start": 1e9}
        for _ in range(a.rounds):
            best["moca"] = min(best["moca"], timed(lambda: run_moca(os.path.join(tmp, "raw"))))
            best["moca_start"] = min(best["moca_start"],
                                     timed(lambda: run_moca(os.path.join(tmp, "tiny"))))
            best["pandas"] = min(best["pandas"], timed(run_pandas))
            best["numpy"] = min(best["numpy"], timed(run_numpy))
    net = best["moca"] - best["moca_start"]
    print(json.dumps({
        "set": "realworld", "csv_mb": round(size / 1e6, 1), "rounds": a.rounds,
        "moca_mb_s": round(size / 1e6 / best["moca"], 1),
        "moca_net_mb_s": round(size / 1e6 / net, 1),
        "pandas_mb_s": round(size / 1e6 / best["pandas"], 1),
        "numpy_mb_s": round(size / 1e6 / best["numpy"], 1),
        "moca_s": round(best["moca"], 3), "moca_start_s": round(best["moca_start"], 3),
        "pandas_s": round(best["pandas"], 3), "numpy_s": round(best["numpy"], 3),
        "moca_net_over_pandas": round(net / best["pandas"], 3),
        "pandas": pd.__version__, "numpy": np.__version__, "python": platform.python_version(),
    }))
    return 0


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--moca", required=True, help="the moca program")
    p.add_argument("--mb", type=int, default=128)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--set", choices=("csv", "pamap2", "wisdm", "ts", "realworld"), default="csv")
    p.add_argument("--moca-python", default="/usr/bin/python3",
                   help="--set pamap2|wisdm: a Python with the moca module")
    p.add_argument("--moca-pythonpath", default="build/python")
    a = p.parse_args()
    if a.set == "realworld":
        return bench_realworld(a)
    if a.set != "csv":
        return bench_raw_set(a)
    import pandas as pd
    with tempfile.TemporaryDirectory() as tmp:
        rec = os.path.join(tmp, "rec")
        os.makedirs(rec)
        path = os.path.join(rec, "subject1.csv")
        names = write_recording(path, a.mb)
        size = os.path.getsize(path)
        tiny = os.path.join(tmp, "tiny")
        os.makedirs(tiny)
        with open(path) as src, open(os.path.join(tiny, "s.csv"), "w") as dst:
            dst.write(src.readline() + src.readline())

        def run_moca(folder, out):
            subprocess.run([a.moca, "data", "window", "--from", folder, "--sample-rate", "20",
                            "--window-seconds", "10", "--label-column", "activity_label",
                            "--out", os.path.join(tmp, out)], check=True,
                           capture_output=True)

        def run_pandas():
            df = pd.read_csv(path, engine="c")
            return df[names].to_numpy(np.float32)

        def run_numpy():
            return np.loadtxt(path, delimiter=",", skiprows=1, usecols=range(1, 28),
                              dtype=np.float32)

        # the same values, read three ways (a check, outside the timing)
        run_moca(rec, "check")
        x = np.load(os.path.join(tmp, "check", "X.npy"))
        first = run_pandas()[:200].T
        assert np.array_equal(x[0], first), "moca's first window is not pandas' first rows"
        best = {"moca": 1e9, "pandas": 1e9, "numpy": 1e9, "moca_start": 1e9}
        for r in range(a.rounds):
            best["moca"] = min(best["moca"], timed(lambda: run_moca(rec, f"o{r}")))
            best["moca_start"] = min(best["moca_start"], timed(lambda: run_moca(tiny, f"t{r}")))
            best["pandas"] = min(best["pandas"], timed(run_pandas))
            best["numpy"] = min(best["numpy"], timed(run_numpy))
    mbs = {k: round(size / 1e6 / best[k], 1) for k in ("moca", "pandas", "numpy")}
    print(json.dumps({
        "file_mb": round(size / 1e6, 1), "rounds": a.rounds,
        "moca_mb_s": mbs["moca"], "pandas_mb_s": mbs["pandas"], "numpy_mb_s": mbs["numpy"],
        "moca_s": round(best["moca"], 3), "pandas_s": round(best["pandas"], 3),
        "numpy_s": round(best["numpy"], 3), "moca_start_s": round(best["moca_start"], 3),
        "moca_over_pandas": round(best["moca"] / best["pandas"], 3),
        "moca_over_numpy": round(best["moca"] / best["numpy"], 3),
        "pandas": pd.__version__, "numpy": np.__version__, "python": platform.python_version(),
    }))
    return 0


def bench_raw_set(a) -> int:
    import pandas as pd
    inner, name = {"pamap2": (("PAMAP2_Dataset", "Protocol"), "subject101.dat"),
                   "wisdm": (("wisdm-dataset", "raw", "watch", "accel"),
                             "data_1600_accel_watch.txt"),
                   "ts": (("Bench",), "Bench_TRAIN.ts")}[a.set]
    with tempfile.TemporaryDirectory() as tmp:
        proto = os.path.join(tmp, "raw", *inner)
        os.makedirs(proto)
        path = os.path.join(proto, name)
        {"pamap2": write_pamap2, "wisdm": write_wisdm, "ts": write_ts}[a.set](path, a.mb)
        size = os.path.getsize(path)
        tiny = os.path.join(tmp, "tiny", *inner)
        os.makedirs(tiny)
        if a.set == "ts":
            write_ts(os.path.join(proto, "Bench_TEST.ts"), 0, seed=1, cases=10)
            write_ts(os.path.join(tiny, "Bench_TRAIN.ts"), 0, seed=2, cases=1)
            write_ts(os.path.join(tiny, "Bench_TEST.ts"), 0, seed=3, cases=1)
        else:
            with open(path) as src, open(os.path.join(tiny, name), "w") as dst:
                dst.write(src.readline())

        rate, length = {"pamap2": (100, 1000), "wisdm": (30, 300), "ts": (None, None)}[a.set]

        def run_moca(folder):
            # the reader alone: moca.data.load at the windows' own rate and length (no
            # resampling), in a Python that has the moca module (--moca-python)
            if a.set == "ts":
                folder = os.path.join(folder, "Bench")
            code = (f"import moca; moca.data.load({a.set + ':' + folder!r}, rate={rate}, "
                    f"length={length})")
            subprocess.run([a.moca_python, "-c", code], check=True, capture_output=True,
                           env=dict(os.environ, PYTHONPATH=a.moca_pythonpath))

        def ts_lines():
            with open(path) as f:
                text = f.read()
            return text[text.index("@data\n") + 6:].replace(":", ",")

        def run_pandas():
            if a.set == "ts":
                import io
                return pd.read_csv(io.StringIO(ts_lines()), header=None).iloc[:, :900].to_numpy(
                    np.float32)
            if a.set == "pamap2":
                return pd.read_csv(path, sep=" ", header=None).to_numpy(np.float64)
            df = pd.read_csv(path, header=None)
            df[5] = df[5].str.rstrip(";").astype(float)
            return df[[2, 3, 4, 5]].to_numpy(np.float64)

        def run_numpy():
            if a.set == "ts":
                return np.loadtxt(ts_lines().splitlines(), delimiter=",", usecols=range(900),
                                  dtype=np.float32)
            if a.set == "pamap2":
                return np.loadtxt(path)
            return np.loadtxt(path, delimiter=",", comments=";", usecols=(0, 2, 3, 4, 5))

        try:
            from sktime.datasets import load_from_tsfile_to_dataframe as sktime_load
        except ImportError:
            sktime_load = None
        if a.set == "ts":  # the same values, read two ways (a check, outside the timing)
            check = subprocess.run(
                [a.moca_python, "-c", "import moca, sys; d = moca.data.load(sys.argv[1]); "
                 "sys.stdout.buffer.write(d.X[:5].tobytes())", os.path.join(proto)],
                check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=a.moca_pythonpath))
            x = np.frombuffer(check.stdout, np.float32).reshape(5, 900)
            assert np.array_equal(x, run_pandas()[:5]), "moca's first cases are not pandas'"
        best = {"moca": 1e9, "pandas": 1e9, "numpy": 1e9, "moca_start": 1e9, "sktime": 1e9}
        for _ in range(a.rounds):
            if a.set == "ts" and sktime_load is not None:
                best["sktime"] = min(best["sktime"], timed(lambda: sktime_load(path)))
            best["moca"] = min(best["moca"], timed(lambda: run_moca(os.path.join(tmp, "raw"))))
            best["moca_start"] = min(best["moca_start"],
                                     timed(lambda: run_moca(os.path.join(tmp, "tiny"))))
            best["pandas"] = min(best["pandas"], timed(run_pandas))
            best["numpy"] = min(best["numpy"], timed(run_numpy))
    mbs = {k: round(size / 1e6 / best[k], 1) for k in ("moca", "pandas", "numpy")}
    net = best["moca"] - best["moca_start"]
    print(json.dumps({
        "set": a.set, "file_mb": round(size / 1e6, 1), "rounds": a.rounds,
        "moca_mb_s": mbs["moca"], "moca_net_mb_s": round(size / 1e6 / net, 1),
        "pandas_mb_s": mbs["pandas"], "numpy_mb_s": mbs["numpy"],
        "moca_s": round(best["moca"], 3), "moca_start_s": round(best["moca_start"], 3),
        "pandas_s": round(best["pandas"], 3), "numpy_s": round(best["numpy"], 3),
        "moca_net_over_pandas": round(net / best["pandas"], 3),
        **({"sktime_mb_s": round(size / 1e6 / best["sktime"], 1), "sktime_s":
            round(best["sktime"], 3)} if best["sktime"] < 1e9 else {}),
        "pandas": pd.__version__, "numpy": np.__version__, "python": platform.python_version(),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
