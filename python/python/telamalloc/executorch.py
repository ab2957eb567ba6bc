"""An ExecuTorch memory planning algorithm: telamalloc's search over ExecuTorch's tensor specs.

ExecuTorch's ``MemoryPlanningPass`` computes each tensor's lifetime and hands the tensor specs to
a planning algorithm, which gives every spec a memory id and an offset and returns the size of
each memory (its arena). ``plan`` is such an algorithm; use it alone, or beside ExecuTorch's
own ``greedy`` in its ``MemoryPlanningAlgorithmSuite``, which keeps the smaller plan::

    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite, greedy
    from executorch.exir.passes import MemoryPlanningPass
    import telamalloc.executorch

    # telamalloc alone (10 s at most per graph)
    alone = MemoryPlanningPass(memory_planning_algo=telamalloc.executorch.memory_planning_algo())
    # beside ExecuTorch's greedy: the suite keeps the plan with the smaller total
    both = MemoryPlanningPass(
        memory_planning_algo=MemoryPlanningAlgorithmSuite([greedy, telamalloc.executorch.plan])
    )
    program = edge.to_executorch(ExecutorchBackendConfig(memory_planning_pass=alone))

What it honours, as ExecuTorch's greedy does:

- **Lifetimes** as ExecuTorch computed them: ``spec.lifetime = [first, last]`` (both steps
  included) becomes the buffer ``[first, last + 1)``.
- **Alignment**: each spec's size is rounded up to the pass's ``alignment`` (ExecuTorch's
  ``spec.realign``), and every offset is a multiple of it. Any positive alignment works, a power of
  two or not: the problem is solved in units of ``alignment`` bytes.
- **Memory ids**: each ``spec.mem_id`` (None means 1) is planned on its own, as a problem of its
  own with its own arena.
- **Shared storage**: a spec with a ``storage_base`` (an in-place result, or a tensor a pass put
  inside another) gets no room of its own; it lies at its base's offset plus
  ``storage_base_offset`` (along chains of bases), in its base's memory, and the base is kept
  for the union of their lifetimes.
- **Submodules**: a graph whose ``input_mem_buffer_sizes`` reserves the first bytes of a memory
  (control flow) gets offsets after them; ``extra_padding`` is added to each arena.

Every memory's plan is telamalloc's ``solve(..., minimize=True)``: the best of the fast
baselines first, then the search down towards LOAD, the lower bound, within the time limit; if
the limit runs out before any baseline has finished, a baseline runs to the end, so there is
always an answer. The offsets have passed telamalloc's validator.

This module imports ExecuTorch only when a graph is planned (``Planner.__call__``) or a suite is
made (``memory_planning_algo``); ``plan_specs`` works on any objects with the spec fields it
reads, without ExecuTorch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from collections.abc import Iterable, Sequence
from typing import Any

from telamalloc._native import Allocation, Problem, solve

__all__ = [
    "DEFAULT_MEMORY_ID",
    "DEFAULT_TIMEOUT",
    "MemoryPlan",
    "Placement",
    "Plan",
    "Planner",
    "memory_planning_algo",
    "plan",
    "plan_specs",
]

#: The memory id ExecuTorch gives a spec without one (id 0 holds the constants).
DEFAULT_MEMORY_ID = 1
#: Seconds ``Planner`` spends at most on one graph when no limit is given (every memory id of it
#: together).
DEFAULT_TIMEOUT = 10.0
#: The baseline run to the end when the time limit passed before any baseline finished.
FALLBACK_ALGORITHM = "tflite"


@dataclass(frozen=True)
class Placement:
    """Where one spec went: its memory id, memory object and byte offset in that memory."""

    #: The memory (ExecuTorch's ``mem_id``).
    mem_id: int
    #: The memory object: specs whose bytes overlap (at different times) share one, as
    #: ExecuTorch's verifier expects; numbered from 0 over every memory of the plan.
    mem_obj_id: int
    #: Byte offset from the start of the memory.
    offset: int


@dataclass
class MemoryPlan:
    """The plan of one memory id: the problem solved and what it needs."""

    #: The memory id.
    mem_id: int
    #: The problem solved, in units of ``unit`` bytes (one buffer per spec that owns storage).
    problem: Problem
    #: The solve's result (None when the memory holds no storage of positive size).
    allocation: Allocation | None
    #: Bytes of one unit of ``problem`` (the alignment).
    unit: int
    #: Bytes reserved at the start of the memory (a submodule's ``input_mem_buffer_sizes``,
    #: rounded up to the alignment).
    base: int
    #: Bytes of the arena the specs need: the plan's peak, from ``base`` on.
    arena: int
    #: LOAD in bytes: the most bytes live at one step, a lower bound on any arena.
    load: int
    #: The memory's size as returned to ExecuTorch: ``base + arena + extra_padding``.
    total: int

    @property
    def at_load(self) -> bool:
        """Whether the arena equals LOAD (no plan can need less)."""
        return self.arena == self.load


@dataclass
class Plan:
    """What ``plan_specs`` decided: one placement per spec and the size of every memory."""

    #: The distinct specs, in the order first given (a spec given twice is planned once).
    specs: list[Any]
    #: One placement per spec of ``specs``.
    placements: list[Placement]
    #: The size of each memory, indexed by memory id, as ExecuTorch's algorithms return it:
    #: ``[0, 0]`` for no specs, else one entry per id up to the largest used (id 0, the
    #: constants, is 0 unless used).
    bufsizes: list[int]
    #: The plan of each memory id used, by id.
    memories: dict[int, MemoryPlan] = field(default_factory=dict)
    #: Seconds spent.
    elapsed: float = 0.0


def plan_specs(
    alignment: int,
    specs: Iterable[Any],
    input_sizes: Sequence[int] | None = None,
    extra_padding: int = 0,
    timeout: float | None = DEFAULT_TIMEOUT,
    nodes: int | None = None,
) -> Plan:
    """Plans ``specs`` (ExecuTorch ``TensorSpec`` objects, or any objects with their fields
    ``lifetime``, ``allocated_memory``, ``realign``, ``mem_id``, ``storage_base`` and
    ``storage_base_offset``) and returns the placements without writing them into the specs.

    ``alignment`` (positive) is realigned into every spec, as ExecuTorch's algorithms do.
    ``input_sizes[mem_id]`` bytes at the start of a memory are left free; ``extra_padding`` is
    added to each memory's size. ``timeout`` (seconds, None for telamalloc's own 60 s) is shared
    by all memory ids; ``nodes`` (search nodes per memory id) makes the plan the same on any
    machine when given without a timeout. ``timeout=0`` is no time limit, only with ``nodes``:
    each memory is minimised, which improves until a limit stops it. Raises ``ValueError`` for a bad alignment, padding or
    timeout, a spec without a lifetime, a storage base that is not among ``specs``, a cycle of
    bases, a ``storage_base_offset`` that is not a multiple of the alignment or a spec that does
    not fit in its base, and ``TelamallocError`` for a bad node limit.
    """
    start = time.monotonic()
    if isinstance(alignment, bool) or not isinstance(alignment, int) or alignment <= 0:
        raise ValueError(f"alignment must be a positive integer, not {alignment!r}")
    if extra_padding < 0:
        raise ValueError(f"extra_padding must not be negative, not {extra_padding}")
    if timeout is not None and not timeout >= 0:
        raise ValueError(f"timeout must be positive seconds, 0 (none) or None, not {timeout!r}")
    if timeout == 0 and nodes is None:
        raise ValueError(
            "timeout=0 (no time limit) needs nodes=N: each memory is minimised, which improves"
            " until a limit stops it"
        )
    unique: list[Any] = []
    index: dict[int, int] = {}
    for spec in specs:
        if id(spec) not in index:
            index[id(spec)] = len(unique)
            unique.append(spec)
    for spec in unique:
        spec.realign(alignment)
    roots, inner_offsets = _storage_roots(unique, index, alignment)
    spans = _root_spans(unique, roots)
    mem_ids = {i: _mem_id(unique[i]) for i in spans}
    offsets = [0] * len(unique)
    memories: dict[int, MemoryPlan] = {}
    ids = sorted(set(mem_ids.values()))
    for k, mem_id in enumerate(ids):
        owners = sorted(i for i in spans if mem_ids[i] == mem_id)
        base = 0
        if input_sizes is not None and mem_id < len(input_sizes):
            base = _round_up(int(input_sizes[mem_id]), alignment)
        share = timeout  # None (the default) or 0 (none)
        if timeout:
            left = max(timeout - (time.monotonic() - start), 0.0)
            share = max(left / (len(ids) - k), 1e-3)
        memory, local = _plan_memory(
            mem_id,
            [(spans[i], unique[i].allocated_memory) for i in owners],
            alignment,
            share,
            nodes,
        )
        memory.base = base
        memory.total = base + memory.arena + extra_padding
        memories[mem_id] = memory
        for i, offset in zip(owners, local):
            offsets[i] = base + offset
    placements = _placements(unique, roots, inner_offsets, offsets, mem_ids)
    if ids:
        bufsizes = [0] * (max(ids) + 1)
        for mem_id, memory in memories.items():
            bufsizes[mem_id] = memory.total
    else:
        bufsizes = [0, 0]
    return Plan(unique, placements, bufsizes, memories, time.monotonic() - start)


class Planner:
    """An ExecuTorch memory planning algorithm with its limits: call it as ExecuTorch calls
    ``greedy`` (``alignment, specs, graph_module, graph_signature, extra_padding``); it returns
    ExecuTorch's ``MemoryAlgoResult`` without changing a spec's memory id or offset (the suite
    writes the plan it keeps). ``timeout``: seconds for one graph, every memory id together
    (None: telamalloc's own 60 s; 0: none, only with ``nodes``); ``nodes``: search nodes per
    memory id (alone, without a timeout: the same plan on any machine). Each call's ``Plan`` is appended to ``plans``."""

    def __init__(self, timeout: float | None = DEFAULT_TIMEOUT, nodes: int | None = None):
        self.timeout = timeout
        self.nodes = nodes
        #: The plan of every graph planned so far, in order.
        self.plans: list[Plan] = []
        # ExecuTorch's suite names its algorithms by ``__name__``.
        self.__name__ = "telamalloc"

    def __call__(
        self,
        alignment: int,
        specs: Iterable[Any],
        graph_module: Any,
        graph_signature: Any = None,
        extra_padding: int = 0,
    ) -> Any:
        """Plans the specs of one graph and returns ExecuTorch's ``MemoryAlgoResult``."""
        from executorch.exir.memory_planning import MemoryAlgoResult, SpecAllocResult

        input_sizes = getattr(graph_module, "input_mem_buffer_sizes", None)
        result = plan_specs(alignment, specs, input_sizes, extra_padding, self.timeout, self.nodes)
        self.plans.append(result)
        spec_dict = {
            spec: SpecAllocResult(p.mem_id, p.mem_obj_id, p.offset)
            for spec, p in zip(result.specs, result.placements)
        }
        return MemoryAlgoResult(spec_dict, list(result.bufsizes))

    def __repr__(self) -> str:
        return f"Planner(timeout={self.timeout!r}, nodes={self.nodes!r})"


def plan(
    alignment: int,
    specs: Iterable[Any],
    graph_module: Any,
    graph_signature: Any = None,
    extra_padding: int = 0,
) -> Any:
    """telamalloc as an ExecuTorch planning algorithm with the default limits (a fresh
    ``Planner()``): for ``MemoryPlanningAlgorithmSuite([...])``, beside ``greedy`` or alone."""
    return Planner()(alignment, specs, graph_module, graph_signature, extra_padding)


def memory_planning_algo(planner: Planner | None = None) -> Any:
    """ExecuTorch's ``MemoryPlanningAlgorithmSuite`` running only ``planner`` (default:
    ``Planner()``): the value for ``MemoryPlanningPass(memory_planning_algo=...)``."""
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite

    return MemoryPlanningAlgorithmSuite(algo_list=[planner if planner is not None else Planner()])


def _mem_id(spec: Any) -> int:
    mem_id = getattr(spec, "mem_id", None)
    return DEFAULT_MEMORY_ID if mem_id is None else int(mem_id)


def _round_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def _lifetime(spec: Any, i: int) -> tuple[int, int]:
    lifetime = getattr(spec, "lifetime", None)
    if lifetime is None or len(lifetime) != 2 or None in lifetime:
        raise ValueError(f"specs[{i}] has no lifetime ({lifetime!r}): run ExecuTorch's lifetimes")
    first, last = int(lifetime[0]), int(lifetime[1])
    if first < 0 or last < first:
        raise ValueError(f"specs[{i}] has the lifetime [{first}, {last}]: steps must rise from 0")
    return first, last


def _storage_roots(
    specs: list[Any], index: dict[int, int], alignment: int
) -> tuple[list[int], list[int]]:
    """For each spec, the spec whose storage it lies in (itself when it has no base) and its
    byte offset inside that storage (a multiple of ``alignment``, as ExecuTorch requires)."""
    roots, inner = [], []
    for i, spec in enumerate(specs):
        offset, node, seen = 0, spec, {id(spec)}
        while getattr(node, "storage_base", None) is not None:
            step = int(getattr(node, "storage_base_offset", 0) or 0)
            if step < 0 or step % alignment:
                raise ValueError(
                    f"specs[{i}]: storage_base_offset {step} is not a multiple of the "
                    f"alignment {alignment} at or above 0"
                )
            offset += step
            node = node.storage_base
            if id(node) in seen:
                raise ValueError(f"specs[{i}]: its storage bases form a cycle")
            if id(node) not in index:
                raise ValueError(f"specs[{i}]: its storage base is not among the specs planned")
            seen.add(id(node))
        root = index[id(node)]
        if root != i and offset + spec.allocated_memory > specs[root].allocated_memory:
            raise ValueError(
                f"specs[{i}]: {spec.allocated_memory} bytes at {offset} do not fit in its storage "
                f"base's {specs[root].allocated_memory}"
            )
        roots.append(root)
        inner.append(offset)
    return roots, inner


def _root_spans(specs: list[Any], roots: list[int]) -> dict[int, tuple[int, int]]:
    """The steps ``[lower, upper)`` of each storage owner: its lifetime joined with those of
    every spec inside its storage."""
    spans: dict[int, tuple[int, int]] = {}
    for i, spec in enumerate(specs):
        first, last = _lifetime(spec, i)
        lower, upper = spans.get(roots[i], (first, last + 1))
        spans[roots[i]] = (min(lower, first), max(upper, last + 1))
    return spans


def _plan_memory(
    mem_id: int,
    buffers: list[tuple[tuple[int, int], int]],
    unit: int,
    timeout: float | None,
    nodes: int | None,
) -> tuple[MemoryPlan, list[int]]:
    """Solves one memory: ``buffers`` as ``((lower, upper), bytes)``; the memory's plan and one
    byte offset per buffer (from the memory's base)."""
    sized = [k for k, (_, size) in enumerate(buffers) if size > 0]
    for k in sized:
        if buffers[k][1] % unit:
            raise ValueError(f"a spec of {buffers[k][1]} bytes is not realigned to {unit}")
    problem = Problem.from_arrays(
        [buffers[k][0][0] for k in sized],
        [buffers[k][0][1] for k in sized],
        [buffers[k][1] // unit for k in sized],
    )
    offsets = [0] * len(buffers)
    allocation = None
    arena = 0
    if sized:
        allocation = solve(problem, minimize=True, timeout=timeout, nodes=nodes)
        if allocation.offsets is None:
            allocation = solve(problem, minimize=True, algo=FALLBACK_ALGORITHM)
        assert allocation.offsets is not None and allocation.peak is not None
        for k, offset in zip(sized, allocation.offsets.tolist()):
            offsets[k] = offset * unit
        arena = allocation.peak * unit
    memory = MemoryPlan(mem_id, problem, allocation, unit, 0, arena, problem.load * unit, 0)
    return memory, offsets


def _placements(
    specs: list[Any],
    roots: list[int],
    inner: list[int],
    offsets: list[int],
    mem_ids: dict[int, int],
) -> list[Placement]:
    """Every spec's placement; memory objects are the runs of overlapping bytes of a memory."""
    by_memory: dict[int, list[int]] = {}
    for i, mem_id in mem_ids.items():
        by_memory.setdefault(mem_id, []).append(i)
    objects: dict[int, int] = {}
    count = 0
    for mem_id in sorted(by_memory):
        end = -1  # The end of the current run of overlapping bytes.
        for i in sorted(by_memory[mem_id], key=lambda i: (offsets[i], i)):
            if offsets[i] >= end:
                count += 1
                end = offsets[i] + specs[i].allocated_memory
            else:
                end = max(end, offsets[i] + specs[i].allocated_memory)
            objects[i] = count - 1
    return [
        Placement(mem_ids[roots[i]], objects[roots[i]], offsets[roots[i]] + inner[i])
        for i in range(len(specs))
    ]
