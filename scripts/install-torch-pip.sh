#!/usr/bin/env bash
# Installs the pinned PyTorch 2.x wheel (scripts/torch-requirements.txt: torch 2.11.0, CUDA 13.0)
# into a virtual environment outside the repository and prints the venv's interpreter. The wheels
# are downloaded once into a wheel cache and installed from there without the index, so a second
# run (CI on the same machine) downloads nothing; a venv that already holds the pinned torch is
# kept as it is. The venv sees the system site-packages (Debian's numpy, scipy, sklearn, pytest
# for the Python tests); its own torch shadows Debian's python3-torch 1.13.
# Usage: scripts/install-torch-pip.sh
# Environment: MOCA_TORCH_VENV (default ~/.cache/moca/torch-<version>), MOCA_WHEEL_CACHE (default
# ~/.cache/moca/wheels; ~/.cache is $XDG_CACHE_HOME when set).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
reqs=$here/torch-requirements.txt
version=$(sed -n 's/^torch==//p' "$reqs")
cache=${XDG_CACHE_HOME:-$HOME/.cache}/moca
venv=${MOCA_TORCH_VENV:-$cache/torch-$version}
wheels=${MOCA_WHEEL_CACHE:-$cache/wheels}
case "$venv" in
  "$(cd "$here/.." && pwd)"/*)
    echo "install-torch-pip: MOCA_TORCH_VENV ($venv) must lie outside the repository" >&2
    exit 2 ;;
esac
if [[ -x $venv/bin/python ]] &&
   [[ "$("$venv/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null)" == "$version" ]]; then
  # a venv made before a pin was added gets it from the wheel cache (or the index) alone
  if ! "$venv/bin/pip" install -q --no-index --find-links "$wheels" --no-deps -r "$reqs" >/dev/null 2>&1; then
    (cd "$wheels" && /usr/bin/python3 -m pip download -q --no-deps -d "$wheels" -r "$reqs") >&2
    "$venv/bin/pip" install -q --no-index --find-links "$wheels" --no-deps -r "$reqs" >&2
  fi
  echo "install-torch-pip: torch $version already in $venv" >&2
  echo "$venv/bin/python"
  exit 0
fi
mkdir -p "$wheels"
# The index is asked only when a pinned wheel is missing from $wheels.
if ! /usr/bin/python3 -m pip download -q --no-index --find-links "$wheels" --no-deps -d "$wheels" \
       -r "$reqs" >/dev/null 2>&1; then
  echo "install-torch-pip: wheels for torch $version into $wheels (several GB on the first run)" >&2
  (cd "$wheels" && /usr/bin/python3 -m pip download -q --no-deps -d "$wheels" -r "$reqs") >&2
fi
rm -rf "$venv"
/usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q --no-index --find-links "$wheels" --no-deps -r "$reqs" >&2
"$venv/bin/python" -c 'import torch; assert torch.compiled_with_cxx11_abi(), "pre-C++11 ABI wheel"'
echo "install-torch-pip: torch $version installed in $venv" >&2
echo "$venv/bin/python"
