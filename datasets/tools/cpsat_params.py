#!/usr/bin/env python3
"""The reference CP-SAT model (as ../shared/tools/cpsat_ref.py builds it: one AddNoOverlap2D
over fixed time intervals and address intervals [x, x + size), 0 <= x <= capacity - size) with
CP-SAT parameters overridden one at a time, to see which ones matter.

Usage (from the repository root):
  python3 datasets/tools/cpsat_params.py P.CAP.csv [P2.CAP.csv ...] --time-limit 10 \
      --set num_workers=1 --set cp_model_presolve=false ... [--log]
Prints one line per problem: file, status, wall time, branches, conflicts, the first solution's
subsolver; `--log` prints CP-SAT's search log too.

`--branching` replaces CP-SAT's own search by a fixed one over the offsets (with
search_branching=FIXED_SEARCH): `lowest` branches on the buffer with the lowest possible offset
(ties: file order), `lowest-ranked` the same with ties broken by the search's fixed order (longest
lifetime, then size, then area: the order our search tries the candidates at one offset), with
"offset = its lowest" first and "offset > its lowest" on backtrack. It tells propagation apart
from search strategy: CP-SAT and our search then branch alike.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "tools"))
from refcommon import read_problem  # noqa: E402
from ortools.sat.python import cp_model  # noqa: E402


def parse_value(text):
    if text in ("true", "false"):
        return text == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--set", action="append", default=[], help="PARAM=VALUE (SatParameters)")
    ap.add_argument("--log", action="store_true")
    ap.add_argument("--branching", choices=["default", "lowest", "lowest-ranked"], default="default")
    args = ap.parse_args()
    for path in args.csv:
        cap = int(os.path.basename(path).rsplit(".", 2)[-2])
        bufs = [b for b in read_problem(path) if b.size > 0 and b.upper > b.lower]
        m = cp_model.CpModel()
        x = {b.idx: m.new_int_var(0, cap - b.size, f"x{b.idx}") for b in bufs}
        tiv = [m.new_fixed_size_interval_var(b.lower, b.upper - b.lower, f"t{b.idx}")
               for b in bufs]
        aiv = [m.new_fixed_size_interval_var(x[b.idx], b.size, f"a{b.idx}") for b in bufs]
        m.add_no_overlap_2d(tiv, aiv)
        if args.branching != "default":
            order = bufs
            if args.branching == "lowest-ranked":
                order = sorted(bufs, key=lambda b: (-(b.upper - b.lower), -b.size,
                                                    -(b.upper - b.lower) * b.size))
            m.add_decision_strategy([x[b.idx] for b in order], cp_model.CHOOSE_LOWEST_MIN,
                                    cp_model.SELECT_MIN_VALUE)
        solver = cp_model.CpSolver()
        solver.parameters.max_time_in_seconds = args.time_limit
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = 0
        if args.branching != "default":
            solver.parameters.search_branching = cp_model.FIXED_SEARCH
        for item in args.set:
            key, value = item.split("=", 1)
            setattr(solver.parameters, key, parse_value(value))
        lines = []
        solver.parameters.log_search_progress = True
        solver.parameters.log_to_stdout = False
        solver.log_callback = lines.append
        st = solver.solve(m)
        first = ""
        for line in lines:
            if re.match(r"^#1\s", line):
                first = line.split()[-1]
                break
        if args.log:
            print("\n".join(lines))
        print(f"{os.path.basename(path)} {solver.status_name(st)} {solver.wall_time:.3f}s "
              f"branches={solver.num_branches} conflicts={solver.num_conflicts} "
              f"first={first} branching={args.branching} params={' '.join(args.set)}", flush=True)


if __name__ == "__main__":
    main()
