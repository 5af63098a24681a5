#!/usr/bin/python3
"""Read speed of `moca data window` on a raw recording against pandas and numpy reading the same
CSV file, in one run (issue 41: "the readers run at I/O speed").

    python3 bench/python/bench_recordings.py --moca build/bin/moca [--mb 128] [--rounds 3]
    python3 bench/python/bench_recordings.py --moca build/bin/moca --set pamap2 [--mb 128]

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
command is ``moca data inspect --data pamap2:DIR`` (the registry's reader: every line parsed,
ssl-wearables' windows cut, then resampled to 50 Hz and described); pandas reads it with
``sep=" ", header=None`` and numpy with ``loadtxt``, all 54 columns (as the preparation scripts
read them).

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


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--moca", required=True, help="the moca program")
    p.add_argument("--mb", type=int, default=128)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--set", choices=("csv", "pamap2"), default="csv")
    a = p.parse_args()
    if a.set == "pamap2":
        return bench_pamap2(a)
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


def bench_pamap2(a) -> int:
    import pandas as pd
    with tempfile.TemporaryDirectory() as tmp:
        proto = os.path.join(tmp, "raw", "PAMAP2_Dataset", "Protocol")
        os.makedirs(proto)
        path = os.path.join(proto, "subject101.dat")
        write_pamap2(path, a.mb)
        size = os.path.getsize(path)
        tiny = os.path.join(tmp, "tiny", "PAMAP2_Dataset", "Protocol")
        os.makedirs(tiny)
        with open(path) as src, open(os.path.join(tiny, "subject101.dat"), "w") as dst:
            dst.write(src.readline())

        def run_moca(folder):
            subprocess.run([a.moca, "data", "inspect", "--data", f"pamap2:{folder}"], check=True,
                           capture_output=True)

        best = {"moca": 1e9, "pandas": 1e9, "numpy": 1e9, "moca_start": 1e9}
        for _ in range(a.rounds):
            best["moca"] = min(best["moca"], timed(lambda: run_moca(os.path.join(tmp, "raw"))))
            best["moca_start"] = min(best["moca_start"],
                                     timed(lambda: run_moca(os.path.join(tmp, "tiny"))))
            best["pandas"] = min(best["pandas"], timed(
                lambda: pd.read_csv(path, sep=" ", header=None).to_numpy(np.float64)))
            best["numpy"] = min(best["numpy"], timed(lambda: np.loadtxt(path)))
    mbs = {k: round(size / 1e6 / best[k], 1) for k in ("moca", "pandas", "numpy")}
    net = best["moca"] - best["moca_start"]
    print(json.dumps({
        "set": "pamap2", "file_mb": round(size / 1e6, 1), "rounds": a.rounds,
        "moca_mb_s": mbs["moca"], "moca_net_mb_s": round(size / 1e6 / net, 1),
        "pandas_mb_s": mbs["pandas"], "numpy_mb_s": mbs["numpy"],
        "moca_s": round(best["moca"], 3), "moca_start_s": round(best["moca_start"], 3),
        "pandas_s": round(best["pandas"], 3), "numpy_s": round(best["numpy"], 3),
        "moca_net_over_pandas": round(net / best["pandas"], 3),
        "pandas": pd.__version__, "numpy": np.__version__, "python": platform.python_version(),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
