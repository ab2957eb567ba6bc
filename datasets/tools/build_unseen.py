#!/usr/bin/env python3
"""Builds the unseen-family corpus: three families of shapes the shipped model's training mix
does not hold, each with a training split for `telamalloc-train learn` and a frozen test split,
to check that the user loop adapts to a family the shipped model never saw (the situation of a
compiler team with problems of its own).

Families (each its own splits, unseen-FAMILY-train and unseen-FAMILY-test):
  long-mix: `gen random --buffers N --horizon N/4 --max-lifetime 30 --long-per-mille L
      --long-lifetime N/8 --min-size 1 --max-size S --tightness 1.0`, N in 300 400 500 600, L
      in 50 100, S in 64 256: short intervals with a few long-lived buffers, at LOAD;
  wide: `gen random --buffers N --horizon N/10 --max-lifetime M --min-size 1 --max-size S
      --tightness 1.0`, M in N/20 N/10, S in 1024 4096: long overlapping lifetimes, sizes
      over three decades, at LOAD;
  aligned-layers: `gen layers --buffers N --tiles T --stage 16 --skips-per-mille K
      --alignment 256`, T in 8 12 16, K in 600 900: CNN-like layers with long stages, many
      skips and every size a multiple of 256, at LOAD.
The shipped model's mix holds random intervals of short lifetimes and small sizes without
long-lived buffers, layers of stage 4 or 8 unaligned, perfect packings and on-chip
scratchpads. Every parameter cycles with the seed. A candidate is kept when the search with
nothing learned (SELECTION_FLAGS) does not decide it within 4 x buffers nodes, as in the loop
corpus (build_loop.py, whose builder this uses).

Seeds are disjoint from every other corpus: 470000 + 10000 x family index (train), + 5000
(test), + 7000 (test-2). The test manifests' hashes are recorded in datasets/README.md when they are built,
before anything is trained on the family; each test split is evaluated on once.

The problem files are not committed (see .gitignore); the manifests and lists are.
Usage (from the repository root):
  datasets/tools/build_unseen.py [--check] [--jobs J] [--families long-mix,wide,aligned-layers]
      [--splits train,test]
"""

from build_loop import build_main, family_builder

FAMILIES = ["long-mix", "wide", "aligned-layers"]
# Seeds tried per family and split: about 150 training and 50 test problems are kept of each.
CANDIDATES = {"long-mix": {"train": 400, "test": 140, "test-2": 140},
              "wide": {"train": 600, "test": 200, "test-2": 200},
              "aligned-layers": {"train": 1200, "test": 400, "test-2": 400}}


def options(family, seed):
    """The generator's options for one seed: every parameter cycles with the seed."""
    buffers = [300, 400, 500, 600][seed % 4]
    if family == "long-mix":
        return ["random", "--buffers", str(buffers), "--horizon", str(buffers // 4),
                "--max-lifetime", "30", "--long-per-mille", ["50", "100"][seed // 4 % 2],
                "--long-lifetime", str(buffers // 8), "--min-size", "1",
                "--max-size", ["64", "256"][seed // 8 % 2], "--tightness", "1.0"]
    if family == "wide":
        return ["random", "--buffers", str(buffers), "--horizon", str(buffers // 10),
                "--max-lifetime", str(buffers // [20, 10][seed // 4 % 2]), "--min-size", "1",
                "--max-size", ["1024", "4096"][seed // 8 % 2], "--tightness", "1.0"]
    return ["layers", "--buffers", str(buffers), "--tiles", ["8", "12", "16"][seed // 4 % 3],
            "--stage", "16", "--skips-per-mille", ["600", "900"][seed // 12 % 2],
            "--alignment", "256"]


def first_seed(family, split):
    return 470000 + 10000 * FAMILIES.index(family) + {"train": 0, "test": 5000, "test-2": 7000}[split]


def main():
    build_main(__doc__.splitlines()[0], "unseen", FAMILIES,
               lambda family: family_builder(family, options, first_seed, CANDIDATES[family]))


if __name__ == "__main__":
    main()
