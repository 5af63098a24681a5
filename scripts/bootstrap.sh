#!/usr/bin/env bash
# One-step set-up on a fresh Debian 12 machine: installs the Debian packages moca needs
# (scripts/install-deps.sh), configures and builds everything into build/ (with the Python
# package in build/python: MOCA_PYTHON is ON when pybind11 and /usr/bin/python3 are found).
# Usage: scripts/bootstrap.sh [--main | --no-torch | --torch debian|pip]
#   --main        the main job alone: the few packages kcca_score needs (install-deps.sh --main)
#                 and the kcca_score target, into build/ (no LibTorch, tests or Python; a later
#                 plain run of this script builds the rest into the same folder)
#   --no-torch    the theory side only (-DMOCA_WITH_TORCH=OFF)
#   --torch debian  Debian's LibTorch 1.13, CPU only (the default)
#   --torch pip   the GPU build: the pinned PyTorch 2.x wheel (CUDA 13.0; scripts/install-torch-pip.sh,
#                 a venv outside the repo, several GB on the first run) and moca built against its
#                 LibTorch with CUDA and NCCL, into build-torch2/; the Python package and its tests
#                 use the venv's interpreter
# Environment: MOCA_TORCH (debian|pip, as --torch), MOCA_BUILD_DIR (default build, or
# build-torch2 for pip), MOCA_JOBS (default: number of cores), MOCA_CMAKE_ARGS (extra configure
# options, e.g. -DMOCA_WERROR=ON as CI uses), MOCA_TORCH_VENV and MOCA_WHEEL_CACHE (see
# scripts/install-torch-pip.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
torch=${MOCA_TORCH:-debian}
case "${1:-}" in
  "") ;;
  --main) torch=main ;;
  --no-torch) torch=none ;;
  --torch) torch=${2:-} ;;
  -h|--help) sed -n 2,18p "$0"; exit 0 ;;
  *) echo "bootstrap: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
case "$torch" in
  debian|pip|none|main) ;;
  *) echo "bootstrap: --torch ($torch) must be debian or pip" >&2; exit 2 ;;
esac
build=${MOCA_BUILD_DIR:-build}
jobs=${MOCA_JOBS:-$(nproc)}
if [[ $torch == main ]]; then
  scripts/install-deps.sh --main
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOCA_WITH_TORCH=OFF \
    -DMOCA_BUILD_TESTS=OFF -DMOCA_BUILD_BENCH=OFF -DMOCA_PYTHON=OFF ${MOCA_CMAKE_ARGS:-} >/dev/null
  cmake --build "$build" -j "$jobs" --target kcca_score
  exit 0
fi
# A folder first built by --main has tests, benchmarks and Python off in its cache: turn them
# back on (MOCA_PYTHON's default is recomputed: ON when pybind11 and Python are found).
args=(-DMOCA_WITH_TORCH=ON -DMOCA_BUILD_TESTS=ON -DMOCA_BUILD_BENCH=ON -UMOCA_PYTHON)
if [[ $torch == none ]]; then
  scripts/install-deps.sh --no-torch
  args=(-DMOCA_WITH_TORCH=OFF -DMOCA_BUILD_TESTS=ON -DMOCA_BUILD_BENCH=ON -UMOCA_PYTHON)
else
  scripts/install-deps.sh
fi
if [[ $torch == pip ]]; then
  build=${MOCA_BUILD_DIR:-build-torch2}
  py=$(scripts/install-torch-pip.sh)
  # TorchConfig finds the CUDA toolkit (nvcc, cuBLAS, cuDNN, NCCL) under CUDAToolkit_ROOT.
  cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
  args+=(-DCMAKE_PREFIX_PATH="$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
         -DPython3_EXECUTABLE="$py" -DCUDAToolkit_ROOT="$cuda"
         -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" -DMOCA_WITH_NCCL=ON -DMOCA_REQUIRE_CUDA=ON)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${args[@]}" ${MOCA_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$jobs"
