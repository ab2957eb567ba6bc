#!/usr/bin/env bash
# Generated training data for the learned policy, for development while the real-model corpus is
# built elsewhere: perfect packings at LOAD and on-chip problems drawn from random whole-model
# problems, each split by seed range into train and validation, then one solve log per problem
# recorded with the fixed policy under a node limit (reproducible, unlike a timeout).
#
#   training/synth-data.sh OUT [TRAIN_SEEDS] [VALID_SEEDS] [NODES]
#
# writes OUT/problems/{train,valid}/*.csv and OUT/logs/{train,valid}/*.jsonl. Run it from the
# repository root; it uses $TELAMALLOC, or builds the release binary.
set -euo pipefail
out=${1:?usage: synth-data.sh OUT [TRAIN_SEEDS] [VALID_SEEDS] [NODES]}
train_seeds=${2:-120}
valid_seeds=${3:-30}
nodes=${4:-3000}
if [[ -z "${TELAMALLOC:-}" ]]; then
    cargo build --release --quiet
    TELAMALLOC=${CARGO_TARGET_DIR:-target}/release/telamalloc
fi
t=$TELAMALLOC
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gen prints "capacity N" on standard error; the capacity goes into the file name.
capacity_of() { awk '/capacity/ {print $2}' "$1"; }

generate() { # split first_seed count
    local split=$1 first=$2 count=$3 dir=$out/problems/$1
    mkdir -p "$dir"
    for ((s = first; s < first + count; s++)); do
        # Perfect packings at LOAD: 30 to 90 buffers.
        local b=$((30 + (s * 37) % 61))
        "$t" gen perfect --seed "$s" --buffers "$b" --capacity 4096 --horizon 200 \
            -o "$dir/perfect-$s-$b.4096.csv" 2>/dev/null
        # On-chip scratchpads at 30% and 50% of a random whole-model problem's LOAD.
        local n=$((100 + (s * 53) % 101))
        "$t" gen random --seed "$s" --buffers "$n" --tightness 1.0 -o "$tmp/src.csv" 2>"$tmp/err"
        local c; c=$(capacity_of "$tmp/err")
        mv "$tmp/src.csv" "$tmp/src.$c.csv"
        for fraction in 0.3 0.5; do
            "$t" gen onchip --from "$tmp/src.$c.csv" --fraction "$fraction" --seed "$s" \
                -o "$tmp/oc.csv" 2>"$tmp/err"
            mv "$tmp/oc.csv" "$dir/onchip-$s-$fraction.$(capacity_of "$tmp/err").csv"
        done
        rm -f "$tmp/src.$c.csv"
    done
}

generate train 1 "$train_seeds"
generate valid 100001 "$valid_seeds"
for split in train valid; do
    # Exit code 1 (some problem not solved under the limit) is expected.
    "$t" collect "$out/problems/$split" --out "$out/logs/$split" --nodes "$nodes" --policy fixed \
        || [[ $? == 1 ]]
done
