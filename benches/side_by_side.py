#!/usr/bin/env python3
"""The hard set side by side: for each problem, three rounds of each telamalloc variant and of
MiniMalloc (the binary named by MINIMALLOC, built from google/minimalloc with CMake as its own
README says), alternating; every solution is validated. Prints a Markdown
table of median wall times and node counts.

Usage (from the repository root, after `cargo build --release`):
    python3 benches/side_by_side.py [NAME=ARGS ...]
Each NAME=ARGS is a telamalloc variant: a column name and the extra `solve` arguments, e.g.
    python3 benches/side_by_side.py default= 'learned=--policy learned' 'no-ef=--no edge-finding'
The first variant is the one MiniMalloc is compared with. Default: `default=` alone.
"""
import glob, os, re, statistics, subprocess, sys, time

T = 'target/release/telamalloc'
M = os.environ.get('MINIMALLOC')
if not M:
    sys.exit('set MINIMALLOC to the path of a minimalloc binary')
variants = [(a.split('=', 1)[0], a.split('=', 1)[1].split()) for a in sys.argv[1:]] or [('default', [])]


def timed(command):
    start = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True)
    return time.perf_counter() - start, run


def validate(problem, solution):
    check = subprocess.run([T, 'validate', problem, solution], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


rows = []
for problem in sorted(glob.glob('datasets/challenging/*.csv')):
    name = os.path.basename(problem).split('.')[0]
    times = {key: [] for key, _ in variants + [('MiniMalloc', None)]}
    nodes = {}
    for _ in range(3):
        for key, extra in variants:
            seconds, run = timed([T, 'solve', problem, '-o', '/tmp/t.csv', '--stats', '--timeout', '60'] + extra)
            assert run.returncode == 0, run.stderr
            times[key].append(seconds)
            nodes[key] = int(re.search(r'"nodes":(\d+)', run.stderr).group(1))
            validate(problem, '/tmp/t.csv')
        seconds, _ = timed([M, '--capacity=1048576', '--input=' + problem, '--output=/tmp/m.csv', '--timeout=60s'])
        times['MiniMalloc'].append(seconds)
        validate(problem, '/tmp/m.csv')
    rows.append((name, {k: statistics.median(v) for k, v in times.items()}, nodes))

first = variants[0][0]
head = ' | '.join(f'{k} s | nodes' for k, _ in variants)
print(f'| problem | {head} | MiniMalloc s | MiniMalloc / {first} |')
print('|---|' + '---|---|' * len(variants) + '---|---|')
for name, median, nodes in rows:
    cells = ' | '.join(f'{median[k]:.3f} | {nodes[k]}' for k, _ in variants)
    print(f"| {name} | {cells} | {median['MiniMalloc']:.2f} | {median['MiniMalloc'] / median[first]:.1f}x |")
total = {k: sum(r[1][k] for r in rows) for k in times}
cells = ' | '.join(f'{total[k]:.2f} | {sum(r[2][k] for r in rows)}' for k, _ in variants)
print(f"| total | {cells} | {total['MiniMalloc']:.2f} | {total['MiniMalloc'] / total[first]:.1f}x |")
