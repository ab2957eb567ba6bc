#!/usr/bin/env python3
"""The hard set side by side: for each problem, three rounds of telamalloc's default search,
the same with `--no edge-finding`, and MiniMalloc (the binary in MINIMALLOC, default
/work/mm-build/build/minimalloc, built by ../shared/tools/build-minimalloc.sh); every solution
is validated. Prints a Markdown table of median wall times and node counts.
Usage (from the repository root, after `cargo build --release`): python3 benches/side_by_side.py
"""
import subprocess, time, statistics, json, re, glob, os
T='target/release/telamalloc'; M=os.environ.get('MINIMALLOC','/work/mm-build/build/minimalloc')
rows=[]
for P in sorted(glob.glob('datasets/challenging/*.csv')):
    name=os.path.basename(P).split('.')[0]
    res={'ef':[], 'noef':[], 'mm':[]}; nodes={}
    for run in range(3):
        for key,extra in [('ef',[]),('noef',['--no','edge-finding'])]:
            t=time.perf_counter()
            r=subprocess.run([T,'solve',P,'-o','/tmp/t.csv','--stats','--timeout','60']+extra,capture_output=True,text=True)
            res[key].append(time.perf_counter()-t)
            nodes[key]=int(re.search(r'"nodes":(\d+)',r.stderr).group(1))
            v=subprocess.run([T,'validate',P,'/tmp/t.csv'],capture_output=True,text=True); assert v.returncode==0, v.stdout+v.stderr
        t=time.perf_counter()
        subprocess.run([M,'--capacity=1048576','--input='+P,'--output=/tmp/m.csv','--timeout=60s'],capture_output=True)
        res['mm'].append(time.perf_counter()-t)
        v=subprocess.run([T,'validate',P,'/tmp/m.csv'],capture_output=True,text=True); assert v.returncode==0, v.stdout+v.stderr
    med={k:statistics.median(v) for k,v in res.items()}
    rows.append((name,med,nodes))
tot={k:sum(r[1][k] for r in rows) for k in ['ef','noef','mm']}
print('| problem | default (edge finding) wall s | nodes | `--no edge-finding` wall s | nodes | MiniMalloc wall s | MiniMalloc / default |')
print('|---|---|---|---|---|---|---|')
for n,m,nd in rows: print(f"| {n} | {m['ef']:.3f} | {nd['ef']} | {m['noef']:.3f} | {nd['noef']} | {m['mm']:.2f} | {m['mm']/m['ef']:.1f}x |")
print(f"| total | {tot['ef']:.2f} | {sum(r[2]['ef'] for r in rows)} | {tot['noef']:.2f} | {sum(r[2]['noef'] for r in rows)} | {tot['mm']:.2f} | {tot['mm']/tot['ef']:.1f}x |")
