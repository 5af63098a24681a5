#!/usr/bin/python3
"""Pre-training beyond memory (issue 42): windows streamed from a memory-mapped, sharded .npy
folder, measured in one run on this machine.

    python3 bench/python/bench_stream.py --moca build/bin/moca [--gb 8] [--dir /tmp/moca_stream]
        [--iterations 400] [--fit-windows 20000] [--rounds 3]

1. A sharded folder of --gb GB is written with numpy (``open_memmap``, a chunk at a time): float32
   windows of 6 channels x 200 samples (the synthetic IMU's shape; smooth random walks), shards
   of 512 MiB with ``Y_k.npy`` and ``pid_k.npy``, and a ``meta.json``.
2. ``moca data inspect`` of it (headers and labels only).
3. ``moca pretrain --preset cpu-small`` on it, streamed (the default block shuffle), for
   --iterations iterations of batch 50: the peak anonymous memory (``RssAnon`` of
   ``/proc/PID/status``, sampled every 20 ms; the mapped file pages are not anonymous) and the
   windows per second trained and read (the run's ``--json``).
4. On a set that fits (--fit-windows windows of the folder written as one X.npy), the same
   pre-training in memory and streamed, alternately, --rounds times: the step time's ratio.
5. The fitting set streamed on 2 ranks (``moca launch --nproc 2``, 1 thread each) against 1 rank
   with 2 threads: each rank's windows and bytes read (disjoint halves of every batch) and the
   windows per second.
6. ``moca data export --stream --shard-mb 512 --float16`` of the whole folder (read and written a chunk at a
   time): peak ``RssAnon`` and MB/s.
7. ``moca embed --pool mean`` and ``moca impute`` with the model of step 3 on the first
   --eval-windows windows: of the fitting set in memory, and of the whole folder streamed (1024
   at a time): peak ``RssAnon`` and windows per second of each.
8. ``moca data window --shard-mb 8`` on CSV recordings written with numpy (6 channels at 50 Hz,
   one subject) of two lengths, 20x apart: peak ``RssAnon`` of each (constant in the length).
With --cold (root), step 3 is repeated after dropping the page cache, so the windows come from
the disk itself, beside the disk's sequential rate (one shard read whole, cold).

Pause other jobs while it runs. Prints one JSON object (and the table of docs/benchmarks.md).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np

C, L = 6, 200
SHARD_BYTES = 512 << 20


def write_folder(path, gb, seed=0):
    """A sharded folder of about `gb` GB: smooth random walks, 7 classes, 100 subjects."""
    os.makedirs(path, exist_ok=True)
    per_shard = SHARD_BYTES // (C * L * 4)
    total = int(gb * (1 << 30)) // (C * L * 4)
    rng = np.random.default_rng(seed)
    shards = (total + per_shard - 1) // per_shard
    for k in range(shards):
        n = min(per_shard, total - k * per_shard)
        x = np.lib.format.open_memmap(f"{path}/X_{k:03d}.npy", mode="w+", dtype="<f4",
                                      shape=(n, C, L))
        for a in range(0, n, 8192):
            m = min(8192, n - a)
            steps = rng.standard_normal((m, C, L), dtype=np.float32) * 0.05
            x[a:a + m] = np.cumsum(steps, axis=2)
        x.flush()
        del x
        first = k * per_shard
        np.save(f"{path}/Y_{k:03d}.npy", ((np.arange(n) + first) // 5000 % 7).astype(np.int64))
        np.save(f"{path}/pid_{k:03d}.npy", ((np.arange(n) + first) // 17000).astype(np.int64))
    meta = {"sample_rate": 50.0, "modalities": {"acc": [0, 1, 2], "gyro": [3, 4, 5]},
            "channel_names": ["acc_x", "acc_y", "acc_z", "gyro_x", "gyro_y", "gyro_z"],
            "class_names": [f"c{i}" for i in range(7)], "windows": total}
    with open(f"{path}/meta.json", "w") as f:
        json.dump(meta, f)
    return total, shards


def rss_anon_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid):
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                kids.append(int(entry))
        except OSError:
            continue
    out = list(kids)
    for k in kids:
        out += descendants(k)
    return out


def run(cmd, env):
    """Runs cmd; returns (seconds, peak RssAnon in MiB of the largest process of its tree)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0]

    def sample():
        while p.poll() is None:
            procs = [p.pid] + descendants(p.pid)
            peak[0] = max([peak[0]] + [rss_anon_kb(q) for q in procs])
            time.sleep(0.02)

    t = threading.Thread(target=sample)
    t.start()
    out, _ = p.communicate()
    t.join()
    dt = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"bench_stream: {' '.join(cmd)} failed ({p.returncode}):\n{out}")
    return dt, peak[0] / 1024.0


def drop_page_cache():
    """Writes back and drops the kernel's page cache (needs root), so that reads come from the
    disk."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError as e:
        sys.exit(f"bench_stream: --cold needs root to drop the page cache ({e})")


def pretrain_cmd(moca, data, out, iterations, threads, stream, extra=()):
    cmd = [moca, "pretrain", "--data", f"npy:{data}", "--preset", "cpu-small", "--batch", "50",
           "--epochs", "1", "--warmup-epochs", "0", "--split", "all", "--threads", str(threads),
           "--stop-after", str(iterations), "--no-progress", "--checkpoint", f"{out}.pt",
           "--json", f"{out}.json", "--seed", "1"]
    if stream:
        cmd.append("--stream")
    return cmd + list(extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moca", default="build/bin/moca")
    ap.add_argument("--gb", type=float, default=8.0)
    ap.add_argument("--dir", default="/tmp/moca_stream_bench")
    ap.add_argument("--iterations", type=int, default=400)
    ap.add_argument("--fit-windows", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--eval-windows", type=int, default=8192)
    ap.add_argument("--cold", action="store_true",
                    help="also pre-train from a dropped page cache (root): reads from the disk")
    ap.add_argument("--keep", action="store_true",
                    help="keep the generated folder (a later run reuses it)")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 unless the issue's bounds hold: peak RssAnon <= 1.5 GiB while "
                         "pre-training and exporting, and 2 ranks reading half each (CI's "
                         "stand-in on a small folder; step times are reported, not checked)")
    a = ap.parse_args()
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    big, fit, work = f"{a.dir}/big", f"{a.dir}/fit", f"{a.dir}/runs"
    for d in (fit, work):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    result = {"gb": a.gb, "iterations": a.iterations, "batch": 50, "preset": "cpu-small"}
    if not os.path.exists(f"{big}/meta.json"):
        t0 = time.monotonic()
        n, shards = write_folder(big, a.gb)
        result["generate_s"] = time.monotonic() - t0
    meta = json.load(open(f"{big}/meta.json"))
    n = meta["windows"]
    result["windows"] = n
    result["folder_bytes"] = sum(os.path.getsize(f"{big}/{f}") for f in os.listdir(big))

    dt, peak = run([a.moca, "data", "inspect", "--data", f"npy:{big}", "--json",
                    f"{work}/inspect.json"], env)
    result["inspect"] = {"seconds": dt, "peak_rss_anon_mib": peak}

    dt, peak = run(pretrain_cmd(a.moca, big, f"{work}/big", a.iterations, 2, True), env)
    j = json.load(open(f"{work}/big.json"))
    result["big_pretrain"] = {"seconds": dt, "peak_rss_anon_mib": peak,
                              "windows_per_s": j["windows_per_s"],
                              "read_windows_per_s": j["read_windows_per_s"],
                              "read_wait_seconds": j["read_wait_seconds"],
                              "windows_read": j["windows_read"], "storage": j["storage"]}

    if a.cold:
        # From the disk itself: the page cache dropped (root only), then the disk's sequential
        # rate (one shard read whole) and the same streamed pre-training, whose block reads
        # are scattered over the folder.
        drop_page_cache()
        t0 = time.monotonic()
        with open(f"{big}/X_001.npy", "rb") as f:
            got = 0
            while True:
                b = f.read(16 << 20)
                if not b:
                    break
                got += len(b)
        disk_mb_s = got / (time.monotonic() - t0) / 1e6
        drop_page_cache()
        dt, peak = run(pretrain_cmd(a.moca, big, f"{work}/cold", a.iterations, 2, True), env)
        j = json.load(open(f"{work}/cold.json"))
        result["cold_pretrain"] = {"disk_sequential_mb_per_s": disk_mb_s, "seconds": dt,
                                   "peak_rss_anon_mib": peak,
                                   "windows_per_s": j["windows_per_s"],
                                   "read_windows_per_s": j["read_windows_per_s"],
                                   "read_mb_per_s": j["read_windows_per_s"] * C * L * 4 / 1e6,
                                   "read_wait_seconds": j["read_wait_seconds"],
                                   "loop_seconds": j["loop_seconds"]}

    # The fitting set: the folder's first windows as one X.npy.
    x0 = np.load(f"{big}/X_000.npy", mmap_mode="r")
    m = min(a.fit_windows, x0.shape[0])
    np.save(f"{fit}/X.npy", np.ascontiguousarray(x0[:m]))
    np.save(f"{fit}/Y.npy", np.load(f"{big}/Y_000.npy")[:m])
    np.save(f"{fit}/pid.npy", np.load(f"{big}/pid_000.npy")[:m])
    shutil.copy(f"{big}/meta.json", f"{fit}/meta.json")
    with open(f"{fit}/meta.json", "w") as f:
        json.dump(dict(meta, windows=m), f)
    it = min(a.iterations, m // 50)
    mem_s, str_s = [], []
    for r in range(a.rounds):
        for stream, acc in ((False, mem_s), (True, str_s)):
            run(pretrain_cmd(a.moca, fit, f"{work}/fit{int(stream)}", it, 2, stream), env)
            j = json.load(open(f"{work}/fit{int(stream)}.json"))
            acc.append(j["loop_seconds"] / it)
    result["fit"] = {"windows": m, "iterations": it, "step_s_in_memory": min(mem_s),
                     "step_s_streamed": min(str_s), "ratio": min(str_s) / min(mem_s)}

    # 2 ranks against 1 on the fitting set, streamed.
    run(pretrain_cmd(a.moca, fit, f"{work}/one", it, 2, True), env)
    one = json.load(open(f"{work}/one.json"))
    launch = [a.moca, "launch", "--nproc", "2", "--"] + pretrain_cmd(
        a.moca, fit, f"{work}/two", it, 1, True)[1:]
    run(launch, env)
    two = json.load(open(f"{work}/two.json"))
    result["ranks"] = {
        "one": {"windows_read": one["windows_read"], "bytes_read": one["bytes_read"],
                "windows_per_s": one["windows_per_s"]},
        "two_rank0": {"windows_read": two["windows_read"], "bytes_read": two["bytes_read"],
                      "windows_per_s": two["windows_per_s"]}}

    # The whole folder rewritten as float16 shards, a chunk at a time.
    dt, peak = run([a.moca, "data", "export", "--stream", "--data", f"npy:{big}", "--out",
                    f"{work}/f16", "--shard-mb", "512", "--float16", "--no-progress"], env)
    result["export_f16"] = {"seconds": dt, "peak_rss_anon_mib": peak,
                            "mb_per_s": result["folder_bytes"] / dt / 1e6}
    shutil.rmtree(f"{work}/f16", ignore_errors=True)

    # embed and impute of the first --eval-windows windows, in memory and streamed.
    ev = min(a.eval_windows, m)
    result["eval"] = {"windows": ev}
    for stream in (False, True):
        extra = ["--stream"] if stream else []
        key = "streamed" if stream else "in_memory"
        # The same first windows: of the fitting set in memory, of the big folder streamed.
        common = ["--checkpoint", f"{work}/big.pt", "--data", f"npy:{big if stream else fit}",
                  "--split", "all",
                  "--max-windows", str(ev), "--threads", "2", "--no-progress", *extra]
        dt, peak = run([a.moca, "embed", *common, "--pool", "mean", "--out",
                        f"{work}/embed{key}"], env)
        result["eval"][f"embed_{key}"] = {"seconds": dt, "peak_rss_anon_mib": peak,
                                          "windows_per_s": ev / dt}
        dt, peak = run([a.moca, "impute", *common, "--task", "random:ratio=0.5",
                        "temporal:ratio=0.5", "--mice-draws", "1", "--mice-iterations", "2",
                        "--json", f"{work}/impute{key}.json"], env)
        result["eval"][f"impute_{key}"] = {"seconds": dt, "peak_rss_anon_mib": peak,
                                           "windows_per_s": ev / dt}

    # moca data window --shard-mb on recordings of two lengths.
    result["window"] = {}
    for minutes in (10, 200):
        rec = f"{work}/rec{minutes}"
        os.makedirs(rec)
        t = np.arange(minutes * 60 * 50) / 50.0
        rng = np.random.default_rng(minutes)
        x = np.cumsum(rng.standard_normal((len(t), 6)) * 0.05, axis=0)
        label = np.where((t // 60) % 2 == 0, "walking", "sitting")
        with open(f"{rec}/s1.csv", "w") as f:
            f.write("time,acc_x,acc_y,acc_z,gyro_x,gyro_y,gyro_z,annotation\n")
            for a0 in range(0, len(t), 50000):
                b0 = min(len(t), a0 + 50000)
                rows = np.column_stack([t[a0:b0], x[a0:b0]])
                f.writelines(",".join(f"{v:.4f}" for v in r) + f",{label[a0 + i]}\n"
                             for i, r in enumerate(rows))
        csv_mb = os.path.getsize(f"{rec}/s1.csv") / 1e6
        dt, peak = run([a.moca, "data", "window", "--from", rec, "--sample-rate", "50",
                        "--window-seconds", "4", "--shard-mb", "8", "--out", f"{rec}_out",
                        "--no-progress"], env)
        result["window"][f"{minutes}_min"] = {"csv_mb": csv_mb, "seconds": dt,
                                              "peak_rss_anon_mib": peak,
                                              "mb_per_s": csv_mb / dt}
    shutil.rmtree(fit, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    if not a.keep:
        shutil.rmtree(big, ignore_errors=True)
    print(json.dumps(result, indent=2))
    if a.check:
        failed = []
        for what in ("big_pretrain", "export_f16"):
            if result[what]["peak_rss_anon_mib"] > 1536:
                failed.append(f"{what}: peak RssAnon {result[what]['peak_rss_anon_mib']:.0f} MiB "
                              "> 1536")
        for what in ("embed_streamed", "impute_streamed"):
            if result["eval"][what]["peak_rss_anon_mib"] > 1536:
                failed.append(f"{what}: peak RssAnon > 1536 MiB")
        w = result["window"]
        # constant: the longer recording may add one shard's buffer (8 MiB) and 8 MiB of slack
        if w["200_min"]["peak_rss_anon_mib"] > w["10_min"]["peak_rss_anon_mib"] + 16:
            failed.append(f"data window: peak RssAnon {w['200_min']['peak_rss_anon_mib']:.0f} "
                          f"MiB on 20x the recording, {w['10_min']['peak_rss_anon_mib']:.0f} "
                          "MiB on 1x: not constant")
        one, two = result["ranks"]["one"], result["ranks"]["two_rank0"]
        if 2 * two["windows_read"] != one["windows_read"]:
            failed.append(f"rank 0 of 2 read {two['windows_read']} windows, 1 rank "
                          f"{one['windows_read']}: not half")
        if failed:
            sys.exit("bench_stream: " + "; ".join(failed))
        print("bench_stream: bounds hold (RssAnon <= 1.5 GiB, 2 ranks read half each, data "
              "window's memory constant in the recording's length)")


if __name__ == "__main__":
    main()
