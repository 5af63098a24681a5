#!/usr/bin/python3
"""Times moca.KCCA(...).fit against the C++ library call and against pyrcca on the same arrays.

    PYTHONPATH=build/python OMP_WAIT_POLICY=passive /usr/bin/python3 \\
        bench/python/bench_kcca_python.py --pyrcca DIR [--n 2000 5000] [--repeats 5 3]

Case (issue 11): two views of p = 60 columns, n rows (n = 2000, 5000), rbf kernel, gamma 0.1,
3 components. moca: sigma "auto" (median heuristic), exact solver, alpha/beta computed.
C++: build/bin/kcca_fit_timing (the same kcca::kcca_analysis call, timed inside the process;
two calls per run, the second — warm, like the Python fits after the untimed first — is taken),
run alternately with the Python fit so that each pair shares the machine's load; the ratio is
taken per pair and its median reported. Within one fit, the library call's own wall time (the
tool's JSON "seconds") against the fit's wall time gives the bindings' overhead free of the
load differences between processes ("python_over_inner_cpp"). pyrcca (gallantlab/pyrcca, not in
Debian; get it with `git clone https://github.com/gallantlab/pyrcca DIR`):
rcca.CCA(kernelcca=True, ktype="gaussian", reg=0.1, numCC=3) with gausigma set to moca's sigma_u,
.train([U, M]) (pyrcca builds both kernels and solves the 2n x 2n generalised eigenproblem).
pyrcca imports h5py at module level for its save/load only; without python3-h5py a stub module
is put in its place (reported). Prints one JSON line per case.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types

import numpy as np


def views(n, p, seed=0):
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, 3))
    U = np.tanh(z @ rng.standard_normal((3, p))) + 0.5 * rng.standard_normal((n, p))
    M = np.sin(z @ rng.standard_normal((3, p))) + 0.5 * rng.standard_normal((n, p))
    return U, M


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pyrcca", help="folder of a pyrcca checkout (holds rcca/)")
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 5000])
    ap.add_argument("--p", type=int, default=60)
    ap.add_argument("--repeats", type=int, nargs="+", default=[5, 3],
                    help="moca/C++ pairs per n (one value per --n; the last repeats)")
    ap.add_argument("--methods", nargs="+", default=["exact", "iterative"],
                    help="moca solvers to time (exact: all correlations, O(n^3); iterative: "
                         "top k by Arnoldi)")
    ap.add_argument("--exact-max-n", type=int, default=2000,
                    help="time the exact solver only up to this n")
    ap.add_argument("--pyrcca-repeats", type=int, nargs="+", default=[3, 1],
                    help="pyrcca runs per n (it takes minutes at n = 5000)")
    ap.add_argument("--bin", default=None, help="folder of kcca_fit_timing (default build/bin)")
    a = ap.parse_args()
    import moca
    here = os.path.dirname(os.path.abspath(__file__))
    exe = os.path.join(a.bin or os.path.join(here, "..", "..", "build", "bin"), "kcca_fit_timing")
    rcca, stub = None, False
    if a.pyrcca:
        sys.path.insert(0, a.pyrcca)
        try:
            import h5py  # noqa: F401
        except ImportError:
            sys.modules["h5py"] = types.ModuleType("h5py")
            stub = True
        import rcca
    with tempfile.TemporaryDirectory() as tmp:
        for i, n in enumerate(a.n):
            U, M = views(n, a.p)
            np.save(os.path.join(tmp, "U.npy"), U)
            np.save(os.path.join(tmp, "M.npy"), M)
            res = {"n": n, "p": a.p}
            sigma = None
            for method in a.methods:
                if method == "exact" and n > a.exact_max_n:
                    continue
                py_t, cpp_t, inner = [], [], []
                moca.KCCA(kernel="rbf", gamma=0.1, n_components=3, method=method).fit(U, M)
                for _ in range(a.repeats[min(i, len(a.repeats) - 1)]):
                    t0 = time.perf_counter()
                    k = moca.KCCA(kernel="rbf", gamma=0.1, n_components=3, method=method).fit(U, M)
                    py_t.append(time.perf_counter() - t0)
                    inner.append(k.result_["seconds"])  # the C++ call inside this fit
                    out = subprocess.run([exe, os.path.join(tmp, "U.npy"),
                                          os.path.join(tmp, "M.npy"), "2", method],
                                         capture_output=True, text=True, check=True).stdout
                    cpp_t.append(float(out.split()[1]))  # the second (warm) call, as in Python
                sigma = k.sigma_u_
                res[method] = {"moca_python_s": statistics.median(py_t),
                               "cpp_s": statistics.median(cpp_t),
                               "python_over_cpp": statistics.median(
                                   [p / c for p, c in zip(py_t, cpp_t)]),
                               "python_over_inner_cpp": statistics.median(
                                   [p / c for p, c in zip(py_t, inner)]),
                               "python_s_all": [round(t, 3) for t in py_t],
                               "cpp_s_all": [round(t, 3) for t in cpp_t],
                               "correlations": k.correlations_.round(6).tolist(),
                               "cpp_rho": out.split()[-3:]}
            if rcca is not None:
                reps = a.pyrcca_repeats[min(i, len(a.pyrcca_repeats) - 1)]
                rt = []
                for _ in range(reps):
                    c = rcca.CCA(kernelcca=True, ktype="gaussian", reg=0.1, numCC=3,
                                 verbose=False)
                    c.gausigma = sigma  # rcca.CCA takes no gausigma; its base class reads it
                    t0 = time.perf_counter()
                    c.train([U, M])
                    rt.append(time.perf_counter() - t0)
                res["pyrcca"] = {"s": statistics.median(rt), "runs": reps,
                                 "s_all": [round(t, 3) for t in rt],
                                 "cancorrs": np.round(c.cancorrs, 6).tolist(), "h5py_stub": stub}
                for method in a.methods:
                    if method in res:
                        res[method]["pyrcca_over_python"] = (
                            res["pyrcca"]["s"] / res[method]["moca_python_s"])
            print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
