#!/usr/bin/python3
"""The floor of the top-k KCCA route (issue 29): both views' rbf Grams and one Cholesky per view.

    OMP_WAIT_POLICY=passive /usr/bin/python3 bench/kcca/kcca_floor.py U.csv M.csv SIGMA GAMMA

On the CSV files bench_pyrcca.py writes, with numpy/scipy on Debian's OpenBLAS: each Gram is one
dgemm (X Xᵀ), exp, and the double centring; then K + gamma I is factorised by scipy's Cholesky.
Prints `floor_s` = the wall time of that work only (reading the files and the interpreter's start
are not counted), the work every KCCA solver must do before its eigenproblem.
"""
import sys
import time

import numpy as np
import scipy.linalg as sl


def main():
    if len(sys.argv) != 5:
        sys.exit("kcca_floor.py: usage: kcca_floor.py U.csv M.csv SIGMA GAMMA")
    U = np.loadtxt(sys.argv[1], delimiter=",")
    M = np.loadtxt(sys.argv[2], delimiter=",")
    s, g = float(sys.argv[3]), float(sys.argv[4])
    if U.shape[0] != M.shape[0] or not (s > 0 and g > 0):
        sys.exit("kcca_floor.py: the files need the same rows, SIGMA and GAMMA must be > 0")
    n = U.shape[0]
    t0 = time.perf_counter()
    for X in (U, M):
        sq = (X * X).sum(1)
        K = np.exp(-(sq[:, None] + sq[None, :] - 2 * X @ X.T) / (2 * s * s))
        K -= K.mean(0)[None, :]
        K -= K.mean(1)[:, None]
        K[np.diag_indices(n)] += g
        sl.cholesky(K, lower=True, overwrite_a=True, check_finite=False)
    print("floor_s %.4f" % (time.perf_counter() - t0))


if __name__ == "__main__":
    main()
