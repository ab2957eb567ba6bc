"""Bad input raises TelamallocError (a ValueError) with the command line's message."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import telamalloc
from conftest import REPO

TINY = REPO / "datasets" / "examples" / "tiny.12.csv"


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def message(call) -> str:
    with pytest.raises(telamalloc.TelamallocError) as raised:
        call()
    assert isinstance(raised.value, ValueError)
    return str(raised.value)


def test_a_bad_file_names_file_line_and_field(tmp_path):
    bad = write(tmp_path / "bad.csv", "id,lower,upper,size\nb1,0,3,4\nb2,4,1,4\n")
    assert message(lambda: telamalloc.read_csv(bad)) == (
        f"{bad}: line 3: field 'upper': lower (4) must be less than upper (1)"
    )
    missing = write(tmp_path / "bad2.csv", "id,lower,upper\nb1,0,3\n")
    assert message(lambda: telamalloc.read_csv(missing)) == (
        f"{missing}: line 1: field 'size': missing column 'size' in the header"
    )
    duplicate = write(tmp_path / "bad3.csv", "id,lower,upper,size\nb1,0,3,4\nb1,1,3,4\n")
    assert message(lambda: telamalloc.read_csv(duplicate)) == (
        f"{duplicate}: line 3: field 'id': duplicate id 'b1' (first used at line 2)"
    )
    absent = tmp_path / "absent.csv"
    assert message(lambda: telamalloc.read_csv(absent)).startswith(f"{absent}: cannot read file: ")


def test_a_capacity_below_a_buffer_is_refused_when_reading(tmp_path):
    text = message(lambda: telamalloc.read_csv(TINY, capacity=3))
    assert text.endswith("is larger than the capacity 3"), text


def test_problem_rules():
    assert message(lambda: telamalloc.Buffer("a", 3, 2, 4)) == (
        "field 'upper': lower (3) must be less than upper (2)"
    )
    assert message(lambda: telamalloc.Buffer("a", 0, 2, 4, alignment=3)) == (
        "field 'alignment': alignment 3 is not a power of two"
    )
    assert message(lambda: telamalloc.Buffer(" a", 0, 2, 4)) == (
        "field 'id': id ' a' starts or ends with white space"
    )
    assert message(lambda: telamalloc.Problem([("a", 0, 2, 4), ("a", 1, 3, 4)])) == (
        "buffers[1]: field 'id': duplicate id 'a'"
    )
    assert message(lambda: telamalloc.Problem([("a", 0, 2, 8)], capacity=4)) == (
        "buffers[0]: field 'size': buffer 'a' of size 8 is larger than the capacity 4"
    )
    with pytest.raises(TypeError, match=r"^buffers\[0\]: expected a Buffer or a tuple"):
        telamalloc.Problem([("a", 0, 2)])
    assert message(lambda: telamalloc.Problem([("a", -1, 2, 4)])) == (
        "buffers[0]: field 'lower': -1 is negative"
    )


def test_solve_options():
    problem = telamalloc.read_csv(TINY)
    assert message(lambda: telamalloc.solve(problem, algo="magic")).startswith(
        "unknown algorithm 'magic' (known: search, cpsat, tflite,"
    )
    assert message(lambda: telamalloc.solve(problem, policy="nonsense")) == (
        "unknown policy 'nonsense': expected 'fixed', 'portfolio', 'learned', a model file "
        "(.json), an order word over W, A, T, Z (e.g. WAT, TWA+ with conflict boosting, "
        "TWA~ or TWA+~ with diversified restarts), or different ones of those joined by / "
        "(a round robin, e.g. TWA/TWA~/TWA+)"
    )
    assert message(lambda: telamalloc.solve(problem, timeout=-1)) == (
        "timeout must be 0 (no time limit) or a positive, finite number of seconds, not -1"
    )
    assert message(lambda: telamalloc.solve(problem, capacity=0)) == (
        "capacity must be greater than 0"
    )
    assert message(lambda: telamalloc.solve(problem, capacity=12, minimize=True)) == (
        "give a capacity or minimize=True, not both"
    )
    assert message(lambda: telamalloc.solve(problem.with_capacity(None))) == (
        "no capacity: give capacity=N or minimize=True (the problem has none)"
    )
    assert message(lambda: telamalloc.solve(problem, threads=0)) == "threads must be at least 1"


def test_solve_treats_a_capacity_below_a_buffer_as_infeasible():
    result = telamalloc.solve(telamalloc.read_csv(TINY), capacity=3)
    assert result.status == "infeasible"
    assert result.message.startswith("infeasible (proven: buffer '")


def test_offsets_of_the_wrong_length(tmp_path):
    problem = telamalloc.read_csv(TINY)
    assert message(lambda: telamalloc.write_csv(tmp_path / "s.csv", problem, [0, 0])) == (
        "the solution has 2 offsets for 5 buffers"
    )
    report = telamalloc.validate(problem, [0, 0])
    assert report.violations == ["the solution has 2 offsets for 5 buffers"]
    unsolved = telamalloc.solve(problem, capacity=11)
    assert message(lambda: telamalloc.validate(problem, unsolved)) == (
        "the allocation has no offsets (infeasible (proven: LOAD 12 exceeds the capacity))"
    )


def cli() -> str | None:
    """The `telamalloc` binary `cargo test` or `cargo build` left in target/, if any."""
    for profile in ("debug", "release"):
        path = REPO / "target" / profile / "telamalloc"
        if path.exists() and os.access(path, os.X_OK):
            return str(path)
    return shutil.which("telamalloc")


@pytest.mark.skipif(cli() is None, reason="no telamalloc binary built (cargo build)")
@pytest.mark.parametrize(
    "text",
    [
        "id,lower,upper,size\nb1,0,3,4\nb2,4,1,4\n",
        "id,lower,upper\nb1,0,3\n",
        "id,lower,upper,size,colour\nb1,0,3,4,red\n",
        "id,lower,upper,size,alignment\nb1,0,3,4,6\n",
        "id,lower,upper,size\nb1,0,3,-4\n",
        "",
    ],
)
def test_the_same_message_as_the_command_line(tmp_path, text):
    bad = write(tmp_path / "bad.12.csv", text)
    ran = subprocess.run(
        [cli(), "solve", str(bad)], capture_output=True, text=True, check=False
    )
    assert ran.returncode == 2
    assert ran.stderr == f"error: {message(lambda: telamalloc.read_csv(bad))}\n"
