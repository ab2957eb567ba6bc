#!/usr/bin/env bash
# Rebuilds the train / validation / test splits from the real-model corpus, bit for bit:
# every problem is `telamalloc gen onchip --from datasets/models/MODEL.csv --fraction F --seed S`.
# The test split keeps only problems on which size-descending best-fit (tflite) fails.
# Usage (from the repository root): datasets/tools/build_splits.sh [--check]
#   --check: rebuild into a temporary folder and compare with datasets/splits/manifest.csv.
set -euo pipefail
cargo build --release --quiet
bin=target/release/telamalloc
fractions="0.15 0.2 0.25 0.3 0.35 0.4 0.45 0.5"
declare -A seeds=([train]=20 [validation]=5 [test]=4)
out=datasets/splits
check=false
if [ "${1:-}" = "--check" ]; then check=true; out=$(mktemp -d); fi
manifest="$out/manifest.csv.new"
mkdir -p "$out"
echo "split,file,model,fraction,seed,buffers,capacity,load,sha256" > "$manifest"
for split in train validation test; do
  rm -rf "${out:?}/$split"; mkdir -p "$out/$split"; : > "$out/$split.txt.new"
done
grep -v '^#' datasets/splits/models.csv | tail -n +2 | while IFS=, read -r model split; do
  for fraction in $fractions; do
    for seed in $(seq 0 $((${seeds[$split]} - 1))); do
      tmp="$out/$split/tmp.csv"
      report=$("$bin" gen onchip --from "datasets/models/$model.csv" --fraction "$fraction" \
        --seed "$seed" -o "$tmp" 2>&1)
      capacity=$(echo "$report" | awk '/^capacity/ {print $2}')
      buffers=$(echo "$report" | awk '/^buffers/ {print $2}')
      load=$(echo "$report" | awk '/^buffers/ {print $4}')
      file="$out/$split/$model.f$fraction.s$seed.$capacity.csv"
      mv "$tmp" "$file"
      if [ "$split" = test ] && "$bin" solve "$file" --algo tflite -o /dev/null 2>/dev/null; then
        rm "$file"; continue   # best-fit already fits: not a hard problem
      fi
      sum=$(sha256sum "$file" | cut -d' ' -f1)
      name="datasets/splits/$split/$(basename "$file")"
      echo "$split,$name,$model,$fraction,$seed,$buffers,$capacity,$load,$sum" >> "$manifest"
      echo "$name" >> "$out/$split.txt.new"
    done
  done
done
if $check; then
  if diff -q <(cut -d, -f1-9 "$manifest") datasets/splits/manifest.csv >/dev/null; then
    echo "splits rebuilt bit for bit ($(($(wc -l < "$manifest") - 1)) problems)"
  else
    echo "the rebuilt splits differ from datasets/splits/manifest.csv" >&2; exit 1
  fi
  rm -rf "$out"
else
  mv "$manifest" "$out/manifest.csv"
  for split in train validation test; do mv "$out/$split.txt.new" "$out/$split.txt"; done
  for split in train validation test; do echo "$split: $(wc -l < "$out/$split.txt") problems"; done
fi
