#!/usr/bin/env python3
"""Loads planned models in the full TFLite runtime, LiteRT (verification; needs
`pip install ai-edge-litert`).

    python3 datasets/tools/litert_check.py MODEL.tflite ...

For each model: `telamalloc import` -> `solve --minimize` -> `export-plan`, then LiteRT loads the
original and the planned file and runs both on the same random inputs. LiteRT ignores the
offline plan, but its loader runs the FlatBuffers verifier on the whole file (it refuses a file
whose vectors point out of bounds), so this checks that the rewritten file is a valid model for
every TFLite runtime, not only TFLite Micro, and that it still computes the same outputs. A
model whose original LiteRT cannot run (custom operators) is reported and skipped.
Exit code 0 when every model that runs matches, 1 otherwise, 2 on bad usage.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

from tflm_check import telamalloc, telamalloc_binary


def outputs(interpreter_class, path, seed):
    interpreter = interpreter_class(model_path=str(path))
    interpreter.allocate_tensors()
    rng = np.random.default_rng(seed)
    for d in interpreter.get_input_details():
        dtype = np.dtype(d["dtype"])
        if dtype.kind == "f":
            x = rng.uniform(-1, 1, d["shape"]).astype(dtype)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, d["shape"], endpoint=True).astype(dtype)
        interpreter.set_tensor(d["index"], x)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]).tobytes() for d in interpreter.get_output_details()]


def main():
    models = [Path(m) for m in sys.argv[1:]]
    if not models or any(m.name.startswith("-") for m in models):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        print("ai_edge_litert is not installed: pip install ai-edge-litert", file=sys.stderr)
        return 2
    binary = telamalloc_binary()
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for model in models:
            name = model.stem
            problem = Path(work) / f"{name}.csv"
            solution = Path(work) / f"{name}.solution.csv"
            planned = Path(work) / f"{name}.planned.tflite"
            telamalloc(binary, "import", model, "--alignment", 16, "-o", problem)
            telamalloc(binary, "solve", problem, "--minimize", "--timeout", 10, "-o", solution)
            telamalloc(binary, "export-plan", model, solution, "-o", planned)
            try:
                reference = outputs(Interpreter, model, 0)
            except Exception as e:  # custom operators LiteRT does not have
                print(f"{name}: skipped, LiteRT cannot run the original: "
                      f"{str(e).splitlines()[0]}", flush=True)
                continue
            try:
                same = outputs(Interpreter, planned, 0) == reference
            except Exception as e:
                print(f"{name}: the planned model FAILS in LiteRT: {e}", flush=True)
                failed = True
                continue
            print(f"{name}: planned model verified and run by LiteRT, outputs "
                  f"{'identical' if same else 'DIFFER'}", flush=True)
            failed |= not same
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
