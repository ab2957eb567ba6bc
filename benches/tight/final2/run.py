# Final evaluation on tight-test-2: per problem, the four telamalloc configurations in turn (so
# load affects them alike), each with `eval --policies portfolio --timeout 10 --threads 1`.
import json, os, subprocess, sys, time
os.chdir('/work/main')
files=[l.strip() for l in open('datasets/splits/tight-test-2.txt') if l.strip()]
configs=[('base','/tmp/f2/tm-base',[]),('prev','/tmp/f2/tm-fb23415',[]),('new','/tmp/f2/tm-new',[]),('withcpsat','/tmp/f2/tm-new',['--with','cpsat'])]
out={c[0]:[] for c in configs}
log=open('/tmp/f2/progress.log','a')
for i,f in enumerate(files):
    for name,binary,extra in configs:
        d=f'/tmp/f2/one.{name}'
        subprocess.run([binary,'eval',f,'--policies','portfolio','--timeout','10','--threads','1','--out',d]+extra,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL,check=True)
        r=json.load(open(f'{d}/eval.json'))
        out[name]+=r
        log.write(f"{time.strftime('%H:%M:%S')} {i} {name} {r[0]['problem']} {r[0]['status']} {r[0]['seconds']:.2f} load {os.getloadavg()[0]:.2f}\n"); log.flush()
    for name in out:
        json.dump(out[name],open(f'/tmp/f2/{name}.eval.json','w'))
log.write('done\n')
