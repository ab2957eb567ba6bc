#!/usr/bin/env python3
"""Runs telamalloc's plans in TensorFlow Lite Micro (verification; needs `pip install tflite-micro`).

    python3 datasets/tools/tflm_check.py [MODEL.tflite ...] [--markdown] [--timeout S] [--reorder]

For each model: `telamalloc import --alignment 16` -> `telamalloc solve --minimize` ->
`telamalloc export-plan`, then TFLite Micro (the `tflite-micro` package's host interpreter) runs
the original and the planned model on the same random inputs. The outputs must be identical.
It also reports what each needs: the planned (non-persistent, "head") section TFLite Micro
records, and the smallest `arena_size` the interpreter accepts (binary search to 16 bytes; at
that size the outputs must still match). A control run moves every planned tensor to offset 0
and checks that the head section shrinks or the outputs change: the runtime really reads the
plan.

With `--reorder` it also runs `telamalloc plan` (operators reordered for the smallest LOAD, then
laid out and planned) and checks that model the same way: identical outputs, the plan read; and
reports LOAD in the model's order and in the new one, the reordering's time, and the smallest
arena of the reordered, planned model next to TFLite Micro's own planner on the original.

With no model given it checks the package's own `sine_float.tflite`. The binary is
`$TELAMALLOC`, else `target/release/telamalloc` (built first with cargo if missing).
Exit code 0 when every model matches, 1 otherwise (a model TFLite Micro cannot allocate or run
is reported with TFLite Micro's own reason, and the others are still checked), 2 on bad usage.
"""

import argparse
import contextlib
import csv
import ctypes
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
BIG_ARENA = 64 << 20
PLAN_NAME = b"OfflineMemoryAllocation"


def runtime():
    from tflite_micro.python.tflite_micro import runtime as rt

    return rt


def package_model():
    """The sine model the tflite-micro package ships."""
    import tflite_micro

    return Path(tflite_micro.__file__).parent / "python" / "tflite_micro" / "sine_float.tflite"


@contextlib.contextmanager
def captured():
    """Captures what C code writes to stdout and stderr; yields a function returning it."""
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        text = []
        try:
            yield lambda: "".join(text)
        finally:
            libc.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            text.append(sink.read().decode(errors="replace"))


class Refused(Exception):
    """TFLite Micro cannot allocate or run a model; the message holds its own reason."""


def opened(path, arena_size):
    """TFLite Micro's interpreter of `path` with an `arena_size`-byte arena; Refused, with what
    TFLite Micro printed, when it cannot allocate the model."""
    failure = None
    with captured() as text:
        try:
            interpreter = runtime().Interpreter.from_file(str(path), arena_size=arena_size)
        except Exception as e:  # the binding raises a bare RuntimeError; the reason is printed
            failure = e
    if failure is not None:
        raise Refused(reason(path, arena_size, text(), failure))
    return interpreter


def reason(path, arena_size, printed, failure):
    """Why TFLite Micro refused `path`: what it printed, else the exception."""
    said = " ".join(printed.split()) or str(failure) or type(failure).__name__
    return f"{path}: TFLite Micro cannot run it with a {arena_size}-byte arena: {said}"


def details(getter):
    """Every input's (or output's) details, in order."""
    found = []
    while True:
        try:
            found.append(getter(len(found)))
        except Exception:  # the binding raises past the last index
            return found


def random_inputs(path, seed):
    rng = np.random.default_rng(seed)
    interpreter = opened(path, BIG_ARENA)
    with captured():
        input_details = details(interpreter.get_input_details)
    inputs = []
    for d in input_details:
        dtype = np.dtype(d["dtype"])
        if dtype.kind == "f":
            inputs.append(rng.uniform(-1, 1, d["shape"]).astype(dtype))
        elif dtype.kind in "iu":
            info = np.iinfo(dtype)
            inputs.append(rng.integers(info.min, info.max, d["shape"], endpoint=True).astype(dtype))
        elif dtype.kind == "b":
            inputs.append(rng.integers(0, 1, d["shape"], endpoint=True).astype(dtype))
        else:
            raise SystemExit(f"{path}: input of type {dtype} is not supported by this script")
    return inputs


def run(path, arena_size, inputs):
    """The outputs of one inference; Refused, with TFLite Micro's reason, when it cannot run."""
    interpreter = opened(path, arena_size)
    failure = None
    with captured() as text:
        try:
            for k, x in enumerate(inputs):
                interpreter.set_input(x, k)
            interpreter.invoke()
            count = len(details(interpreter.get_output_details))
            outputs = [np.array(interpreter.get_output(k), copy=True) for k in range(count)]
        except Exception as e:
            failure = e
    if failure is not None:
        raise Refused(reason(path, arena_size, text(), failure))
    return outputs


def run_or_none(path, arena_size, inputs):
    """The outputs of one inference, or None when TFLite Micro refuses (a probe, a control)."""
    try:
        return run(path, arena_size, inputs)
    except Refused:
        return None


def same(a, b):
    return (
        a is not None
        and b is not None
        and len(a) == len(b)
        and all(x.shape == y.shape and x.dtype == y.dtype and x.tobytes() == y.tobytes()
                for x, y in zip(a, b))
    )


def allocations(path):
    """The non-persistent ("head") section and the whole arena use TFLite Micro's recording
    allocator reports."""
    interpreter = opened(path, BIG_ARENA)
    with captured() as text:
        interpreter.print_allocations()
    found = {}
    for line in text().splitlines():
        for key in ("head", "total"):
            if f"Arena allocation {key}" in line:
                found[key] = int(line.split()[-2])
    if len(found) != 2:
        raise SystemExit(f"{path}: print_allocations() did not report the head and total")
    return found["head"], found["total"]


def probe(path, arena_size, inputs_file, work):
    """The outputs at `arena_size`, run in a child process: TFLite Micro's host interpreter
    can crash (not raise) when the arena is too small. None when it refuses or crashes."""
    out = work / "probe.npz"
    out.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, __file__, "--probe", str(path), str(arena_size), str(inputs_file),
         str(out)],
        capture_output=True,
    )
    if done.returncode != 0:
        return None
    with np.load(out) as outputs:
        return [outputs[f"o{k}"] for k in range(len(outputs.files))]


def probe_main(path, arena_size, inputs_file, out):
    with np.load(inputs_file) as saved:
        inputs = [saved[f"i{k}"] for k in range(len(saved.files))]
    outputs = run_or_none(path, int(arena_size), inputs)
    if outputs is None:
        return 3
    np.savez(out, **{f"o{k}": o for k, o in enumerate(outputs)})
    return 0


def smallest_arena(path, inputs_file, expected, total, work):
    """The smallest arena_size (to 16 bytes) at which the outputs are still `expected`,
    searched near the arena use the allocator recorded (`total`)."""
    high = (total + 15) // 16 * 16
    while not same(probe(path, high, inputs_file, work), expected):
        high *= 2
        if high > BIG_ARENA:
            return None
    low = max(total - 16, 0) // 16 * 16
    if low == 0 or same(probe(path, low, inputs_file, work), expected):
        low = 0
    while high - low > 16:
        middle = (low + high) // 2 // 16 * 16
        if same(probe(path, middle, inputs_file, work), expected):
            high = middle
        else:
            low = middle
    return high


def sabotaged(planned, out):
    """A copy of `planned` with every planned offset set to 0 (read with Google's own
    FlatBuffers reader, generated from the TFLite schema); returns how many were moved."""
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

    data = bytearray(planned.read_bytes())
    model = schema.Model.GetRootAs(data, 0)
    index = [model.Metadata(k).Buffer() for k in range(model.MetadataLength())
             if model.Metadata(k).Name() == PLAN_NAME]
    if not index:
        raise SystemExit(f"{planned}: no {PLAN_NAME.decode()} metadata")
    words = model.Buffers(index[-1]).DataAsNumpy().view("<i4")  # a view into `data`
    offsets = words[3:]
    moved = int(np.count_nonzero(offsets != -1))
    offsets[offsets != -1] = 0
    out.write_bytes(bytes(data))
    return moved


def telamalloc_binary():
    if os.environ.get("TELAMALLOC"):
        return os.environ["TELAMALLOC"]
    binary = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release" / "telamalloc"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    return str(binary)


def telamalloc(binary, *args):
    done = subprocess.run([binary, *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"telamalloc {' '.join(map(str, args))} failed:\n{done.stderr}")
    return done.stderr


def peak_and_load(problem_csv, solution_csv):
    """Buffers, the solution's peak and the problem's LOAD."""
    with open(solution_csv) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    peak = max(int(r["offset"]) + int(r["size"]) for r in rows)
    with open(problem_csv) as f:
        buffers = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    horizon = max(int(b["upper"]) for b in buffers)
    live = [0] * horizon
    for b in buffers:
        for t in range(int(b["lower"]), int(b["upper"])):
            live[t] += int(b["size"])
    return len(rows), peak, max(live)


def problem_load(problem_csv):
    """The LOAD of a problem CSV."""
    with open(problem_csv) as f:
        buffers = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]
    horizon = max(int(b["upper"]) for b in buffers)
    live = [0] * horizon
    for b in buffers:
        for t in range(int(b["lower"]), int(b["upper"])):
            live[t] += int(b["size"])
    return max(live)


def check_reordered(model, binary, work, timeout, inputs, inputs_file, reference):
    """`telamalloc plan` on `model`, then the reordered, planned model in TFLite Micro."""
    name = model.stem
    reordered = work / f"{name}.reordered.tflite"
    said = telamalloc(binary, "plan", model, "-o", reordered, "--timeout", 2 * timeout)
    summary = next(line for line in said.splitlines() if line.startswith("reordered "))
    seconds = float(summary.rsplit(", ", 1)[1].split()[0])
    problem = work / f"{name}.reordered.csv"
    telamalloc(binary, "import", reordered, "--alignment", 16, "-o", problem)
    outputs = run(reordered, BIG_ARENA, inputs)
    control = work / f"{name}.reordered.overlapping.tflite"
    moved = sabotaged(reordered, control)
    head, total = allocations(reordered)
    return {
        "load_reordered": problem_load(problem),
        "proven": "proven minimal" in summary,
        "reorder_seconds": seconds,
        "head_reordered": head,
        "arena_reordered": smallest_arena(reordered, inputs_file, reference, total, work),
        "identical_reordered": same(reference, outputs),
        "plan_read_reordered": moved > 0 and (allocations(control)[0] < head
                                              or not same(reference, run_or_none(
                                                  control, BIG_ARENA, inputs))),
    }


def check(model, binary, work, timeout, seed, reorder=False):
    name = model.stem
    problem = work / f"{name}.csv"
    solution = work / f"{name}.solution.csv"
    planned = work / f"{name}.planned.tflite"
    telamalloc(binary, "import", model, "--alignment", 16, "-o", problem)
    telamalloc(binary, "solve", problem, "--minimize", "--timeout", timeout, "-o", solution)
    telamalloc(binary, "export-plan", model, solution, "-o", planned)
    buffers, peak, load = peak_and_load(problem, solution)

    inputs = random_inputs(model, seed)
    reference = run(model, BIG_ARENA, inputs)
    with_plan = run_or_none(planned, BIG_ARENA, inputs)
    control = work / f"{name}.overlapping.tflite"
    moved = sabotaged(planned, control)
    control_outputs = run_or_none(control, BIG_ARENA, inputs)
    inputs_file = work / f"{name}.inputs.npz"
    np.savez(inputs_file, **{f"i{k}": x for k, x in enumerate(inputs)})
    head_tflm, total_tflm = allocations(model)
    head_plan, total_plan = allocations(planned)
    extra = {}
    if reorder:
        extra = check_reordered(model, binary, work, timeout, inputs, inputs_file, reference)
    return extra | {
        "model": name,
        "buffers": buffers,
        "load": load,
        "peak": peak,
        "head_tflm": head_tflm,
        "head_plan": head_plan,
        "arena_tflm": smallest_arena(model, inputs_file, reference, total_tflm, work),
        "arena_plan": smallest_arena(planned, inputs_file, reference, total_plan, work),
        "identical": same(reference, with_plan),
        # The runtime reads the plan: moving every planned tensor to 0 shrinks the head
        # section or changes the outputs.
        "plan_read": moved > 0 and (allocations(control)[0] < head_plan
                                    or not same(reference, control_outputs)),
    }


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--probe":
        return probe_main(*sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("models", nargs="*", type=Path)
    parser.add_argument("--timeout", type=float, default=10, help="solve --minimize time limit")
    parser.add_argument("--seed", type=int, default=0, help="for the random inputs")
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--reorder", action="store_true",
                        help="also check `telamalloc plan` (reordered operators)")
    args = parser.parse_args()
    try:
        runtime()
    except ImportError:
        print("tflite_micro is not installed: pip install tflite-micro", file=sys.stderr)
        return 2
    models = args.models or [package_model()]
    for model in models:
        if not model.is_file():
            print(f"{model}: no such file", file=sys.stderr)
            return 2
    binary = telamalloc_binary()
    results = []
    refusals = 0
    with tempfile.TemporaryDirectory() as work:
        for model in models:
            try:
                r = check(model, binary, Path(work), args.timeout, args.seed, args.reorder)
            except Refused as refused:
                print(f"error: {refused}", file=sys.stderr, flush=True)
                refusals += 1
                continue
            results.append(r)
            if not args.markdown:
                print(
                    f"{r['model']}: outputs {'identical' if r['identical'] else 'DIFFER'}; "
                    f"{r['buffers']} tensors planned, LOAD {r['load']}, telamalloc peak "
                    f"{r['peak']}; head: TFLM's planner {r['head_tflm']}, with the plan "
                    f"{r['head_plan']}; smallest arena: TFLM's planner {r['arena_tflm']}, "
                    f"with the plan {r['arena_plan']}; plan read by the runtime: "
                    f"{'yes' if r['plan_read'] else 'NO'}",
                    flush=True,
                )
                if args.reorder:
                    print(
                        f"{r['model']} reordered: outputs "
                        f"{'identical' if r['identical_reordered'] else 'DIFFER'}; LOAD "
                        f"{r['load']} -> {r['load_reordered']} "
                        f"({'proven minimal' if r['proven'] else 'not proven minimal'}, "
                        f"{r['reorder_seconds']:.3f} s); head {r['head_reordered']}; smallest "
                        f"arena: TFLM's planner {r['arena_tflm']}, with the plan "
                        f"{r['arena_plan']}, reordered with the plan {r['arena_reordered']}; "
                        f"plan read by the runtime: "
                        f"{'yes' if r['plan_read_reordered'] else 'NO'}",
                        flush=True,
                    )
    if args.markdown and args.reorder:
        print("| model | LOAD, model's order | LOAD, reordered | reorder time (s) | smallest arena, "
              "TFLM's planner | smallest arena, telamalloc's plan | smallest arena, reordered + "
              "plan | outputs | plan read |")
        print("|---|---:|---:|---:|---:|---:|---:|---|---|")
        for r in results:
            proven = "" if r["proven"] else " (not proven minimal)"
            print(f"| {r['model']} | {r['load']} | {r['load_reordered']}{proven} | "
                  f"{r['reorder_seconds']:.3f} | {r['arena_tflm']} | {r['arena_plan']} | "
                  f"{r['arena_reordered']} | "
                  f"{'identical' if r['identical'] and r['identical_reordered'] else 'DIFFER'} | "
                  f"{'yes' if r['plan_read'] and r['plan_read_reordered'] else 'NO'} |")
    elif args.markdown:
        print("| model | planned tensors | LOAD | telamalloc peak | head, TFLM's planner | head, "
              "telamalloc's plan | smallest arena, TFLM's planner | smallest arena, telamalloc's "
              "plan | outputs | plan read |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for r in results:
            print(f"| {r['model']} | {r['buffers']} | {r['load']} | {r['peak']} | {r['head_tflm']} "
                  f"| {r['head_plan']} | {r['arena_tflm']} | {r['arena_plan']} | "
                  f"{'identical' if r['identical'] else 'DIFFER'} | {'yes' if r['plan_read'] else 'NO'} |")
    ok = all(r["identical"] and r["plan_read"]
             and (not args.reorder or (r["identical_reordered"] and r["plan_read_reordered"]))
             for r in results)
    return 0 if ok and refusals == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
