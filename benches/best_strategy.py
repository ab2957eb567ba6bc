#!/usr/bin/env python3
"""What choosing a strategy per problem could gain at most: the virtual best strategy (for each
held-out problem, the strategy whose race alone decided it in the fewest nodes) against every
policy that `telamalloc-train learn` compared there, in PAR2 nodes (an undecided run counts twice
the budget). No model that picks one strategy per problem can beat the virtual best, so when it
is above 0.7x a policy's PAR2 nodes, no strategy choice reaches 0.7x of that policy.

It also prints the best static schedule for the whole family: of every weighting of the raced
strategies (0, 1 or 3 runs per round each), the one that needs the fewest PAR2 nodes on these
same held-out problems, a strategy of weight w out of W counted as deciding after W / w times
its own nodes. Chosen on the problems it is scored on, it bounds what any per-family order or
shares (a portfolio head without per-problem choice) could gain there.

Usage: benches/best_strategy.py NODES WORK [WORK ...]
  NODES: the node budget of the races (`learn --nodes`); WORK: a `learn --work` folder
  (its races-held-out.json and held-out.json are read).
"""

import itertools
import json
import sys
from collections import defaultdict
from pathlib import Path


def par2(runs, limit):
    """Decided count and PAR2 nodes of a policy's runs."""
    decided = [r for r in runs if r["status"] in ("solved", "infeasible")]
    return len(decided), sum(r["nodes"] for r in decided) + 2 * limit * (len(runs) - len(decided))


def best_static(races, limit):
    """Decided count, PAR2 nodes and weights of the best static weighting of the strategies."""
    nodes = defaultdict(dict)
    for run in races:
        done = run["status"] in ("solved", "infeasible")
        nodes[run["problem"]][run["policy"]] = run["nodes"] if done else None
    strategies = sorted({s for row in nodes.values() for s in row})
    rows = [[row.get(s) for s in strategies] for row in nodes.values()]
    best = None
    for weights in itertools.product((0, 1, 3), repeat=len(strategies)):
        total = sum(weights)
        if total == 0:
            continue
        decided, cost = 0, 0
        for row in rows:
            reach = min((n * total / w for n, w in zip(row, weights) if w and n is not None),
                        default=None)
            if reach is not None and reach <= limit:
                decided, cost = decided + 1, cost + reach
            else:
                cost += 2 * limit
        if best is None or cost < best[1]:
            best = (decided, cost, weights)
    named = ", ".join(f"{s} {w}" for s, w in zip(strategies, best[2]) if w)
    return best[0], round(best[1]), named


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
        static = best_static(json.loads((work / "races-held-out.json").read_text()), limit)
        print(f"  best static schedule ({static[2]}): decides {static[0]}, "
              f"PAR2 nodes {static[1]:,}")
        policies = defaultdict(list)
        for run in json.loads((work / "held-out.json").read_text()):
            policies[run["policy"]].append(run)
        for policy, runs in policies.items():
            count, nodes = par2(runs, limit)
            print(f"  {policy}: decides {count}, PAR2 nodes {nodes:,}; "
                  f"virtual best / it = {virtual / nodes:.2f}, best static / it = "
                  f"{static[1] / nodes:.2f}")


if __name__ == "__main__":
    main()
