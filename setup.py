"""`pip install .` of the Python package moca (docs/python.md, "Install"): CMake builds the
extension moca._core, setuptools installs it with python/moca/*.py.

With today's PyPI (build isolation: setuptools, wheel and pybind11 >= 2.12 come from
pyproject.toml's build requirements; CMake, a C++17 compiler and the C++ libraries come from the
system, scripts/install-deps.sh --main):
    pip install .            # or: pip wheel .   (from the repository root, python/ or an sdist)
Offline, with Debian's setuptools and pybind11 (2.10: the extension then refuses numpy 2 at
import with a clear ImportError):
    pip install --no-build-isolation --no-index .
Environment:
    MOCA_CMAKE_ARGS   extra CMake configure arguments (split like a shell would), e.g.
                      "-DMOCA_WITH_TORCH=ON" for moca.Encoder: built against the LibTorch of the
                      interpreter's own torch (torch.utils.cmake_prefix_path), so it needs
                      --no-build-isolation in the environment that has torch
    MOCA_BUILD_DIR    a CMake build tree to build the extension in (and reuse: an up-to-date
                      tree costs nothing); default: a fresh tree under build/pip/
    MOCA_BUILD_JOBS   parallel build jobs (default: all cores)
The extension is built without LibTorch unless MOCA_CMAKE_ARGS or MOCA_BUILD_DIR's cache says
otherwise. The version is the file VERSION, which CMake's project() reads too.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent  # the repository root (python/setup.py is a link here)
ROOT = HERE if (HERE / "VERSION").is_file() else HERE.parent
VERSION = (ROOT / "VERSION").read_text().strip()
# setuptools' own scratch folders go beside the CMake tree, not into the source tree; egg_info
# needs its folder to exist before it runs.
SCRATCH = ROOT / "build" / "pip"
SCRATCH.mkdir(parents=True, exist_ok=True)

#: The first pybind11 that supports numpy 2 (older builds crash on numpy 2's arrays).
PYBIND11_NUMPY2 = (2, 12)


def _version_tuple(text):
    """(2, 11, 0) of "2.11.0+cu130"; (1, 13, 0) of "1.13.0a0"."""
    parts = []
    for p in text.split("+")[0].split(".")[:3]:
        digits = re.match(r"\d+", p)
        if not digits:
            break
        parts.append(int(digits.group()))
    return tuple(parts)


def pybind11_args():
    """-Dpybind11_DIR of the build environment's pybind11 package (PyPI's, under build isolation)
    when it is new enough for numpy 2; otherwise none, and CMake finds the system's (Debian's
    pybind11-dev), whose extension refuses numpy 2 at import."""
    try:
        import pybind11
    except ImportError:
        return []
    if _version_tuple(pybind11.__version__) < PYBIND11_NUMPY2:
        return []
    return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]


def torch_args(cmake_args):
    """With -DMOCA_WITH_TORCH=ON: the LibTorch of this interpreter's torch, never whatever CMake
    finds first, so that `import torch` and `import moca` share one LibTorch. CMake refuses a
    LibTorch of another version (MOCA_EXPECT_TORCH_VERSION)."""
    if "-DMOCA_WITH_TORCH=ON" not in cmake_args:
        return ["-DMOCA_WITH_TORCH=OFF"]
    try:
        import torch
    except ImportError:
        sys.exit("setup.py: MOCA_CMAKE_ARGS asks for -DMOCA_WITH_TORCH=ON, but this interpreter "
                 f"({sys.executable}) cannot import torch (the extension is built against the "
                 "interpreter's own torch): install torch, then pip install --no-build-isolation .")
    release = ".".join(str(v) for v in _version_tuple(torch.__version__))
    args = [f"-DMOCA_EXPECT_TORCH_VERSION={release}"]
    # A PyPI wheel ships its CMake package; Debian's python3-torch shares the system LibTorch,
    # whose package CMake finds in the system folders.
    if Path(torch.utils.cmake_prefix_path).is_dir():
        args.append(f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}")
    return args


def cmake_configure_args():
    """Everything setup.py passes to `cmake -S ROOT -B BUILD` (also used by the tests)."""
    extra = shlex.split(os.environ.get("MOCA_CMAKE_ARGS", ""))
    args = ["-DCMAKE_BUILD_TYPE=Release", "-DMOCA_PYTHON=ON", "-DMOCA_BUILD_TESTS=OFF",
            "-DMOCA_BUILD_BENCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
    args += torch_args(extra) + pybind11_args()
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    return args + extra


class CMakeBuild(build_ext):
    """Builds the target moca_python_core with CMake and copies moca/_core*.so into place."""

    def build_extension(self, ext):
        if not shutil.which("cmake"):
            sys.exit("setup.py: cmake not found on PATH (moca's extension is built with CMake "
                     ">= 3.18 and the C++ libraries of scripts/install-deps.sh --main)")
        build = Path(os.environ.get("MOCA_BUILD_DIR") or SCRATCH / "cmake").resolve()
        reuse = (build / "CMakeCache.txt").is_file() and "MOCA_BUILD_DIR" in os.environ
        if not reuse:
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *cmake_configure_args()],
                           check=True)
        jobs = os.environ.get("MOCA_BUILD_JOBS") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "--target", "moca_python_core",
                        "-j", jobs], check=True)
        built = sorted((build / "python" / "moca").glob("_core*.so"))
        if not built:
            raise RuntimeError(f"setup.py: no moca/_core*.so in {build / 'python' / 'moca'} "
                               "after the CMake build")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)
        # what the extension was built against (LibTorch's version), read at import
        shutil.copyfile(built[0].parent / "_build_info.py", target.parent / "_build_info.py")


if __name__ == "__main__":
    setup(
        version=VERSION,
        packages=["moca"],
        package_dir={"moca": os.path.relpath(ROOT / "python" / "moca")},
        package_data={"moca": ["py.typed"]},
        ext_modules=[Extension("moca._core", sources=[])],
        cmdclass={"build_ext": CMakeBuild},
        options={"build": {"build_base": str(SCRATCH / "setuptools")},
                 "egg_info": {"egg_base": str(SCRATCH)}},
        zip_safe=False,
    )
