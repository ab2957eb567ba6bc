#!/usr/bin/env python3
"""Per-family table of our search (`telamalloc eval --out DIR` -> DIR/eval.json) against the
reference CP-SAT (datasets/tools/cpsat_eval.py -> cpsat.w1.csv, cpsat.w2.csv), problem by problem.

Usage: python3 datasets/tools/tight_table.py EVAL.json CPSAT_W1.csv CPSAT_W2.csv [--rows]
Prints a markdown table: per family, problems, decided by our search, by CP-SAT with 1 and 2
workers, by either, by CP-SAT only (1 or 2 workers) and by ours only, and the median time of each
over the problems it decides. --rows also prints every problem.
"""
import csv
import json
import statistics
import sys


def median(values):
    return f"{statistics.median(values):.3f}" if values else "-"


def main():
    ours_path, w1_path, w2_path = sys.argv[1:4]
    ours = {r["problem"]: r for r in json.load(open(ours_path))}
    cps = []
    for path in (w1_path, w2_path):
        cps.append({row["file"].split("/")[-1]: row for row in csv.DictReader(open(path))})
    names = [n for n in cps[0] if n in ours and n in cps[1]]
    fam = {n: cps[0][n]["family"] for n in names}
    rows = []
    for family in sorted(set(fam.values())) + ["all"]:
        ns = [n for n in names if family in ("all", fam[n])]
        o = [n for n in ns if ours[n]["status"] != "limit"]
        c1 = [n for n in ns if cps[0][n]["decided"] == "1"]
        c2 = [n for n in ns if cps[1][n]["decided"] == "1"]
        either = set(o) | set(c1) | set(c2)
        cp_only = (set(c1) | set(c2)) - set(o)
        ours_only = set(o) - (set(c1) | set(c2))
        rows.append([family, len(ns), len(o), len(c1), len(c2), len(either), len(cp_only),
                     len(ours_only), median([ours[n]["seconds"] for n in o]),
                     median([float(cps[0][n]["solve_wall_s"]) for n in c1]),
                     median([float(cps[1][n]["solve_wall_s"]) for n in c2])])
    print("| family | problems | ours | CP-SAT 1w | CP-SAT 2w | either | CP-SAT only | ours only "
          "| median s ours | median s CP-SAT 1w | median s CP-SAT 2w |")
    print("|---|" + "---|" * 10)
    for r in rows:
        print("| " + " | ".join(str(v) for v in r) + " |")
    if "--rows" in sys.argv:
        print()
        print("| problem | family | ours | s | nodes | CP-SAT 1w | s | first by | CP-SAT 2w | s "
              "| first by |")
        print("|---|" + "---|" * 10)
        for n in names:
            r, a, b = ours[n], cps[0][n], cps[1][n]
            print(f"| {n} | {fam[n]} | {r['status']} | {r['seconds']:.3f} | {r['nodes']} | "
                  f"{a['status']} | {a['solve_wall_s']} | {a['first_solution_by']} | "
                  f"{b['status']} | {b['solve_wall_s']} | {b['first_solution_by']} |")


if __name__ == "__main__":
    main()
