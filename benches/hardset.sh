#!/usr/bin/env bash
# Times the default search on every problem of the hard set: median CPU time of 3 runs
# (perf stat task-clock; the search is single-threaded), with the search counters of the run.
# Usage: benches/hardset.sh [extra solve flags...]   (from the repository root, after
# `cargo build --release`)
set -euo pipefail
bin=target/release/telamalloc
printf '| problem | buffers | status | CPU time (s), median of 3 | nodes | minor backtracks | restarts | decompositions | winning policy |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for p in datasets/challenging/*.csv; do
  times=()
  for run in 1 2 3; do
    out=$(perf stat -x, -e task-clock "$bin" solve "$p" --stats -o /tmp/hardset.sol "$@" 2>&1)
    times+=("$(echo "$out" | grep task-clock | cut -d, -f1)")
    stats=$(echo "$out" | grep '^stats' | sed 's/^stats: //')
    status=$(echo "$out" | grep -oE 'solved|limit reached|infeasible' | head -1)
  done
  "$bin" validate "$p" /tmp/hardset.sol >/dev/null
  median=$(printf '%s\n' "${times[@]}" | sort -g | sed -n 2p)
  python3 - "$p" "$status" "$median" "$stats" <<'PY'
import json, sys, os
p, status, ms, stats = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
buffers = sum(1 for _ in open(p)) - 1
print(f"| {os.path.basename(p)} | {buffers} | {status} | {ms/1000:.2f} | {stats['nodes']} | {stats['minor_backtracks']} | {stats['restarts']} | {stats['decompositions']} | {stats['policy']} |")
PY
done
