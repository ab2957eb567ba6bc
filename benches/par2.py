#!/usr/bin/env python3
"""PAR2 of `telamalloc eval` runs under a node limit: per eval.json and policy, the problems
decided and the PAR2 nodes and seconds (an undecided run counts twice the limit in nodes and
twice its own time in seconds).

Usage: benches/par2.py NODES eval.json [eval.json ...]
"""

import json
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    limit = int(sys.argv[1])
    print("| runs | policy | decided | PAR2 nodes | PAR2 s |")
    print("|---|---|---|---:|---:|")
    for path in sys.argv[2:]:
        rows = {}
        with open(path) as f:
            for run in json.load(f):
                decided = run["status"] in ("solved", "infeasible")
                row = rows.setdefault(run["policy"], [0, 0, 0, 0.0])
                row[0] += 1
                row[1] += decided
                row[2] += run["nodes"] if decided else 2 * limit
                row[3] += run["seconds"] * (1 if decided else 2)
        for policy, (problems, decided, nodes, seconds) in rows.items():
            print(f"| {path} | {policy} | {decided}/{problems} | {nodes:,} | {seconds:.1f} |")


if __name__ == "__main__":
    main()
