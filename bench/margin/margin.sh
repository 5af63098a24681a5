#!/usr/bin/env bash
# The margin of cross-modality over synchronised masking, measured (issue 40, part 5;
# docs/studies.md "margin_study"): cross 0.75 and sync 0.75 under both count rules (keep-floor,
# the authors'; mask-floor, moca's older rule), pre-trained with cpu-small on HAPT with both
# windowings (raw, uci-har), 3 seeds each, the last 6 subjects never pre-trained on; then each
# of the 18 models linear-probed and fine-tuned on
#   own     the source's own 7:3 random split (Table 1's protocol; the MAE pre-trained on its
#           training part),
#   unseen  the source's 6 held-out subjects (subject-wise folds),
#   adl     UCI ADL (HMP) wrist accelerometer, the paper's five activities (transfer set).
# Resumable: run it again and it continues where it stopped (the ledger in $OUT).
# Usage (repository root, after building margin_study): bench/margin/margin.sh [out_dir]
# Environment: MOCA_BIN (default build/bin), MOCA_HAPT_DIR (default ../shared/data/uci-hapt),
# MOCA_HMP_DIR (default ../shared/data/uci-hmp), EPOCHS (pre-training, default 45), LP_EPOCHS
# (default 20), FT_EPOCHS (default 5), FOLDS (unseen and adl, default 3), JOBS (default 2).
set -euo pipefail
OUT=${1:-margin}
BIN=${MOCA_BIN:-build/bin}
export MOCA_HAPT_DIR=${MOCA_HAPT_DIR:-../shared/data/uci-hapt}
HMP=${MOCA_HMP_DIR:-../shared/data/uci-hmp}
EPOCHS=${EPOCHS:-45}
LP_EPOCHS=${LP_EPOCHS:-20}
FT_EPOCHS=${FT_EPOCHS:-5}
FOLDS=${FOLDS:-3}
JOBS=${JOBS:-2}
export OMP_WAIT_POLICY=passive
mkdir -p "$OUT/bin"
# The study starts workers from its own program: a snapshot, so a rebuild does not pull it away.
if ! cmp -s "$BIN/margin_study" "$OUT/bin/margin_study"; then
  cp "$BIN/margin_study" "$OUT/bin/margin_study.tmp" && mv "$OUT/bin/margin_study.tmp" "$OUT/bin/margin_study"
fi
echo "$(date -u +%FT%TZ) start (EPOCHS=$EPOCHS LP_EPOCHS=$LP_EPOCHS FT_EPOCHS=$FT_EPOCHS FOLDS=$FOLDS JOBS=$JOBS)" >> "$OUT/timeline.txt"
"$OUT/bin/margin_study" --out "$OUT/study" --seeds 3 \
  --preset cpu-small --epochs "$EPOCHS" --warmup-epochs 5 --checkpoint-every 5 \
  --holdout-subjects 6 \
  --data own=source --set own.protocol=random \
  --data unseen=source --set unseen.subjects=held-out --set unseen.folds="$FOLDS" \
  --data "adl=hmp:$HMP" --set "adl.keep-classes=climb_stairs,drink_glass,getup_bed,pour_water,walk" \
  --set adl.folds="$FOLDS" \
  --lp-epochs "$LP_EPOCHS" --ft-epochs "$FT_EPOCHS" --jobs "$JOBS" --threads "$JOBS" \
  2>> "$OUT/study.log"
echo "$(date -u +%FT%TZ) done" >> "$OUT/timeline.txt"
