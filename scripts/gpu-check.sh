#!/usr/bin/env bash
# GPU check: builds moca against the LibTorch of an installed PyTorch 2.x with CUDA, runs the
# torch test suite on the GPU (the tests' device is "auto", which picks CUDA when present), the
# data-parallel suite (Gloo, CPU) and the Python package's tests against that LibTorch, times the
# pre-training step on the GPU (tiny and paper-base, fp32 and bf16), runs pretrain, linprobe,
# predict, impute and kcca_score --features encoder there, pairs the step with the PyTorch
# reference model (eager and torch.compile) on the GPU, runs 2 data-parallel ranks on the GPU(s)
# (NCCL with two GPUs; Gloo sharing GPU 0 otherwise) and writes a short report.
# Meant for a machine with an NVIDIA GPU and `python3 -c "import torch"` working; the CI
# machine has none.
#
# Usage: scripts/gpu-check.sh [--out DIR] [--prefix DIR] [--jobs N]
#   --out DIR     where the report, logs and timings go (default gpu-check/)
#   --prefix DIR  an extra CMake prefix holding moca's header-only dependencies (Eigen, Spectra,
#                 Boost.Math, CLI11, nlohmann-json, doctest, zlib.h) when the system lacks them
#   --jobs N      build jobs (default: number of cores)
# Environment: PYTHON (default python3) — the interpreter whose torch is used.
set -uo pipefail
cd "$(dirname "$0")/.."
out=gpu-check
prefix=""
jobs=$(nproc)
while (($#)); do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --prefix) prefix=$(realpath "$2"); shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n 2,16p "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
out=$(realpath "$out")
report=$out/report.md
py=${PYTHON:-python3}

torch_prefix=$($py -c 'import torch; print(torch.utils.cmake_prefix_path)') || {
  echo "gpu-check: '$py -c \"import torch\"' failed; install PyTorch or set PYTHON" >&2
  exit 1
}
torch_version=$($py -c 'import torch; print(torch.__version__)')
cuda_ok=$($py -c 'import torch; print(int(torch.cuda.is_available()))')
gpus=$($py -c 'import torch; print(torch.cuda.device_count())')
gpu_name=$($py -c 'import torch; print(torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")')
if [[ "$cuda_ok" != 1 ]]; then
  echo "gpu-check: PyTorch $torch_version sees no CUDA device; nothing to check" >&2
  exit 1
fi

build=build-gpu
cmake_args=(-S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMOCA_WITH_TORCH=ON
            -DMOCA_BUILD_BENCH=ON -DCMAKE_PREFIX_PATH="$torch_prefix${prefix:+;$prefix}"
            -DPython3_EXECUTABLE="$(command -v "$py")")
# The Python package against this interpreter and its torch, when pybind11 is importable there.
pybind11_dir=$($py -c 'import pybind11; print(pybind11.get_cmake_dir())' 2>/dev/null) &&
  cmake_args+=(-Dpybind11_DIR="$pybind11_dir")
if [[ -n "$prefix" && -f "$prefix/include/zlib.h" ]]; then
  # A prefix with zlib's header only: link the system's runtime library.
  zlib_so=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  cmake_args+=(-DZLIB_INCLUDE_DIR="$prefix/include" ${zlib_so:+-DZLIB_LIBRARY="$zlib_so"})
fi

{
  echo "# moca GPU check"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- GPU: $gpu_name ($gpus device(s)); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "- PyTorch / LibTorch: $torch_version ($torch_prefix)"
  echo "- CPU: $(nproc) cores"
} >"$report"

status=0
step() {  # step NAME COMMAND...: runs COMMAND, logs to $out/NAME.log, records pass/fail
  local name=$1; shift
  local t0=$(date +%s)
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "- $name: $([[ $rc == 0 ]] && echo ok || echo "FAILED (exit $rc)") in $(( $(date +%s) - t0 )) s" >>"$report"
  ((rc == 0)) || status=1
  return $rc
}

echo >>"$report"; echo "## Build and tests" >>"$report"
step configure cmake "${cmake_args[@]}" || { cat "$report"; tail -40 "$out/configure.log"; exit 1; }
targets=(test_model test_distributed moca kcca_score bench_model_step)
grep -q '^MOCA_PYTHON:BOOL=ON' "$build/CMakeCache.txt" && targets+=(moca_python_core mask_dump)
step build cmake --build "$build" -j "$jobs" --target "${targets[@]}" ||
  { cat "$report"; grep -m 20 -B2 -A8 'error' "$out/build.log"; exit 1; }
export OMP_WAIT_POLICY=passive
suite() {  # suite NAME: runs the doctest executable NAME, reports its counts and failures
  step "$1" "$build/bin/$1"
  grep -E '^\[doctest\] (test cases|assertions)' "$out/$1.log" | sed 's/^/  /' >>"$report"
  grep -E 'ERROR|FAILED' "$out/$1.log" | head -30 | sed 's/^/      /' >>"$report"
}
suite test_model
# Data-parallel runs of real `moca` processes (Gloo on CPU) against this LibTorch's c10d.
suite test_distributed
if [[ " ${targets[*]} " == *" moca_python_core "* ]]; then
  # The pytest suite through ctest (its environment: PYTHONPATH, MOCA_BIN_DIR, mask_dump).
  step python ctest --test-dir "$build" -R '^python$' --output-on-failure
  grep -E '(passed|failed|skipped)' "$out/python.log" | tail -2 | sed 's/^/      /' >>"$report"
else
  echo "- python: not run (pybind11 not importable by $py)" >>"$report"
fi

# Timings: the trainer's step on the GPU, median of 20 after 5 warm-up steps.
echo >>"$report"; echo "## Pre-training step on the GPU (bench_model_step --device cuda)" >>"$report"
for preset in tiny paper-base; do
  for precision in fp32 bf16; do
    name=step_${preset}_${precision}
    if step "$name" "$build/bin/bench_model_step" --device cuda --preset "$preset" \
        --precision "$precision" --batch 50 --reps 20 --warmup 5; then
      sed 's/^/      /' "$out/$name.log" >>"$report"
    fi
  done
done

# Pre-training, a linear probe and imputation on the GPU through the CLI (generator data).
echo >>"$report"; echo "## moca pretrain / linprobe / impute on the GPU" >>"$report"
# --device auto, as in the tests: the summary's "device" says which one "auto" chose.
step pretrain_cli "$build/bin/moca" pretrain --device auto --preset tiny --epochs 3 \
  --warmup-epochs 1 --checkpoint "$out/gpu.pt" --seed 0 --no-progress --json "$out/pretrain.json"
tail -3 "$out/pretrain_cli.log" | sed 's/^/      /' >>"$report"
echo "      device chosen by --device auto: $(grep -o '"device": *"[a-z]*"' "$out/pretrain.json")" >>"$report"
step linprobe_cli "$build/bin/moca" linprobe --device cuda --checkpoint "$out/gpu.pt" --epochs 3 \
  --warmup-epochs 1 --seed 0 --no-progress --save-model "$out/gpu_probe.pt"
tail -3 "$out/linprobe_cli.log" | sed 's/^/      /' >>"$report"
# The kept classifier applied to every window on the GPU.
step predict_cli "$build/bin/moca" predict --device cuda --model "$out/gpu_probe.pt" \
  --out "$out/predict.csv" --json "$out/predict.json"
tail -3 "$out/predict_cli.log" | sed 's/^/      /' >>"$report"
step impute_cli "$build/bin/moca" impute --device cuda --checkpoint "$out/gpu.pt"
tail -8 "$out/impute_cli.log" | sed 's/^/      /' >>"$report"
# The trained encoder as kcca_score's feature map (its forward passes run on the GPU).
step kcca_score_encoder "$build/bin/kcca_score" --scheme cross,sync --features encoder \
  --checkpoint "$out/gpu.pt" --draws 5
tail -6 "$out/kcca_score_encoder.log" | sed 's/^/      /' >>"$report"
rm -f "$out/gpu.pt" "$out/gpu_probe.pt"

# The step paired with the PyTorch reference model run by this PyTorch, eager and torch.compile
# (inductor), on the GPU (bench/model/pair_step.sh: one round of 20 steps per configuration).
echo >>"$report"; echo "## Step pairs on the GPU (bench/model/pair_step.sh)" >>"$report"
step pair_step env PYTHON="$py" bench/model/pair_step.sh --bin "$build/bin" --device cuda \
  --presets "tiny paper-base" --precisions "fp32 bf16" --rounds 1 --reps 20
sed 's/^/      /' "$out/pair_step.log" >>"$report"

echo >>"$report"
echo "## Data-parallel" >>"$report"
grep -o 'data-parallel backend[^"]*' "$out/configure.log" | sed 's/^/      /' >>"$report"
# 2 ranks vs 1, same global batch (64) and seed, one epoch of 3 iterations: rank 0's logged
# epoch loss must equal the 1-rank loss to fp32 reduction order.
common=(pretrain --device cuda --preset tiny --epochs 2 --warmup-epochs 1 --batch 64
        --data generator --synthetic-windows 192 --split all --seed 0 --no-progress
        --stop-after 3)
step dp_1rank "$build/bin/moca" "${common[@]}" --checkpoint "$out/dp1.pt"
two_ranks() {  # two_ranks NAME LABEL BACKEND [ENV...]: a 2-rank launch, its loss against dp_1rank's
  local name=$1 label=$2 backend=$3; shift 3
  step "$name" env "$@" "$build/bin/moca" launch --nproc 2 -- "${common[@]}" --backend "$backend" \
    --checkpoint "$out/$name.pt"
  tail -3 "$out/$name.log" | sed 's/^/      /' >>"$report"
  step "${name}_loss" "$py" -c '
import json, sys
a, b = (json.loads(open(f).readline())["loss"] for f in sys.argv[2:])
print(f"1 rank loss {a:.7g}, 2 ranks ({sys.argv[1]}) loss {b:.7g}")
sys.exit(0 if abs(a - b) <= 1e-4 * abs(a) else 1)' "$label" "$out/dp1.pt.metrics.jsonl" \
    "$out/$name.pt.metrics.jsonl"
  sed 's/^/      /' "$out/${name}_loss.log" >>"$report"
}
if ((gpus >= 2)); then
  two_ranks dp_nccl_2gpus "NCCL, 2 GPUs" nccl
else
  echo "- NCCL on 2 GPUs: not run ($gpus GPU)" >>"$report"
fi
# On any number of GPUs: 2 ranks sharing GPU 0 over Gloo (CUDA tensors through Gloo's CUDA
# all-reduce) must follow the 1-rank run, as on CPU.
two_ranks dp_gloo_1gpu "Gloo, CUDA tensors, 1 GPU" gloo CUDA_VISIBLE_DEVICES=0
if ((gpus < 2)) && grep -q 'backends gloo, nccl' "$out/configure.log"; then
  # NCCL refuses two ranks on one device; recorded to show the backend is compiled and reached.
  CUDA_VISIBLE_DEVICES=0 timeout 180 "$build/bin/moca" launch --nproc 2 -- "${common[@]}" \
    --backend nccl --dist-timeout 60 --checkpoint "$out/dpn.pt" >"$out/dp_nccl_1gpu.log" 2>&1
  echo "- dp_nccl_1gpu (2 ranks on one GPU; NCCL is expected to refuse): exit $?" >>"$report"
  grep -m 3 -i -E 'nccl|error' "$out/dp_nccl_1gpu.log" | cut -c1-300 | sed 's/^/      /' >>"$report"
fi
rm -f "$out"/dp*.pt
cat "$report"
exit $status
