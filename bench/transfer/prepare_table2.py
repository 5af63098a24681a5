#!/usr/bin/python3
"""Builds the two HAPT folders of the transfer measurement (bench/transfer/table2.sh) from
`moca data export` output, with numpy and scipy only (an independent route to the data):

  pretrain OUT_PRE: the 4-s, 50 Hz windows of every subject but the held-out ones, with their
                    meta.json (the models pre-train on these);
  heldout  OUT_HELD: the held-out subjects' 10-s windows, accelerometer only, resampled
                    50 -> 30 Hz (scipy.signal.resample_poly, up 3 / down 5) and stored as the
                    ssl-wearables releases are: X.npy N x 300 x 3 (NLC) float32, Y.npy class
                    names, pid.npy, and no meta.json (rate and channels must be stated).

Usage: prepare_table2.py pretrain EXPORT4 OUT_PRE HELD
       prepare_table2.py heldout EXPORT10 OUT_HELD HELD
HELD: how many subjects (the largest ids) are held out.
"""
import json
import os
import sys

import numpy as np
from scipy.signal import resample_poly


def held_ids(pid, held):
    ids = np.unique(pid)
    if held < 1 or held >= len(ids):
        sys.exit(f"prepare_table2: HELD ({held}) must be in [1, {len(ids) - 1}]")
    return ids[-held:]


def write_atomic(path, array):
    tmp = path + ".tmp.npy"
    np.save(tmp, array)
    os.replace(tmp, path)


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("pretrain", "heldout"):
        sys.exit(__doc__)
    mode, src, out, held = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    x = np.load(os.path.join(src, "X.npy"))
    y = np.load(os.path.join(src, "Y.npy"))
    pid = np.load(os.path.join(src, "pid.npy"))
    with open(os.path.join(src, "meta.json")) as f:
        meta = json.load(f)
    if meta.get("layout", "NCL") != "NCL" or x.ndim != 3:
        sys.exit(f"prepare_table2: {src}/X.npy must be N x C x L (moca data export)")
    ids = held_ids(pid, held)
    os.makedirs(out, exist_ok=True)
    if mode == "pretrain":
        keep = ~np.isin(pid, ids)
        write_atomic(os.path.join(out, "X.npy"), x[keep].astype(np.float32))
        write_atomic(os.path.join(out, "Y.npy"), y[keep])
        write_atomic(os.path.join(out, "pid.npy"), pid[keep].astype(np.int64))
        meta["windows"] = int(keep.sum())
        meta["description"] = (f"{meta.get('description', '')}; subjects "
                               f"{','.join(str(i) for i in ids)} held out")
        with open(os.path.join(out, "meta.json.tmp"), "w") as f:
            json.dump(meta, f, indent=1)
        os.replace(os.path.join(out, "meta.json.tmp"), os.path.join(out, "meta.json"))
        print(f"pretrain: {keep.sum()} windows, subjects {sorted(set(pid[keep].tolist()))}")
        return
    if meta.get("sample_rate") != 50.0:
        sys.exit(f"prepare_table2: {src} must be at 50 Hz (is {meta.get('sample_rate')})")
    names = meta["channel_names"]
    acc = [names.index(c) for c in ("acc_x", "acc_y", "acc_z")]
    keep = np.isin(pid, ids)
    x30 = resample_poly(x[keep][:, acc, :].astype(np.float64), up=3, down=5, axis=-1)
    write_atomic(os.path.join(out, "X.npy"), np.ascontiguousarray(
        np.transpose(x30, (0, 2, 1))).astype(np.float32))
    write_atomic(os.path.join(out, "Y.npy"), y[keep])
    write_atomic(os.path.join(out, "pid.npy"), pid[keep].astype(np.int64))
    if os.path.exists(os.path.join(out, "meta.json")):
        os.remove(os.path.join(out, "meta.json"))
    print(f"heldout: {keep.sum()} windows of {x30.shape[2]} samples at 30 Hz, subjects "
          f"{ids.tolist()}, classes {sorted(set(y[keep].tolist()))}")


if __name__ == "__main__":
    main()
