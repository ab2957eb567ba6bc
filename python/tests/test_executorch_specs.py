"""The ExecuTorch planner on stand-in tensor specs (no ExecuTorch needed): lifetimes, alignment,
memory ids, shared storage, submodule reservations, limits; every plan checked by a checker of
this file that shares nothing with the planner."""

import random

import pytest

import telamalloc
from telamalloc.executorch import Planner, plan_specs


class Spec:
    """The fields of ExecuTorch's TensorSpec that a planning algorithm reads."""

    def __init__(self, nbytes, first, last, mem_id=None, base=None, base_offset=0):
        self.nbytes = nbytes
        self.alignment = 16
        self.lifetime = [first, last]
        self.mem_id = mem_id
        self.storage_base = base
        self.storage_base_offset = base_offset

    @property
    def allocated_memory(self):
        return -(-self.nbytes // self.alignment) * self.alignment

    def realign(self, alignment):
        self.alignment = alignment
        return self.allocated_memory


def chain(spec):
    """The spec and every storage base under it."""
    out = []
    while spec is not None:
        out.append(spec)
        spec = spec.storage_base
    return out


def check(plan, alignment, base=0, padding=0):
    """Independent check: aligned offsets within each memory's size, and no two specs live at
    one step (both ends included) share a byte unless one lies in the other's storage."""
    placed = list(zip(plan.specs, plan.placements))
    for spec, p in placed:
        assert p.offset % alignment == 0
        assert p.offset >= base
        assert p.offset + spec.allocated_memory <= plan.bufsizes[p.mem_id] - padding
    for i, (a, pa) in enumerate(placed):
        for b, pb in placed[i + 1 :]:
            if pa.mem_id != pb.mem_id or a in chain(b) or b in chain(a):
                continue
            live = not (a.lifetime[1] < b.lifetime[0] or b.lifetime[1] < a.lifetime[0])
            bytes_ = (
                pa.offset < pb.offset + b.allocated_memory
                and pb.offset < pa.offset + a.allocated_memory
            )
            assert not (live and bytes_ and a.allocated_memory and b.allocated_memory), (a, b)
            if bytes_ and a.allocated_memory and b.allocated_memory:
                assert pa.mem_obj_id == pb.mem_obj_id  # ExecuTorch's verifier asks for this


def test_a_chain_is_planned_at_load():
    specs = [Spec(100, 0, 1), Spec(200, 1, 2), Spec(100, 2, 3)]
    plan = plan_specs(16, specs, timeout=10)
    check(plan, 16)
    assert [s.allocated_memory for s in specs] == [112, 208, 112]  # realigned
    assert plan.memories[1].load == 320
    assert plan.bufsizes == [0, 320]
    assert plan.memories[1].at_load
    assert plan.placements[0].offset == plan.placements[2].offset  # the two ends share bytes


def test_lifetimes_include_both_ends():
    touching = plan_specs(16, [Spec(64, 0, 1), Spec(64, 1, 2)], timeout=10)
    apart = plan_specs(16, [Spec(64, 0, 0), Spec(64, 1, 1)], timeout=10)
    assert touching.bufsizes == [0, 128]  # both live at step 1
    assert apart.bufsizes == [0, 64]


def test_any_positive_alignment():
    specs = [Spec(50, 0, 2), Spec(10, 1, 3), Spec(30, 2, 4), Spec(70, 4, 5)]
    plan = plan_specs(24, specs, timeout=10)
    check(plan, 24)
    assert [s.allocated_memory for s in specs] == [72, 24, 48, 72]
    assert plan.bufsizes[1] == plan.memories[1].load == 144
    with pytest.raises(ValueError, match="alignment"):
        plan_specs(0, specs)


def test_each_memory_id_is_planned_on_its_own():
    specs = [
        Spec(64, 0, 3),
        Spec(64, 0, 3, mem_id=3),
        Spec(32, 1, 2, mem_id=3),
        Spec(16, 0, 1, mem_id=1),
    ]
    plan = plan_specs(16, specs, timeout=10)
    check(plan, 16)
    assert plan.bufsizes == [0, 80, 0, 96]
    assert [p.mem_id for p in plan.placements] == [1, 3, 3, 1]
    assert sorted(plan.memories) == [1, 3]
    assert {p.offset for p in plan.placements if p.mem_id == 3} == {0, 64}


def test_storage_bases_are_followed():
    base = Spec(64, 0, 2)
    inner = Spec(16, 2, 5, base=base, base_offset=32)
    innermost = Spec(16, 5, 6, base=inner, base_offset=0)
    other = Spec(64, 3, 4)
    plan = plan_specs(16, [base, inner, innermost, other], timeout=10)
    check(plan, 16)
    at = {id(s): p for s, p in zip(plan.specs, plan.placements)}
    assert at[id(inner)].offset == at[id(base)].offset + 32
    assert at[id(innermost)].offset == at[id(inner)].offset
    assert at[id(inner)].mem_obj_id == at[id(base)].mem_obj_id
    # base holds its bytes until inner's last step, so other cannot reuse them
    assert plan.bufsizes == [0, 128]
    assert len(plan.memories[1].problem) == 2  # inner specs take no room of their own


def test_bad_storage_bases_are_errors():
    outside = Spec(64, 0, 1)
    with pytest.raises(ValueError, match="not among the specs"):
        plan_specs(16, [Spec(16, 0, 1, base=outside)])
    a = Spec(64, 0, 1)
    b = Spec(64, 0, 1, base=a)
    a.storage_base = b
    with pytest.raises(ValueError, match="cycle"):
        plan_specs(16, [a, b])
    big = Spec(64, 0, 1)
    with pytest.raises(ValueError, match="do not fit"):
        plan_specs(16, [big, Spec(32, 0, 1, base=big, base_offset=48)])
    with pytest.raises(ValueError, match="no lifetime"):
        plan_specs(16, [Spec(64, None, None)])
    with pytest.raises(ValueError, match="not a multiple of the alignment 16"):
        plan_specs(16, [big, Spec(16, 0, 1, base=big, base_offset=8)])
    with pytest.raises(ValueError, match=r"timeout=0 \(no time limit\) needs nodes=N"):
        plan_specs(16, [big], timeout=0)
    for bad in [-1, float("nan")]:
        with pytest.raises(ValueError, match="timeout must be positive seconds, 0"):
            plan_specs(16, [big], timeout=bad)


def test_reserved_bytes_and_padding():
    specs = [Spec(32, 0, 1), Spec(32, 1, 2, mem_id=2)]
    plan = plan_specs(16, specs, input_sizes=[0, 40], extra_padding=64, timeout=10)
    check(plan, 16, padding=64)
    assert plan.placements[0].offset == 48  # 40 reserved, rounded up to the alignment
    assert plan.placements[1].offset == 0  # memory 2 has no reservation
    assert plan.bufsizes == [0, 48 + 32 + 64, 32 + 64]


def test_duplicates_empty_and_zero_size():
    spec = Spec(48, 0, 1)
    plan = plan_specs(16, [spec, Spec(0, 0, 1), spec], timeout=10)
    assert len(plan.specs) == 2 and plan.bufsizes == [0, 48]
    assert plan.placements[1].offset == 0
    assert plan_specs(16, []).bufsizes == [0, 0]


def random_specs(count, seed):
    """``count`` specs of random sizes and lifetimes, and one inside every tenth one's storage."""
    rng = random.Random(seed)
    specs = []
    for _ in range(count):
        first = rng.randrange(count)
        specs.append(Spec(rng.randrange(1, 4096), first, first + rng.randrange(1, 40)))
    for k in range(0, count, 10):  # a few in-place results inside another's storage
        base = specs[k]
        specs.append(Spec(base.nbytes // 2, base.lifetime[1], base.lifetime[1] + 3, base=base))
    return specs


def test_random_graphs_are_valid_deterministic_and_never_worse_than_a_baseline():
    specs = random_specs(300, seed=1)
    first = plan_specs(16, specs, timeout=None, nodes=20000)
    again = plan_specs(16, specs, timeout=None, nodes=20000)
    check(first, 16)
    assert first.placements == again.placements
    memory = first.memories[1]
    baseline = telamalloc.solve(memory.problem, minimize=True, algo="tflite")
    assert memory.load <= first.bufsizes[1] <= baseline.peak * 16


def test_no_time_limit_with_a_node_limit_plans_as_the_node_limit_alone():
    specs = random_specs(60, seed=3)
    unlimited = plan_specs(16, specs, timeout=0, nodes=5000)
    check(unlimited, 16)
    assert unlimited.placements == plan_specs(16, specs, timeout=None, nodes=5000).placements


def test_a_tiny_time_limit_still_gives_a_plan():
    specs = random_specs(5000, seed=2)
    plan = plan_specs(16, specs, timeout=1e-6)
    assert all(p.offset % 16 == 0 for p in plan.placements)
    memory = plan.memories[1]
    assert telamalloc.validate(memory.problem, memory.allocation.offsets)
    assert plan.bufsizes[1] == memory.allocation.peak * 16 >= memory.load


def test_planner_is_named_for_the_suite():
    planner = Planner(timeout=2.5)
    assert planner.__name__ == "telamalloc"
    assert planner.plans == []
    assert repr(planner) == "Planner(timeout=2.5, nodes=None)"


def test_public_items_are_documented_and_executorch_is_not_imported():
    import inspect
    import subprocess
    import sys

    import telamalloc.executorch as tex

    for name in tex.__all__:
        item = getattr(tex, name)
        if callable(item):
            assert inspect.getdoc(item), name
    code = (
        "import sys, telamalloc.executorch\n"
        "print('executorch' in sys.modules, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
