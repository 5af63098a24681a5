#!/usr/bin/env bash
# Captures the programs' observable outputs, to compare before and after a restructuring (issue
# #39): --help and --print-config of every program and subcommand, kcca_score JSON without its
# timings, chosen error messages, and `moca data` descriptions. Usage:
#   bench/structure_outputs.sh BIN_DIR OUT_DIR     (then: diff -r OUT_BEFORE OUT_AFTER)
# Real data from $MOCA_HAPT_DIR / $MOCA_HMP_DIR when set (those runs are skipped otherwise).
set -uo pipefail
bin=$(realpath "$1")
mkdir -p "$2"
out=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMP_WAIT_POLICY=passive
run() { local name=$1; shift; "$@" >"$out/$name.out" 2>"$out/$name.err"; echo $? >"$out/$name.rc"; }
for p in kcca kcca_score policy_study simulation_study transfer_study paper_experiments \
  coupling_sweep bound_check; do
  [[ -x $bin/$p ]] || continue
  run "help_$p" "$bin/$p" --help
  run "cfg_$p" "$bin/$p" --print-config
done
for s in pretrain linprobe finetune metrics predict export import impute embed reconstruct data \
  attention launch; do
  run "help_moca_$s" "$bin/moca" "$s" --help
  run "cfg_moca_$s" "$bin/moca" "$s" --print-config
done
hapt=${MOCA_HAPT_DIR:-} hmp=${MOCA_HMP_DIR:-}
unset MOCA_HAPT_DIR MOCA_HMP_DIR
run ks_gen "$bin/kcca_score" --scheme cross,sync,random,sensor:keep=1,temporal,extrapolation,per-modality --samples 200 \
  --draws 3 --json ks_gen.json
run ks_kcca "$bin/kcca_score" --scheme cross,sync --estimator kcca --samples 150 --draws 2 \
  --json ks_kcca.json
if [[ -n $hapt ]]; then
  run ks_hapt "$bin/kcca_score" --data "hapt:$hapt" --scheme cross,sync:ratio=0.5 --samples 200 \
    --draws 2 --json ks_hapt.json
  run data_hapt "$bin/moca" data --data "hapt:$hapt"
fi
if [[ -n $hmp ]]; then
  run ks_hmp "$bin/kcca_score" --data "hmp:$hmp" --scheme cross --samples 100 --draws 2 \
    --json ks_hmp.json
  run data_hmp "$bin/moca" data --data "hmp:$hmp"
fi
for f in ks_*.json lp_*.json ft_*.json; do
  [[ -f $f ]] || continue
  python3 - "$f" >"$out/$f" <<'PY'
import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items()
                if not any(t in k for t in ("time", "second", "elapsed", "version", "date", "host"))}
    return [strip(v) for v in x] if isinstance(x, list) else x
json.dump(strip(json.load(open(sys.argv[1]))), sys.stdout, indent=1, sort_keys=True)
PY
done
run e_ratio "$bin/kcca_score" --scheme cross --ratio 1.5
run e_policy "$bin/kcca_score" --scheme bogus
run e_format "$bin/kcca_score" --data-format bogus --data /tmp
run e_warmup "$bin/moca" pretrain --warmup-epochs -1
run e_batch "$bin/moca" pretrain --batch 0
run e_rate "$bin/moca" pretrain --sample-rate -3
# linprobe / finetune: a tiny pre-trained encoder, then each protocol's JSON and chosen messages
gen=(--synthetic-windows 60 --window-length 40)
run pre_tiny "$bin/moca" pretrain "${gen[@]}" --preset cpu-small --patch-length 10 --epochs 1 \
  --batch 20 --checkpoint tiny.ckpt --threads 1 --no-progress
run lp_random "$bin/moca" linprobe "${gen[@]}" --checkpoint tiny.ckpt --epochs 2 --batch 20 \
  --threads 1 --no-progress --json lp_random.json
run ft_kfold "$bin/moca" finetune "${gen[@]}" --checkpoint tiny.ckpt --epochs 1 --batch 10 \
  --protocol subject-kfold --folds 2 --label-fraction 0.5 --threads 1 --no-progress \
  --json ft_kfold.json
run cfg_ft_set "$bin/moca" finetune --checkpoint tiny.ckpt --epochs 3 --layer-decay 0.5 \
  --protocol loso --print-config
run e_lp_layer "$bin/moca" finetune --checkpoint tiny.ckpt --layer-decay 2
run e_lp_smooth "$bin/moca" finetune --checkpoint tiny.ckpt --label-smoothing 1
run e_lp_drop "$bin/moca" finetune --checkpoint tiny.ckpt --drop-path -0.5
run e_lp_classes "$bin/moca" linprobe --checkpoint tiny.ckpt --classes 1
run e_lp_labfrac "$bin/moca" linprobe --checkpoint tiny.ckpt --label-fraction 0
run e_lp_folds "$bin/moca" linprobe --checkpoint tiny.ckpt --protocol subject-kfold --folds 1
run e_lp_trainfrac "$bin/moca" linprobe --checkpoint tiny.ckpt --train-fraction 1
run e_lp_warmup "$bin/moca" linprobe --checkpoint tiny.ckpt --epochs 3 --warmup-epochs 3
run e_lp_batch "$bin/moca" linprobe --checkpoint tiny.ckpt --batch 0
run e_lp_refit "$bin/moca" linprobe --checkpoint tiny.ckpt --refit
run e_lp_proto "$bin/moca" linprobe --checkpoint tiny.ckpt --protocol bogus
run e_ft_arch "$bin/moca" finetune --checkpoint tiny.ckpt --preset tiny --patch-length 5
run e_ft_scratch "$bin/moca" finetune --from-scratch --checkpoint tiny.ckpt
run e_study_warmup "$bin/policy_study" --out ps --warmup-epochs 500
run e_study_batch "$bin/paper_experiments" --out pe --batch-size 0
# the data options (DataOptions::schema): one bad value each, in several programs
run e_data_coupling "$bin/kcca_score" --coupling 2
run e_data_rate_gen "$bin/kcca_score" --sample-rate 30 --samples 40
run e_data_wlen "$bin/moca" pretrain --window-length 1
run e_data_fold "$bin/moca" pretrain --split subject-kfold --folds 5 --fold 7
run e_data_trainfrac "$bin/moca" embed --checkpoint tiny.ckpt --train-fraction 1
run e_data_names "$bin/moca" data inspect --channel-names a,a
run e_data_study_rate "$bin/simulation_study" --sample-rate -1
run e_data_policy_rate "$bin/policy_study" --out ps2 --sample-rate -2
run e_data_format "$bin/moca" data inspect --data-format hmp --data npy:/tmp
