#!/usr/bin/python3
"""moca embed's memory against the number of windows it embeds, paired with another moca build
(an older one) in the same run.

    python3 bench/python/bench_embed_memory.py --moca build/bin/moca --peer OLD/moca \\
        --checkpoint M.pt --data npy:DIR [--windows 8192 65536] [--rounds 2]

For each round, each window count and each program (alternately): ``moca embed --policy cross
--stream`` (the views Z_U and Z_M) of the first N windows of the folder, split all; its peak
anonymous memory (``RssAnon``, sampled every 20 ms: the mapped file pages are not anonymous)
and seconds. Reports each program's least peak per count and the growth from the first count to
the last, in MiB and in bytes per added window. Pause other jobs while it runs.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_stream import run  # noqa: E402  (peak RssAnon of a process tree)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moca", default="build/bin/moca")
    ap.add_argument("--peer", help="another moca build, run alternately with --moca")
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--data", required=True, help="a .npy folder (npy:DIR), streamed")
    ap.add_argument("--windows", type=int, nargs="+", default=[8192, 65536])
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    programs = {"moca": a.moca}
    if a.peer:
        programs["peer"] = a.peer
    runs = {name: {w: [] for w in a.windows} for name in programs}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.rounds):
            for w in a.windows:
                for name, binary in programs.items():
                    out = os.path.join(tmp, "embed")
                    dt, peak = run([binary, "embed", "--checkpoint", a.checkpoint, "--data",
                                    a.data, "--split", "all", "--max-windows", str(w),
                                    "--threads", "2", "--no-progress", "--stream", "--policy",
                                    "cross", "--out", out], env)
                    runs[name][w].append({"seconds": dt, "peak_rss_anon_mib": peak})
                    shutil.rmtree(out, ignore_errors=True)
    first, last = a.windows[0], a.windows[-1]
    result = {"windows": a.windows, "rounds": a.rounds, "programs": programs, "runs": runs}
    print(f"{'program':8} " + " ".join(f"{w:>10}" for w in a.windows) +
          "   growth MiB   bytes/window")
    for name in programs:
        least = {w: min(r["peak_rss_anon_mib"] for r in runs[name][w]) for w in a.windows}
        growth = least[last] - least[first]
        per = growth * (1 << 20) / (last - first) if last != first else 0.0
        result[name] = {"least_peak_mib": least, "growth_mib": growth,
                        "bytes_per_window": per}
        print(f"{name:8} " + " ".join(f"{least[w]:10.1f}" for w in a.windows) +
              f"   {growth:10.1f}   {per:12.0f}")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
