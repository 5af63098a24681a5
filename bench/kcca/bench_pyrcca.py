#!/usr/bin/python3
"""Whole-process comparison of the `kcca` tool with pyrcca and cca_zoo on the same CSV files
(issues 14, 29).

    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/kcca/bench_pyrcca.py --pyrcca DIR \\
        [--cca-zoo PYTHON] [--n 500 1000 2000 5000] [--repeats 5] [--pyrcca-repeats 5 5 5 1]
        [--cca-zoo-repeats 3 3 3 1] [--methods auto]

Case: two views of p = 60 columns and n rows (view u = tanh of a 3-dimensional latent plus
noise, view m = sin of it plus noise; seed 0), written once per n as two CSV files. Each run is
a fresh process, timed from start to exit (interpreter/loader start-up, CSV parsing, both
Grams, the solver, printing):

  moca:   build/bin/kcca --u U.csv --m M.csv --kernel rbf --sigma sqrt(p) --gamma 0.1
          --components 3 --method METHOD            (centred, the paper's regulariser)
  pyrcca: /usr/bin/python3 -c "<np.loadtxt both files; c = rcca.CCA(kernelcca=True,
          ktype='gaussian', reg=0.1, numCC=3); c.gausigma = sqrt(p); c.train([U, M])>"

pyrcca (gallantlab/pyrcca, not in Debian; `git clone https://github.com/gallantlab/pyrcca DIR`)
imports h5py at module level for its save/load only; without python3-h5py a stub module is put
in its place. pyrcca solves the 2n x 2n generalised eigenproblem of its own (uncentred,
kernel-normalised) formulation, so its correlations are not moca's; the comparison is the
issue's "same task, same files". Runs alternate (moca, pyrcca, moca, ...) so both see the same
load; the medians and their ratio are printed as one JSON line per n. pyrcca takes minutes per
run at n = 5000: give fewer --pyrcca-repeats there (the line says how many were taken).

cca_zoo (PyPI cca-zoo 4.0.1, with numpy 2.x: installed into its own venv outside the repo,
`--cca-zoo VENV/bin/python`) runs `cca_zoo.nonparametric.KCCA(n_components=3, kernel="rbf",
gamma=1/(2 sigma^2), shrinkage=c)`: centred kernels, within-view blocks (1 - c) K^2 / (n - 1) + c K
and between-view blocks K_u K_m / (n - 1). Dividing by (1 - c) / (n - 1) gives moca's paper
regulariser K^2 + gamma K with

    gamma = c (n - 1) / (1 - c),   i.e.  c = gamma / (n - 1 + gamma),

and the same canonical directions, with correlations rho_zoo = rho_moca / (1 - c). cca_zoo keeps
no eigenvalues, so the script computes rho_zoo from its dual weights (alpha_uᵀ K_u K_m alpha_m /
(n - 1) over the square roots of the two within-view forms) and prints (1 - c) rho_zoo, which must
equal moca's correlations; the JSON line gives the largest difference.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from bench_kcca_python import views  # noqa: E402  (the same two views as issue 11's benchmark)

PYRCCA = r"""
import sys, types
sys.path.insert(0, sys.argv[1])
try:
    import h5py  # noqa: F401
except ImportError:
    sys.modules["h5py"] = types.ModuleType("h5py")
import numpy as np
import rcca
U = np.loadtxt(sys.argv[2], delimiter=",")
M = np.loadtxt(sys.argv[3], delimiter=",")
c = rcca.CCA(kernelcca=True, ktype="gaussian", reg=0.1, numCC=3, verbose=False)
c.gausigma = float(sys.argv[4])  # rcca.CCA takes no gausigma; its base class reads the field
c.train([U, M])
print(" ".join("%.12g" % v for v in c.cancorrs))
"""

CCA_ZOO = r"""
import sys
import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from cca_zoo.nonparametric import KCCA
U = np.loadtxt(sys.argv[1], delimiter=",")
M = np.loadtxt(sys.argv[2], delimiter=",")
sigma, gamma = float(sys.argv[3]), float(sys.argv[4])
n = U.shape[0]
c = gamma / (n - 1 + gamma)
model = KCCA(n_components=3, kernel="rbf", gamma=1.0 / (2 * sigma**2), shrinkage=c).fit([U, M])
H = np.eye(n) - 1.0 / n
Ku = H @ rbf_kernel(U - U.mean(0), gamma=1.0 / (2 * sigma**2)) @ H
Km = H @ rbf_kernel(M - M.mean(0), gamma=1.0 / (2 * sigma**2)) @ H
a, b = model.weights_
within = lambda K, w: np.einsum("ij,ij->j", w, (1 - c) * (K @ (K @ w)) / (n - 1) + c * (K @ w))
rho = np.abs(np.einsum("ij,ij->j", Ku @ a, Km @ b)) / (n - 1) / np.sqrt(within(Ku, a) * within(Km, b))
print(" ".join("%.12g" % v for v in (1 - c) * rho))
"""


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("bench_pyrcca: %s failed (exit %d): %s" % (cmd[0], r.returncode, r.stderr))
    return dt, r.stdout


def per_n(values, i):
    return values[min(i, len(values) - 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pyrcca", help="folder of a pyrcca checkout (holds rcca/); without it only "
                    "moca is timed")
    ap.add_argument("--n", type=int, nargs="+", default=[500, 1000, 2000, 5000])
    ap.add_argument("--p", type=int, default=60)
    ap.add_argument("--repeats", type=int, nargs="+", default=[5],
                    help="moca runs per n (one value per --n; the last repeats)")
    ap.add_argument("--pyrcca-repeats", type=int, nargs="+", default=[5, 5, 5, 1],
                    help="pyrcca runs per n (one value per --n; the last repeats)")
    ap.add_argument("--cca-zoo", metavar="PYTHON", help="interpreter of a venv with cca-zoo "
                    "4.0.1 (see the docstring); without it cca_zoo is not run")
    ap.add_argument("--cca-zoo-repeats", type=int, nargs="+", default=[3, 3, 3, 1],
                    help="cca_zoo runs per n (one value per --n; the last repeats)")
    ap.add_argument("--methods", nargs="+", default=["auto"],
                    help="moca solvers (auto: the tool's default; iterative: top 3 by Arnoldi; "
                         "exact: all n correlations)")
    ap.add_argument("--exact-max-n", type=int, default=2000,
                    help="time the exact solver only up to this n")
    ap.add_argument("--bin", default=None, help="folder of the kcca tool (default build/bin)")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    exe = os.path.join(a.bin or os.path.join(here, "..", "..", "build", "bin"), "kcca")
    if not os.path.exists(exe):
        sys.exit("bench_pyrcca: %s not found (build first or give --bin)" % exe)
    sigma = math.sqrt(a.p)
    env_note = {k: os.environ.get(k) for k in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")}
    with tempfile.TemporaryDirectory() as tmp:
        for i, n in enumerate(a.n):
            U, M = views(n, a.p)
            fu, fm = os.path.join(tmp, "U.csv"), os.path.join(tmp, "M.csv")
            np.savetxt(fu, U, delimiter=",")
            np.savetxt(fm, M, delimiter=",")
            reps, preps = per_n(a.repeats, i), per_n(a.pyrcca_repeats, i)
            zreps = per_n(a.cca_zoo_repeats, i) if a.cca_zoo else 0
            res = {"n": n, "p": a.p, "sigma": sigma, "gamma": 0.1, "components": 3,
                   "env": env_note}
            methods = [m for m in a.methods if m != "exact" or n <= a.exact_max_n]
            times = {m: [] for m in methods}
            out = {}
            py_t, py_out = [], None
            zoo_t, zoo_out = [], None
            for r in range(max(reps, preps if a.pyrcca else 0, zreps)):
                for m in methods:
                    if r < reps:
                        dt, o = timed([exe, "--u", fu, "--m", fm, "--kernel", "rbf", "--sigma",
                                       repr(sigma), "--gamma", "0.1", "--components", "3",
                                       "--method", m])
                        times[m].append(dt)
                        out[m] = [ln for ln in o.splitlines() if ln.startswith("correlations")]
                if a.pyrcca and r < preps:
                    dt, o = timed([sys.executable, "-c", PYRCCA, a.pyrcca, fu, fm, repr(sigma)])
                    py_t.append(dt)
                    py_out = o.strip()
                if r < zreps:
                    dt, o = timed([a.cca_zoo, "-c", CCA_ZOO, fu, fm, repr(sigma), "0.1"])
                    zoo_t.append(dt)
                    zoo_out = [float(v) for v in o.split()]
            for m in methods:
                res["moca_" + m + "_s"] = statistics.median(times[m])
                res["moca_" + m + "_runs"] = [round(t, 3) for t in times[m]]
                res["moca_" + m + "_output"] = out[m]
            if a.pyrcca:
                res["pyrcca_s"] = statistics.median(py_t)
                res["pyrcca_runs"] = [round(t, 3) for t in py_t]
                res["pyrcca_cancorrs"] = py_out
                for m in methods:
                    res["ratio_" + m] = res["pyrcca_s"] / res["moca_" + m + "_s"]
            if a.cca_zoo:
                res["cca_zoo_s"] = statistics.median(zoo_t)
                res["cca_zoo_runs"] = [round(t, 3) for t in zoo_t]
                res["cca_zoo_mapped_correlations"] = zoo_out
                for m in methods:
                    res["ratio_cca_zoo_" + m] = res["cca_zoo_s"] / res["moca_" + m + "_s"]
                    mine = [float(v) for v in out[m][0].split()[1:4]] if out[m] else []
                    if len(mine) == len(zoo_out):
                        res["max_abs_diff_cca_zoo_" + m] = max(
                            abs(x - y) for x, y in zip(mine, zoo_out))
            print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
