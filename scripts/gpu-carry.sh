#!/usr/bin/env bash
# Packs the programs of a CUDA build (scripts/bootstrap.sh --torch pip: build-torch2/) for a GPU
# machine that has the same PyTorch, so that GPU minutes go to running, not compiling
# (scripts/gpu-check.sh --bin DIR/programs.tar.xz). The archive holds bin/, the programs
# gpu-check runs, stripped, and lib/, the shared libraries they load that are neither the C
# library's nor LibTorch's or CUDA's (those come from the GPU machine's PyTorch through
# LD_LIBRARY_PATH): OpenBLAS, LAPACK, zlib and the like; xz keeps it near 11 MB where the
# folders take 70. --data also copies a UCI HAPT folder to DIR/uci-hapt.
# Usage: scripts/gpu-carry.sh [--build DIR] [--out DIR] [--data DIR]
#   --build DIR  the CUDA build (default build-torch2)
#   --out DIR    where to pack (default .gpu-carry, git-ignored)
#   --data DIR   a UCI HAPT folder to carry along (default none)
# Prints the packed size; the device tool carries at most 64 MiB with the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-torch2 out=.gpu-carry data=""
die() { echo "gpu-carry: $1" >&2; exit "${2:-1}"; }
while (($#)); do
  case "$1" in
    --build|--out|--data)
      (($# >= 2)) || die "$1 needs a folder" 2
      case "$1" in --build) build=$2 ;; --out) out=$2 ;; --data) data=$2 ;; esac
      shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
done
progs=(moca kcca_score bench_model_step test_model paper_experiments)
for p in "${progs[@]}"; do
  [[ -x $build/bin/$p ]] || die "--build ($build) has no bin/$p: build it first (ninja -C $build ${progs[*]})" 2
done
grep -q '^MOCA_REQUIRE_CUDA:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null ||
  die "--build ($build) is not a CUDA build (scripts/bootstrap.sh --torch pip)" 2
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
for p in "${progs[@]}"; do
  strip --strip-unneeded -o "$out/bin/$p" "$build/bin/$p"
done
# The libraries to carry: every resolved dependency outside LibTorch's and CUDA's folders (the
# venv's torch/ and nvidia/ packages) and other than the C and C++ runtime, which the GPU
# machine has (newer).
ldd "${progs[@]/#/$build/bin/}" | awk '/=> \// {print $3}' | sort -u | while read -r lib; do
  case "$lib" in
    */torch/lib/*|*/nvidia/*|*/cuda/*|*/cuda-[0-9]*/*|*/libc.so*|*/libm.so*|*/libdl.so*|*/librt.so*|*/libpthread.so*|\
    */ld-linux*|*/libutil.so*|*/libresolv.so*|*/libstdc++.so*|*/libgcc_s.so*) ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
# The oneDNN that the CPU kernels load at run time (dlopen, so ldd does not list it), where the
# build does so: without it they take the BLAS route.
if strings "$build/bin/moca" | grep -q 'libdnnl\.so\.$'; then
  dnnl=$(ldconfig -p | awk '/libdnnl\.so\.[0-9]+ .*x86-64/ {print $NF; exit}')
  [[ -n $dnnl ]] && cp -L "$dnnl" "$out/lib/"
fi
if [[ -n $data ]]; then
  [[ -d $data/RawData ]] || die "--data ($data) is not a UCI HAPT folder (no RawData/)" 2
  cp -r "$data" "$out/uci-hapt"
fi
nlibs=$(ls "$out/lib" | wc -l)
tar -cJf "$out/programs.tar.xz" -C "$out" bin lib
rm -rf "$out/bin" "$out/lib"
echo "gpu-carry: $(du -sh "$out" | cut -f1) in $out (programs.tar.xz: ${progs[*]} and $nlibs libraries)"
