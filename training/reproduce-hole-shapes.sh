#!/usr/bin/env bash
# Reproduces the hole-shape model (models/hole_shapes.json; issue 10, "stronger guidance") from a
# fresh clone:
#   1. the effort-selected splits, if missing;
#   2. training (burn, this crate, a few seconds): the removed pieces of every effort-train slack
#      packing (the generator run again with nothing removed) give the moves of the walk that
#      cuts its slack profile into them; a linear score over each move's features is fitted to
#      them, the epoch chosen on effort-validation's;
#   3. the model's odds on effort-validation's holes: ranked cuts against random draws;
#   4. the comparison at 160,000 nodes (machine-independent) of the default (learned draws and
#      the model's most likely cut as a member), the learned draws alone (--no likely-cut) and
#      the hand-made draws (--no learned-holes), on validation-tail66 (the 66 effort-validation
#      problems the default of 262ecef left undecided at 10 s), tight-validation and
#      validation-sample80.
# Run from the repository root: training/reproduce-hole-shapes.sh [OUT_MODEL]
# Takes about an hour on the 2-core machine (training under a minute, the rest the races).
set -euo pipefail
out=${1:-models/hole_shapes.json}
[[ -d datasets/splits/effort-train ]] || datasets/tools/build_effort.py
root=$PWD
(cd training && cargo run --release --quiet -- hole-shapes \
    --train "$root/datasets/splits/effort-train-manifest.csv" \
    --validation "$root/datasets/splits/effort-validation-manifest.csv" \
    --root "$root" --out "$root/$out")
# How often the trained model's ranked cuts and random draws find effort-validation's holes
# within 1, 10, 100 and 1,000 tries (benches/ARCHIVE.md, "Ranked draws and a double lottery").
(cd training && cargo run --release --quiet -- hole-odds \
    --split "$root/datasets/splits/effort-validation-manifest.csv" --root "$root" \
    --model "$root/$out" --count 1000 --expansions 100000 --draws 1000 | tail -n 1)
cargo build --release --quiet  # the model is compiled in
t=target/release/telamalloc
for split in validation-tail66 tight-validation validation-sample80; do
    for variant in "default:" "no-likely-cut:--no likely-cut" "hand-made:--no learned-holes"; do
        name=${variant%%:*}
        # shellcheck disable=SC2086 # the flags are words
        "$t" eval --split "$split" --policies portfolio --nodes 160000 --threads 2 \
            ${variant#*:} --out "logs/holes/$split-$name" > /dev/null
    done
done
python3 - <<'PY'
import json
for split in ["validation-tail66", "tight-validation", "validation-sample80"]:
    for name in ["default", "no-likely-cut", "hand-made"]:
        runs = json.load(open(f"logs/holes/{split}-{name}/eval.json"))
        decided = [r for r in runs if r["status"] != "limit"]
        par2 = sum(r["nodes"] if r["status"] != "limit" else 320000 for r in runs) / len(runs)
        print(f"{split:20s} {name:10s} decided {len(decided):3d}/{len(runs)}  mean PAR2 nodes {par2:,.0f}")
PY
