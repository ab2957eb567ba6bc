#!/usr/bin/env python3
"""A cactus plot of several `telamalloc eval` runs in one SVG: for each run, the problems decided
(up) within a time limit (across, log scale), so a curve further up and left decides more, sooner.

Usage (from the repository root):
    python3 benches/cactus.py NAME=DIR/eval.json [NAME=DIR/eval.json ...] -o OUT.svg [--title T]
Each eval.json is the `--out` of `telamalloc eval`; every policy in it is its own curve
(named NAME, or NAME/policy when the file has several).
"""
import argparse
import json
import math

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def curves(specs):
    out = []
    for spec in specs:
        name, path = spec.split("=", 1)
        with open(path) as f:
            runs = json.load(f)
        policies = sorted({r["policy"] for r in runs})
        for policy in policies:
            mine = [r for r in runs if r["policy"] == policy]
            times = sorted(r["seconds"] for r in mine if r["status"] != "limit")
            label = name if len(policies) == 1 else f"{name}/{policy}"
            out.append((label, times, len(mine)))
    return out


def svg(series, title):
    width, height, left, right, top, bottom = 720, 440, 70, 200, 40, 50
    lo, hi = 0.001, max(max((t[-1] for _, t, _ in series if t), default=1.0), 1.0)
    total = max(n for _, _, n in series)
    # The count axis starts below what every curve decides within 0.1 s (rounded down to 50),
    # so the curves' differences near the top are visible.
    floor = min(sum(1 for t in times if t <= 0.1) for _, times, _ in series) // 50 * 50
    def x(seconds):
        s = min(max(seconds, lo), hi)
        return left + (math.log10(s) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * (width - left - right)
    def y(count):
        return height - bottom - (max(count, floor) - floor) / (total - floor) * (height - top - bottom)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
             f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="black"/>']
    decade = lo
    while decade <= hi * 1.0001:
        parts.append(f'<line x1="{x(decade):.1f}" y1="{height - bottom}" x2="{x(decade):.1f}" y2="{height - bottom + 5}" stroke="black"/>')
        parts.append(f'<text x="{x(decade):.1f}" y="{height - bottom + 18}" text-anchor="middle">{decade:g}</text>')
        decade *= 10
    for k in range(5):
        count = round(floor + (total - floor) * k / 4)
        parts.append(f'<text x="{left - 8}" y="{y(count) + 4:.1f}" text-anchor="end">{count}</text>')
    parts.append(f'<text x="{(left + width - right) / 2}" y="{height - 12}" text-anchor="middle">time limit (s, log scale)</text>')
    parts.append(f'<text x="18" y="{(top + height - bottom) / 2}" text-anchor="middle" transform="rotate(-90 18 {(top + height - bottom) / 2})">problems decided (of {total})</text>')
    for i, (label, times, n) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        points = [(x(lo), y(0))]
        for k, t in enumerate(times):
            points += [(x(t), y(k)), (x(t), y(k + 1))]
        points.append((x(hi), y(len(times))))
        path = " ".join(f"{a:.1f},{b:.1f}" for a, b in points)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{path}"/>')
        parts.append(f'<line x1="{width - right + 10}" y1="{top + 20 * i + 6}" x2="{width - right + 30}" y2="{top + 20 * i + 6}" stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{width - right + 36}" y="{top + 20 * i + 10}">{label}: {len(times)}/{n}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", help="NAME=PATH/eval.json")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--title", default="problems decided within a time limit")
    args = parser.parse_args()
    with open(args.output, "w") as f:
        f.write(svg(curves(args.runs), args.title))


if __name__ == "__main__":
    main()
