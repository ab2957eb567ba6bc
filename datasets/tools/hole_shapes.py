#!/usr/bin/env python3
"""How well each slack-filling cut guesses the holes of generated slack packings.

Every perfect packing with pieces removed in a split was made by `telamalloc gen perfect`, so
its holes are known: generating it again with `--remove 0` (same style, cuts, buffers, seed,
horizon and alignment) gives the full packing, and the buffers it has beyond the problem are
the removed pieces. For each such problem this prints whether the nested, first-in-first-out
and by-amount cuts of its slack profile (as `src/search/slack_fill.rs` makes them) are exactly
the removed pieces, and how often a lottery draw is: uniform draws, and draws that close open
slack of the fall's own amount where there is some (the lottery's even draws). Then the totals.

Usage (from the repository root, after `cargo build --release`):
    python3 datasets/tools/hole_shapes.py [SPLIT ...]   # default: validation-sample80 tight-validation
Environment: TELAMALLOC (default target/release/telamalloc), DRAWS (Monte Carlo draws, 2000).
"""

import collections
import csv
import os
import random
import re
import subprocess
import sys
import tempfile

BIN = os.environ.get("TELAMALLOC", "target/release/telamalloc")
DRAWS = int(os.environ.get("DRAWS", "2000"))


def read_buffers(path):
    with open(path) as f:
        return [(int(r["lower"]), int(r["upper"]), int(r["size"])) for r in csv.DictReader(f)]


def manifests():
    """Every split manifest's rows, by problem file."""
    rows = {}
    folder = "datasets/splits"
    for name in sorted(os.listdir(folder)):
        if name.endswith("manifest.csv"):
            with open(os.path.join(folder, name)) as f:
                for row in csv.DictReader(f):
                    rows[row["file"]] = row
    return rows


def removed_pieces(path, row, scratch):
    """The pieces the generator removed from the problem at `path`, or None if it is not one."""
    buffers = re.search(r"\.n(\d+)\.", path)
    if row.get("source") != "generator" or not buffers or int(row.get("remove") or 0) == 0:
        return None
    full = os.path.join(scratch, os.path.basename(path))
    cuts = ["--cuts", row["cuts"]] if row.get("cuts") else []
    subprocess.run([BIN, "gen", "perfect", "--style", row["style"], *cuts, "--buffers",
                    buffers.group(1), "--seed", row["seed"], "--remove", "0", "--horizon", "1024",
                    "--alignment", "1024", "--capacity", row["capacity"], "-o", full],
                   check=True, capture_output=True)
    have = collections.Counter(read_buffers(path))
    whole = collections.Counter(read_buffers(full))
    if have - whole:
        return None  # not made by these options
    return sorted((whole - have).elements())


def profile(buffers, capacity):
    """The slack of every stretch between consecutive buffer ends: (start, end, slack)."""
    times = sorted({t for b in buffers for t in b[:2]})
    return [(a, b, capacity - sum(s for lo, up, s in buffers if lo <= a < up))
            for a, b in zip(times, times[1:])]


def matched(stretches, pick):
    """The cut of the profile where each piece of a fall closes open slack `pick` chooses."""
    out, open_ = [], []

    def close(at, amount):
        while amount > 0 and open_:
            i = pick(open_, amount)
            start, size = open_[i]
            taken = min(size, amount)
            out.append((start, at, taken))
            amount -= taken
            if taken == size:
                open_.pop(i)
            else:
                open_[i] = (start, size - taken)

    level = 0
    for start, _, slack in stretches:
        if slack > level:
            open_.append((start, slack - level))
        elif slack < level:
            close(start, level - slack)
        level = slack
    close(stretches[-1][1], level)
    return sorted(out)


def nested(open_, amount):
    return len(open_) - 1


def first_in_first_out(open_, amount):
    return 0


def by_amount(open_, amount):
    exact = [i for i, o in enumerate(open_) if o[1] == amount]
    if exact:
        return exact[-1]
    within = [o[1] for o in open_ if o[1] < amount]
    if within:
        return max(i for i, o in enumerate(open_) if o[1] == max(within))
    return len(open_) - 1


def uniform_draw(rng):
    return lambda open_, amount: rng.randrange(len(open_))


def amount_draw(rng):
    def pick(open_, amount):
        exact = [i for i, o in enumerate(open_) if o[1] == amount]
        return rng.choice(exact) if exact else rng.randrange(len(open_))
    return pick


def main():
    splits = sys.argv[1:] or ["validation-sample80", "tight-validation"]
    rows = manifests()
    totals = collections.Counter()
    with tempfile.TemporaryDirectory() as scratch:
        for split in splits:
            with open(f"datasets/splits/{split}.txt") as f:
                paths = [line.strip() for line in f if line.strip()]
            for path in paths:
                row = rows.get(path)
                holes = removed_pieces(path, row, scratch) if row else None
                if not holes:
                    continue
                stretches = profile(read_buffers(path), int(row["capacity"]))
                hits = {name: matched(stretches, pick) == holes for name, pick in
                        [("nested", nested), ("fifo", first_in_first_out),
                         ("by-amount", by_amount)]}
                rng = random.Random(1)
                draws = {name: sum(matched(stretches, make(rng)) == holes
                                   for _ in range(DRAWS)) / DRAWS
                         for name, make in [("uniform", uniform_draw),
                                            ("amount", amount_draw)]}
                totals["problems"] += 1
                for name, hit in hits.items():
                    totals[name] += hit
                totals["any cut"] += any(hits.values())
                print(f"{os.path.basename(path)}: removed {len(holes)}; "
                      + " ".join(f"{k} {'yes' if v else 'no'}" for k, v in hits.items())
                      + "; draws " + " ".join(f"{k} {v:.3f}" for k, v in draws.items()))
                for name, p in draws.items():
                    totals[f"draw {name}"] += p
    n = totals["problems"]
    print(f"\n{n} slack packings; removed pieces reproduced by: "
          + ", ".join(f"{k} {totals[k]}" for k in ["nested", "fifo", "by-amount", "any cut"])
          + "; mean chance of a draw: "
          + ", ".join(f"{k} {totals['draw ' + k] / max(n, 1):.2f}" for k in ["uniform", "amount"]))


if __name__ == "__main__":
    main()
