#!/usr/bin/env python3
"""Does a short first run of each strategy say which one to give more of the budget?

The default round robin (`fixed/WAT~/TAW~/TWA`) runs each strategy once with a budget of
4 x buffers nodes (round 0 of the Luby schedule; `WAT~` is plain `WAT` in its first run) before
any of them restarts. This script measures whether what those first runs show (deepest
placement, backtracks, node-cache hits) predicts which strategy to favour afterwards.

  probe_schedule.py probe SPLIT_LIST OUT.jsonl
      runs each of fixed, WAT, TAW, TWA on every problem of SPLIT_LIST for 4 x buffers nodes
      (`telamalloc solve --policy S --nodes 4n --stats`) and writes their counters;
  probe_schedule.py analyse
      replays, from the races (each strategy alone to 50,000 nodes, logs/races-s8) and the
      probes, the round robin with round 0 as it is and, from round 1, one strategy given
      LEAD runs per round; compares the equal round robin, rules over the probe counters, the
      per-problem oracle, and a cost-sensitive linear chooser trained on effort-train-fifth and
      applied to validation-sample80.

Run from the repository root after `cargo build --release` and the races of benches/ARCHIVE.md ("The former `policy.json` card").
"""
import itertools, json, os, re, subprocess, sys
from multiprocessing import Pool

import numpy as np

TELAMALLOC = 'target/release/telamalloc'
RACES = 'logs/races-s8/'
PROBES = 'logs/probes/'
DEFAULT = ['fixed', 'WAT~', 'TAW~', 'TWA']
# Round 0 of each default strategy is its plain order.
FIRST_RUN = {'fixed': 'fixed', 'WAT~': 'WAT', 'TAW~': 'TAW', 'TWA': 'TWA'}
SETS = {
    'effort-train-fifth': (['train-fifth', 'train-fifth-watd'], 'effort-train-fifth.jsonl'),
    'validation-sample80': (['v80', 'v80-watd'], 'validation-sample80.jsonl'),
}


def buffers(path):
    with open(path) as f:
        return max(sum(1 for line in f if line.strip()) - 1, 16)


def probe_one(path):
    n = buffers(path)
    out = {'problem': path, 'n': n}
    for strategy in FIRST_RUN.values():
        run = subprocess.run([TELAMALLOC, 'solve', path, '--policy', strategy, '--nodes', str(4 * n),
                              '--stats', '-o', '/dev/null'], capture_output=True, text=True)
        found = re.search(r'stats: (\{.*\})', run.stderr)
        stats = json.loads(found.group(1)) if found else {}
        out[strategy] = {k: stats.get(k) or 0 for k in ['nodes', 'minor_backtracks', 'deepest', 'cache_hits']}
    return out


def probe(split_list, out_path):
    files = [line.strip() for line in open(split_list) if line.strip()]
    os.makedirs(os.path.dirname(out_path) or '.', exist_ok=True)
    with Pool(2) as pool, open(out_path, 'w') as out:
        for row in pool.imap(probe_one, files):
            out.write(json.dumps(row) + '\n')


def luby(i):
    i = max(i, 1)
    while True:
        k = i.bit_length()
        if i == (1 << k) - 1:
            return 1 << (k - 1)
        i -= (1 << (k - 1)) - 1


def load(race_dirs, probe_file):
    """Per problem: nodes each strategy alone needs (inf when undecided at 50,000) and the probes."""
    need = {}
    for d in race_dirs:
        for r in json.load(open(RACES + d + '/eval.json')):
            need.setdefault(os.path.basename(r['problem']), {})[r['policy']] = (
                r['nodes'] if r['status'] != 'limit' else float('inf'))
    probes = {}
    for line in open(PROBES + probe_file):
        row = json.loads(line)
        probes[os.path.basename(row['problem'])] = row
    keys = sorted(k for k, v in need.items() if all(s in v for s in DEFAULT) and k in probes)
    return [(need[k], probes[k]) for k in keys]


def replay(need, n, lead_strategy, lead, limit):
    """Nodes the round robin spends until a strategy decides (None past `limit`): round 0 runs
    each strategy once; later rounds give `lead_strategy` `lead` runs each and the others one.
    A strategy's runs are its runs alone (its node cache is its own), so strategy s decides in
    the run where its own budgets first reach need[s]."""
    unit = max(n, 16)
    spent, own, runs = 0, {s: 0 for s in DEFAULT}, {s: 0 for s in DEFAULT}
    for r in range(400):
        sequence = list(DEFAULT) if r == 0 else [
            s for p in range(lead) for s in DEFAULT if (lead if s == lead_strategy else 1) > p]
        for s in sequence:
            budget = unit * 4 * luby(runs[s] + 1)
            if need[s] <= own[s] + budget:
                total = spent + need[s] - own[s]
                return total if total <= limit else None
            spent += budget
            own[s] += budget
            runs[s] += 1
            if spent >= limit:
                return None
    return None


CHOICES = [None] + DEFAULT


def features(probe, n):
    """One row per choice: 'equal' (its bias only) and one per strategy favoured."""
    deep = np.array([probe[FIRST_RUN[s]]['deepest'] for s in DEFAULT], float)
    backtracks = np.array([probe[FIRST_RUN[s]]['minor_backtracks'] for s in DEFAULT], float)
    cache = np.array([probe[FIRST_RUN[s]]['cache_hits'] for s in DEFAULT], float)
    nodes = np.array([max(probe[FIRST_RUN[s]]['nodes'], 1) for s in DEFAULT], float)
    rows = [np.eye(12)[0]]
    for k in range(4):
        f = np.zeros(12)
        f[1 + k] = 1
        f[5:12] = [deep[k] / n, deep[k] / max(deep.max(), 1), deep[k] == deep.max(),
                   backtracks[k] / nodes[k], cache[k] / nodes[k], cache[k] == cache.max(),
                   backtracks[k] == backtracks.min()]
        rows.append(f)
    return np.array(rows)


def table(problems, limit, lead):
    X, C = [], []
    for need, probe in problems:
        costs = [replay(need, probe['n'], c, lead if c else 1, limit) for c in CHOICES]
        C.append([2 * limit if c is None else c for c in costs])
        X.append(features(probe, probe['n']))
    return np.array(X), np.array(C, float)


def train(X, C, l2=1e-4, steps=4000, rate=5.0):
    """Softmax over the choices, minimising the expected PAR2 cost (scaled to at most 1)."""
    R = C / C.max()
    w = np.zeros(X.shape[2])
    for _ in range(steps):
        s = X @ w
        p = np.exp(s - s.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        expected = (p * R).sum(1, keepdims=True)
        w -= rate * (((p * (R - expected))[:, :, None] * X).sum((0, 1)) / len(X) + l2 * w)
    return w


def summary(costs, limit):
    return f'{int((costs < 2 * limit).sum()):4d} decided, PAR2 {costs.mean():9,.0f}'


def analyse():
    data = {name: load(*spec) for name, spec in SETS.items()}
    for limit in [40000, 100000]:
        for lead in [2, 4]:
            print(f'## limit {limit:,} nodes, lead {lead}')
            tables = {name: table(problems, limit, lead) for name, problems in data.items()}
            w = train(*tables['effort-train-fifth'])
            for name, (X, C) in tables.items():
                picks = (X @ w).argmax(1)
                print(f'{name}:')
                print(f'  equal round robin         {summary(C[:, 0], limit)}')
                for label, column in [('deepest probe', 6), ('most cache hits', 10), ('fewest backtracks', 11)]:
                    pick = 1 + X[:, 1:, column].argmax(1)  # first strategy with the property
                    print(f'  lead to {label:17s} {summary(C[np.arange(len(C)), pick], limit)}')
                print(f'  learned chooser           {summary(C[np.arange(len(C)), picks], limit)}'
                      f'  (picks {np.bincount(picks, minlength=5).tolist()} of equal/{"/".join(DEFAULT)})')
                print(f'  oracle                    {summary(C.min(1), limit)}')


if __name__ == '__main__':
    if sys.argv[1:2] == ['probe']:
        probe(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ['analyse']:
        analyse()
    else:
        sys.exit(__doc__)
