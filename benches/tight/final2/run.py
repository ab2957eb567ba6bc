# The final evaluation of issue 13 (second attempt) on tight-test-2: per problem, the four
# telamalloc configurations in turn (so whatever else runs hits them alike), each with
# `eval FILE --policies portfolio --timeout 10 --threads 1 [--with cpsat]`.
# Usage, from the repository root:
#   python3 benches/tight/final2/run.py BIN_886c7e1 BIN_fb23415 BIN_NEW OUT_DIR
# writes OUT_DIR/{base,prev,new,withcpsat}.eval.json and OUT_DIR/progress.log.
import json, os, subprocess, sys, time
base_bin, prev_bin, new_bin, out_dir = sys.argv[1:5]
files = [l.strip() for l in open('datasets/splits/tight-test-2.txt') if l.strip()]
configs = [('base', base_bin, []), ('prev', prev_bin, []), ('new', new_bin, []),
           ('withcpsat', new_bin, ['--with', 'cpsat'])]
out = {name: [] for name, _, _ in configs}
os.makedirs(out_dir, exist_ok=True)
log = open(os.path.join(out_dir, 'progress.log'), 'a')
for i, f in enumerate(files):
    for name, binary, extra in configs:
        one = os.path.join(out_dir, f'one.{name}')
        subprocess.run([binary, 'eval', f, '--policies', 'portfolio', '--timeout', '10',
                        '--threads', '1', '--out', one] + extra,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        runs = json.load(open(os.path.join(one, 'eval.json')))
        out[name] += runs
        r = runs[0]
        log.write(f"{time.strftime('%H:%M:%S')} {i} {name} {r['problem']} {r['status']} "
                  f"{r['seconds']:.2f} load {os.getloadavg()[0]:.2f}\n")
        log.flush()
    for name in out:
        json.dump(out[name], open(os.path.join(out_dir, f'{name}.eval.json'), 'w'))
log.write('done\n')
