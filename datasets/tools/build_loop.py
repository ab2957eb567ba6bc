#!/usr/bin/env python3
"""Builds the user-loop corpus: per family, a training split for `telamalloc-train learn` and a
frozen test split it never sees, to check that a model learned from one family's solves pays on
new problems of that family.

Families (each its own splits, loop-FAMILY-train and loop-FAMILY-test):
  time-slab: `gen perfect --style time-slab --cuts C --buffers N --remove K --alignment 1024
      --horizon 1024 --capacity 1048576`, C in uniform central edge, N in 150 200 ... 400, K
      = N x P / 100 with P in 0 1 2 3: cut rectangles, perfect packings with a few pieces out;
  stress: `gen random --buffers N --horizon N/5 --max-lifetime M --min-size 1 --max-size S
      --tightness 1.0`, N in 400 600 800 1000, M in 40 60, S in 32 128: random intervals
      with heavy overlap at capacity = LOAD;
  layers: `gen layers --buffers N --tiles T --stage G --skips-per-mille K`, N as stress, T in
      10 20 30, G in 4 8, K in 200 500: a CNN's activations tile by tile, at LOAD.
Every parameter cycles with the seed. A candidate is kept when the search with nothing learned
(SELECTION_FLAGS) does not decide it within 4 x buffers nodes: past the first dives, where the
search works. A node limit, so the selection is the same on every machine.

Seeds are disjoint between splits, families and every other corpus: 400000 + 10000 x family
index (train), + 5000 (test), + 7000 (test-2, a second test split per family, frozen
after the first was used), + 8000 (test-3, frozen after the second was used), + 9000 (test-4, frozen after the third was
used), + 9500 (test-5, frozen after the fourth was used); the sixth test splits lie past them
all, 430000 + 2000 x family index (test-6, frozen after the fifth was used), and the seventh
at 440000 + 2000 x family index (test-7, frozen after the sixth was used). Each split tries
CANDIDATES[family][split] seeds. The test
manifests' hashes are recorded in datasets/README.md when they are built, before anything is
trained; each test split is evaluated on once.

The problem files are not committed (see .gitignore); the manifests and lists are.
Usage (from the repository root):
  datasets/tools/build_loop.py [--check] [--jobs J] [--families time-slab,stress,layers]
      [--splits train,test,test-2,test-3,test-4,test-5,test-6,test-7]
"""

import argparse
import sys

from build_effort import build_splits, generated_row

SELECTION_FLAGS = ["--no", "learned-holes", "--no", "learned-order", "--no", "learned-backjump"]
FAMILIES = ["time-slab", "stress", "layers"]
# Seeds tried per family and split: about 150 training and 50 test problems are kept of each.
CANDIDATES = {"time-slab": {"train": 1200, "test": 400, "test-2": 400, "test-3": 400, "test-4": 400, "test-5": 400, "test-6": 400, "test-7": 400},
              "stress": {"train": 300, "test": 100, "test-2": 100, "test-3": 100, "test-4": 100, "test-5": 100, "test-6": 100, "test-7": 100},
              "layers": {"train": 600, "test": 200, "test-2": 200, "test-3": 200, "test-4": 200, "test-5": 200, "test-6": 200, "test-7": 200}}
HEADER = "file,family,buffers,capacity,load,options,seed,selection_nodes,sha256"


def options(family, seed):
    """The generator's options for one seed: every parameter cycles with the seed."""
    if family == "time-slab":
        buffers = [150, 200, 250, 300, 350, 400][seed % 6]
        remove = buffers * [0, 1, 2, 3][seed // 18 % 4] // 100
        return ["perfect", "--style", "time-slab", "--cuts",
                ["uniform", "central", "edge"][seed // 6 % 3], "--buffers", str(buffers),
                "--remove", str(remove), "--alignment", "1024", "--horizon", "1024",
                "--capacity", "1048576"]
    buffers = [400, 600, 800, 1000][seed % 4]
    if family == "stress":
        return ["random", "--buffers", str(buffers), "--horizon", str(buffers // 5),
                "--max-lifetime", ["40", "60"][seed // 4 % 2], "--min-size", "1",
                "--max-size", ["32", "128"][seed // 8 % 2], "--tightness", "1.0"]
    return ["layers", "--buffers", str(buffers), "--tiles", ["10", "20", "30"][seed // 4 % 3],
            "--stage", ["4", "8"][seed // 12 % 2],
            "--skips-per-mille", ["200", "500"][seed // 24 % 2]]


def first_seed(family, split):
    if split in ("test-6", "test-7"):
        return {"test-6": 430000, "test-7": 440000}[split] + 2000 * FAMILIES.index(family)
    return 400000 + 10000 * FAMILIES.index(family) + {"train": 0, "test": 5000, "test-2": 7000, "test-3": 8000,
                                                   "test-4": 9000,
                                                   "test-5": 9500}[split]


def family_builder(family, options, first_seed, candidates_per_split):
    """The candidates and the build of one family's splits: `options(family, seed)` gives the
    generator's options, `first_seed(family, split)` the first seed of a split, which tries
    `candidates_per_split[split]` seeds; a candidate is kept as in the loop corpus."""
    def candidates(split):
        first = first_seed(family, split)
        for seed in range(first, first + candidates_per_split[split]):
            yield split, seed

    def build(candidate, folder):
        """Generates one candidate, selects it; its manifest row, or None when dropped."""
        split, seed = candidate
        return generated_row(family, seed, options(family, seed), folder, 4, SELECTION_FLAGS)

    return candidates, build


def build_main(description, prefix, families, builder, default_splits="train,test"):
    """The command line of a corpus of families: `builder(family)` gives its candidates and
    build; the splits are built as `PREFIX-FAMILY-SPLIT`, or checked with --check."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--families", default=",".join(families))
    parser.add_argument("--splits", default=default_splits)
    args = parser.parse_args()
    status = 0
    for family in args.families.split(","):
        candidates, build = builder(family)
        status |= build_splits(f"{prefix}-{family}", args.splits.split(","), HEADER, candidates,
                               build, args.jobs, args.check)
    sys.exit(status)


def main():
    build_main(__doc__.splitlines()[0], "loop", FAMILIES,
               lambda family: family_builder(family, options, first_seed, CANDIDATES[family]))


if __name__ == "__main__":
    main()
