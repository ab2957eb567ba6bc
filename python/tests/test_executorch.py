"""The ExecuTorch planner inside ExecuTorch: a model lowered with telamalloc's plan runs in
ExecuTorch's runtime with the outputs of ExecuTorch's own plan, in an arena no larger; the suite
beside greedy; storage-backed specs through ExecuTorch's verifier. Optional: skipped with a
message when `executorch` (and `torch`) are not installed (see docs/executorch.md)."""

import pytest

executorch = pytest.importorskip(
    "executorch.exir",
    reason="executorch is not installed: pip install executorch==1.5.1 torch==2.13.0 "
    "(see docs/executorch.md)",
)
torch = pytest.importorskip("torch")

from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.memory_planning import (
    MemoryPlanningAlgorithmSuite,
    Verifier,
    greedy,
)
from executorch.exir.passes import MemoryPlanningPass
from executorch.exir.tensor import TensorSpec
from executorch.runtime import Runtime

import telamalloc.executorch as tex


def _example():
    """python/examples/executorch_check.py as a module (its `pin_large` pins large specs)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "executorch_check.py"
    spec = importlib.util.spec_from_file_location("executorch_check", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pin_large = _example().pin_large


class Net(torch.nn.Module):
    """A pre-norm transformer layer (two-head self-attention and an MLP), where ExecuTorch's
    greedy plan needs more than LOAD."""

    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv, self.proj = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)
        self.up, self.down = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)

    def forward(self, x):
        batch, tokens, dim = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        split = (batch, tokens, self.heads, dim // self.heads)
        q, k, v = (t.reshape(split).transpose(1, 2) for t in (q, k, v))
        weights = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        x = x + self.proj((weights @ v).transpose(1, 2).reshape(batch, tokens, dim))
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm2(x))))


def lower(algo):
    """``Net`` (seeded) lowered with ``algo`` as memory planning, and its example inputs."""
    torch.manual_seed(0)
    model = Net().eval()
    inputs = (torch.randn(1, 8, 16),)
    edge = to_edge(torch.export.export(model, inputs, strict=True))
    config = ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(memory_planning_algo=algo)
    )
    return edge.to_executorch(config), inputs


def run(program, inputs, path):
    """The program's outputs in ExecuTorch's runtime."""
    path.write_bytes(program.buffer)
    method = Runtime.get().load_program(path).load_method("forward")
    return [torch.as_tensor(t).clone() for t in method.execute(list(inputs))]


def arenas(program):
    """ExecuTorch's ``non_const_buffer_sizes``: the arena of each memory id (0: constants)."""
    return list(program.executorch_program.execution_plan[0].non_const_buffer_sizes)


def test_runs_in_the_runtime_with_identical_outputs_at_load(tmp_path):
    planner = tex.Planner(timeout=10)
    ours, inputs = lower(tex.memory_planning_algo(planner))
    default, _ = lower(MemoryPlanningAlgorithmSuite([greedy]))
    out_ours = run(ours, inputs, tmp_path / "ours.pte")
    out_default = run(default, inputs, tmp_path / "default.pte")
    assert len(out_ours) == len(out_default) == 1
    assert torch.equal(out_ours[0], out_default[0])
    top = planner.plans[-1]
    assert arenas(ours) == [0, top.bufsizes[1]]
    assert arenas(ours)[1] <= arenas(default)[1]
    assert top.memories[1].at_load  # LOAD is reachable here: the default falls short of it
    assert arenas(default)[1] > top.memories[1].load
    # Every spec ExecuTorch planned carries telamalloc's placement.
    for spec, placement in zip(top.specs, top.placements):
        assert (spec.mem_id, spec.mem_offset) == (placement.mem_id, placement.offset)


def test_the_runtime_reads_the_plan(tmp_path):
    """A control: the same plan with the smaller of two tensors live together (over more than one
    step) moved onto the other's bytes changes the outputs (so identical outputs above say the
    runtime used the plan, and the plan is right)."""

    class Clash(tex.Planner):
        def __call__(self, alignment, specs, graph_module, graph_signature=None, extra_padding=0):
            result = super().__call__(
                alignment, specs, graph_module, graph_signature, extra_padding
            )
            by_size = sorted(result.spec_dict, key=lambda s: -s.allocated_memory)
            first, second = next(
                (a, b)
                for i, a in enumerate(by_size)
                for b in by_size[i + 1 :]
                if a.lifetime[0] < b.lifetime[1] and b.lifetime[0] < a.lifetime[1]
            )
            result.spec_dict[second].mem_offset = result.spec_dict[first].mem_offset
            return result

    good, inputs = lower(tex.memory_planning_algo())
    bad, _ = lower(tex.memory_planning_algo(Clash()))
    assert not torch.equal(
        run(good, inputs, tmp_path / "good.pte")[0], run(bad, inputs, tmp_path / "bad.pte")[0]
    )


def test_beside_greedy_in_the_suite_the_smaller_plan_wins():
    planner = tex.Planner(timeout=10)
    both, _ = lower(MemoryPlanningAlgorithmSuite([greedy, planner]))
    alone, _ = lower(MemoryPlanningAlgorithmSuite([greedy]))
    assert arenas(both)[1] == planner.plans[-1].bufsizes[1] < arenas(alone)[1]


def test_storage_backed_specs_pass_executorchs_verifier():
    outer = TensorSpec.from_tensor(torch.empty(16))
    inner = TensorSpec.from_tensor(torch.empty(4))
    other = TensorSpec.from_tensor(torch.empty(16))
    outer.lifetime, inner.lifetime, other.lifetime = [0, 1], [1, 4], [3, 5]
    inner.storage_base, inner.storage_base_offset = outer, 16
    graph = torch.fx.Graph()
    for name, spec in (("outer", outer), ("inner", inner), ("other", other)):
        graph.placeholder(name).meta["spec"] = spec
    graph.output(tuple(n for n in graph.nodes))
    module = torch.fx.GraphModule({}, graph)
    sizes = MemoryPlanningAlgorithmSuite([tex.plan])(16, [outer, inner, other], module, None, 0)
    assert inner.mem_offset == outer.mem_offset + 16
    assert inner.mem_obj_id == outer.mem_obj_id
    assert sizes == [0, 128]  # outer's bytes stay taken until inner's last step
    Verifier(module, True, True, True).verify_storage_reuse()


class Branches(torch.nn.Module):
    """``torch.cond`` between two small layers: ExecuTorch plans each branch as a submodule
    first, then the graph around them with the branches' bytes reserved."""

    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(16, 16), torch.nn.Linear(16, 16)

    def forward(self, x, flag):
        def then(x):
            return torch.relu(self.a(x)) * 2

        def otherwise(x):
            return self.b(x).sigmoid() + 1

        return torch.cond(flag.sum() > 0, then, otherwise, (x,)) + x


def test_control_flow_branches_keep_their_reserved_bytes(tmp_path):
    torch.manual_seed(0)
    model = Branches().eval()
    example = (torch.randn(4, 16), torch.ones(1))
    programs = {}
    planner = tex.Planner(timeout=10)
    for name, algo in (("ours", tex.memory_planning_algo(planner)), ("default", None)):
        edge = to_edge(torch.export.export(model, example, strict=True))
        pass_ = MemoryPlanningPass() if algo is None else MemoryPlanningPass(algo)
        config = ExecutorchBackendConfig(memory_planning_pass=pass_)
        programs[name] = edge.to_executorch(config)
    branches, top = planner.plans[:2], planner.plans[2]
    assert len(planner.plans) == 3
    reserved = max(plan.bufsizes[1] for plan in branches)
    assert top.memories[1].base == reserved > 0
    assert min(p.offset for p in top.placements) >= reserved
    assert arenas(programs["ours"]) == [0, top.bufsizes[1]]
    for flag in (torch.ones(1), -torch.ones(1)):  # both branches
        inputs = (torch.randn(4, 16), flag)
        ours = run(programs["ours"], inputs, tmp_path / "ours.pte")
        default = run(programs["default"], inputs, tmp_path / "default.pte")
        assert torch.equal(ours[0], default[0])
        with torch.no_grad():
            assert torch.allclose(ours[0], model(*inputs), atol=1e-5)


class Stateful(torch.nn.Module):
    """A layer with a mutable buffer (state carried from one call to the next, as a cache is)."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(16, 16)
        self.register_buffer("state", torch.zeros(4, 16))

    def forward(self, x):
        y = torch.tanh(self.layer(x) + self.state)
        self.state.copy_(y)
        return y * 2


def test_a_mutable_buffer_keeps_its_state_across_calls(tmp_path):
    torch.manual_seed(0)
    model = Stateful().eval()
    example = (torch.randn(4, 16),)
    methods = {}
    for name, algo in (("ours", tex.memory_planning_algo()), ("default", None)):
        edge = to_edge(torch.export.export(model, example, strict=True))
        pass_ = MemoryPlanningPass() if algo is None else MemoryPlanningPass(algo)
        program = edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=pass_))
        (tmp_path / f"{name}.pte").write_bytes(program.buffer)
        methods[name] = Runtime.get().load_program(tmp_path / f"{name}.pte").load_method("forward")
    for step in range(3):
        x = torch.full((4, 16), float(step))
        ours = torch.as_tensor(methods["ours"].execute([x])[0]).clone()
        default = torch.as_tensor(methods["default"].execute([x])[0]).clone()
        with torch.no_grad():
            eager = model(x)  # updates the eager model's state the same way
        assert torch.equal(ours, default)
        assert torch.allclose(ours, eager, atol=1e-5)


def test_two_memory_ids_are_planned_apart_and_run(tmp_path):
    planner = tex.Planner(timeout=10)
    ours, inputs = lower(MemoryPlanningAlgorithmSuite([pin_large(planner, 512)]))
    default, _ = lower(MemoryPlanningAlgorithmSuite([pin_large(greedy, 512)]))
    top = planner.plans[-1]
    assert sorted(top.memories) == [1, 2]
    assert all(len(top.memories[m].problem) > 0 for m in (1, 2))
    assert arenas(ours) == [0, top.memories[1].arena, top.memories[2].arena]
    assert all(top.memories[m].at_load for m in (1, 2))
    assert all(o <= d for o, d in zip(arenas(ours), arenas(default)))
    for spec, placement in zip(top.specs, top.placements):
        assert spec.mem_id == placement.mem_id == (2 if spec.allocated_memory >= 512 else 1)
    out_ours = run(ours, inputs, tmp_path / "ours.pte")
    out_default = run(default, inputs, tmp_path / "default.pte")
    assert torch.equal(out_ours[0], out_default[0])
