#!/usr/bin/env bash
# Pairs the trainer's step (bench_model_step) with the PyTorch reference (pytorch_step.py) in one
# run: for each preset, batch and precision, moca and each PyTorch peer (eager; torch.compile
# with inductor; on CUDA torch.compile(mode="reduce-overhead"): PyTorch >= 2.0) alternate
# --rounds times; the script prints each one's median of the per-round medians, the ratios
# peer / moca (> 1: moca is faster), and for moca its step rate, the matrix-product rates of
# LibTorch and of moca's own product and the step's fraction of the faster of the two; on CUDA
# also windows per second, tokens per second and achieved TFLOP/s of moca and the fastest peer.
# On CUDA --moca-steps lists the moca steps to time (bench_model_step --cuda-step: graph, fused,
# libtorch); the ratios are against the first.
# Usage: bench/model/pair_step.sh [--bin DIR] [--device cpu|cuda] [--threads N] [--rounds R]
#                                 [--presets "tiny paper-base"] [--precisions "fp32 bf16"]
#                                 [--batches "50"] [--reps N] [--peers "eager compiled"]
#                                 [--moca-steps "graph"] [--csv FILE] [--timeout S]
# --timeout S stops any one process after S seconds (its time then shows as "-").
# Environment: PYTHON (default /usr/bin/python3 when it exists, else python3): the interpreter
# whose torch is the peer (a PyTorch 2.x venv: scripts/install-torch-pip.sh); --peers defaults
# to "eager compiled" when its torch has torch.compile (plus reduce-overhead on CUDA), else
# "eager".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$here/../../build/bin device=cpu threads=2 rounds=3 presets="tiny" precisions="fp32 bf16" reps=10
batches=50 peers="" moca_steps="" csv="" limit=0
while (($#)); do
  case "$1" in
    --bin) bin=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --presets) presets=$2; shift 2 ;;
    --precisions) precisions=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --peers) peers=$2; shift 2 ;;
    --moca-steps) moca_steps=$2; shift 2 ;;
    --csv) csv=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    -h|--help) sed -n 2,19p "$0"; exit 0 ;;
    *) echo "pair_step.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $device == cpu || $device == cuda ]] ||
  { echo "pair_step.sh: --device ($device) must be cpu or cuda" >&2; exit 2; }
py=${PYTHON:-$([[ -x /usr/bin/python3 ]] && echo /usr/bin/python3 || echo python3)}
if [[ -z $peers ]]; then
  peers=$("$py" -c 'import torch; print("eager compiled" if hasattr(torch, "compile") else "eager")')
  [[ $device == cuda && $peers == *compiled* ]] && peers+=" reduce-overhead"
fi
for p in $peers; do
  [[ $p == eager || $p == compiled || $p == reduce-overhead ]] ||
    { echo "pair_step.sh: --peers ($p) must be eager, compiled or reduce-overhead" >&2; exit 2; }
done
if [[ $device == cpu ]]; then
  [[ -z $moca_steps ]] ||
    { echo "pair_step.sh: --moca-steps ($moca_steps) is for --device cuda" >&2; exit 2; }
  moca_steps=cpu
else
  moca_steps=${moca_steps:-graph}
  for m in $moca_steps; do
    [[ $m == graph || $m == fused || $m == libtorch ]] ||
      { echo "pair_step.sh: --moca-steps ($m) must be graph, fused or libtorch" >&2; exit 2; }
  done
fi
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
median() {
  sed '/^-\{0,1\}$/d' | sort -g |
    awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}'
}
ms() { sed -n 's/^step median \([0-9.]*\) ms.*/\1/p'; }
run() {  # run COMMAND...: its output, or nothing when it failed or ran past --timeout
  if ((limit > 0)); then timeout "$limit" "$@" 2>/dev/null || true; else "$@" 2>/dev/null || true; fi
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b}'; }
echo "device $device, threads $threads, $rounds rounds of $reps steps; $(date -u +%Y-%m-%dT%H:%MZ)"
echo "moca: $("$bin/bench_model_step" --help >/dev/null && echo "$bin/bench_model_step"); peer: $("$py" -c 'import torch; print("PyTorch", torch.__version__)')"
header=$(printf '%-11s %-5s %5s' preset prec batch)
for m in $moca_steps; do header+=$(printf ' %12s' "moca $m ms"); done
for p in $peers; do header+=$(printf ' %14s %6s' "$p ms" ratio); done
header+=$(printf ' %9s %9s %9s %8s' "step GF/s" "torch mm" "moca mm" fraction)
[[ $device == cuda ]] && header+=$(printf ' %10s %12s %8s %8s' "windows/s" "tokens/s" "TFLOP/s" "peer TF/s")
echo "$header"
[[ -n $csv ]] && echo "preset,precision,batch,runner,ms_per_step,windows_per_s,tokens_per_s,tflops" >"$csv"
for preset in $presets; do
  for batch in $batches; do
    for prec in $precisions; do
      declare -A mt=() pt=()
      rate=() tmm=() kmm=() frac=() flops="" tokens=""
      for ((r = 0; r < rounds; ++r)); do
        for m in $moca_steps; do
          args=(--device "$device" --preset "$preset" --precision "$prec" --batch "$batch"
                --threads "$threads" --reps "$reps" --warmup 3)
          [[ $m != cpu ]] && args+=(--cuda-step "$m")
          out=$(run "$bin/bench_model_step" "${args[@]}")
          mt[$m]+="$(ms <<<"$out") "
          [[ $m != "${moca_steps%% *}" ]] && continue
          rate+=("$(sed -n 's/^step FLOPs .* -> \([0-9.]*\) GFLOP\/s.*/\1/p' <<<"$out")")
          tmm+=("$(sed -n 's/.*GFLOP\/s; \(bf16 \)\{0,1\}sgemm [0-9]*^3 \([0-9.]*\) GFLOP\/s (LibTorch).*/\2/p' <<<"$out")")
          g=$(sed -n 's/.*GFLOP\/s (LibTorch), \([0-9.]*\) GFLOP\/s (.*/\1/p' <<<"$out")
          kmm+=("${g:-0}")  # 0: no product of moca's own (CUDA, or neither oneDNN nor BLAS)
          frac+=("$(sed -n 's/.*; fraction \([0-9.]*\) of the faster.*/\1/p' <<<"$out")")
          f=$(sed -n 's/^step FLOPs \([0-9.]*\) GFLOP.*/\1/p' <<<"$out")
          t=$(sed -n 's/.*, tokens \([0-9]*\),.*/\1/p' <<<"$out")
          flops=${f:-$flops} tokens=${t:-$tokens}
        done
        for p in $peers; do
          mode=$p
          [[ $p == compiled ]] && mode=compile
          pt[$p]+="$(run "$py" "$here/pytorch_step.py" --device "$device" --preset "$preset" \
                     --precision "$prec" --batch "$batch" --threads "$threads" --reps "$reps" \
                     --warmup 3 --mode "$mode" | ms) "
        done
      done
      first=${moca_steps%% *}
      line=$(printf '%-11s %-5s %5s' "$preset" "$prec" "$batch")
      declare -A med=()
      for m in $moca_steps; do
        med[$m]=$(tr ' ' '\n' <<<"${mt[$m]}" | median)
        line+=$(printf ' %12s' "${med[$m]}")
      done
      best_peer="-"
      for p in $peers; do
        pm=$(tr ' ' '\n' <<<"${pt[$p]}" | median)
        med[peer_$p]=$pm
        line+=$(printf ' %14s %6s' "$pm" "$(ratio "$pm" "${med[$first]}")")
        if [[ $pm != "-" ]] && { [[ $best_peer == "-" ]] || awk -v a="$pm" -v b="$best_peer" 'BEGIN {exit !(a < b)}'; }; then
          best_peer=$pm
        fi
      done
      line+=$(printf ' %9s %9s %9s %8s' "$(printf '%s\n' "${rate[@]}" | median)" \
        "$(printf '%s\n' "${tmm[@]}" | median)" "$(printf '%s\n' "${kmm[@]}" | median)" \
        "$(printf '%s\n' "${frac[@]}" | median)")
      if [[ $device == cuda ]]; then
        mm=${med[$first]}
        line+=$(awk -v ms="$mm" -v b="$batch" -v t="$tokens" -v f="$flops" -v pm="$best_peer" 'BEGIN {
          if (ms == "-" || ms == 0 || f == "") { printf " %10s %12s %8s %8s", "-", "-", "-", "-"; exit }
          printf " %10.0f %12.0f %8.1f %8s", b / (ms / 1e3), b * t / (ms / 1e3), f / ms,
                 (pm == "-" ? "-" : sprintf("%.1f", f / pm)) }')
      fi
      echo "$line"
      if [[ -n $csv ]]; then
        for k in "${!med[@]}"; do
          awk -v k="$k" -v ms="${med[$k]}" -v b="$batch" -v t="$tokens" -v f="$flops" \
              -v pre="$preset" -v prec="$prec" 'BEGIN {
            sub(/^peer_/, "pytorch-", k); if (k !~ /^pytorch-/) k = "moca-" k
            if (ms == "-" || ms == 0) { printf "%s,%s,%s,%s,,,,\n", pre, prec, b, k; exit }
            printf "%s,%s,%s,%s,%.3f,%.1f,%.0f,%s\n", pre, prec, b, k, ms, b / (ms / 1e3),
                   (t == "" ? 0 : b * t / (ms / 1e3)), (f == "" ? "" : sprintf("%.2f", f / ms)) }' >>"$csv"
        done
      fi
      unset mt pt med
    done
  done
done
