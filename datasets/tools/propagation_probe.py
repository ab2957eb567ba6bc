#!/usr/bin/env python3
"""A probe, not part of the tool: a small Python model of our search's core (canonical bottom-up
placement: each buffer at the top of its placed neighbours, lowest offset first, ties by the fixed
order; dominance; section inference with the lowest possible offset) plus 1-D disjunctive
propagation over the address intervals of each maximal clique of live buffers, each rule behind
a switch, to count the nodes each rule saves before porting it to the Rust search.

It leaves out zero-slack covers, floor tiling, decomposition, twins, caches and restarts, so
its base search is weaker than ours: compare its rules with each other, not with `telamalloc`.

Usage (from the repository root):
  python3 datasets/tools/propagation_probe.py RULES NODE_LIMIT P.CAPACITY.csv [...]
RULES: `base`, or a comma-separated set of
  dp   detectable precedences (a buffer's lowest offset rises above the buffers that cannot go
       above it: latest start of v < earliest end of u),
  mdp  the same from the top (latest starts fall below the buffers that must go above),
  ov   overload over windows [lowest offset, latest end] (every pair of window bounds),
  ef   edge finding over the same windows, from below and from the top (eff: from below
       only; efm: from the top only).
Prints per problem: solved / infeasible / cap (node limit), the deepest placement count, nodes.
"""
import csv, sys, time

sys.setrecursionlimit(100000)


def load(path):
    bufs = []
    for r in csv.DictReader(open(path)):
        bufs.append((int(r['lower']), int(r['upper']), int(r['size'])))
    return bufs


def run(path, cap, rules, node_cap):
    bufs = load(path)
    n = len(bufs)
    lo = [b[0] for b in bufs]; hi = [b[1] for b in bufs]; p = [b[2] for b in bufs]
    order = sorted(range(n), key=lambda i: (-(hi[i] - lo[i]), -p[i], -(hi[i] - lo[i]) * p[i], i))
    rank = [0] * n
    for r, i in enumerate(order):
        rank[i] = r
    # maximal cliques: at each start point t where the next event is not another start
    starts = sorted(set(lo))
    cliques = []
    for t in starts:
        members = tuple(i for i in range(n) if lo[i] <= t < hi[i])
        cliques.append(members)
    # keep maximal ones only
    sets = [frozenset(c) for c in cliques]
    maximal = []
    for i, c in enumerate(sets):
        if not any(c < d for d in sets):
            if c not in [frozenset(m) for m in maximal]:
                maximal.append(tuple(sorted(c)))
    cliques = maximal
    of = [[] for _ in range(n)]
    for k, c in enumerate(cliques):
        for i in c:
            of[i].append(k)
    nbrs = [set() for _ in range(n)]
    for c in cliques:
        for i in c:
            nbrs[i].update(c)
    for i in range(n):
        nbrs[i].discard(i)
    pos = [None] * n
    nodes = [0]
    deep = [0]
    t0 = time.time()

    def propagate(bound):
        lb = [0] * n; ub = [0] * n
        top = [0] * n
        for i in range(n):
            if pos[i] is None:
                t = 0
                for j in nbrs[i]:
                    if pos[j] is not None:
                        e = pos[j] + p[j]
                        if e > t:
                            t = e
                top[i] = t
                lb[i] = max(t, bound)
                ub[i] = cap - p[i]
                if lb[i] > ub[i]:
                    return None
        changed = True
        rounds = 0
        while changed:
            changed = False
            rounds += 1
            for c in cliques:
                U = [i for i in c if pos[i] is None]
                if not U:
                    continue
                # base: min lb + load <= cap
                m = min(lb[i] for i in U)
                load = sum(p[i] for i in U)
                if m + load > cap:
                    return None
                if 'dp' in rules:
                    for u in U:
                        preds = [v for v in U if v != u and lb[u] + p[u] > ub[v]]
                        if preds:
                            preds.sort(key=lambda v: lb[v])
                            ect = 0
                            for v in preds:
                                ect = max(ect, lb[v]) + p[v]
                            if ect > lb[u]:
                                lb[u] = ect; changed = True
                                if lb[u] > ub[u]:
                                    return None
                if 'mdp' in rules:
                    for u in U:
                        succs = [v for v in U if v != u and ub[u] < lb[v] + p[v]]
                        if succs:
                            succs.sort(key=lambda v: -(ub[v] + p[v]))
                            lst = None
                            for v in succs:
                                e = ub[v] + p[v] if lst is None else min(lst, ub[v] + p[v])
                                lst = e - p[v]
                            if lst - p[u] < ub[u]:
                                ub[u] = lst - p[u]; changed = True
                                if lb[u] > ub[u]:
                                    return None
                if 'ef' in rules or 'eff' in rules or 'efm' in rules:
                    fwd = 'ef' in rules or 'eff' in rules
                    mir = 'ef' in rules or 'efm' in rules
                    # Edge finding over windows [e, l]: the buffers of U inside the window (set W)
                    # and a buffer u outside it. If u cannot go below W (W's start plus all sizes
                    # overflows l), u goes above: lb_u >= e + p(W). If u cannot go above W (the
                    # sizes overflow below l from the top), u goes below: ub_u <= l - p(W) - p_u.
                    lows = sorted(set(lb[i] for i in U))
                    highs = sorted(set(ub[i] + p[i] for i in U))
                    for e in lows:
                        for l in highs:
                            if l <= e:
                                continue
                            W = [i for i in U if lb[i] >= e and ub[i] + p[i] <= l]
                            if not W:
                                continue
                            pw = sum(p[i] for i in W)
                            if e + pw > l:
                                return None
                            inside = set(W)
                            for u in U:
                                if u in inside:
                                    continue
                                if min(e, lb[u]) + pw + p[u] > max(l, ub[u] + p[u]):
                                    return None
                                if fwd and min(e, lb[u]) + pw + p[u] > l and e + pw > lb[u]:
                                    # u cannot end by l together with W: it ends after W's start
                                    # ... u goes above W
                                    lb[u] = e + pw; changed = True
                                    if lb[u] > ub[u]:
                                        return None
                                if mir and max(l, ub[u] + p[u]) - pw - p[u] < e and l - pw - p[u] < ub[u]:
                                    ub[u] = l - pw - p[u]; changed = True
                                    if lb[u] > ub[u]:
                                        return None
                if 'ov' in rules:
                    lows = sorted(set(lb[i] for i in U))
                    highs = sorted(set(ub[i] + p[i] for i in U))
                    for a in lows:
                        for b in highs:
                            if b <= a:
                                continue
                            s = sum(p[i] for i in U if lb[i] >= a and ub[i] + p[i] <= b)
                            if s > b - a:
                                return None
        return lb, ub, top

    def dfs(bound, brank, placed):
        nodes[0] += 1
        deep[0] = max(deep[0], placed)
        if nodes[0] > node_cap:
            raise TimeoutError
        if placed == n:
            return True
        res = propagate(bound)
        if res is None:
            return False
        lb, ub, top = res
        unplaced = [i for i in range(n) if pos[i] is None]
        min_height = min(lb[i] + p[i] for i in unplaced)
        cands = []
        for i in unplaced:
            o = top[i]
            if o < bound or (o == bound and rank[i] < brank):
                continue
            if o < lb[i]:
                continue  # propagation: cannot start here
            if o >= min_height:
                continue
            cands.append((o, rank[i], i))
        cands.sort()
        for o, r, i in cands:
            pos[i] = o
            if dfs(o, r, placed + 1):
                return True
            pos[i] = None
        return False

    try:
        ok = dfs(0, -1, 0)
        status = 'solved' if ok else 'infeasible'
        if ok:
            for i in range(n):
                for j in nbrs[i]:
                    assert pos[i] + p[i] <= pos[j] or pos[j] + p[j] <= pos[i]
                assert pos[i] + p[i] <= cap
    except TimeoutError:
        status = 'cap'
    return status + f" deep={deep[0]}", nodes[0], time.time() - t0


if __name__ == '__main__':
    rules = set(sys.argv[1].split(',')) if sys.argv[1] != 'base' else set()
    node_cap = int(sys.argv[2])
    for path in sys.argv[3:]:
        cap = int(path.rsplit('.', 2)[-2])
        st, nd, t = run(path, cap, rules, node_cap)
        print(f"{path.split('/')[-1]} rules={sys.argv[1]} {st} nodes={nd} {t:.1f}s", flush=True)
