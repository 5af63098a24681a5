"""`pip install .` into a temporary virtual environment (offline, the system's setuptools, the
build tree of this test run reused through MOCA_BUILD_DIR), import from another folder, one
fit, `pip uninstall` leaves nothing behind. CI also installs from a fresh CMake tree
(.ci/run)."""
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_import_fit_uninstall(tmp_path):
    build = os.environ.get("MOCA_PIP_BUILD_DIR")
    if not build:
        pytest.skip("MOCA_PIP_BUILD_DIR (the CMake build tree to reuse) is not set; ctest sets it")
    venv = tmp_path / "venv"
    r = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"no venv module: {r.stderr.strip()[-200:]}")
    py = venv / "bin" / "python"
    if sys.prefix != sys.base_prefix:
        # This test runs inside a venv (the PyTorch 2.x build's, whose torch the reused build tree
        # links): a venv made from it sees only the base interpreter's packages, Debian's torch
        # 1.13 among them, which moca refuses beside a LibTorch 2.x build. Make the running venv's
        # packages visible, ahead of the system's, as a user's venv beside their torch would be.
        purelib = sysconfig.get_paths()["purelib"]
        code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        site = subprocess.run([str(py), "-c", code], capture_output=True, text=True,
                              check=True).stdout.strip()
        (Path(site) / "_parent_venv.pth").write_text(purelib + "\n")
    env = dict(os.environ, MOCA_BUILD_DIR=build, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)  # the installed copy, not the build tree's
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-build-isolation", str(ROOT)],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    code = ("import moca, numpy as np; r = np.random.default_rng(0).standard_normal((40, 3)); "
            "k = moca.KCCA(n_components=2).fit(r, r ** 2); "
            "print(moca.__file__); print(moca.__version__); print(k.correlations_[0])")
    r = subprocess.run([str(py), "-c", code], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    where, version, rho = r.stdout.split()
    assert where.startswith(str(venv)), where
    assert version == (ROOT / "VERSION").read_text().strip()
    assert 0.0 < float(rho) <= 1.0
    site = Path(where).parent.parent
    r = subprocess.run([str(py), "-m", "pip", "uninstall", "-y", "moca"], capture_output=True,
                       text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    left = [p.name for p in site.iterdir() if p.name.lower().startswith("moca")]
    assert left == [], left
    r = subprocess.run([str(py), "-c", "import moca; print(moca.__file__)"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode != 0 or not r.stdout.startswith(str(venv)), r.stdout
