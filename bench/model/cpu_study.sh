#!/usr/bin/env bash
# The 30-minute CPU study of docs/results.md: MoCA (cross-modality masking) vs synchronized
# masking pre-training on UCI HAPT, linear probes of both, and the supervised ViT baseline from
# random initialisation. Everything runs niced, one thread per process (three processes share
# the machine's two cores); pre-training is stopped by SIGTERM at the deadline if it has not
# finished (the tool then writes a checkpoint and exits cleanly), so the whole study stays
# under 30 minutes. Usage (from the repository root, after building):
#   bench/model/cpu_study.sh [out_dir]
# Environment: MOCA (binary, default build/bin/moca), MOCA_HAPT_DIR (default
# ../shared/data/uci-hapt), EPOCHS (pre-training epochs, default 20), SCRATCH_EPOCHS (default 6),
# DEADLINE (seconds of pre-training before SIGTERM, default 1200), SCRATCH_TIMEOUT (seconds
# before the supervised baseline is killed, default 1740), RATIO (default 0.7).
set -euo pipefail
OUT=${1:-cpu_study}
MOCA=${MOCA:-build/bin/moca}
DATA=${MOCA_HAPT_DIR:-../shared/data/uci-hapt}
EPOCHS=${EPOCHS:-20}
SCRATCH_EPOCHS=${SCRATCH_EPOCHS:-6}
DEADLINE=${DEADLINE:-1200}
RATIO=${RATIO:-0.7}
mkdir -p "$OUT"
start=$(date +%s)
echo "start $(date -u +%FT%TZ)" > "$OUT/timeline.txt"
common=(--data "$DATA" --threads 1 --no-progress)

pre() {  # pre <name> <policy>; exec so that $! is the trainer itself (SIGTERM reaches it)
  exec nice -n 10 "$MOCA" pretrain "${common[@]}" --preset cpu-small --policy "$2" --epochs "$EPOCHS" --warmup-epochs 2 \
    --checkpoint-every 2 --checkpoint "$OUT/$1.pt" --json "$OUT/pretrain_$1.json" \
    > "$OUT/pretrain_$1.log" 2>&1
}
pre cross "cross:ratio=$RATIO" & pid_cross=$!
pre sync "sync:ratio=$RATIO" & pid_sync=$!
timeout "${SCRATCH_TIMEOUT:-1740}" nice -n 10 "$MOCA" finetune --from-scratch "${common[@]}" --preset cpu-small --epochs "$SCRATCH_EPOCHS" \
  --warmup-epochs 1 --json "$OUT/scratch.json" > "$OUT/scratch.log" 2>&1 & pid_scratch=$!

( sleep "$DEADLINE"; kill -TERM "$pid_cross" "$pid_sync" 2>/dev/null || true ) & pid_watch=$!
wait "$pid_cross" || echo "pretrain cross exited with $?" >> "$OUT/timeline.txt"
wait "$pid_sync" || echo "pretrain sync exited with $?" >> "$OUT/timeline.txt"
kill "$pid_watch" 2>/dev/null || true
echo "pretraining done after $(( $(date +%s) - start )) s" >> "$OUT/timeline.txt"

lp() {  # lp <name>
  nice -n 10 "$MOCA" linprobe "${common[@]}" --checkpoint "$OUT/$1.pt" \
    --json "$OUT/linprobe_$1.json" > "$OUT/linprobe_$1.log" 2>&1
}
lp cross & p1=$!
lp sync & p2=$!
wait "$p1"; wait "$p2"
wait "$pid_scratch" || echo "scratch exited with $?" >> "$OUT/timeline.txt"
echo "end $(date -u +%FT%TZ), total $(( $(date +%s) - start )) s" >> "$OUT/timeline.txt"
cat "$OUT/timeline.txt"
