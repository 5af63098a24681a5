#!/usr/bin/python3
"""Read speed of moca's NumPy safetensors reader against the safetensors package's, and against
NumPy reading the same bytes as one raw array (the I/O floor), on one file in one run.

    PYTHONPATH=build/python python3 bench/python/bench_safetensors.py [--mb 256] [--rounds 5]

A file of F32 tensors (16 MB each, --mb in all) is written once by the package's own
``save_file``; then, interleaved in each round so that they share the machine's state (the file
stays in the page cache: this measures parsing and copying, not the disk):

* ``moca``: ``moca.interop.load_safetensors`` (header checked, every tensor copied out);
* ``package``: ``safetensors.numpy.load_file``;
* ``numpy``: ``numpy.fromfile`` of the whole file as bytes (one read, nothing parsed).

Prints one JSON line: the best round's MB/s of each, and ``moca_over_package`` (moca's time /
the package's: above 1 is slower).
"""
import argparse
import json
import os
import platform
import tempfile
import time

import numpy as np

import moca
from moca import interop


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--mb", type=int, default=256)
    p.add_argument("--rounds", type=int, default=5)
    a = p.parse_args()
    import safetensors
    from safetensors.numpy import load_file, save_file
    rng = np.random.default_rng(0)
    n = max(1, a.mb // 16)
    tensors = {f"t{i}": rng.standard_normal((1024, 4096), dtype=np.float32) for i in range(n)}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bench.safetensors")
        save_file(tensors, path)
        size_mb = os.path.getsize(path) / 1e6
        # the same values back, once, before timing
        ours, _ = interop.load_safetensors(path)
        assert all(np.array_equal(ours[k], tensors[k]) for k in tensors)
        best = {"moca": float("inf"), "package": float("inf"), "numpy": float("inf")}
        for _ in range(a.rounds):
            for name, read in (("moca", lambda: interop.load_safetensors(path)),
                               ("package", lambda: load_file(path)),
                               ("numpy", lambda: np.fromfile(path, dtype=np.uint8))):
                t0 = time.perf_counter()
                read()
                best[name] = min(best[name], time.perf_counter() - t0)
    print(json.dumps({
        "file_mb": round(size_mb, 1), "tensors": n, "rounds": a.rounds,
        **{f"{k}_mb_s": round(size_mb / v, 1) for k, v in best.items()},
        "moca_over_package": round(best["moca"] / best["package"], 2),
        "moca_over_numpy": round(best["moca"] / best["numpy"], 2),
        "numpy": np.__version__, "safetensors": safetensors.__version__,
        "moca": moca.__version__ if hasattr(moca, "__version__") else "",
        "python": platform.python_version(), "machine": platform.processor() or platform.machine(),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
