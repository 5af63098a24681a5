#!/usr/bin/env bash
# Pairs the trainer's step (bench_model_step) with the PyTorch reference (pytorch_step.py) in one
# run: for each preset and precision, moca and each PyTorch peer (eager, and torch.compile with
# inductor: PyTorch >= 2.0) alternate --rounds times; the script prints each one's median of the
# per-round medians, the ratios peer / moca (> 1: moca is faster), moca's step rate, the 1024^3
# sgemm rates of LibTorch and of moca's own product (the GEMM rate) and the step's fraction of
# the faster of the two (medians over the rounds; bench_model_step prints them).
# Usage: bench/model/pair_step.sh [--bin DIR] [--device cpu|cuda] [--threads N] [--rounds R]
#                                 [--presets "tiny paper-base"] [--precisions "fp32 bf16"]
#                                 [--reps N] [--peers "eager compiled"]
# Environment: PYTHON (default /usr/bin/python3 when it exists, else python3): the interpreter
# whose torch is the peer (a PyTorch 2.x venv: scripts/install-torch-pip.sh); --peers defaults
# to "eager compiled" when its torch has torch.compile, else "eager".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../../build/bin device=cpu threads=2 rounds=3 presets="tiny" precisions="fp32 bf16" reps=10
peers=""
while (($#)); do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --presets) presets=$2; shift 2 ;;
    --precisions) precisions=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --peers) peers=$2; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "pair_step.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
py=${PYTHON:-$([[ -x /usr/bin/python3 ]] && echo /usr/bin/python3 || echo python3)}
if [[ -z $peers ]]; then
  peers=$("$py" -c 'import torch; print("eager compiled" if hasattr(torch, "compile") else "eager")')
fi
for p in $peers; do
  [[ $p == eager || $p == compiled ]] ||
    { echo "pair_step.sh: --peers ($p) must be eager or compiled" >&2; exit 2; }
done
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
ms() { sed -n 's/^step median \([0-9.]*\) ms.*/\1/p'; }
echo "device $device, threads $threads, $rounds rounds of $reps steps; $(date -u +%Y-%m-%dT%H:%MZ)"
echo "moca: $("$bin/bench_model_step" --help >/dev/null && echo "$bin/bench_model_step"); peer: $("$py" -c 'import torch; print("PyTorch", torch.__version__)')"
header=$(printf '%-11s %-5s %10s' preset prec "moca ms")
for p in $peers; do header+=$(printf ' %12s %7s' "$p ms" ratio); done
header+=$(printf ' %9s %9s %9s %8s' "step GF/s" "torch mm" "moca mm" fraction)
echo "$header"
for preset in $presets; do
  for prec in $precisions; do
    m=() rate=() tmm=() kmm=() frac=()
    declare -A pt=()
    for ((r = 0; r < rounds; ++r)); do
      out=$("$bin/bench_model_step" --device "$device" --preset "$preset" --precision "$prec" \
              --threads "$threads" --reps "$reps" --warmup 3)
      m+=("$(ms <<<"$out")")
      rate+=("$(sed -n 's/^step FLOPs .* -> \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$out")")
      tmm+=("$(sed -n 's/.*GFLOP\/s; sgemm [0-9]*^3 \([0-9.]*\) GFLOP\/s (LibTorch).*/\1/p' <<<"$out")")
      g=$(sed -n 's/.*GFLOP\/s (LibTorch), \([0-9.]*\) GFLOP\/s (.*/\1/p' <<<"$out")
      kmm+=("${g:-0}")  # 0: no product of moca's own (CUDA, or neither oneDNN nor BLAS)
      frac+=("$(sed -n 's/.*; fraction \([0-9.]*\) of the faster.*/\1/p' <<<"$out")")
      for p in $peers; do
        flag=""
        [[ $p == compiled ]] && flag=--compile
        pt[$p]+="$("$py" "$here/pytorch_step.py" --device "$device" --preset "$preset" \
                   --precision "$prec" --threads "$threads" --reps "$reps" --warmup 3 $flag | ms) "
      done
    done
    mm=$(printf '%s\n' "${m[@]}" | median)
    line=$(printf '%-11s %-5s %10.2f' "$preset" "$prec" "$mm")
    for p in $peers; do
      pm=$(tr ' ' '\n' <<<"${pt[$p]}" | sed '/^$/d' | median)
      line+=$(printf ' %12.2f %7.2f' "$pm" "$(awk -v a="$pm" -v b="$mm" 'BEGIN {print a / b}')")
    done
    line+=$(printf ' %9.1f %9.1f %9.1f %8.2f' "$(printf '%s\n' "${rate[@]}" | median)" \
      "$(printf '%s\n' "${tmm[@]}" | median)" "$(printf '%s\n' "${kmm[@]}" | median)" \
      "$(printf '%s\n' "${frac[@]}" | median)")
    echo "$line"
    unset pt
  done
done
