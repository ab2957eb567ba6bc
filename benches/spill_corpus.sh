#!/usr/bin/env bash
# `solve --spill` against greedy admission on every problem of a list (one path a line), each
# at its file-name capacity x PERMILLE / 1000, with a time limit of TIMEOUT seconds (default 2).
# Prints CSV: file, capacity, total bytes, bytes spill keeps, bytes greedy admission keeps,
# seconds. Usage (from the repository root, after `cargo build --release`):
#   benches/spill_corpus.sh LIST PERMILLE [TIMEOUT] > OUT.csv
set -euo pipefail
bin=${TELAMALLOC:-target/release/telamalloc}
echo "file,capacity,total,kept,greedy,seconds"
while read -r file; do
  capacity=$(basename "$file" .csv)
  capacity=$((${capacity##*.} * $2 / 1000))
  line=$("$bin" solve "$file" --capacity "$capacity" --spill --timeout "${3:-2}" -o /dev/null 2>&1 | tr '\n' ' ')
  total=$(echo "$line" | sed -E 's/.* of ([0-9]+), moved out.*/\1/')
  kept=$(echo "$line" | sed -E 's/.*kept on chip: ([0-9]+) bytes.*/\1/')
  greedy=$(echo "$line" | sed -E 's/.*greedy admission keeps ([0-9]+) bytes.*/\1/')
  seconds=$(echo "$line" | sed -E 's/.* in ([0-9.]+) s.*/\1/')
  echo "$(basename "$file"),$capacity,$total,$kept,$greedy,$seconds"
done < "$1"
