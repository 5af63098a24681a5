#!/usr/bin/env bash
# Installs every build/test dependency of moca from Debian 12 packages.
# Usage: scripts/install-deps.sh [--no-torch | --main]
#   --no-torch  skip LibTorch (the theory side builds with -DMOCA_WITH_TORCH=OFF)
#   --main      only what the main job (kcca_score) needs: the compiler, CMake, Eigen, Spectra,
#               Boost.Math, CLI11, nlohmann-json, zlib and LAPACK/LAPACKE + OpenBLAS
#               (scripts/bootstrap.sh --main, the README's first command)
# Runs apt-get only for packages that are missing; needs root (or sudo).
set -euo pipefail
main=(cmake ninja-build g++
      libeigen3-dev libspectra-dev libboost-math-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
      # LAPACK/BLAS for moca::kcca's dense solvers, called through LAPACKE/CBLAS; OpenBLAS
      # (OpenMP) is the fast provider and is required by LibTorch too: with Debian's reference
      # BLAS LibTorch runs ~25x slower.
      liblapack-dev liblapacke-dev libopenblas0-openmp)
pkgs=("${main[@]}" pkg-config clang-format doctest-dev gnuplot-nox libbenchmark-dev ccache
      # the Python package (python/, MOCA_PYTHON) and its pytest suite (tests/python): sklearn and
      # scipy are the tests' independent references; hypothesis drives the property tests
      pybind11-dev python3-dev python3-numpy python3-pytest python3-sklearn python3-scipy
      python3-hypothesis
      # `pip install .` offline (setup.py, --no-build-isolation) into a venv
      python3-pip python3-venv python3-setuptools python3-wheel
      # CI's sanitizer + libFuzzer build (issue 13): clang 14, its runtimes and OpenMP.
      clang libclang-rt-14-dev libomp-dev)
case "${1:-}" in
  ""|--no-torch|--main) ;;
  *) echo "install-deps: unknown argument '$1' (--no-torch or --main)" >&2; exit 2 ;;
esac
if [[ "${1:-}" == "--main" ]]; then
  pkgs=("${main[@]}")
elif [[ "${1:-}" != "--no-torch" ]]; then
  # libgloo-dev: the Gloo headers that LibTorch's c10d ProcessGroupGloo.hpp includes
  # (data-parallel training, src/moca/model/dist/distributed; the c10d symbols are in libtorch itself)
  # libdnnl-dev: oneDNN's headers; the model's CPU kernels run their products through its sgemm
  # (libdnnl2 is already a dependency of libtorch; src/moca/model/kernels/detail/gemm.hpp)
  # python3-torch: the Python tests' independent reference for the weights exchanged with PyTorch
  # (moca.torch_model, moca.interop; the same 1.13 as libtorch-dev, which it shares)
  pkgs+=(libtorch-dev libgloo-dev libdnnl-dev python3-torch)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#pkgs[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
