#!/usr/bin/env bash
# Rebuilds the synthetic perfect-packing corpus for the portfolio model, bit for bit: every
# problem is `telamalloc gen perfect --buffers N --style STYLE --seed S --alignment 1024
# --horizon 1024` (LOAD = capacity = 1048576, a packing exists). The corpus is made by our own
# generator only; the hard set (datasets/challenging/) is never part of it. synthetic-test is
# held out: never used for training or model selection.
# Usage (from the repository root): datasets/tools/build_synthetic.sh [--check]
#   --check: rebuild into a temporary folder and compare with datasets/splits/synthetic-manifest.csv.
set -euo pipefail
cargo build --release --quiet
bin=target/release/telamalloc
sizes="150 200 250 300 350 400 450"
styles="mixed guillotine non-guillotine"
declare -A seeds=([synthetic-train]="$(seq -s ' ' 0 14)" [synthetic-validation]="$(seq -s ' ' 100 104)"
  [synthetic-test]="$(seq -s ' ' 200 204)")
out=datasets/splits
check=false
if [ "${1:-}" = "--check" ]; then check=true; out=$(mktemp -d); fi
manifest="$out/synthetic-manifest.csv.new"
echo "split,file,buffers,style,seed,capacity,sha256" > "$manifest"
for split in synthetic-train synthetic-validation synthetic-test; do
  rm -rf "${out:?}/$split"; mkdir -p "$out/$split"; : > "$out/$split.txt.new"
  for buffers in $sizes; do
    for style in $styles; do
      for seed in ${seeds[$split]}; do
        file="$out/$split/perfect.n$buffers.$style.s$seed.1048576.csv"
        "$bin" gen perfect --buffers "$buffers" --style "$style" --seed "$seed" \
          --alignment 1024 --horizon 1024 -o "$file" 2>/dev/null
        sum=$(sha256sum "$file" | cut -d' ' -f1)
        name="datasets/splits/$split/$(basename "$file")"
        echo "$split,$name,$buffers,$style,$seed,1048576,$sum" >> "$manifest"
        echo "$name" >> "$out/$split.txt.new"
      done
    done
  done
done
if $check; then
  if diff -q "$manifest" datasets/splits/synthetic-manifest.csv >/dev/null; then
    echo "synthetic corpus rebuilt bit for bit ($(($(wc -l < "$manifest") - 1)) problems)"
  else
    echo "the rebuilt corpus differs from datasets/splits/synthetic-manifest.csv" >&2; exit 1
  fi
  rm -rf "$out"
else
  mv "$manifest" "$out/synthetic-manifest.csv"
  for split in synthetic-train synthetic-validation synthetic-test; do
    mv "$out/$split.txt.new" "$out/$split.txt"
    echo "$split: $(wc -l < "$out/$split.txt") problems"
  done
fi
