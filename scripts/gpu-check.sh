#!/usr/bin/env bash
# GPU check (issue 43): the one prepared script for a lent GPU machine. It runs the torch test
# suite on the GPU, pairs the trainer's step with the PyTorch reference model (eager,
# torch.compile, torch.compile(mode="reduce-overhead")) at batch 50 and 512 in fp32 (TF32) and
# bf16, runs the paper's Table-1 setting for the time it is given (paper/reproduce --gpu) and
# writes a report, CSV, JSON and PNG results into one folder.
#
# GPU minutes are scarce, so the programs are built on a CPU machine against the same PyTorch
# (scripts/bootstrap.sh --torch pip, then scripts/gpu-carry.sh packs them with the libraries they
# need) and carried: --bin points at them, and the GPU machine's own PyTorch supplies LibTorch
# and CUDA's libraries. Without --bin the script builds them first (minutes on the GPU machine).
#
# Usage: scripts/gpu-check.sh [--out DIR] [--bin DIR] [--part LIST] [--budget-seconds N]
#                             [--data DIR] [--dry-run] [--jobs N] [--prefix DIR]
#   --out DIR           report and results (default gpu-check/)
#   --bin PATH          carried programs: scripts/gpu-carry.sh's programs.tar.xz (unpacked into
#                       DIR/carry), or a folder of programs whose libraries are in PATH/../lib
#   --part LIST         comma list of: tests, pairs (batch 50), pairs512, paper, dist (2 data-
#                       parallel ranks) (default tests,pairs,pairs512,paper)
#   --budget-seconds N  wall-time budget (default 540): a part that would start past it is
#                       skipped and listed; the paper part gets what is left, less a margin
#   --data DIR          UCI HAPT folder for the paper part (default $MOCA_HAPT_DIR, else
#                       ../shared/data/uci-hapt, else the carried copy .gpu-carry/uci-hapt)
#   --dry-run           on CPU, so that CI runs it: the same parts on the tiny preset, a few
#                       steps each, eager peers only (no GPU needed)
#   --jobs N, --prefix DIR  only when building here (see scripts/bootstrap.sh)
# Environment: PYTHON (default python3): the interpreter whose torch is LibTorch and the peer.
# Exit status: 0 when every part that ran passed, 1 otherwise, 2 on a usage error.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=gpu-check bin="" parts=tests,pairs,pairs512,paper budget=540 data="" dry=0 jobs=$(nproc)
prefix=""
die() { echo "gpu-check: $1" >&2; exit "${2:-1}"; }
while (($#)); do
  case "$1" in
    --out|--bin|--part|--budget-seconds|--data|--jobs|--prefix)
      (($# >= 2)) || die "$1 needs a value" 2
      case "$1" in
        --out) out=$2 ;; --bin) bin=$2 ;; --part) parts=$2 ;; --budget-seconds) budget=$2 ;;
        --data) data=$2 ;; --jobs) jobs=$2 ;; --prefix) prefix=$2 ;;
      esac
      shift 2 ;;
    --dry-run) dry=1; shift ;;
    -h|--help) sed -n 2,28p "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" 2 ;;
  esac
done
[[ $budget =~ ^[0-9]+$ ]] || die "--budget-seconds ($budget) must be a whole number of seconds" 2
for p in ${parts//,/ }; do
  [[ $p =~ ^(tests|pairs|pairs512|paper|dist)$ ]] ||
    die "--part ($p) must be among tests, pairs, pairs512, paper, dist" 2
done
wants() { [[ ",$parts," == *",$1,"* ]]; }
py=${PYTHON:-python3}
mkdir -p "$out" || die "--out ($out) cannot be created"
out=$(realpath "$out")
report=$out/report.md
logs=$out/logs
mkdir -p "$logs"
t_start=$SECONDS

torch_lib=$($py -c 'import os, torch; print(os.path.dirname(torch.__file__) + "/lib")') ||
  die "'$py -c \"import torch\"' failed; install PyTorch or set PYTHON"
torch_version=$($py -c 'import torch; print(torch.__version__)')
cuda_ok=$($py -c 'import torch; print(int(torch.cuda.is_available()))')
gpu_name=$($py -c 'import torch; print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")')
device=cuda
if ((dry)); then
  device=cpu
elif [[ $cuda_ok != 1 ]]; then
  die "PyTorch $torch_version sees no CUDA device (on CPU: --dry-run)"
fi

# The programs: carried (their libraries beside them, LibTorch and CUDA's from this PyTorch) or
# built here.
if [[ -n $bin && -f $bin ]]; then
  # The archive is only unpacked (tarfile's "data" filter: no links out of the folder, no
  # device files, no absolute or parent paths), never run.
  $py -c 'import os, sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    if hasattr(tarfile, "data_filter"):
        t.extractall(sys.argv[2], filter="data")
    else:  # Python < 3.11.4: the same rules by hand
        for m in t.getmembers():
            if not (m.isfile() or m.isdir()) or os.path.isabs(m.name) or ".." in m.name.split("/"):
                sys.exit(f"unsafe member {m.name!r}")
        t.extractall(sys.argv[2])' "$bin" "$out/carry" ||
    die "--bin ($bin) could not be unpacked (scripts/gpu-carry.sh makes it)" 2
  bin=$out/carry/bin
fi
if [[ -n $bin ]]; then
  [[ -x $bin/moca ]] || die "--bin ($bin) holds no moca program" 2
  bin=$(realpath "$bin")
  site=$(dirname "$(dirname "$torch_lib")")
  nv=$(ls -d "$site"/nvidia/*/lib "$site"/nvidia/cu*/lib 2>/dev/null | tr '\n' ':')
  export LD_LIBRARY_PATH="$bin/../lib:$torch_lib:$nv${LD_LIBRARY_PATH:-}"
else
  build=build-gpu
  torch_prefix=$($py -c 'import torch; print(torch.utils.cmake_prefix_path)')
  args=(-S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOCA_WITH_TORCH=ON
        -DMOCA_BUILD_BENCH=ON -DCMAKE_PREFIX_PATH="$torch_prefix${prefix:+;$(realpath "$prefix")}"
        -DPython3_EXECUTABLE="$(command -v "$py")")
  cmake "${args[@]}" >"$logs/configure.log" 2>&1 || die "configure failed ($logs/configure.log)"
  cmake --build "$build" -j "$jobs" --target test_model moca kcca_score bench_model_step \
    paper_experiments >"$logs/build.log" 2>&1 || die "build failed ($logs/build.log)"
  bin=$root/$build/bin
fi
if [[ -z $data ]]; then
  for d in "${MOCA_HAPT_DIR:-}" ../shared/data/uci-hapt .gpu-carry/uci-hapt; do
    [[ -n $d && -d $d/RawData ]] && { data=$(realpath "$d"); break; }
  done
fi

{
  echo "# moca GPU check$( ((dry)) && echo " (dry run on CPU)")"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- GPU: $gpu_name; driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "- PyTorch / LibTorch: $torch_version ($torch_lib)"
  echo "- programs: $bin"
  echo "- CPU: $(nproc) cores; data: ${data:-the built-in generator}"
} >"$report"

status=0
skipped=()
# step NAME COMMAND...: runs COMMAND, its output to $logs/NAME.log, pass or fail to the report.
step() {
  local name=$1; shift
  local t0=$SECONDS
  "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "- $name: $([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - t0)) s" >>"$report"
  ((rc == 0)) || status=1
  return $rc
}
# fits PART SECONDS: whether PART's estimated SECONDS fit in what is left of the budget.
fits() {
  local left=$((budget - (SECONDS - t_start)))
  if ((left < $2)); then
    skipped+=("$1 (needs ~$2 s, $left s left)")
    return 1
  fi
}
export OMP_WAIT_POLICY=passive PYTHONUNBUFFERED=1
# The tests' programs and scratch files: the carried folder, not the build tree they came from.
export MOCA_BIN_DIR=$bin MOCA_TEST_TMPDIR=$out/tmp
mkdir -p "$MOCA_TEST_TMPDIR"
[[ -n $data && -z ${MOCA_HAPT_DIR:-} ]] && export MOCA_HAPT_DIR=$data

if wants tests && fits tests 60; then
  echo >>"$report"; echo "## Torch tests on $device" >>"$report"
  filter=()
  # The dry run: the fused AdamW and CUDA-step cases (the whole suite is CI's own stage).
  ((dry)) && filter=(-tc='*fused AdamW*,*CudaStep*,*CUDA step*')
  step tests timeout 200 "$bin/test_model" "${filter[@]}"
  grep -E '^\[doctest\] (test cases|assertions)' "$logs/tests.log" | sed 's/^/    /' >>"$report"
  grep -E 'ERROR|FAILED' "$logs/tests.log" | head -30 | sed 's/^/      /' >>"$report"
  grep -E 'skipped:' "$logs/tests.log" | head -5 | sed 's/^/      /' >>"$report"
fi

# The step pairs (bench/model/pair_step.sh): moca's CUDA step as a graph, eager with the fused
# AdamW, and LibTorch's per-parameter AdamW path; the PyTorch reference eager, compiled and
# compiled with reduce-overhead. One round each (GPU minutes), 50 timed steps; bf16 first, the
# arithmetic training runs use. A process that runs past 150 s (a compilation) shows as "-".
pairs() {  # pairs NAME BATCH PRECISIONS MOCA_STEPS
  local name=$1 batch=$2 precisions=$3 steps=$4
  if ((dry)); then
    step "$name" env PYTHON="$py" bench/model/pair_step.sh --bin "$bin" --device cpu \
      --presets tiny --batches 8 --precisions fp32 --rounds 1 --reps 2 --peers eager \
      --csv "$out/$name.csv"
  else
    step "$name" env PYTHON="$py" bench/model/pair_step.sh --bin "$bin" --device cuda \
      --presets paper-base --batches "$batch" --precisions "$precisions" --rounds 1 --reps 50 \
      --moca-steps "$steps" --timeout 150 --csv "$out/$name.csv"
  fi
  sed 's/^/    /' "$logs/$name.log" >>"$report"
}
if wants pairs && fits pairs 200; then
  echo >>"$report"; echo "## Step pairs, batch 50 (ms per step; ratio = peer / moca graph)" >>"$report"
  pairs pairs 50 "bf16 fp32" "graph fused libtorch"
fi
if wants pairs512 && fits pairs512 150; then
  echo >>"$report"; echo "## Step pairs, batch 512" >>"$report"
  pairs pairs512 512 "bf16 fp32" "graph libtorch"
fi

# The paper's Table-1 setting for what is left of the budget (less a minute for the report).
if wants paper && fits paper 90; then
  echo >>"$report"; echo "## paper/reproduce --gpu" >>"$report"
  left=$((budget - (SECONDS - t_start) - 45))
  minutes=$(awk -v s="$left" 'BEGIN {printf "%.2f", s / 60}')
  ((dry)) && minutes=5
  dargs=()
  [[ -n $data ]] && dargs=(--data "$data")
  step paper paper/reproduce --gpu --device "$device" --budget-minutes "$minutes" --bin "$bin" \
    --out "$out/paper" --threads "$(nproc)" "${dargs[@]}"
  tail -4 "$logs/paper.log" | sed 's/^/    /' >>"$report"
  [[ -f $out/paper/gpu/gpu_plan.json ]] && sed 's/^/    /' "$out/paper/gpu/gpu_plan.json" >>"$report"
  [[ -f $out/paper/gpu/logs/table1_gpu.out ]] && sed 's/^/    /' "$out/paper/gpu/logs/table1_gpu.out" >>"$report"
  # The pre-trainings' loss curves (one line per model) as a PNG, where matplotlib is.
  $py - "$out/paper/gpu" "$out/loss_curves.png" >>"$logs/paper.log" 2>&1 <<'PY' || true
import glob, json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(7, 4))
for f in sorted(glob.glob(os.path.join(sys.argv[1], "checkpoints", "*.metrics.jsonl"))):
    rows = [json.loads(line) for line in open(f) if line.strip()]
    ax.plot([r["epoch"] + 1 for r in rows], [r["loss"] for r in rows],
            label=os.path.basename(f).split(".pt")[0])
ax.set_xlabel("epoch"); ax.set_ylabel("pre-training loss (MSE)"); ax.legend(fontsize=7)
fig.tight_layout(); fig.savefig(sys.argv[2], dpi=110)
PY
  cp "$out/paper/gpu/gpu_plan.json" "$out/paper/gpu/table1.json" "$out/" 2>/dev/null
fi

if wants dist && fits dist 60; then
  echo >>"$report"; echo "## Data-parallel: 2 ranks sharing the device (Gloo)" >>"$report"
  common=(pretrain --device "$device" --preset tiny --epochs 2 --warmup-epochs 1 --batch 64
          --data generator --synthetic-windows 192 --split all --seed 0 --no-progress
          --stop-after 3)
  step dp_1rank "$bin/moca" "${common[@]}" --checkpoint "$out/dp1.pt"
  step dp_2ranks "$bin/moca" launch --nproc 2 -- "${common[@]}" --backend gloo \
    --checkpoint "$out/dp2.pt"
  step dp_loss "$py" -c '
import json, sys
a, b = (json.loads(open(f).readline())["loss"] for f in sys.argv[1:])
print(f"1 rank loss {a:.7g}, 2 ranks loss {b:.7g}")
sys.exit(0 if abs(a - b) <= 1e-4 * abs(a) else 1)' "$out/dp1.pt.metrics.jsonl" "$out/dp2.pt.metrics.jsonl"
  sed 's/^/    /' "$logs/dp_loss.log" >>"$report"
  rm -f "$out"/dp*.pt "$out"/dp*.jsonl
fi

{
  echo
  ((${#skipped[@]})) && printf -- '- skipped for the budget: %s\n' "${skipped[@]}"
  echo "- total: $((SECONDS - t_start)) s of a $budget s budget"
} >>"$report"
# Everything in one place: the logs as one archive (the device returns few files).
tar -czf "$out/logs.tar.gz" --exclude='*.pt' -C "$out" logs $( [[ -d $out/paper ]] && echo paper) 2>/dev/null
cat "$report"
exit $status
