#!/usr/bin/env python3
"""Writes small branching float32 .tflite models whose operator order matters (for
`tflm_check.py --reorder`; needs `pip install tflite-micro`, which brings the TFLite schema and
flatbuffers).

    python3 datasets/tools/branchy_models.py OUT_DIR

Each model lists its operators breadth first, every branch's first (large) operator before any
branch's second, as a converter may: the branches' large intermediate tensors are then all live
at once, where running one branch at a time keeps one. Weights are random (seed 0), so the
files are the same on every run. Only builtin operators TFLite Micro runs: CONV_2D,
FULLY_CONNECTED, CONCATENATION, ADD.

- `inception`: 1x16x16x8 -> four branches of CONV_2D 1x1 to 32 channels, then to 4 channels
  -> CONCATENATION (16 channels).
- `ssh_context`: an SSH/RetinaFace-style context module: three branches of one, two and three
  3x3 convolutions (the first of each to 32 channels) -> CONCATENATION.
- `multi_head`: a shared CONV_2D trunk, then three heads of FULLY_CONNECTED to 2048 then to
  10; three outputs.
- `residual_pair`: two parallel residual blocks (expand to 48 channels, project back, ADD the
  input) whose results are added.
"""

import sys
from pathlib import Path

import flatbuffers
import numpy as np
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

ADD, CONCATENATION, CONV_2D, FULLY_CONNECTED = 0, 2, 3, 9
FLOAT32 = 0


class Builder:
    """Tensors, operators and buffers of one subgraph, in the order they are added."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.tensors = []
        self.buffers = [schema.BufferT()]  # buffer 0: the empty sentinel
        self.operators = []
        self.codes = []

    def tensor(self, name, shape, data=None):
        t = schema.TensorT()
        t.name = name
        t.shape = list(shape)
        t.type = FLOAT32
        t.buffer = 0
        if data is not None:
            b = schema.BufferT()
            b.data = np.asarray(data, dtype="<f4").tobytes()
            self.buffers.append(b)
            t.buffer = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def weights(self, name, shape):
        scale = 1.0 / np.sqrt(np.prod(shape[1:]))
        return self.tensor(name, shape, self.rng.uniform(-scale, scale, shape))

    def operator(self, code, inputs, outputs, options_type=0, options=None):
        if code not in self.codes:
            self.codes.append(code)
        op = schema.OperatorT()
        op.opcodeIndex = self.codes.index(code)
        op.inputs = list(inputs)
        op.outputs = list(outputs)
        op.builtinOptionsType = options_type
        op.builtinOptions = options
        self.operators.append(op)

    def conv(self, name, x, channels_in, channels_out, height, width, kernel=1):
        """A CONV_2D (SAME padding, stride 1, ReLU) from `x`; returns its weights' and output's
        tensors, the operator not yet added (see `add_conv`)."""
        w = self.weights(f"{name}/w", [channels_out, kernel, kernel, channels_in])
        b = self.tensor(f"{name}/b", [channels_out], np.zeros(channels_out))
        y = self.tensor(name, [1, height, width, channels_out])
        return (x, w, b, y)

    def add_conv(self, conv):
        options = schema.Conv2DOptionsT()
        options.padding = schema.Padding.SAME
        options.strideW = options.strideH = 1
        options.dilationWFactor = options.dilationHFactor = 1
        options.fusedActivationFunction = schema.ActivationFunctionType.RELU
        x, w, b, y = conv
        self.operator(CONV_2D, [x, w, b], [y], schema.BuiltinOptions.Conv2DOptions, options)
        return y

    def fully_connected(self, name, x, units_in, units_out):
        w = self.weights(f"{name}/w", [units_out, units_in])
        b = self.tensor(f"{name}/b", [units_out], np.zeros(units_out))
        y = self.tensor(name, [1, units_out])
        return (x, w, b, y)

    def add_fully_connected(self, fc):
        options = schema.FullyConnectedOptionsT()
        options.fusedActivationFunction = schema.ActivationFunctionType.RELU
        x, w, b, y = fc
        self.operator(FULLY_CONNECTED, [x, w, b], [y],
                      schema.BuiltinOptions.FullyConnectedOptions, options)
        return y

    def concat(self, name, inputs, shape):
        options = schema.ConcatenationOptionsT()
        options.axis = 3
        y = self.tensor(name, shape)
        self.operator(CONCATENATION, inputs, [y], schema.BuiltinOptions.ConcatenationOptions,
                      options)
        return y

    def add(self, name, a, b, shape):
        y = self.tensor(name, shape)
        self.operator(ADD, [a, b], [y], schema.BuiltinOptions.AddOptions, schema.AddOptionsT())
        return y

    def finish(self, inputs, outputs):
        subgraph = schema.SubGraphT()
        subgraph.tensors = self.tensors
        subgraph.inputs = inputs
        subgraph.outputs = outputs
        subgraph.operators = self.operators
        subgraph.name = "main"
        model = schema.ModelT()
        model.version = 3
        model.description = "branchy_models.py"
        model.subgraphs = [subgraph]
        model.buffers = self.buffers
        model.operatorCodes = []
        for code in self.codes:
            c = schema.OperatorCodeT()
            c.builtinCode = code
            c.deprecatedBuiltinCode = min(code, 127)
            c.version = 1
            model.operatorCodes.append(c)
        builder = flatbuffers.Builder(1024)
        builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())


def inception():
    m = Builder(0)
    x = m.tensor("input", [1, 16, 16, 8])
    wide = [m.conv(f"branch{k}/expand", x, 8, 32, 16, 16) for k in range(4)]
    wide = [m.add_conv(c) for c in wide]
    narrow = [m.conv(f"branch{k}/reduce", wide[k], 32, 4, 16, 16) for k in range(4)]
    narrow = [m.add_conv(c) for c in narrow]
    y = m.concat("output", narrow, [1, 16, 16, 16])
    return m.finish([x], [y])


def ssh_context():
    m = Builder(1)
    x = m.tensor("input", [1, 20, 20, 8])
    firsts = [m.add_conv(m.conv(f"branch{k}/conv0", x, 8, 32, 20, 20, kernel=3))
              for k in range(3)]
    seconds = [m.add_conv(m.conv(f"branch{k}/conv1", firsts[k], 32, 8, 20, 20, kernel=3))
               for k in (1, 2)]
    third = m.add_conv(m.conv("branch2/conv2", seconds[1], 8, 8, 20, 20, kernel=3))
    head = m.add_conv(m.conv("branch0/conv1", firsts[0], 32, 8, 20, 20, kernel=3))
    y = m.concat("output", [head, seconds[0], third], [1, 20, 20, 24])
    return m.finish([x], [y])


def multi_head():
    m = Builder(2)
    x = m.tensor("input", [1, 8, 8, 4])
    trunk = m.add_conv(m.conv("trunk", x, 4, 8, 8, 8))
    hidden = [m.add_fully_connected(m.fully_connected(f"head{k}/hidden", trunk, 512, 2048))
              for k in range(3)]
    outs = [m.add_fully_connected(m.fully_connected(f"head{k}/out", hidden[k], 2048, 10))
            for k in range(3)]
    return m.finish([x], outs)


def residual_pair():
    m = Builder(3)
    x = m.tensor("input", [1, 12, 12, 8])
    expanded = [m.add_conv(m.conv(f"block{k}/expand", x, 8, 48, 12, 12)) for k in range(2)]
    projected = [m.add_conv(m.conv(f"block{k}/project", expanded[k], 48, 8, 12, 12))
                 for k in range(2)]
    sums = [m.add(f"block{k}/sum", projected[k], x, [1, 12, 12, 8]) for k in range(2)]
    y = m.add("output", sums[0], sums[1], [1, 12, 12, 8])
    return m.finish([x], [y])


MODELS = {
    "inception": inception,
    "ssh_context": ssh_context,
    "multi_head": multi_head,
    "residual_pair": residual_pair,
}


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, build in MODELS.items():
        (out / f"{name}.tflite").write_bytes(build())
        print(out / f"{name}.tflite")
    return 0


if __name__ == "__main__":
    sys.exit(main())
