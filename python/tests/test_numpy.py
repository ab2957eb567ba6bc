"""The numpy path: problems from arrays of any integer type, without a Python object per buffer."""

import numpy as np
import pytest

import telamalloc
from conftest import REPO

K = REPO / "datasets" / "challenging" / "K.1048576.csv"


def k_arrays():
    problem = telamalloc.read_csv(K)
    buffers = problem.buffers
    columns = {
        name: np.array([getattr(b, name) for b in buffers], dtype=np.int64)
        for name in ("lower", "upper", "size")
    }
    return problem, columns


def test_arrays_solve_like_the_file():
    problem, columns = k_arrays()
    from_arrays = telamalloc.Problem.from_arrays(**columns, capacity=1048576)
    assert len(from_arrays) == len(problem)
    assert from_arrays.load == problem.load
    assert from_arrays[3].id == "3"
    by_file = telamalloc.solve(problem)
    by_arrays = telamalloc.solve(from_arrays)
    assert by_arrays.solved
    assert by_arrays.offsets.tolist() == by_file.offsets.tolist()
    assert telamalloc.validate(from_arrays, by_arrays)


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.uint32, np.int32, np.uint16, np.int16])
def test_any_integer_type(dtype):
    lower = np.array([0, 3, 0, 9, 0], dtype=dtype)
    upper = np.array([3, 9, 9, 21, 21], dtype=dtype)
    size = np.array([4, 4, 4, 4, 4], dtype=dtype)
    result = telamalloc.solve(telamalloc.Problem.from_arrays(lower, upper, size), capacity=12)
    assert result.solved and result.peak == 12


def test_lists_and_strided_arrays():
    lower = np.arange(0, 20, 2)[::2]  # not contiguous
    upper = lower + 1
    size = [8] * len(lower)
    problem = telamalloc.Problem.from_arrays(lower, upper, size)
    assert problem.load == 8
    assert telamalloc.solve(problem, minimize=True).peak == 8


def test_alignment_and_fixed_offsets():
    lower = np.array([0, 0, 0])
    upper = np.array([4, 4, 4])
    size = np.array([3, 5, 8])
    alignment = np.array([1, 8, 8])
    offset = np.array([-1, -1, 0])  # the last buffer is pinned at 0
    problem = telamalloc.Problem.from_arrays(lower, upper, size, alignment, offset)
    assert problem[2].offset == 0 and problem[0].offset is None
    result = telamalloc.solve(problem, minimize=True)
    assert result.offsets[2] == 0 and result.offsets[1] % 8 == 0
    unsigned = np.array([2**64 - 1, 2**64 - 1, 0], dtype=np.uint64)
    assert telamalloc.Problem.from_arrays(lower, upper, size, alignment, unsigned) == problem


def test_negative_values_are_refused_with_their_place():
    with pytest.raises(telamalloc.TelamallocError, match=r"^size\[1\]: -4 is negative$"):
        telamalloc.Problem.from_arrays([0, 0], [1, 1], [4, -4])


def test_lengths_must_agree():
    with pytest.raises(telamalloc.TelamallocError, match="^upper has 1 values, lower has 2$"):
        telamalloc.Problem.from_arrays([0, 0], [1], [4, 4])


def test_rules_name_the_buffer():
    with pytest.raises(telamalloc.TelamallocError) as raised:
        telamalloc.Problem.from_arrays([0, 5], [1, 5], [4, 4])
    assert str(raised.value) == "buffers[1]: field 'upper': lower (5) must be less than upper (5)"


def test_non_integer_arrays_are_type_errors():
    with pytest.raises(TypeError, match=r"^lower\[0\]: expected an integer, got 0.5 \(float64\)$"):
        telamalloc.Problem.from_arrays(np.array([0.5]), [1], [4])
    with pytest.raises(TypeError, match="2-dimensional"):
        telamalloc.Problem.from_arrays(np.zeros((2, 2), dtype=np.int64), [1, 1], [4, 4])


def test_validate_takes_arrays():
    problem = telamalloc.Problem.from_arrays([0, 0], [2, 2], [4, 4])
    assert telamalloc.validate(problem, np.array([0, 4]), capacity=8)
    overlap = telamalloc.validate(problem, [0, 2], capacity=8)
    assert not overlap
    assert overlap.violations == [
        "buffers '0' and '1' are both live at time 0 and share addresses"
    ]
