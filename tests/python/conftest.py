"""Shared fixtures of the moca pytest suite (run by ctest; see tests/python/CMakeLists.txt)."""
import os
import subprocess

import numpy as np
import pytest

import moca


def bin_dir() -> str:
    """Folder of the built tools: $MOCA_BIN_DIR, else build/bin beside the package."""
    d = os.environ.get("MOCA_BIN_DIR")
    if not d:
        d = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(moca.__file__))), "bin")
    return d


def run_tool(name: str, *args: str, env_extra=None, rc=0, cwd=None) -> subprocess.CompletedProcess:
    """Runs a built tool (without MOCA_HAPT_DIR, so its data is the generator) in `cwd`, asserts
    exit status `rc` (None: any) and returns the finished process (stdout, stderr as text)."""
    exe = os.path.join(bin_dir(), name)
    if not os.path.exists(exe):
        pytest.skip(f"{exe} not built")
    env = dict(os.environ)
    env.pop("MOCA_HAPT_DIR", None)  # the generator, unless a test says otherwise
    env.update(env_extra or {})
    p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, env=env,
                       check=False, cwd=cwd)
    if rc is not None:
        assert p.returncode == rc, p.stderr
    return p


def correlated_views(n: int, d_u: int, d_m: int, seed: int, shared: int = 2, noise: float = 1.0):
    """Two views that share `shared` latent directions (linear signal) plus noise."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, shared))
    U = z @ rng.standard_normal((shared, d_u)) + noise * rng.standard_normal((n, d_u))
    M = z @ rng.standard_normal((shared, d_m)) + noise * rng.standard_normal((n, d_m))
    return U, M


@pytest.fixture
def views():
    return correlated_views(200, 6, 5, seed=1)


@pytest.fixture
def small_views():
    U, M = correlated_views(40, 4, 3, seed=2)
    # a nonlinear relation too, so that the kernel case differs from the linear one
    M[:, 0] += np.sin(2 * U[:, 0])
    return U, M


def pytest_collection_modifyitems(items):
    """test_inspect.py, test_interop.py, test_protocol.py, test_torch_masks.py and the .ts
    predefined-protocol test last: they import PyTorch or train in-process, which changes the
    process's OpenMP thread count and so the last bits of BLAS results that other tests compare
    with the tools' exactly."""
    items.sort(key=lambda item: any(f in item.nodeid for f in
                                    ("test_interop.py", "test_inspect.py", "test_protocol.py",
                                     "test_torch_masks.py",
                                     "test_ts_format.py::test_predefined_protocol")))
