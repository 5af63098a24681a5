#!/usr/bin/env bash
# One-step set-up on a fresh Debian 12 machine: installs the Debian packages moca needs
# (scripts/install-deps.sh), configures and builds everything into build/ (with the Python
# package in build/python: MOCA_PYTHON is ON when pybind11 and /usr/bin/python3 are found).
# Usage: scripts/bootstrap.sh [--no-torch]   (--no-torch builds the theory side only)
# Environment: MOCA_BUILD_DIR (default build), MOCA_JOBS (default: number of cores),
# MOCA_CMAKE_ARGS (extra configure options, e.g. -DMOCA_WERROR=ON as CI uses).
set -euo pipefail
cd "$(dirname "$0")/.."
torch=ON
if [[ "${1:-}" == "--no-torch" ]]; then torch=OFF; fi
scripts/install-deps.sh ${1:-}
build=${MOCA_BUILD_DIR:-build}
jobs=${MOCA_JOBS:-$(nproc)}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOCA_WITH_TORCH=$torch \
  ${MOCA_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j "$jobs"
