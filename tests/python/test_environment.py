"""The package in the environments users have (issue 37): numpy 2 beside an extension that
cannot take it, a torch of another version beside a LibTorch build, one LibTorch per process,
and setup.py building against the interpreter's own torch."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import moca
from moca import _build_info

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIR = str(Path(moca.__file__).resolve().parent.parent)  # the moca under test


def _run(python, code, *, path_first=None, env_extra=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (path_first, PACKAGE_DIR) if p))
    env.update(env_extra or {})
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env,
                          cwd=ROOT)


def _release(version):
    return moca._release(version)


def test_release_parses_the_versions_torch_and_cmake_write():
    assert _release("2.11.0+cu130") == (2, 11, 0)
    assert _release("1.13.0a0") == (1, 13, 0)
    assert _release("1.13.0") == (1, 13, 0)
    assert _release("2.4.0rc1") == (2, 4, 0)


def test_numpy2_beside_an_old_pybind11_is_a_clear_import_error():
    """MOCA_NUMPY2_PYTHON: an interpreter with numpy >= 2 (CI's PyPI venv). An extension built
    with pybind11 < 2.12 must refuse it at import (exit 1, ImportError naming both versions),
    never crash; one built with >= 2.12 must work with it (a KCCA fit)."""
    python = os.environ.get("MOCA_NUMPY2_PYTHON")
    if not python:
        pytest.skip("MOCA_NUMPY2_PYTHON (an interpreter with numpy >= 2) is not set; CI sets it")
    r = _run(python, "import numpy; print(numpy.__version__)")
    assert r.returncode == 0 and _release(r.stdout.strip()) >= (2,), r.stdout + r.stderr
    code = ("import numpy as np, moca; r = np.random.default_rng(0).standard_normal((40, 3)); "
            "print(moca.KCCA(n_components=2).fit(r, r ** 2).correlations_[0])")
    r = _run(python, code)
    assert r.returncode >= 0, f"killed by signal {-r.returncode}: {r.stderr[-500:]}"
    if _release(_build_info.pybind11_version) < (2, 12):
        assert r.returncode == 1, r.stdout + r.stderr
        assert "ImportError" in r.stderr and "numpy 2 needs pybind11 >= 2.12" in r.stderr, r.stderr
        assert f"pybind11 {'.'.join(_build_info.pybind11_version.split('.')[:2])}" in r.stderr
    else:
        assert r.returncode == 0, r.stderr
        assert 0.0 < float(r.stdout) <= 1.0


def _fake_torch(tmp_path, version):
    """A package `torch` of the given version (module and distribution metadata) that loads no
    library: what moca sees of a torch beside it."""
    (tmp_path / "torch").mkdir()
    # (Tensor: scipy's array-API helpers look it up on any imported torch)
    (tmp_path / "torch" / "__init__.py").write_text(
        f'__version__ = "{version}"\n\n\nclass Tensor:\n    pass\n')
    info = tmp_path / f"torch-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    return str(tmp_path)


@pytest.mark.parametrize("imported_first", [True, False])
def test_a_torch_of_another_version_is_refused_before_loading(tmp_path, imported_first):
    fake = _fake_torch(tmp_path, "0.9.1")
    code = ("import torch\n" if imported_first else "") + (
        "import sys, moca\n"
        "print(any('libtorch' in l for l in open('/proc/self/maps')))\n")
    r = _run(sys.executable, code, path_first=fake)
    if not _build_info.libtorch_version:
        # built without LibTorch: any torch may sit beside it
        assert r.returncode == 0, r.stderr
        assert r.stdout.split()[-1] == "False"
        return
    assert r.returncode == 1, r.stdout + r.stderr
    assert "ImportError" in r.stderr
    assert f"LibTorch {_build_info.libtorch_version}" in r.stderr and "0.9.1" in r.stderr
    # refused before _core loaded (nothing of LibTorch mapped)
    r = _run(sys.executable, code.replace("import sys, moca\n", "import sys\ntry:\n    import moca\n"
                                          "except ImportError:\n    pass\n"), path_first=fake)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "False"


def _torch_importable():
    r = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True)
    return r.returncode == 0


@pytest.mark.parametrize("order", ["torch,moca", "moca,torch"])
def test_one_libtorch_in_the_process(order):
    if not moca.with_torch or not _torch_importable():
        pytest.skip("needs moca built with LibTorch and an importable torch")
    first, second = order.split(",")
    code = (f"import {first}, {second}, os\n"
            "maps = {os.path.realpath(l.split()[-1]) for l in open('/proc/self/maps')\n"
            "        if 'libtorch_cpu' in l}\n"
            "import torch, moca\n"
            "print(len(maps)); print(torch.__version__); print(*sorted(maps))\n")
    r = _run(sys.executable, code)
    assert r.returncode == 0, r.stderr
    count, version, *paths = r.stdout.split()
    assert count == "1", paths
    assert _release(version) == _release(_build_info.libtorch_version)


def test_setup_builds_against_the_interpreters_torch(tmp_path):
    """setup.py's configure arguments with -DMOCA_WITH_TORCH=ON, run by CMake: the LibTorch found
    is the interpreter's torch's (its version; its folder for a PyPI wheel)."""
    if not _torch_importable():
        pytest.skip("needs an importable torch")
    if subprocess.run(["cmake", "--version"], capture_output=True).returncode != 0:
        pytest.skip("no cmake")
    env = dict(os.environ, MOCA_CMAKE_ARGS="-DMOCA_WITH_TORCH=ON")
    r = subprocess.run(
        [sys.executable, "-c", "import json, setup; print(json.dumps(setup.cmake_configure_args()))"],
        capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    import json
    args = json.loads(r.stdout.splitlines()[-1])
    r = subprocess.run([sys.executable, "-c", "import torch, torch.utils; print(torch.__version__); "
                        "print(torch.utils.cmake_prefix_path)"], capture_output=True, text=True)
    version, prefix = r.stdout.split()
    release = ".".join(map(str, _release(version)))
    assert f"-DMOCA_EXPECT_TORCH_VERSION={release}" in args
    assert (f"-DCMAKE_PREFIX_PATH={prefix}" in args) == Path(prefix).is_dir()
    # configure only (the build is CI's pip stage); CUDA wheels find the toolkit as bootstrap does
    cuda = os.environ.get("CUDAToolkit_ROOT", "/usr/local/cuda")
    extra = [f"-DCUDAToolkit_ROOT={cuda}", f"-DCMAKE_CUDA_COMPILER={cuda}/bin/nvcc"] \
        if Path(cuda, "bin", "nvcc").exists() else []
    r = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(tmp_path / "b"), *args, *extra],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"moca: LibTorch {release}" in r.stdout, r.stdout[-3000:]
