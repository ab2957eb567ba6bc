#!/usr/bin/env python3
"""Summarises benches/spill_corpus.sh output: on how many problems spill keeps more bytes than
greedy admission, and how many more. Usage: python3 benches/spill_summary.py OUT.csv"""
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kept"].isdigit()]
n = len(rows)
more = sum(int(r["kept"]) > int(r["greedy"]) for r in rows)
less = sum(int(r["kept"]) < int(r["greedy"]) for r in rows)
full = sum(int(r["kept"]) == int(r["total"]) for r in rows)
gfull = sum(int(r["greedy"]) == int(r["total"]) for r in rows)
k, g, t = (sum(int(r[c]) for r in rows) for c in ("kept", "greedy", "total"))
gain = sorted((int(r["kept"]) - int(r["greedy"])) / int(r["greedy"]) for r in rows)
print(f"{n} problems: spill keeps more on {more}, as much on {n - more - less}, less on {less}; "
      f"all bytes on {full} (greedy {gfull}); kept {k} vs {g} of {t} bytes "
      f"(+{k - g}, +{100 * (k - g) / g:.2f}%); per problem median +{100 * gain[n // 2]:.2f}%, "
      f"max +{100 * gain[-1]:.2f}%; slowest {max(float(r['seconds']) for r in rows):.3f} s")
