#!/usr/bin/env bash
# Pairs the trainer's step (bench_model_step) with the PyTorch reference (pytorch_step.py) in one
# run: for each preset and precision, the two alternate --rounds times and the script prints each
# one's median of the per-round medians and the ratio PyTorch / moca (> 1: moca is faster).
# Usage: bench/model/pair_step.sh [--bin DIR] [--device cpu|cuda] [--threads N] [--rounds R]
#                                 [--presets "tiny paper-base"] [--precisions "fp32 bf16"]
#                                 [--reps N]
# Environment: PYTHON (default /usr/bin/python3 when it exists, else python3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../../build/bin device=cpu threads=2 rounds=3 presets="tiny" precisions="fp32 bf16" reps=10
while (($#)); do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --presets) presets=$2; shift 2 ;;
    --precisions) precisions=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "pair_step.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
py=${PYTHON:-$([[ -x /usr/bin/python3 ]] && echo /usr/bin/python3 || echo python3)}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'; }
ms() { sed -n 's/^step median \([0-9.]*\) ms.*/\1/p'; }
echo "device $device, threads $threads, $rounds rounds of $reps steps; $(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-11s %-5s %12s %12s %8s\n' preset prec "moca ms" "pytorch ms" ratio
for preset in $presets; do
  for prec in $precisions; do
    m=() p=()
    for ((r = 0; r < rounds; ++r)); do
      m+=("$("$bin/bench_model_step" --device "$device" --preset "$preset" --precision "$prec" \
              --threads "$threads" --reps "$reps" --warmup 3 | ms)")
      p+=("$("$py" "$here/pytorch_step.py" --device "$device" --preset "$preset" \
              --precision "$prec" --threads "$threads" --reps "$reps" --warmup 3 | ms)")
    done
    mm=$(printf '%s\n' "${m[@]}" | median) pm=$(printf '%s\n' "${p[@]}" | median)
    printf '%-11s %-5s %12.2f %12.2f %8.2f\n' "$preset" "$prec" "$mm" "$pm" \
      "$(awk -v a="$pm" -v b="$mm" 'BEGIN {print a / b}')"
  done
done
