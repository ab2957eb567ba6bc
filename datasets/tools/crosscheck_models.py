#!/usr/bin/env python3
"""Cross-checks datasets/models/*.csv against independent readers (verification only).

    datasets/tools/build_models.sh --check --keep /tmp/models   # extracts the model files
    pip install onnx onnxruntime tflite numpy
    python3 datasets/tools/crosscheck_models.py /tmp/models

For every problem it recomputes the lifetimes with the importer's convention from a graph read
by the `tflite` package (generated from the TFLite schema) or by the `onnx` package, and the
sizes from the TFLite tensor shapes or from an ONNX Runtime run that exposes every node output.
It prints one line per model and exits 1 on any difference.
"""

import csv
import math
import re
import sys
from pathlib import Path

ALIGN = 64
REPO = Path(__file__).resolve().parents[2]
TFLITE_BITS = {0: 32, 1: 16, 2: 32, 3: 8, 4: 64, 6: 8, 7: 16, 8: 64, 9: 8, 10: 64, 11: 128,
               12: 64, 15: 32, 16: 16, 17: 4, 18: 16}


def safe_id(name):
    return re.sub(r"[^A-Za-z0-9_./:\-+()\[\]]", "_", name)


def lifetimes(names, constant, operators, inputs, outputs):
    """{name: (lower, upper)} for the activation tensors, as the importer defines them."""
    schedule = [op for op in operators if not (op[1] and all(constant[t] for t in op[1]))]
    producer, last = {}, {}
    for step, (ins, outs) in enumerate(schedule):
        for t in ins:
            last[t] = max(last.get(t, step), step)
        for t in outs:
            producer[t] = step
    result = {}
    for t, name in enumerate(names):
        if constant[t] or not (t in producer or t in inputs):
            continue
        lower = 0 if t in inputs else producer[t]
        upper = len(schedule) if t in outputs else max(last.get(t, lower), lower) + 1
        result[safe_id(name)] = (lower, upper)
    return result


def fold(constant, operators):
    for ins, outs in operators:
        if ins and outs and all(constant[t] for t in ins):
            for t in outs:
                constant[t] = True


def check_tflite(path):
    import tflite

    model = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    graph = model.Subgraphs(0)
    operators = []
    for k in range(graph.OperatorsLength()):
        op = graph.Operators(k)
        ins = [int(i) for i in op.InputsAsNumpy() if i >= 0] if op.InputsLength() else []
        outs = [int(i) for i in op.OutputsAsNumpy() if i >= 0] if op.OutputsLength() else []
        operators.append((ins, outs))
    inputs = set(graph.InputsAsNumpy().tolist())
    outputs = set(graph.OutputsAsNumpy().tolist())
    produced = {t for _, outs in operators for t in outs}
    names, constant, sizes = [], [], {}
    for t in range(graph.TensorsLength()):
        tensor = graph.Tensors(t)
        buffer = model.Buffers(tensor.Buffer())
        has_data = tensor.Buffer() != 0 and (buffer.DataLength() > 0 or buffer.Size() > 0)
        names.append(tensor.Name().decode())
        constant.append(has_data or (t not in produced and t not in inputs))
        shape = tensor.ShapeAsNumpy().tolist() if tensor.ShapeLength() else []
        bits = TFLITE_BITS.get(tensor.Type())
        if bits:
            sizes[safe_id(names[-1])] = (math.prod(shape) * bits + 7) // 8
    fold(constant, operators)
    return lifetimes(names, constant, operators, inputs, outputs), sizes


def check_onnx(path, input_shapes):
    import numpy as np
    import onnx
    import onnxruntime

    model = onnx.load(str(path))
    graph = model.graph
    index, names, constant = {}, [], []

    def add(name):
        if name not in index:
            index[name] = len(names)
            names.append(name)
            constant.append(False)
        return index[name]

    for init in graph.initializer:
        constant[add(init.name)] = True
    inputs = {add(i.name) for i in graph.input if not constant[add(i.name)]}
    operators = []
    for node in graph.node:
        ins = [add(x) for x in node.input if x]
        is_constant = node.op_type == "Constant" or (ins and all(constant[t] for t in ins))
        outs = []
        for name in node.output:
            if name:
                t = add(name)
                constant[t] = bool(is_constant)
                outs.append(t)
        operators.append((ins, outs))
    outputs = {index[o.name] for o in graph.output}
    spans = lifetimes(names, constant, operators, inputs, outputs)

    # Sizes: run the model with every node output exposed (graph inputs from the manifest).
    existing = {o.name for o in graph.output}
    for node in graph.node:
        for name in node.output:
            if name and name not in existing:
                graph.output.append(onnx.ValueInfoProto(name=name))
                existing.add(name)
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                           providers=["CPUExecutionProvider"])
    feed = {}
    for i, spec in enumerate(session.get_inputs()):  # the corpus's inputs are all float32
        shape = [int(d) for d in input_shapes[i].split("x")]
        feed[spec.name] = np.random.rand(*shape).astype(np.float32)
    sizes = {safe_id(o.name): np.asarray(v).nbytes
             for o, v in zip(session.get_outputs(), session.run(None, feed))}
    sizes.update({safe_id(name): value.nbytes for name, value in feed.items()})
    return spans, sizes


def main():
    models = Path(sys.argv[1])
    failures = 0
    with open(REPO / "datasets" / "models" / "manifest.csv") as f:
        manifest = list(csv.DictReader(f))
    for entry in manifest:
        name = entry["name"]
        path = next(models.glob(name + ".*"))
        if path.suffix == ".tflite":
            spans, sizes = check_tflite(path)
        else:
            spans, sizes = check_onnx(path, entry["input_shape"].split(";"))
        with open(REPO / "datasets" / "models" / f"{name}.csv") as f:
            rows = list(csv.DictReader(f))
        bad = []
        for row in rows:
            span = spans.get(row["id"])
            size = sizes.get(row["id"])
            want = None if size is None else -(-size // ALIGN) * ALIGN
            if span != (int(row["lower"]), int(row["upper"])) or want != int(row["size"]):
                bad.append(row["id"])
        missing = [n for n in spans if n not in {r["id"] for r in rows} and sizes.get(n)]
        ok = not bad and not missing
        failures += not ok
        print(f"{'ok  ' if ok else 'DIFF'} {name}: {len(rows)} buffers"
              + (f", differing {bad[:3]}" if bad else "")
              + (f", missing {missing[:3]}" if missing else ""))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
