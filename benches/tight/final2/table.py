# The final evaluation of issue 13 on tight-test-2: decided problems per family for the five runs
# of benches/tight/final2 (usage, from the repository root: python3 benches/tight/final2/table.py [rows])
import json, csv, os, sys, statistics
here = 'benches/tight/final2'
man = 'datasets/splits/tight-test-2-manifest.csv'
fam = {os.path.basename(r['file']): r['family'] for r in csv.DictReader(open(man))}
def ev(p):
    return {r['problem']: (r['status'] in ('solved', 'infeasible'), r['seconds'], r['status'])
            for r in json.load(open(f'{here}/{p}'))}
def cp(p):
    return {os.path.basename(r['file']): (r['decided'] == '1', float(r['solve_wall_s'] or 0), r['status'])
            for r in csv.DictReader(open(f'{here}/{p}'))}
base, prev, new = ev('base.eval.json'), ev('prev.eval.json'), ev('new.eval.json')
wc, c2 = ev('withcpsat.eval.json'), cp('cpsat.w2.csv')
cols = [('today (886c7e1)', base), ('last session (fb23415)', prev), ('default now', new),
        ('`--with cpsat`', wc), ('CP-SAT 2w', c2)]
print('| family | problems | ' + ' | '.join(n for n, _ in cols)
      + ' | undecided today | now decides of those | now loses | `--with cpsat` >= CP-SAT 2w and today? |')
print('|---|---|' + '---|' * len(cols) + '---|---|---|---|')
for f in sorted(set(fam.values())) + ['all']:
    ps = [p for p in fam if f == 'all' or fam[p] == f]
    cnt = [sum(d.get(p, (False,))[0] for p in ps) for _, d in cols]
    und = [p for p in ps if not base[p][0]]
    won = sum(new[p][0] for p in und)
    lost = sum(1 for p in ps if base[p][0] and not new[p][0])
    ok = cnt[3] >= cnt[4] and cnt[3] >= cnt[0]
    b = '**' if f == 'all' else ''
    print(f'| {b}{f}{b} | {len(ps)} | ' + ' | '.join(f'{b}{c}{b}' for c in cnt)
          + f' | {len(und)} | {won} | {lost} | {"yes" if ok else "**no**"} |')
print()
for n, d in cols:
    ts = [v[1] for v in d.values() if v[0]]
    print(f'{n}: median {statistics.median(ts):.3f} s over the decided, {sum(v[1] for v in d.values()):.0f} s in all')
if len(sys.argv) > 1:
    for p in sorted(fam):
        print(p, fam[p], *[('%s %.2f' % ('D' if d[p][0] else '-', d[p][1])) for _, d in cols])
