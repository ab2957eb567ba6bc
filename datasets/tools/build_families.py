#!/usr/bin/env python3
"""Builds the family corpus: problems of shapes other than cut rectangles on which search matters.

Families (capacity = LOAD in both; some are infeasible, which the search must then prove):
  stress: `gen random --buffers N --horizon N/5 --max-lifetime M --min-size 1 --max-size S
      --tightness 1.0 --seed SEED`: random intervals over a short horizon, heavy overlap (about
      N x M / (2 x horizon) live at once), small sizes; N in 1000 1500 2000 2500 3000, M in 40 60
      80, S in 32 64 128, by seed;
  layers: `gen layers --buffers N --tiles T --stage G --skips-per-mille K --seed SEED`: a CNN's
      activations computed tile by tile, each layer staggered behind the one before, residual
      skips; N as above, T in 10 20 30 40, G in 4 8, K in 200 500, by seed.
A candidate is kept when the search of the commit that froze the corpus, with nothing learned
(SELECTION_FLAGS), does not decide it within 10 x buffers search nodes: a node limit, so the
selection is the same on every machine. Later changes to the default search must be undone in
SELECTION_FLAGS for the corpus to rebuild bit for bit.

Seeds are disjoint between splits, families and every other corpus: stress 200000+ (train),
210000+ (validation), 220000+ (test), 225000+ (test-2, frozen after test was used); layers
300000+, 310000+, 320000+, 325000+. Each split tries
CANDIDATES[split] seeds per family. The test split's manifest hash is recorded in
datasets/README.md when it is built, before anything is trained or chosen; it is evaluated on
once.

The problem files are not committed (see .gitignore); the manifests and lists are.
Usage (from the repository root):
  datasets/tools/build_families.py [--check] [--jobs J] [--splits train,validation,test,test-2]
"""

import argparse
import sys

from build_effort import build_splits, generated_row

SELECTION_FLAGS = ["--no", "learned-holes", "--no", "learned-order", "--no", "learned-backjump"]
SIZES = [1000, 1500, 2000, 2500, 3000]
FIRST_SEED = {
    ("stress", "train"): 200000, ("stress", "validation"): 210000, ("stress", "test"): 220000, ("stress", "test-2"): 225000,
    ("layers", "train"): 300000, ("layers", "validation"): 310000, ("layers", "test"): 320000, ("layers", "test-2"): 325000,
}
CANDIDATES = {"train": 150, "validation": 60, "test": 60, "test-2": 60}
HEADER = "file,family,buffers,capacity,load,options,seed,selection_nodes,sha256"


def options(family, seed):
    """The generator's options for one seed: every parameter cycles with the seed."""
    buffers = SIZES[seed % len(SIZES)]
    if family == "stress":
        lifetime = [40, 60, 80][seed // 5 % 3]
        size = [32, 64, 128][seed // 15 % 3]
        return ["random", "--buffers", str(buffers), "--horizon", str(buffers // 5),
                "--max-lifetime", str(lifetime), "--min-size", "1", "--max-size", str(size),
                "--tightness", "1.0"]
    tiles = [10, 20, 30, 40][seed // 5 % 4]
    stage = [4, 8][seed // 20 % 2]
    skips = [200, 500][seed // 40 % 2]
    return ["layers", "--buffers", str(buffers), "--tiles", str(tiles), "--stage", str(stage),
            "--skips-per-mille", str(skips)]


def candidates(split):
    for family in ["stress", "layers"]:
        first = FIRST_SEED[(family, split)]
        for seed in range(first, first + CANDIDATES[split]):
            yield family, seed


def build(candidate, folder):
    """Generates one candidate, selects it; returns its manifest row, or None when dropped."""
    family, seed = candidate
    return generated_row(family, seed, options(family, seed), folder, 10, SELECTION_FLAGS)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--splits", default="train,validation,test")
    args = parser.parse_args()
    sys.exit(build_splits("family", args.splits.split(","), HEADER, candidates, build,
                          args.jobs, args.check))


if __name__ == "__main__":
    main()
