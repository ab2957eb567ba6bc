#!/usr/bin/env python3
"""What choosing a strategy per problem could gain at most: the virtual best strategy (for each
held-out problem, the strategy whose race alone decided it in the fewest nodes) against every
policy that `telamalloc-train learn` compared there, in PAR2 nodes (an undecided run counts twice
the budget). No model that picks one strategy per problem can beat the virtual best, so when it
is above 0.7x a policy's PAR2 nodes, no strategy choice reaches 0.7x of that policy.

Usage: benches/best_strategy.py NODES WORK [WORK ...]
  NODES: the node budget of the races (`learn --nodes`); WORK: a `learn --work` folder
  (its races-held-out.json and held-out.json are read).
"""

import json
import sys
from collections import defaultdict
from pathlib import Path


def par2(runs, limit):
    """Decided count and PAR2 nodes of a policy's runs."""
    decided = [r for r in runs if r["status"] in ("solved", "infeasible")]
    return len(decided), sum(r["nodes"] for r in decided) + 2 * limit * (len(runs) - len(decided))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    limit = int(sys.argv[1])
    for work in map(Path, sys.argv[2:]):
        best = defaultdict(lambda: 2 * limit)
        decided = set()
        for run in json.loads((work / "races-held-out.json").read_text()):
            if run["status"] in ("solved", "infeasible"):
                best[run["problem"]] = min(best[run["problem"]], run["nodes"])
                decided.add(run["problem"])
            else:
                best[run["problem"]] = min(best[run["problem"]], 2 * limit)
        virtual = sum(best.values())
        print(f"{work}: {len(best)} held-out problems; virtual best strategy decides "
              f"{len(decided)}, PAR2 nodes {virtual:,}")
        policies = defaultdict(list)
        for run in json.loads((work / "held-out.json").read_text()):
            policies[run["policy"]].append(run)
        for policy, runs in policies.items():
            count, nodes = par2(runs, limit)
            print(f"  {policy}: decides {count}, PAR2 nodes {nodes:,}; "
                  f"virtual best / it = {virtual / nodes:.2f}")


if __name__ == "__main__":
    main()
