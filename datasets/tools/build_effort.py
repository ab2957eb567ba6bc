#!/usr/bin/env python3
"""Builds the effort-selected corpus (issue 10): problems on which search matters.

Candidates come from the generators (`telamalloc gen`), in families:
  perfect-STYLE-CUTS: `gen perfect --style STYLE --cuts CUTS --buffers N --remove K --seed S
      --alignment 1024 --horizon 1024` at capacity 1048576, STYLE in guillotine, non-guillotine,
      mixed, thin, time-slab; CUTS in uniform, central, edge; N in 100, 150, ..., 500;
      K = N x P / 100 (rounded down) with P = 0 0 1 2 3 4 % for S mod 6 = 0 ... 5;
  onchip: `gen onchip --from datasets/models/MODEL.csv --fraction F --benefit B --tiles T
      --alignment A --seed S`, F in 0.15 0.2 0.25 0.3 0.4 0.5, B in area size density random,
      T in quarters (the default tiling) 2 3 4, A in 1 64; split by source model as
      splits/models.csv says.
A candidate is kept when the default solver as it was when the corpus was frozen (`telamalloc
solve` with SELECTION_FLAGS: heuristic-first, then the round robin of that day, without edge
finding, slack filling and cover branching, which became part of the default later and decide
many of these problems sooner) does not decide it
within 10 x buffers search nodes: a node limit, not a time limit, so the selection is the same on
every machine. (The issue also names 50 ms; that one is not
reproducible, and the node rule is the stricter on this machine: 10 x buffers nodes take about
5 ms at 300 buffers.)

Seeds are disjoint between the splits and from every other corpus: perfect 10000+ (train),
20000+ (validation), 30000+ (test), 70000+ (test-2), 90000+ (test-3), 95000+ (test-4),
96000+ (test-5), 97000+ (test-6), 98000+ (test-7), 99000+ (test-8); onchip 40000+ (train), 50000+ (validation),
60000+ (test), 80000+ (test-2), 91000+ (test-3), 100000+ (test-4), 104000+ (test-5), 108000+
(test-6), 112000+ (test-7) and 116000+ (test-8), the last seven from the test split's models.
The test split's manifest hash is recorded in datasets/README.md when it is frozen, before any
training; it is evaluated on once, at the end.

The problem files are not committed (see .gitignore); the manifests and lists are.
Usage (from the repository root):
  datasets/tools/build_effort.py [--check] [--jobs J] [--splits train,validation,test,test-2,...,test-8]
  --check: rebuild into a temporary folder and compare with the committed manifests.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

BIN = "target/release/telamalloc"
CAPACITY = 1048576
# The solver the selection ran when the corpus was frozen: the default of that day. Later
# changes to the default search are undone here (the round robin of then, without diversified
# restarts; no edge finding, slack filling, cover branching or learned backjumps), so the corpus
# rebuilds bit for bit.
SELECTION_FLAGS = ["--policy", "fixed/WAT/TAW/TWA", "--no", "edge-finding", "--no", "slack-fill",
                   "--no", "cover-branching", "--no", "learned-backjump"]
STYLES = ["guillotine", "non-guillotine", "mixed", "thin", "time-slab"]
CUTS = ["uniform", "central", "edge"]
SIZES = list(range(100, 501, 50))
PERCENTS = [0, 0, 1, 2, 3, 4]
FRACTIONS = ["0.15", "0.2", "0.25", "0.3", "0.4", "0.5"]
BENEFITS = ["area", "size", "density", "random"]
TILINGS = ["quarters", "2", "3", "4"]
ALIGNMENTS = ["1", "64"]
# Per split: (first perfect seed, perfect seeds per (style, cuts, size)),
#            (first onchip seed, onchip seeds per (model, fraction, benefit, tiling, alignment)).
SEEDS = {
    "train": ((10000, 40), (40000, 2)),
    "validation": ((20000, 6), (50000, 2)),
    "test": ((30000, 6), (60000, 2)),
    # A second test split, frozen after the first was used: the same families and models as
    # test, new seeds.
    "test-2": ((70000, 6), (80000, 2)),
    # A third, frozen after the second was used (on-chip seeds 91000-94071), a fourth, frozen
    # after the third was used (on-chip seeds 100000-103071), a fifth, frozen after the
    # fourth was used (on-chip seeds 104000-107071), a sixth, frozen after the fifth was
    # used (on-chip seeds 108000-111071), and a seventh, frozen after the sixth was used
    # (on-chip seeds 112000-115071).
    "test-3": ((90000, 6), (91000, 2)),
    "test-4": ((95000, 6), (100000, 2)),
    "test-5": ((96000, 6), (104000, 2)),
    "test-6": ((97000, 6), (108000, 2)),
    "test-7": ((98000, 6), (112000, 2)),
    # An eighth, frozen after the seventh was used (on-chip seeds 116000-119071).
    "test-8": ((99000, 6), (116000, 2)),
}
MODEL_SPLIT = {"train": "train", "validation": "validation", "test": "test", "test-2": "test",
               "test-3": "test", "test-4": "test", "test-5": "test",
               "test-6": "test", "test-7": "test", "test-8": "test"}
HEADER = "file,family,buffers,capacity,load,source,fraction,style,cuts,remove,benefit,tiling,alignment,seed,selection_nodes,sha256"


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def report_value(report, key):
    for line in report.splitlines():
        words = line.split()
        if words and words[0] == key:
            return int(words[1]), int(words[3]) if key == "buffers" else None
    raise RuntimeError(f"no '{key}' in: {report}")


def candidates(split):
    (perfect_first, perfect_count), (onchip_first, onchip_count) = SEEDS[split]
    for style in STYLES:
        for cuts in CUTS:
            for buffers in SIZES:
                for k in range(perfect_count):
                    seed = perfect_first + k
                    remove = buffers * PERCENTS[seed % 6] // 100
                    yield {
                        "kind": "perfect", "style": style, "cuts": cuts, "buffers": buffers,
                        "remove": remove, "seed": seed,
                    }
    models = []
    with open("datasets/splits/models.csv") as f:
        for line in f:
            if line.startswith("#") or line.startswith("model,"):
                continue
            model, model_split = line.strip().split(",")
            if model_split == MODEL_SPLIT[split]:
                models.append(model)
    index = 0
    for model in models:
        for fraction in FRACTIONS:
            for benefit in BENEFITS:
                for tiling in TILINGS:
                    for alignment in ALIGNMENTS:
                        for k in range(onchip_count):
                            yield {
                                "kind": "onchip", "model": model, "fraction": fraction,
                                "benefit": benefit, "tiling": tiling, "alignment": alignment,
                                "seed": onchip_first + index * onchip_count + k,
                            }
                        index += 1


def select(path, budget, flags):
    """Keeps the problem file `path` when `telamalloc solve` with `flags` does not decide it
    within `budget` nodes: its sha256, or None when decided (the file is then removed)."""
    solved = run([BIN, "solve", path, "--nodes", str(budget), *flags, "-o", os.devnull])
    if solved.returncode == 0 or "infeasible" in solved.stderr:
        os.remove(path)
        return None
    if "limit" not in solved.stderr:
        raise RuntimeError(f"unexpected answer on {path}: {solved.stderr}")
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def whole_layers(args):
    """The generator's arguments with a `gen layers` count of buffers rounded up to whole
    layers. When the corpora were built, `gen layers --buffers N --tiles T` made ceil(N / T)
    layers of T tiles; today it makes exactly N buffers. The manifests keep the options as the
    corpora were specified (their `buffers` column is the count made), and this passes the
    count that rebuilds the same files."""
    if not args or args[0] != "layers":
        return list(args)
    args = list(args)
    buffers = args.index("--buffers") + 1
    tiles = int(args[args.index("--tiles") + 1]) if "--tiles" in args else 20
    args[buffers] = str(-(-int(args[buffers]) // tiles) * tiles)
    return args


def generate(args, seed, folder, family):
    """Runs `telamalloc gen ARGS --seed SEED` into `folder`, naming the file
    FAMILY.nBUFFERS.sSEED.CAPACITY.csv: (path, buffers, capacity, load)."""
    tmp = os.path.join(folder, f"tmp.{seed}.csv")
    out = run([BIN, "gen", *whole_layers(args), "--seed", str(seed), "-o", tmp])
    if out.returncode != 0:
        raise RuntimeError(f"gen failed for {family} {seed}: {out.stderr}")
    capacity, _ = report_value(out.stderr, "capacity")
    buffers, load = report_value(out.stderr, "buffers")
    path = os.path.join(folder, f"{family}.n{buffers}.s{seed}.{capacity}.csv")
    os.replace(tmp, path)
    return path, buffers, capacity, load


def generated_row(family, seed, args, folder, nodes_per_buffer, flags):
    """Generates `gen ARGS --seed SEED` into `folder` and selects it (`select` at
    `nodes_per_buffer` x buffers nodes with `flags`): its manifest row (file, family, buffers,
    capacity, load, options, seed, selection nodes, sha256), or None when dropped."""
    path, buffers, capacity, load = generate(args, seed, folder, family)
    budget = nodes_per_buffer * buffers
    digest = select(path, budget, flags)
    if digest is None:
        return None
    return [path, family, buffers, capacity, load, " ".join(args), seed, budget, digest]


def build(candidate, folder):
    """Generates one candidate, selects it; returns its manifest row, or None when dropped."""
    c = candidate
    if c["kind"] == "perfect":
        name = f"perfect.{c['style']}.{c['cuts']}.n{c['buffers']}.r{c['remove']}.s{c['seed']}"
        path = os.path.join(folder, name + f".{CAPACITY}.csv")
        out = run([BIN, "gen", "perfect", "--style", c["style"], "--cuts", c["cuts"],
                   "--buffers", str(c["buffers"]), "--seed", str(c["seed"]), "--remove",
                   str(c["remove"]), "--alignment", "1024", "--horizon", "1024",
                   "--capacity", str(CAPACITY), "-o", path])
        capacity = CAPACITY
    else:
        tiling = [] if c["tiling"] == "quarters" else ["--tiles", c["tiling"]]
        tmp = os.path.join(folder, f"tmp.{c['seed']}.csv")
        out = run([BIN, "gen", "onchip", "--from", f"datasets/models/{c['model']}.csv",
                   "--fraction", c["fraction"], "--benefit", c["benefit"], "--alignment",
                   c["alignment"], "--seed", str(c["seed"])] + tiling + ["-o", tmp])
        capacity, _ = report_value(out.stderr, "capacity")
        name = (f"{c['model']}.f{c['fraction']}.{c['benefit']}.t{c['tiling']}.a{c['alignment']}"
                f".s{c['seed']}")
        path = os.path.join(folder, name + f".{capacity}.csv")
        os.replace(tmp, path)
    if out.returncode != 0:
        raise RuntimeError(f"gen failed for {c}: {out.stderr}")
    buffers, load = report_value(out.stderr, "buffers")
    budget = 10 * buffers
    digest = select(path, budget, SELECTION_FLAGS)
    if digest is None:
        return None
    if c["kind"] == "perfect":
        family = f"perfect-{c['style']}-{c['cuts']}"
        fields = [family, buffers, capacity, load, "generator", "", c["style"], c["cuts"],
                  c["remove"], "", "", 1024, c["seed"]]
    else:
        fields = ["onchip", buffers, capacity, load, c["model"], c["fraction"], "", "", "",
                  c["benefit"], c["tiling"], c["alignment"], c["seed"]]
    return [path] + fields + [budget, digest]


def build_splits(prefix, splits, header, candidates, build, jobs, check):
    """Builds `prefix-SPLIT` for each split (its candidates in parallel, the kept rows in order)
    and writes its manifest and list, or with `check` rebuilds into a temporary folder and
    compares with the committed manifest; the exit status (1 when a manifest differs)."""
    subprocess.run(["cargo", "build", "--release", "--quiet"], check=True)
    out = tempfile.mkdtemp() if check else "datasets/splits"
    status = 0
    for split in splits:
        name = f"{prefix}-{split}"
        folder = os.path.join(out, name)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        with ThreadPoolExecutor(jobs) as pool:
            rows = [r for r in pool.map(lambda c: build(c, folder), candidates(split)) if r]
        lines = [header]
        files = []
        for row in rows:
            file = f"datasets/splits/{name}/{os.path.basename(row[0])}"
            files.append(file)
            lines.append(",".join(str(x) for x in [file] + row[1:]))
        manifest = "\n".join(lines) + "\n"
        committed = f"datasets/splits/{name}-manifest.csv"
        if check:
            with open(committed) as f:
                same = f.read() == manifest
            print(f"{name}: {'rebuilt bit for bit' if same else 'DIFFERS from ' + committed}"
                  f" ({len(files)} problems)")
            status |= 0 if same else 1
        else:
            with open(committed, "w") as f:
                f.write(manifest)
            with open(f"datasets/splits/{name}.txt", "w") as f:
                f.write("".join(file + "\n" for file in files))
            print(f"{name}: {len(files)} problems")
    if check:
        shutil.rmtree(out)
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--splits",
                        default="train,validation,test,test-2,test-3,test-4,test-5,test-6,test-7,test-8")
    args = parser.parse_args()
    sys.exit(build_splits("effort", args.splits.split(","), HEADER, candidates, build,
                          args.jobs, args.check))


if __name__ == "__main__":
    main()
