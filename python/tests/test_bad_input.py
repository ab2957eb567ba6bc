"""Bad input through every entry point that takes integers: arrays of any integer dtype are read,
anything else is refused with the field (and the index, for arrays) in the message, never taken
silently (a negative offset as "free") nor left to a bare OverflowError."""

import numpy as np
import pytest

import telamalloc

LOWER, UPPER, SIZE = [0, 0], [2, 2], [4, 4]

INTEGER_DTYPES = [
    f"{order}{kind}{width}"
    for order in "<>"
    for kind in "iu"
    for width in (1, 2, 4, 8)
]


def refused(call, exception=telamalloc.TelamallocError) -> str:
    with pytest.raises(exception) as raised:
        call()
    return str(raised.value)


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_every_integer_dtype_is_read(dtype):
    lower = np.array([0, 3, 0, 9, 0], dtype=dtype)
    upper = np.array([3, 9, 9, 21, 21], dtype=dtype)
    size = np.array([4, 4, 4, 4, 4], dtype=dtype)
    alignment = np.array([1, 1, 2, 4, 4], dtype=dtype)
    problem = telamalloc.Problem.from_arrays(lower, upper, size, alignment, capacity=12)
    assert [b.upper for b in problem.buffers] == [3, 9, 9, 21, 21]
    assert [b.alignment for b in problem.buffers] == [1, 1, 2, 4, 4]
    result = telamalloc.solve(problem)
    assert result.solved and result.peak == 12
    offsets = result.offsets.astype(dtype)
    assert telamalloc.validate(problem, offsets)
    assert telamalloc.plot(problem, offsets).startswith("<svg")


@pytest.mark.parametrize("dtype", [d for d in INTEGER_DTYPES if d[1] == "i"])
def test_minus_one_frees_an_offset_in_every_signed_dtype(dtype):
    offset = np.array([-1, 0], dtype=dtype)
    problem = telamalloc.Problem.from_arrays(LOWER, UPPER, SIZE, offset=offset)
    assert problem[0].offset is None and problem[1].offset == 0


def test_big_endian_values_are_read_as_numbers():
    lower = np.array([0, 256, 65536], dtype=">u4")
    problem = telamalloc.Problem.from_arrays(lower, lower + 1, np.array([1, 2, 3], dtype=">i8"))
    assert [(b.lower, b.size) for b in problem.buffers] == [(0, 1), (256, 2), (65536, 3)]
    big = np.array([2**64 - 1, 5], dtype=">u8")
    assert telamalloc.Problem.from_arrays([0, 0], [1, 1], [1, 1], offset=big)[0].offset is None


@pytest.mark.parametrize("value", [-2, -3, -(2**63)])
def test_a_negative_offset_other_than_minus_one_is_refused(value):
    offset = np.array([-1, value], dtype=np.int64)
    text = refused(lambda: telamalloc.Problem.from_arrays(LOWER, UPPER, SIZE, offset=offset))
    assert text == f"offset[1]: {value} is negative (-1 leaves the buffer to the allocator)"
    listed = refused(lambda: telamalloc.Problem.from_arrays(LOWER, UPPER, SIZE, offset=[value, 0]))
    assert listed.startswith(f"offset[0]: {value} is negative")


def test_minus_one_and_the_largest_uint64_in_one_list():
    # numpy would make a float64 array of this list: the values must stay exact.
    problem = telamalloc.Problem.from_arrays(LOWER, UPPER, SIZE, offset=[2**64 - 1, -1])
    assert problem[0].offset is None and problem[1].offset is None


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        (np.array([0.5, 1.0]), "lower[0]: expected an integer, got 0.5 (float64)"),
        (np.array([0.0, 1.0]), "lower[0]: expected an integer, got 0.0 (float64)"),
        (np.array([0, 1], dtype=">f4"), "lower[0]: expected an integer, got 0.0 (float32)"),
        (np.array([False, True]), "lower[0]: expected an integer, got False (bool)"),
        (np.array(["0", "1"]), "lower[0]: expected an integer, got '0' (str_)"),
        ([0, 1.5], "lower[1]: expected an integer, got 1.5 (float)"),
        ([0, "a"], "lower[1]: expected an integer, got 'a' (str)"),
        ([0, None], "lower[1]: expected an integer, got None (NoneType)"),
        ([0, True], None),  # numpy makes an int64 array of it: read as 0, 1
        (np.array([0, True], dtype=object), "lower[1]: expected an integer, got True (bool)"),
        ([[0], [1, 2]], "lower[0]: expected an integer, got [0] (list)"),
    ],
)
def test_non_integers_are_type_errors_with_field_and_index(column, expected):
    call = lambda: telamalloc.Problem.from_arrays(column, UPPER, SIZE)
    if expected is None:
        assert [b.lower for b in call().buffers] == [0, 1]
        return
    assert refused(call, TypeError) == expected


def test_overflowing_values_are_refused_with_field_and_index():
    assert refused(lambda: telamalloc.Problem.from_arrays(LOWER, UPPER, [4, 2**64])) == (
        "size[1]: 18446744073709551616 does not fit in 64 bits"
    )
    assert refused(lambda: telamalloc.Problem.from_arrays([-(2**70), 0], UPPER, SIZE)) == (
        f"lower[0]: {-(2**70)} is negative"
    )
    objects = np.array([0, 2**80], dtype=object)
    assert refused(lambda: telamalloc.Problem.from_arrays(LOWER, UPPER, SIZE, offset=objects)) == (
        f"offset[1]: {2**80} does not fit in 64 bits"
    )
    assert refused(lambda: telamalloc.Problem.from_arrays(LOWER, UPPER, SIZE, alignment=[1, -8])) == (
        "alignment[1]: -8 is negative"
    )


def test_empty_columns_make_an_empty_problem():
    assert len(telamalloc.Problem.from_arrays([], [], [])) == 0
    empty = np.array([], dtype=np.float64)
    assert len(telamalloc.Problem.from_arrays(empty, empty, empty)) == 0


def test_shapes_stay_type_errors():
    assert refused(lambda: telamalloc.Problem.from_arrays(5, [1], [4]), TypeError) == (
        "lower: expected a one-dimensional array of integers, got a 0-dimensional array"
    )
    assert "2-dimensional" in refused(
        lambda: telamalloc.Problem.from_arrays(np.zeros((2, 2), dtype=">i8"), UPPER, SIZE), TypeError
    )


PROBLEM = telamalloc.Problem.from_arrays(LOWER, UPPER, SIZE, capacity=8)


@pytest.mark.parametrize(
    "entry",
    [
        lambda offsets: telamalloc.validate(PROBLEM, offsets),
        lambda offsets: telamalloc.plot(PROBLEM, offsets),
        lambda offsets: telamalloc.write_csv("/dev/null", PROBLEM, offsets),
    ],
    ids=["validate", "plot", "write_csv"],
)
def test_offsets_are_read_like_columns(entry):
    entry(np.array([0, 4], dtype=">u8"))  # read, no error
    assert refused(lambda: entry([0, -4])) == "offsets[1]: -4 is negative"
    assert refused(lambda: entry([0, 4.0]), TypeError) == "offsets[1]: expected an integer, got 4.0 (float)"
    assert refused(lambda: entry([0, 2**64])) == (
        "offsets[1]: 18446744073709551616 does not fit in 64 bits"
    )


@pytest.mark.parametrize("offsets", [[0], [0, 4, 8]])
def test_plot_refuses_offsets_of_the_wrong_length(offsets):
    assert refused(lambda: telamalloc.plot(PROBLEM, offsets)) == (
        f"the solution has {len(offsets)} offsets for 2 buffers"
    )


def test_plot_and_validate_refuse_capacity_zero():
    assert refused(lambda: telamalloc.plot(PROBLEM, [0, 4], capacity=0)) == (
        "capacity must be greater than 0"
    )
    assert refused(lambda: telamalloc.validate(PROBLEM, [0, 4], capacity=0)) == (
        "capacity must be greater than 0"
    )


def test_plot_draws_a_capacity_below_the_peak():
    # Defined: the line is drawn where asked, under the plan's peak; validate says it is invalid.
    svg = telamalloc.plot(PROBLEM, [0, 4], capacity=6)
    assert "capacity 6" in svg and "peak 8" in svg
    assert not telamalloc.validate(PROBLEM, [0, 4], capacity=6)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (lambda: telamalloc.solve(PROBLEM, capacity=-1), "capacity: -1 is negative"),
        (lambda: telamalloc.solve(PROBLEM, capacity=2**64), "capacity: 18446744073709551616 does not fit in 64 bits"),
        (lambda: telamalloc.solve(PROBLEM, nodes=-1), "nodes: -1 is negative"),
        (lambda: telamalloc.solve(PROBLEM, seed=-1), "seed: -1 is negative"),
        (lambda: telamalloc.solve(PROBLEM, threads=-1), "threads: -1 is negative"),
        (lambda: telamalloc.solve(PROBLEM, threads=1025), "threads 1025 is too many (at most 1024)"),
        (lambda: telamalloc.solve(PROBLEM, timeout=2e9), "timeout 2e9 is too large (at most 1000000000 seconds, about 31 years)"),
        (lambda: telamalloc.validate(PROBLEM, [0, 4], capacity=-1), "capacity: -1 is negative"),
        (lambda: telamalloc.plot(PROBLEM, [0, 4], capacity=-1), "capacity: -1 is negative"),
        (lambda: telamalloc.Problem([("a", 0, 2, 4)], capacity=-1), "capacity: -1 is negative"),
        (lambda: PROBLEM.with_capacity(-1), "capacity: -1 is negative"),
        (lambda: telamalloc.Problem.from_arrays(LOWER, UPPER, SIZE, capacity=-1), "capacity: -1 is negative"),
        (lambda: telamalloc.Buffer("a", -1, 2, 4), "field 'lower': -1 is negative"),
        (lambda: telamalloc.Buffer("a", 0, 2, 4, offset=-1), "field 'offset': -1 is negative (None leaves the buffer to the allocator)"),
        (lambda: telamalloc.Problem([("a", 0, 2, 4, 1, -1)]), "buffers[0]: field 'offset': -1 is negative (None leaves the buffer to the allocator)"),
        (lambda: telamalloc.Problem([("a", 0, 2, 2**64)]), "buffers[0]: field 'size': 18446744073709551616 does not fit in 64 bits"),
        (lambda: telamalloc.import_model("model.onnx", alignment=-64), "alignment: -64 is negative"),
        (lambda: telamalloc.import_model("model.onnx", input_shapes={"x": [1, -3]}), "input_shapes['x'][1]: -3 is negative"),
    ],
)
def test_scalars_name_their_argument(call, expected):
    assert refused(call) == expected


def test_scalar_non_integers_are_type_errors_naming_the_field():
    assert refused(lambda: telamalloc.solve(PROBLEM, capacity=8.0), TypeError) == (
        "capacity: expected an integer, got 8.0 (float)"
    )
    assert refused(lambda: telamalloc.Problem([("a", 0.5, 2, 4)]), TypeError) == (
        "buffers[0]: field 'lower': expected an integer, got 0.5 (float)"
    )
    assert refused(lambda: telamalloc.Problem([(7, 0, 2, 4)]), TypeError) == (
        "buffers[0]: field 'id': expected a str, got 7 (int)"
    )
    assert refused(lambda: telamalloc.Problem(5), TypeError) == (
        "buffers: 'int' object is not iterable"
    )


def test_numpy_scalars_are_integers_too():
    buffer = telamalloc.Buffer("a", np.int8(0), np.array(2, dtype=">u8")[()], np.uint16(4))
    assert (buffer.lower, buffer.upper, buffer.size) == (0, 2, 4)
    assert telamalloc.solve(PROBLEM, capacity=np.int64(8), seed=np.uint8(3)).solved
