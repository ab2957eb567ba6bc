#!/usr/bin/env python3
"""Builds a large problem from a whole-model problem by replicating it over "layers" in time.

Copy k of the model's buffers is shifted by k x STRIDE time steps, with STRIDE three quarters
of the model's horizon, so consecutive copies overlap (as the activations of consecutive blocks
of a deep network do); ids get a `@k` suffix. Deterministic; no capacity is written (use
`telamalloc solve --minimize`).

Usage: datasets/tools/replicate_layers.py MODEL.csv COPIES OUT.csv
"""
import csv
import sys


def main():
    source, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(source) as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    horizon = max(int(r["upper"]) for r in rows)
    stride = max(1, horizon * 3 // 4)
    with open(out, "w") as f:
        f.write("id,lower,upper,size\n")
        for k in range(copies):
            for r in rows:
                shift = k * stride
                f.write(f"{r['id']}@{k},{int(r['lower']) + shift},{int(r['upper']) + shift},{r['size']}\n")


if __name__ == "__main__":
    main()
