"""Type stubs of telamalloc's compiled module (re-exported by the package ``telamalloc``)."""

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Union, final

import numpy as np
import numpy.typing as npt

__version__: str
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

_Path = Union[str, os.PathLike[str]]
_IntArray = Union[npt.NDArray[np.integer], Sequence[int]]
_BufferLike = Union[
    "Buffer",
    tuple[str, int, int, int],
    tuple[str, int, int, int, int],
    tuple[str, int, int, int, int, Union[int, None]],
]
_Offsets = Union["Allocation", _IntArray]

class TelamallocError(ValueError):
    """Bad input or an impossible request, with the command line's message (file, line and
    field for files; ``buffers[i]`` and the field for problems built in Python; the column and
    index for arrays, ``size[3]: -4 is negative``; the argument for numbers, ``capacity: -1 is
    negative``)."""

class TelamallocWarning(UserWarning):
    """Something the caller should know that did not stop the work (a model tensor the
    importer left out, a learned policy that fell back to the fixed one)."""

@final
class Buffer:
    """One buffer: live over ``[lower, upper)``, ``size`` bytes, at a multiple of
    ``alignment`` (a power of two); ``offset`` fixes its address (None: the allocator chooses).
    Raises ``TelamallocError`` when it breaks a rule or a number is negative or beyond 64 bits,
    ``TypeError`` when a number is not an integer; both name the field."""

    def __new__(
        cls,
        id: str,
        lower: int,
        upper: int,
        size: int,
        alignment: int = 1,
        offset: int | None = None,
        memories: list[str] | None = None,
        benefit: int | None = None,
    ) -> Buffer: ...
    @property
    def id(self) -> str:
        """The caller's name for the buffer."""
    @property
    def lower(self) -> int:
        """First time step at which the buffer is live."""
    @property
    def upper(self) -> int:
        """First time step at which the buffer is no longer live."""
    @property
    def size(self) -> int:
        """Size in bytes."""
    @property
    def alignment(self) -> int:
        """The offset must be a multiple of this power of two."""
    @property
    def offset(self) -> int | None:
        """The fixed offset, or None when the allocator chooses."""
    @property
    def memories(self) -> list[str] | None:
        """The ids of the memories the buffer may go to, or None for any."""
    @property
    def benefit(self) -> int | None:
        """What keeping it on chip is worth to ``solve(..., spill=True)`` (None: its size)."""
    def __eq__(self, other: object, /) -> bool: ...

@final
class Problem:
    """Buffers and, optionally, the capacity to fit; checked by the library's rules when made
    (a broken rule raises ``TelamallocError`` naming ``buffers[i]`` and the field)."""

    def __new__(
        cls,
        buffers: Iterable[_BufferLike],
        capacity: int | None = None,
        memories: Iterable[tuple[str, int] | tuple[str, int, int]] | None = None,
    ) -> Problem:
        """``memories``: tuples ``(id, capacity[, cost per byte])``; ``solve`` then places
        every buffer in one its ``memories`` allow at the least total cost."""
    @staticmethod
    def from_arrays(
        lower: _IntArray,
        upper: _IntArray,
        size: _IntArray,
        alignment: _IntArray | None = None,
        offset: _IntArray | None = None,
        capacity: int | None = None,
    ) -> Problem:
        """A problem from one-dimensional integer arrays, one value per buffer: numpy arrays of
        every integer dtype (signed or unsigned, 8 to 64 bits, either byte order) without a
        Python object per buffer, or sequences of ints. ``offset`` -1 (or ``2**64 - 1``) leaves
        a buffer to the allocator. A value that is not an integer raises ``TypeError``; one that
        is negative (other offsets than -1) or does not fit in 64 bits raises
        ``TelamallocError``; both name the column and index. Buffer ``i`` gets the id ``str(i)``."""
    def with_capacity(self, capacity: int | None) -> Problem:
        """The same buffers with another capacity, checked again."""
    @property
    def buffers(self) -> list[Buffer]:
        """The buffers, in order (one new object each)."""
    @property
    def capacity(self) -> int | None:
        """The capacity in bytes, or None."""
    @property
    def memories(self) -> list[tuple[str, int, int]]:
        """The memories as ``(id, capacity, cost)`` (empty: the one capacity)."""
    @property
    def load(self) -> int:
        """LOAD: the largest total size live at one time step (a lower bound on any peak)."""
    @property
    def horizon(self) -> int:
        """The largest ``upper`` of any buffer."""
    def __len__(self) -> int: ...
    def __getitem__(self, index: int, /) -> Buffer: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class Allocation:
    """The result of ``solve``."""

    @property
    def status(self) -> Literal["solved", "infeasible", "limit", "exceeds"]:
        """``solved``; ``infeasible`` (proven); ``limit`` (time, nodes or Ctrl-C first);
        ``exceeds`` (a heuristic's layout is above the capacity: proves nothing)."""
    @property
    def message(self) -> str:
        """The status in words, as the command line prints it."""
    @property
    def solved(self) -> bool:
        """Whether offsets were found."""
    @property
    def offsets(self) -> npt.NDArray[np.uint64] | None:
        """One validated offset per buffer (read-only), when solved."""
    @property
    def peak(self) -> int | None:
        """The peak of the layout found, if any (also for ``exceeds``)."""
    @property
    def load(self) -> int:
        """LOAD of the problem (a lower bound on any peak)."""
    @property
    def lower_bound(self) -> int | None:
        """A proven lower bound on the peak (minimisation), if any."""
    @property
    def lower_bound_source(self) -> str | None:
        """Where the lower bound comes from (minimisation): "LOAD", or e.g.
        "window [0,5) of 7 buffers infeasible at 4"."""
    @property
    def capacity(self) -> int | None:
        """The capacity fitted (None when minimising)."""
    @property
    def elapsed(self) -> float:
        """Seconds spent inside the library's front door."""
    @property
    def algorithm(self) -> str:
        """The algorithm's name."""
    @property
    def warnings(self) -> list[str]:
        """Warnings of the solve (also issued as ``TelamallocWarning``)."""
    @property
    def stats(self) -> dict[str, object]:
        """The search counters (empty for a heuristic); CP-SAT's under ``"cpsat"``."""
    @property
    def memory(self) -> list[str | None] | None:
        """Spill or memories: each buffer's memory id (``"chip"`` for the spill goal's one
        capacity), None for a buffer moved out; None for the other goals."""
    @property
    def cost(self) -> int | None:
        """Spill or memories: the total cost (size x cost per byte of each memory)."""
    @property
    def kept_bytes(self) -> int | None:
        """Spill or memories: the bytes kept in a memory."""
    @property
    def greedy_kept_bytes(self) -> int | None:
        """Spill: the bytes greedy admission (benefit order, first fit) keeps."""
    @property
    def proven_best(self) -> bool | None:
        """Spill or memories: whether no better assignment exists."""

@final
class Report:
    """The validator's verdict; true when valid."""

    @property
    def valid(self) -> bool: ...
    @property
    def violations(self) -> list[str]:
        """The first violations found (at most 20), in words."""
    def __bool__(self) -> bool: ...

def algorithms() -> list[str]:
    """Every name ``solve(..., algo=NAME)`` accepts."""

def solve(
    problem: Problem,
    capacity: int | None = None,
    minimize: bool = False,
    timeout: float | None = None,
    nodes: int | None = None,
    policy: str = "portfolio",
    algo: str = "search",
    seed: int = 0,
    threads: int = 1,
    spill: bool = False,
) -> Allocation:
    """Finds an offset for every buffer under the capacity (default: the problem's own), or
    the smallest peak with ``minimize=True``. ``timeout`` is positive, at most 10**9 seconds,
    or 0 for none (minimise, spill and memories only with ``nodes``); ``nodes`` is a total over restarts and minimise's probes, never exceeded (minimise under
    ``nodes`` alone has no clock); ``threads`` 1 to 1024. The GIL is released while it runs; Ctrl-C (KeyboardInterrupt) stops
    it."""

def read_csv(path: _Path, capacity: int | None = None, memories: _Path | None = None) -> Problem:
    """Reads a problem file (CSV, or JSON for ``.json``); the capacity defaults to the file's
    own or its name's (``NAME.CAPACITY.csv`` or ``NAME.capCAPACITY.csv``). ``memories``: a CSV
    file ``id,capacity[,cost]`` for the buffers' ``memories`` column."""

def write_csv(path: _Path, problem: Problem, offsets: _Offsets | None = None) -> None:
    """Writes the problem as CSV, or with ``offsets`` its solution (an ``offset`` column)."""

def read_solution(path: _Path, problem: Problem) -> npt.NDArray[np.uint64]:
    """Reads a solution file's offsets, in the problem's buffer order."""

def validate(problem: Problem, offsets: _Offsets, capacity: int | None = None) -> Report:
    """Checks offsets with the library's independent validator (``capacity`` above 0; default:
    the problem's own). Offsets of the wrong length are a violation, not an error."""

def import_model(
    path: _Path,
    alignment: int = 64,
    batch: int = 1,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> Problem:
    """Imports a ``.tflite`` or ``.onnx`` model as a problem (one buffer per activation
    tensor); what was left out is issued as ``TelamallocWarning``."""

def plot(
    problem: Problem,
    offsets: _Offsets,
    path: _Path | None = None,
    capacity: int | None = None,
) -> str:
    """Draws the plan (one offset per buffer) as SVG and returns it; writes it to ``path``
    (``.svg``) if given. ``capacity`` (above 0) is the line drawn, also when the plan's peak is
    above it."""
