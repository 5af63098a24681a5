"""`pip install .` of the Python package moca (docs/python.md, "Install"): CMake builds the
extension moca._core, setuptools installs it with python/moca/*.py.

Offline, with the system's setuptools and pybind11:
    pip install --no-build-isolation .        # from the repository root or python/
Environment:
    MOCA_CMAKE_ARGS   extra CMake configure arguments (split like a shell would), e.g.
                      "-DMOCA_WITH_TORCH=ON" for moca.Encoder (needs LibTorch; ~8 min more)
    MOCA_BUILD_DIR    a CMake build tree to build the extension in (and reuse: an up-to-date
                      tree costs nothing); default: a fresh tree under build/pip/
    MOCA_BUILD_JOBS   parallel build jobs (default: all cores)
The extension is built without LibTorch unless MOCA_CMAKE_ARGS or MOCA_BUILD_DIR's cache says
otherwise. The version is the file VERSION, which CMake's project() reads too.
"""
import os
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


class CMakeBuild(build_ext):
    """Builds the target moca_python_core with CMake and copies moca/_core*.so into place."""

    def build_extension(self, ext):
        build = Path(os.environ.get("MOCA_BUILD_DIR") or ROOT / "build" / "pip" / "cmake")
        build = build.resolve()
        reuse = (build / "CMakeCache.txt").is_file() and "MOCA_BUILD_DIR" in os.environ
        if not reuse:
            args = ["-DCMAKE_BUILD_TYPE=Release", "-DMOCA_PYTHON=ON", "-DMOCA_WITH_TORCH=OFF",
                    "-DMOCA_BUILD_TESTS=OFF", "-DMOCA_BUILD_BENCH=OFF",
                    f"-DPython3_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
            args += shlex.split(os.environ.get("MOCA_CMAKE_ARGS", ""))
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *args], check=True)
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


setup(
    version=VERSION,
    packages=["moca"],
    package_dir={"moca": os.path.relpath(ROOT / "python" / "moca")},
    package_data={"moca": ["py.typed"]},
    ext_modules=[Extension("moca._core", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch folders beside the CMake tree, not in the source tree
    options={"build": {"build_base": str(ROOT / "build" / "pip" / "setuptools")},
             "egg_info": {"egg_base": str(ROOT / "build" / "pip")}},
    zip_safe=False,
)
