#!/usr/bin/env python3
"""Plans real architectures with telamalloc in ExecuTorch and runs them in ExecuTorch's runtime.

    python python/examples/executorch_check.py [--model NAME ...] [--xnnpack] [--pin BYTES]
        [--timeout S] [--markdown] [--keep DIR]

Needs `executorch` and `torch` (see docs/executorch.md) and the `telamalloc` package. Each model
below is defined in code with random weights (seeded: the same weights every run), exported with
`torch.export` and lowered twice: once with ExecuTorch's default memory planning (its greedy
algorithm) and once with telamalloc's planner alone; with ExecuTorch's portable kernels, or with
`--xnnpack` what XNNPACK supports delegated to it (ExecuTorch then plans the rest and the delegates'
inputs and outputs). Both `.pte` files run in ExecuTorch's Python runtime on the same random inputs;
their outputs must be identical (bit for bit). With `--pin BYTES` both programs plan the tensors of
at least BYTES bytes in a second memory (id 2), each memory on its own. A control program whose plan
puts every tensor at offset 0 should give other outputs (or fail in a kernel that checks what it
reads, whose runtime errors are then printed and expected): the runtime really lays the tensors
out by the plan. A control that gives the same outputs only says the plan decided nothing the
outputs show (with `--xnnpack`, the U-Net's planned tensors are the delegate's inputs and
outputs, which it does not read through the plan): it is reported, not counted as a failure.

For each model it prints the planned arena of each memory id (ExecuTorch's
`non_const_buffer_sizes`) of both programs and LOAD, the least any plan can need (the most bytes
live at one step, each tensor rounded up to the 16-byte alignment; plus the 64 bytes ExecuTorch
adds to an arena when XNNPACK runs). Exit code 0 when every model's outputs match and
telamalloc's arena of every memory id is at most the default's, 1 otherwise (the control does
not count).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch import nn

import telamalloc.executorch as tex

#: Seed of the weights and the inputs.
SEED = 0


# --- The models: small versions of common architectures, random weights. ---


def conv_bn(cin: int, cout: int, kernel: int = 3, stride: int = 1, groups: int = 1) -> list:
    """A convolution without bias followed by batch norm (the usual pair)."""
    return [
        nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
    ]


class InvertedResidual(nn.Module):
    """MobileNetV2's block: expand (1x1), depthwise (3x3), project (1x1), residual when shapes
    agree."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [*conv_bn(cin, hidden, 1), nn.ReLU6()]
        layers += [
            *conv_bn(hidden, hidden, 3, stride, hidden),
            nn.ReLU6(),
            *conv_bn(hidden, cout, 1),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    """MobileNetV2 at width 0.5 (the paper's block table, channels halved)."""

    def __init__(self, classes: int = 100):
        super().__init__()
        table = [
            (1, 8, 1, 1),
            (6, 12, 2, 2),
            (6, 16, 3, 2),
            (6, 32, 4, 2),
            (6, 48, 3, 1),
            (6, 80, 3, 2),
            (6, 160, 1, 1),
        ]  # (expand, channels, repeats, first stride)
        layers: list[nn.Module] = [*conv_bn(3, 16, 3, 2), nn.ReLU6()]
        cin = 16
        for expand, cout, repeats, stride in table:
            for r in range(repeats):
                layers.append(InvertedResidual(cin, cout, stride if r == 0 else 1, expand))
                cin = cout
        layers += [*conv_bn(cin, 640, 1), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(640, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).mean((2, 3)))


class SqueezeExcite(nn.Module):
    """Channel attention: global average, a bottleneck, a hard sigmoid that scales the input."""

    def __init__(self, channels: int):
        super().__init__()
        squeezed = max(8, channels // 4)
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.expand = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = self.expand(torch.relu(self.reduce(x.mean((2, 3), keepdim=True))))
        return x * nn.functional.hardsigmoid(scale)


class MobileNetV3Block(nn.Module):
    """MobileNetV3's block: expand, depthwise (3x3 or 5x5), squeeze-excite, project; ReLU or
    hard swish; residual when shapes agree."""

    def __init__(
        self, cin: int, hidden: int, cout: int, kernel: int, stride: int, se: bool, hs: bool
    ):
        super().__init__()
        act = nn.Hardswish if hs else nn.ReLU
        layers: list[nn.Module] = [] if hidden == cin else [*conv_bn(cin, hidden, 1), act()]
        layers += [*conv_bn(hidden, hidden, kernel, stride, hidden), act()]
        if se:
            layers.append(SqueezeExcite(hidden))
        layers += conv_bn(hidden, cout, 1)
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV3Small(nn.Module):
    """MobileNetV3-Small (the paper's block table) with a hard-swish head."""

    def __init__(self, classes: int = 100):
        super().__init__()
        # (kernel, expanded, out, squeeze-excite, hard swish, stride)
        table = [
            (3, 16, 16, True, False, 2),
            (3, 72, 24, False, False, 2),
            (3, 88, 24, False, False, 1),
            (5, 96, 40, True, True, 2),
            (5, 240, 40, True, True, 1),
            (5, 240, 40, True, True, 1),
            (5, 120, 48, True, True, 1),
            (5, 144, 48, True, True, 1),
            (5, 288, 96, True, True, 2),
            (5, 576, 96, True, True, 1),
            (5, 576, 96, True, True, 1),
        ]
        layers: list[nn.Module] = [*conv_bn(3, 16, 3, 2), nn.Hardswish()]
        cin = 16
        for kernel, hidden, cout, se, hs, stride in table:
            layers.append(MobileNetV3Block(cin, hidden, cout, kernel, stride, se, hs))
            cin = cout
        layers += [*conv_bn(cin, 576, 1), nn.Hardswish()]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            nn.Linear(576, 1024), nn.Hardswish(), nn.Linear(1024, classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).mean((2, 3)))


class BasicBlock(nn.Module):
    """ResNet's basic block: two 3x3 convolutions and a shortcut (1x1 when the shape changes)."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.body = nn.Sequential(*conv_bn(cin, cout, 3, stride), nn.ReLU(), *conv_bn(cout, cout))
        self.shortcut = (
            nn.Sequential(*conv_bn(cin, cout, 1, stride))
            if stride != 1 or cin != cout
            else nn.Identity()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet18(nn.Module):
    """ResNet-18: a stem, four stages of two basic blocks (channels 32 to 256), a classifier."""

    def __init__(self, classes: int = 100):
        super().__init__()
        layers: list[nn.Module] = [*conv_bn(3, 32, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
        cin = 32
        for cout, stride in [(32, 1), (64, 2), (128, 2), (256, 2)]:
            layers += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
            cin = cout
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).mean((2, 3)))


class EncoderLayer(nn.Module):
    """A pre-norm transformer encoder layer: multi-head self-attention and a GELU MLP."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        split = (batch, tokens, self.heads, dim // self.heads)
        q, k, v = (t.reshape(split).transpose(1, 2) for t in (q, k, v))
        weights = torch.softmax(q @ k.transpose(-2, -1) * (dim // self.heads) ** -0.5, dim=-1)
        attended = (weights @ v).transpose(1, 2).reshape(batch, tokens, dim)
        x = x + self.proj(attended)
        return x + self.mlp(self.norm2(x))


class TransformerEncoder(nn.Module):
    """A small transformer encoder: token embedding, learned positions, four layers, mean-pooled
    classifier."""

    def __init__(
        self,
        vocab: int = 1000,
        dim: int = 128,
        heads: int = 4,
        layers: int = 4,
        tokens: int = 64,
        classes: int = 10,
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.position = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.layers = nn.Sequential(*[EncoderLayer(dim, heads) for _ in range(layers)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.layers(self.embed(ids) + self.position)
        return self.head(self.norm(x).mean(1))


class UNet(nn.Module):
    """A U-Net: three downsampling stages, a bottleneck, three upsampling stages with skip
    connections (concatenated), a 1x1 head."""

    def __init__(self, channels: int = 3, base: int = 16, classes: int = 2):
        super().__init__()

        def double(cin: int, cout: int) -> nn.Sequential:
            return nn.Sequential(*conv_bn(cin, cout), nn.ReLU(), *conv_bn(cout, cout), nn.ReLU())

        widths = [base, base * 2, base * 4]
        self.down = nn.ModuleList()
        cin = channels
        for w in widths:
            self.down.append(double(cin, w))
            cin = w
        self.bottom = double(cin, cin * 2)
        self.up = nn.ModuleList()
        self.merge = nn.ModuleList()
        cin *= 2
        for w in reversed(widths):
            self.up.append(nn.ConvTranspose2d(cin, w, 2, 2))
            self.merge.append(double(2 * w, w))
            cin = w
        self.head = nn.Conv2d(cin, classes, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skips = []
        for block in self.down:
            x = block(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.bottom(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips)):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.head(x)


class LSTM(nn.Module):
    """A two-layer LSTM written out step by step (the gates as one linear map per layer), over
    a sequence of 24 steps, and a classifier on the last state."""

    def __init__(self, features: int = 32, hidden: int = 128, layers: int = 2, classes: int = 10):
        super().__init__()
        self.hidden = hidden
        self.gates = nn.ModuleList(
            nn.Linear((features if i == 0 else hidden) + hidden, 4 * hidden) for i in range(layers)
        )
        self.head = nn.Linear(hidden, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, steps, _ = x.shape
        sequence = list(x.unbind(1))
        for gates in self.gates:
            h = x.new_zeros(batch, self.hidden)
            c = x.new_zeros(batch, self.hidden)
            outputs = []
            for t in range(steps):
                i, f, g, o = gates(torch.cat([sequence[t], h], dim=1)).chunk(4, dim=1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
                outputs.append(h)
            sequence = outputs
        return self.head(sequence[-1])


#: name -> (model factory, inputs factory).
MODELS = {
    "mobilenet_v2": (MobileNetV2, lambda: (torch.randn(1, 3, 96, 96),)),
    "mobilenet_v3_small": (MobileNetV3Small, lambda: (torch.randn(1, 3, 96, 96),)),
    "resnet18": (ResNet18, lambda: (torch.randn(1, 3, 96, 96),)),
    "transformer_encoder": (TransformerEncoder, lambda: (torch.randint(0, 1000, (1, 64)),)),
    "unet": (UNet, lambda: (torch.randn(1, 3, 64, 64),)),
    "lstm": (LSTM, lambda: (torch.randn(1, 24, 32),)),
}


# --- Lowering, planning and running. ---


def all_at_zero(alignment, specs, graph_module, graph_signature, extra_padding):
    """A wrong plan for the control run: every tensor at offset 0 of memory 1."""
    from executorch.exir.memory_planning import MemoryAlgoResult, SpecAllocResult

    spec_dict = {}
    largest = 0
    for spec in specs:
        spec.realign(alignment)
        largest = max(largest, spec.allocated_memory)
        spec_dict[spec] = SpecAllocResult(1, 0, 0)
    return MemoryAlgoResult(spec_dict, [0, largest + extra_padding])


def lower(model: nn.Module, inputs: tuple, algo, xnnpack: bool = False) -> object:
    """The model exported and lowered to an ExecuTorch program with ``algo`` as memory planning
    (None: ExecuTorch's default); with ``xnnpack``, what XNNPACK supports is delegated to it."""
    from executorch.exir import ExecutorchBackendConfig, to_edge, to_edge_transform_and_lower
    from executorch.exir.passes import MemoryPlanningPass

    exported = torch.export.export(model, inputs, strict=True)
    if xnnpack:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        edge = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    else:
        edge = to_edge(exported)
    if algo is None:
        return edge.to_executorch()
    planning = MemoryPlanningPass(memory_planning_algo=algo)
    return edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=planning))


def run(program, inputs: tuple, path: Path) -> list[torch.Tensor]:
    """Writes the program to ``path`` and runs its ``forward`` in ExecuTorch's runtime."""
    from executorch.runtime import Runtime

    path.write_bytes(program.buffer)
    method = Runtime.get().load_program(path).load_method("forward")
    return [torch.as_tensor(t).clone() for t in method.execute(list(inputs))]


def arenas(program) -> list[int]:
    """The planned arena of each memory id (id 0, the constants, left out)."""
    return list(program.executorch_program.execution_plan[0].non_const_buffer_sizes[1:])


def identical(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    """Whether two runs gave the same outputs, bit for bit."""
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def pin_large(algo, threshold: int):
    """``algo`` after moving every tensor of at least ``threshold`` bytes to memory id 2, as a
    pass that pins large tensors to a second memory would."""

    def pinned(alignment, specs, graph_module, graph_signature, extra_padding):
        for spec in specs:
            if spec.mem_id is None and spec.realign(alignment) >= threshold:
                spec.mem_id = 2
        return algo(alignment, specs, graph_module, graph_signature, extra_padding)

    pinned.__name__ = f"pinned_{getattr(algo, '__name__', 'algo')}"
    return pinned


def check(
    name: str, timeout: float, folder: Path, xnnpack: bool = False, pin: int | None = None
) -> dict:
    """Lowers, plans and runs one model; its row. ``pin``: tensors of at least so many bytes go
    to memory id 2 (in both programs)."""
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy

    factory, make_inputs = MODELS[name]
    torch.manual_seed(SEED)
    model = factory().eval()
    inputs = make_inputs()
    with torch.no_grad():
        eager = [model(*inputs)]
    planner = tex.Planner(timeout=timeout)
    if pin is None:
        default = lower(model, inputs, None, xnnpack)
        ours = lower(model, inputs, tex.memory_planning_algo(planner), xnnpack)
    else:
        default_algo = MemoryPlanningAlgorithmSuite([pin_large(greedy, pin)])
        default = lower(model, inputs, default_algo, xnnpack)
        ours = lower(
            model, inputs, MemoryPlanningAlgorithmSuite([pin_large(planner, pin)]), xnnpack
        )
    control = lower(model, inputs, MemoryPlanningAlgorithmSuite([all_at_zero]), xnnpack)
    out_default = run(default, inputs, folder / f"{name}.default.pte")
    out_ours = run(ours, inputs, folder / f"{name}.telamalloc.pte")
    print(
        f"{name}: running the control (every tensor at offset 0); runtime errors from it are "
        "expected",
        file=sys.stderr,
        flush=True,
    )
    try:
        out_control = run(control, inputs, folder / f"{name}.control.pte")
    except RuntimeError:  # a kernel refused what it read (an index out of range): read too
        out_control = []
    top = planner.plans[-1]  # ExecuTorch plans submodules first, the graph itself last.
    return {
        "model": name,
        "tensors": len(top.specs),
        # LOAD, and the bytes before and after the arena (a reservation, ExecuTorch's padding).
        "load": [
            top.memories[m].total - top.memories[m].arena + top.memories[m].load
            if m in top.memories
            else 0
            for m in range(1, len(top.bufsizes))
        ],
        "default": arenas(default),
        "telamalloc": arenas(ours),
        "identical": identical(out_default, out_ours),
        "eager_error": max(float((x - y).abs().max()) for x, y in zip(out_ours, eager)),
        "plan_read": not identical(out_control, out_ours),
        "plan_seconds": sum(p.elapsed for p in planner.plans),
    }


def main() -> int:
    """Checks the models asked for and prints their rows; the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--model",
        action="append",
        choices=sorted(MODELS),
        help="a model to check (repeatable; default: all)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=tex.DEFAULT_TIMEOUT,
        help="telamalloc's time limit per graph, seconds",
    )
    parser.add_argument(
        "--xnnpack", action="store_true", help="delegate what XNNPACK supports to XNNPACK"
    )
    parser.add_argument(
        "--pin",
        type=int,
        metavar="BYTES",
        help="plan tensors of at least BYTES bytes in memory id 2 (both programs)",
    )
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--keep", type=Path, help="write the .pte files into this folder")
    args = parser.parse_args()
    names = args.model or list(MODELS)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        rows = [check(name, args.timeout, folder, args.xnnpack, args.pin) for name in names]
    ok = not mismatches(rows)
    if args.markdown:
        print(
            "| model | tensors | ExecuTorch default, bytes | telamalloc, bytes | LOAD, bytes "
            "| telamalloc / default | outputs identical | plan s |"
        )
        print("|---|---:|---:|---:|---:|---:|---|---:|")
    for r in rows:
        default, ours, load = r["default"], r["telamalloc"], r["load"]
        ratio = sum(ours) / sum(default) if sum(default) else 1.0
        if args.markdown:
            print(
                f"| {r['model']} | {r['tensors']} | {fmt(default)} | {fmt(ours)} | {fmt(load)} "
                f"| {ratio:.3f} | {'yes' if r['identical'] else 'NO'} | {r['plan_seconds']:.2f} |"
            )
        else:
            print(
                f"{r['model']}: {r['tensors']} tensors; arena per memory id: default "
                f"{fmt(default)}, telamalloc {fmt(ours)}, LOAD {fmt(load)} ({ratio:.3f} of the "
                f"default); outputs identical: {r['identical']} (eager max error "
                f"{r['eager_error']:.2e}); plan read by the runtime: {r['plan_read']}; "
                f"telamalloc planned in {r['plan_seconds']:.2f} s"
            )
    for r in rows:
        if not r["plan_read"]:
            print(
                f"note: {r['model']}: the control plan gave the same outputs, so its outputs do "
                "not show the plan (not a failure)",
                file=sys.stderr,
            )
    for problem in mismatches(rows):
        print(f"mismatch: {problem}", file=sys.stderr)
    return 0 if ok else 1


def mismatches(rows: list[dict]) -> list[str]:
    """What fails the check: outputs that differ from the default program's, or a memory whose
    telamalloc arena is larger than the default's. The control's outcome is not one."""
    found = []
    for r in rows:
        if not r["identical"]:
            found.append(f"{r['model']}: outputs differ from the default program's")
        for m, (ours, default) in enumerate(zip(r["telamalloc"], r["default"]), start=1):
            if ours > default:
                found.append(
                    f"{r['model']}: memory {m} arena {ours:,} above the default's {default:,}"
                )
    return found


def fmt(sizes: list[int]) -> str:
    """Sizes of memory ids 1, 2, ... with thousands separators."""
    return " / ".join(f"{s:,}" for s in sizes)


if __name__ == "__main__":
    sys.exit(main())
