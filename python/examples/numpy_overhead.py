"""How much the Python layer adds to a solve from numpy arrays.

Makes a random problem of N buffers (seeded lifetimes of 1 to 200 steps over N steps, sizes 1 to
4096 bytes, capacity 1.5 x LOAD, as `telamalloc gen random --tightness 1.5`), then times, per
run, the whole Python call (`Problem.from_arrays` + `solve`) against the time the library's
front door reports for the solve itself (`Allocation.elapsed`). Prints the median of the runs.

    python python/examples/numpy_overhead.py [--buffers 100000] [--runs 7] [--algo search]
"""

import argparse
import statistics
import time

import numpy as np

import telamalloc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--buffers", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--algo", default="search")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    n = args.buffers
    lower = rng.integers(0, n, n, dtype=np.int64)
    upper = lower + rng.integers(1, 201, n, dtype=np.int64)
    size = rng.integers(1, 4097, n, dtype=np.int64)
    load = telamalloc.Problem.from_arrays(lower, upper, size).load
    capacity = load * 3 // 2

    rows = []
    for _ in range(args.runs):
        start = time.perf_counter()
        problem = telamalloc.Problem.from_arrays(lower, upper, size)
        built = time.perf_counter()
        result = telamalloc.solve(problem, capacity=capacity, algo=args.algo)
        end = time.perf_counter()
        assert result.solved, result.message
        rows.append((end - start, built - start, end - built, result.elapsed))

    wall, build, call, inside = (statistics.median(column) for column in zip(*rows))
    overhead = wall - inside
    print(f"{n} buffers, LOAD {load}, capacity {capacity}, algo {args.algo}: {result}")
    print(f"median of {args.runs} runs:")
    print(f"  Python wall (from_arrays + solve)  {wall * 1e3:8.1f} ms")
    print(f"    Problem.from_arrays              {build * 1e3:8.1f} ms")
    print(f"    solve call                       {call * 1e3:8.1f} ms")
    print(f"  solve inside Rust (elapsed)        {inside * 1e3:8.1f} ms")
    print(f"  overhead                           {overhead * 1e3:8.1f} ms ({100 * overhead / inside:.1f}% of the solve)")


if __name__ == "__main__":
    main()
