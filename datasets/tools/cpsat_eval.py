#!/usr/bin/env python3
"""Runs the reference CP-SAT model over a split and writes a CSV of status and time per problem.

Each problem is one run of ../shared/tools/cpsat_ref.py (the shared reference model: one
AddNoOverlap2D, feasibility at the capacity in the file name), as a separate process, with its
search log kept in OUT/logs/. The first solution's subsolver is read from the log.

Usage (from the repository root):
  python3 datasets/tools/cpsat_eval.py --split tight-validation --workers 1 --time-limit 10 \
      --out DIR [--every K] [--ref PATH]
Writes DIR/cpsat.w<W>.csv with columns
  file,family,workers,status,decided,solve_wall_s,total_wall_s,branches,conflicts,first_solution_by
`decided` is 1 when CP-SAT answered (FEASIBLE/OPTIMAL or INFEASIBLE) within the limit.
Note: the reference model ignores the alignment column. For the perfect families every size and
the capacity are multiples of the (common) alignment, so pushing every buffer down as far as it
goes turns any packing into an aligned one: the feasibility question is the same.
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys

REF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "tools", "cpsat_ref.py")


def families(split):
    manifest = f"datasets/splits/{split}-manifest.csv"
    out = {}
    if os.path.exists(manifest):
        with open(manifest, newline="") as fh:
            for row in csv.DictReader(fh):
                out[row["file"]] = row["family"]
    return out


def first_solution_by(log):
    """The subsolver named on the first solution line ('#1 ...'), if any."""
    for line in log.splitlines():
        if re.match(r"^#1\s", line):
            return line.split()[-1]
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--split", required=True)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--every", type=int, default=1, help="keep every K-th problem of the list")
    ap.add_argument("--out", required=True)
    ap.add_argument("--ref", default=REF)
    args = ap.parse_args()

    with open(f"datasets/splits/{args.split}.txt") as fh:
        files = [line.strip() for line in fh if line.strip()][::args.every]
    fam = families(args.split)
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    path = os.path.join(args.out, f"cpsat.w{args.workers}.csv")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "family", "workers", "status", "decided", "solve_wall_s",
                    "total_wall_s", "branches", "conflicts", "first_solution_by"])
        for i, f in enumerate(files):
            capacity = int(os.path.basename(f).rsplit(".", 2)[-2])
            cmd = [sys.executable, args.ref, f, "--capacity", str(capacity), "--time-limit",
                   str(args.time_limit), "--workers", str(args.workers), "--log"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            base = os.path.basename(f)
            with open(os.path.join(args.out, "logs", f"{base}.w{args.workers}.log"), "w") as lf:
                lf.write(p.stdout)
                lf.write(p.stderr)
            rec = {}
            for line in p.stdout.splitlines():
                if line.startswith("RESULT "):
                    rec = json.loads(line[len("RESULT "):])
            status = rec.get("status", "ERROR")
            decided = int(status in ("FEASIBLE", "OPTIMAL", "INFEASIBLE"))
            w.writerow([f, fam.get(f, ""), args.workers, status, decided,
                        rec.get("solve_wall_s", ""), rec.get("total_wall_s", ""),
                        rec.get("branches", ""), rec.get("conflicts", ""),
                        first_solution_by(p.stdout)])
            fh.flush()
            print(f"[{i + 1}/{len(files)}] {base} {status} {rec.get('solve_wall_s', '')}",
                  flush=True)


if __name__ == "__main__":
    main()
