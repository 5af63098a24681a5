#!/usr/bin/env bash
# The transfer measurement of paper/REPRODUCTION.md ("Table 2 on this machine"): cpu-small MAEs
# pre-trained on UCI HAPT (cross-modality and synchronized masking, each with and without the
# Algorithm-1 augmentation), then transfer_study on two data sets as they are shipped:
#   adl      UCI ADL (HMP) wrist accelerometer, 32 Hz, the paper's five activities;
#   heldout  HAPT's last HELD subjects, which no model saw, exported as an ssl-wearables folder
#            of 10-s accelerometer windows at 30 Hz without meta.json (bench/transfer/
#            prepare_table2.py), re-read with its rate and channels stated and cut into 5-s
#            windows as the paper does.
# Every model takes 5-s windows (--set *.input-seconds=5: 250 samples at 50 Hz, positions at
# the new patch indices). Resumable at every step: run it again and it continues.
# Usage (repository root, after building): bench/transfer/table2.sh [out_dir]
# Environment: MOCA_BIN (default build/bin), MOCA_HAPT_DIR (default ../shared/data/uci-hapt),
# MOCA_HMP_DIR (default ../shared/data/uci-hmp), EPOCHS (pre-training, default 15), DOWN_EPOCHS
# (lp/ft/scratch, default 20), HELD (held-out subjects, default 6), JOBS (default 2), RATIO
# (mask ratio, default 0.75).
set -euo pipefail
OUT=${1:-table2}
BIN=${MOCA_BIN:-build/bin}
HAPT=${MOCA_HAPT_DIR:-../shared/data/uci-hapt}
HMP=${MOCA_HMP_DIR:-../shared/data/uci-hmp}
EPOCHS=${EPOCHS:-15}
DOWN_EPOCHS=${DOWN_EPOCHS:-20}
HELD=${HELD:-6}
JOBS=${JOBS:-2}
RATIO=${RATIO:-0.75}
PY=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
export OMP_WAIT_POLICY=passive
mkdir -p "$OUT/data" "$OUT/bin"
# The study runs for an hour and starts workers from its own program: a snapshot of the
# binaries, so a rebuild meanwhile does not pull them away.
for p in moca transfer_study; do
  if ! cmp -s "$BIN/$p" "$OUT/bin/$p"; then
    cp "$BIN/$p" "$OUT/bin/$p.tmp" && mv "$OUT/bin/$p.tmp" "$OUT/bin/$p"
  fi
done
BIN=$OUT/bin
stamp() { echo "$(date -u +%FT%TZ) $*" >> "$OUT/timeline.txt"; }
stamp "start (EPOCHS=$EPOCHS DOWN_EPOCHS=$DOWN_EPOCHS HELD=$HELD JOBS=$JOBS)"

# 1. Data: HAPT as 4-s windows (pre-training, held-out subjects removed) and as 10-s windows
#    (the held-out subjects, as a 30 Hz accelerometer-only ssl-wearables folder).
if [ ! -f "$OUT/data/pretrain/meta.json" ]; then
  "$BIN/moca" data export --data "hapt:$HAPT" --out "$OUT/data/hapt4" > "$OUT/data/export4.log" 2>&1
  "$PY" "$HERE/prepare_table2.py" pretrain "$OUT/data/hapt4" "$OUT/data/pretrain" "$HELD"
fi
if [ ! -f "$OUT/data/heldout/pid.npy" ]; then
  "$BIN/moca" data export --data "hapt:$HAPT" --window-length 500 --out "$OUT/data/hapt10" \
    > "$OUT/data/export10.log" 2>&1
  "$PY" "$HERE/prepare_table2.py" heldout "$OUT/data/hapt10" "$OUT/data/heldout" "$HELD"
fi
stamp "data ready"

# 2. Pre-training: four cpu-small MAEs, two at a time, one thread each; a checkpoint every
#    2 epochs, resumed when the script runs again.
pre() {  # pre NAME POLICY [--augment]
  local name=$1 policy=$2; shift 2
  # done when its summary says finished (an interrupted run writes one too)
  "$PY" -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["finished"] else 1)' \
    "$OUT/pretrain_$name.json" 2>/dev/null && return 0
  local resume=()
  [ -f "$OUT/$name.pt" ] && resume=(--resume)
  "$BIN/moca" pretrain --data "npy:$OUT/data/pretrain" --split all --preset cpu-small \
    --policy "$policy" --epochs "$EPOCHS" --warmup-epochs 2 --checkpoint-every 2 --seed 0 \
    --threads 1 --no-progress --checkpoint "$OUT/$name.pt" --json "$OUT/pretrain_$name.json" \
    "${resume[@]}" "$@" >> "$OUT/pretrain_$name.log" 2>&1
}
pre cross "cross:ratio=$RATIO" & a=$!
pre sync "sync:ratio=$RATIO" & b=$!
wait $a; wait $b
pre cross-aug "cross:ratio=$RATIO" --augment & a=$!
pre sync-aug "sync:ratio=$RATIO" --augment & b=$!
wait $a; wait $b
stamp "pre-training done"

# 3. Transfer: LP and FT of each model, the supervised cpu-small baseline and the shuffled-label
#    control, subject-wise folds (5 folds: both sets have more than 5 subjects).
"$BIN/transfer_study" --out "$OUT/transfer" \
  --model "cross=$OUT/cross.pt" --model "cross-aug=$OUT/cross-aug.pt" \
  --model "sync=$OUT/sync.pt" --model "sync-aug=$OUT/sync-aug.pt" \
  --data "adl=hmp:$HMP" --set "adl.keep-classes=climb_stairs,drink_glass,getup_bed,pour_water,walk" \
  --set adl.input-seconds=5 \
  --data "heldout=npy:$OUT/data/heldout" --set heldout.sample-rate=30 \
  --set heldout.modalities=acc=0-2 --set heldout.segment=5 --set heldout.input-seconds=5 \
  --lp-epochs "$DOWN_EPOCHS" --ft-epochs "$DOWN_EPOCHS" --scratch-epochs "$DOWN_EPOCHS" \
  --scratch-preset cpu-small --jobs "$JOBS" --threads "$JOBS" 2> "$OUT/transfer.log"
stamp "transfer done"
