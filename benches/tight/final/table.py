# The final evaluation of issue 13 on tight-test: decided problems per family for the four runs
# of benches/tight/final (usage, from the repository root: python3 benches/tight/final/table.py [rows])
import json,csv,os,sys,statistics
man='datasets/splits/tight-test-manifest.csv'
fam={os.path.basename(r['file']):r['family'] for r in csv.DictReader(open(man))}
def ev(p):
    d={}
    for r in json.load(open(p)):
        d[r['problem']]=(r['status'] in ('solved','infeasible'), r['seconds'], r['status'], r.get('nodes'))
    return d
def cp(p):
    d={}
    for r in csv.DictReader(open(p)):
        d[os.path.basename(r['file'])]=(r['decided']=='1', float(r['solve_wall_s'] or 0), r['status'], None)
    return d
base=ev('benches/tight/final/base.eval.json'); new=ev('benches/tight/final/new.eval.json')
wc=ev('benches/tight/final/withcpsat.eval.json'); c2=cp('benches/tight/final/cpsat.w2.csv')
cols=[('today (before)',base),('default now',new),('`--with cpsat`',wc),('CP-SAT 2w',c2)]
fams=sorted(set(fam.values()))
print('| family | problems | '+' | '.join(n for n,_ in cols)+' | before: undecided | now decides of those | now loses | `--with cpsat` >= both? |')
print('|---|---|'+'---|'*len(cols)+'---|---|---|---|')
for f in fams+['all']:
    ps=[p for p in fam if f=='all' or fam[p]==f]
    cnt=[sum(d.get(p,(False,))[0] for p in ps) for _,d in cols]
    und=[p for p in ps if not base[p][0]]
    won=sum(new[p][0] for p in und)
    lost=sum(1 for p in ps if base[p][0] and not new[p][0])
    ok = cnt[2]>=cnt[3] and cnt[2]>=cnt[0]
    print(f'| {f} | {len(ps)} | '+' | '.join(map(str,cnt))+f' | {len(und)} | {won} | {lost} | {"yes" if ok else "**no**"} |')
# medians
print()
for n,d in cols:
    ts=[v[1] for v in d.values() if v[0]]
    print(n, 'median s over decided', round(statistics.median(ts),3) if ts else None, 'infeasible', sum(1 for v in d.values() if v[2] in ('infeasible','INFEASIBLE')))
if len(sys.argv)>1:
    for p in sorted(fam):
        print(p, fam[p], *[('%s %.2f'%('D' if d[p][0] else '-', d[p][1])) for _,d in cols])
