"""telamalloc: memory offsets for the buffers of a compiled ML model.

Every buffer is live over ``[lower, upper)`` and ``size`` bytes long; ``solve`` gives each an
offset so that no two buffers live at the same time share an address and nothing exceeds the
capacity (the TelaMalloc hybrid search, or a production heuristic with ``algo=``). Every offset
it returns has passed an independent validator.

>>> import telamalloc
>>> problem = telamalloc.Problem([
...     telamalloc.Buffer("input", 0, 2, 512),
...     telamalloc.Buffer("conv1", 1, 3, 1024),
...     telamalloc.Buffer("output", 2, 4, 512),
... ])
>>> result = telamalloc.solve(problem, capacity=1536)
>>> result.status, result.peak
('solved', 1536)
>>> bool(telamalloc.validate(problem, result, capacity=1536))
True

The compiled part is ``telamalloc._native`` (Rust, pyo3); this package re-exports it.
"""

from telamalloc._native import (
    Allocation,
    Buffer,
    Problem,
    Report,
    TelamallocError,
    TelamallocWarning,
    __version__,
    algorithms,
    import_model,
    plot,
    read_csv,
    read_solution,
    solve,
    validate,
    write_csv,
)

__all__ = [
    "Allocation",
    "Buffer",
    "Problem",
    "Report",
    "TelamallocError",
    "TelamallocWarning",
    "__version__",
    "algorithms",
    "import_model",
    "plot",
    "read_csv",
    "read_solution",
    "solve",
    "validate",
    "write_csv",
]
