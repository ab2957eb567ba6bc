#!/usr/bin/env bash
# Reproduces the CP-SAT gate (models/cpsat_gate.json; issue 10, "which engine to trust"), from a
# fresh clone with OR-tools installed (`pip install ortools`):
#   1. the effort-selected splits and the synthetic sets, if missing;
#   2. races at 600,000 nodes on the training sample (datasets/splits/train-sample200.txt: 10
#      problems per effort-train family from effort-train-fifth, 40 synthetic-train) and on the
#      validation sample (validation-sample80.txt): the round robin alone, and CP-SAT alone (one
#      worker; its nodes are node equivalents of its deterministic time). Node limits, not time
#      limits, so the labels are the same on every machine;
#   3. training (burn, this crate): a logistic model over the 13 problem features;
#   4. the comparison at 10 s of wall time on the validation sample: the search alone, CP-SAT at
#      a fixed share of 1 and 4 policies, and the gate.
# Run from the repository root: training/reproduce-cpsat-gate.sh [OUT_GATE]
# Takes about 50 minutes on the 2-core machine (races about 30, the 10 s comparison about 20).
set -euo pipefail
out=${1:-models/cpsat_gate.json}
cargo build --release --quiet
t=target/release/telamalloc
[[ -d datasets/splits/effort-train ]] || datasets/tools/build_effort.py
[[ -d datasets/splits/synthetic-train ]] || datasets/tools/build_synthetic.sh
for split in train-sample200 validation-sample80; do
    [[ -f logs/gate/$split-cpsat/eval.json ]] || "$t" eval --split "$split" --algo cpsat \
        --nodes 600000 --timeout 120 --threads 2 --out "logs/gate/$split-cpsat"
    [[ -f logs/gate/$split-rr/eval.json ]] || "$t" eval --split "$split" --policies portfolio \
        --nodes 600000 --timeout 120 --threads 2 --out "logs/gate/$split-rr"
done
root=$PWD
(cd training && cargo run --release --quiet -- cpsat-gate \
    --search "$root/logs/gate/train-sample200-rr/eval.json" \
    --cpsat "$root/logs/gate/train-sample200-cpsat/eval.json" \
    --validation-search "$root/logs/gate/validation-sample80-rr/eval.json" \
    --validation-cpsat "$root/logs/gate/validation-sample80-cpsat/eval.json" \
    --problems "$root/datasets/splits/effort-train,$root/datasets/splits/effort-validation,$root/datasets/splits/synthetic-train,$root/datasets/splits/synthetic-validation" \
    --limit 600000 --seed 1 --out "$root/$out")
cargo build --release --quiet  # the gate is compiled in
for variant in "none:" "share1:--with cpsat --no cpsat-gate --cpsat-share 1" \
    "share4:--with cpsat --no cpsat-gate --cpsat-share 4" "gate:--with cpsat"; do
    name=${variant%%:*}
    # shellcheck disable=SC2086 # the flags are words
    "$t" eval --split validation-sample80 --policies portfolio --timeout 10 --threads 2 \
        ${variant#*:} --out "logs/gate/wall-$name"
done
