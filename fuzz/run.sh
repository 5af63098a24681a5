#!/usr/bin/env bash
# Runs every libFuzzer target of a MOCA_FUZZ build for a fixed time, each from its seed corpus.
# Usage: fuzz/run.sh BUILD_DIR [SECONDS_IN_TOTAL=60]. Exit 1 on any finding (crash, sanitizer
# report, uncaught exception, timeout); the reproducer is left in BUILD_DIR/fuzz-findings/.
set -euo pipefail
build=$1
total=${2:-60}
src=$(cd "$(dirname "$0")" && pwd)
targets=$(cd "$build/bin" && ls fuzz_* | sort)
count=$(echo "$targets" | wc -w)
each=$(( total / count > 1 ? total / count : 1 ))
findings=$build/fuzz-findings
mkdir -p "$findings"
failed=0
for t in $targets; do
  name=${t#fuzz_}
  work=$(mktemp -d)  # new inputs found in this run; the committed seed corpus is only read
  if "$build/bin/$t" -max_total_time="$each" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
      -artifact_prefix="$findings/$name-" -print_final_stats=0 "$work" "$src/corpus/$name" \
      >"$findings/$name.log" 2>&1; then
    echo "fuzz $name: ok, $(grep -Eo 'Done [0-9]+ runs' "$findings/$name.log" | tail -1 || true) in ${each} s"
  else
    echo "fuzz $name: FINDING (log $findings/$name.log)"
    tail -40 "$findings/$name.log"
    failed=1
  fi
  rm -rf "$work"
done
exit $failed
