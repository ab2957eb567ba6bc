#!/usr/bin/env bash
# Reproduces the learned portfolio head with budget shares (issue 10), from a fresh clone:
#   1. the effort-selected splits (datasets/tools/build_effort.py) and the synthetic sets;
#   2. strategy races: each strategy alone, with its restarts, at most 50,000 nodes per run (a
#      node limit, not a time limit, so the races are the same on every machine);
#   3. training (burn, this crate) and the choice of the share schedule on validation by
#      replaying the races;
#   4. the learned portfolio against the round robin on validation, at the same node limit.
# Run from the repository root: training/reproduce-portfolio.sh [OUT_MODEL]
# Takes about 2 hours on the 2-core machine (most of it the races; see models/README.md).
set -euo pipefail
out=${1:-models/policy.json}
strategies=fixed,TWA,TAW,WAT,TWA+,WAT+,TAW+
cargo build --release --quiet
t=target/release/telamalloc
[[ -d datasets/splits/effort-train ]] || datasets/tools/build_effort.py
[[ -d datasets/splits/synthetic-train ]] || datasets/tools/build_synthetic.sh
race() { # split
    "$t" eval --split "$1" --policies "$strategies" --nodes 50000 --timeout 120 --threads 2 \
        --out "logs/races/$1"
}
# One training problem in five (a deterministic sample: lines 1, 6, 11, ... of the list).
awk 'NR % 5 == 1' datasets/splits/effort-train.txt > datasets/splits/effort-train-fifth.txt
for split in effort-train-fifth effort-validation synthetic-train synthetic-validation; do
    [[ -f logs/races/$split/eval.json ]] || race "$split"
done
# The public hard set, only reported (never used for training or the choice).
[[ -f logs/races/hardset/eval.json ]] || "$t" eval datasets/challenging --policies "$strategies" \
    --nodes 500000 --timeout 120 --threads 2 --out logs/races/hardset
root=$PWD
(cd training && cargo run --release --quiet -- portfolio \
    --runs "$root/logs/races/effort-train-fifth/eval.json,$root/logs/races/synthetic-train/eval.json" \
    --validation-runs "$root/logs/races/effort-validation/eval.json,$root/logs/races/synthetic-validation/eval.json" \
    --report-runs "$root/logs/races/hardset/eval.json" \
    --problems "$root/datasets/splits/effort-train,$root/datasets/splits/effort-validation,$root/datasets/splits/synthetic-train,$root/datasets/splits/synthetic-validation,$root/datasets/challenging" \
    --strategies "$strategies" --base "$root/models/policy.json" --out "$root/$out" \
    --rank-candidates false --share-temperatures 0.5,1,2,4 --share-floors 0.02,0.05,0.1,0.2,1 \
    --hidden 16 --seed 1)
"$t" eval --split effort-validation --policies "portfolio,$out" --nodes 50000 --timeout 120 \
    --threads 2 --out logs/eval/effort-validation
