"""Several memories and the spill goal from Python: known answers, a brute force on tiny
problems, the result's fields, and bad memory specs named like every other field."""

import itertools

import pytest

import telamalloc


def fits(buffers, capacity):
    """Whether the buffers (id, lower, upper, size) fit in capacity: every offset tried."""
    ranges = [range(capacity - size + 1) for (_, _, _, size) in buffers]
    for offsets in itertools.product(*ranges):
        if all(
            a[2] <= b[1] or b[2] <= a[1] or oa + a[3] <= ob or ob + b[3] <= oa
            for (a, oa), (b, ob) in itertools.combinations(zip(buffers, offsets), 2)
        ):
            return True
    return False


def test_spill_keeps_what_a_brute_force_keeps_and_more_than_greedy_here():
    # Three buffers live together: 6, 5 and 5 bytes in 10. Greedy admission takes the largest
    # first and then has no room for either 5; keeping both 5s keeps 10 bytes.
    buffers = [("big", 0, 4, 6), ("a", 0, 4, 5), ("b", 0, 4, 5)]
    problem = telamalloc.Problem(buffers)
    result = telamalloc.solve(problem, capacity=10, spill=True)
    assert result.status == "solved"
    assert result.memory == [None, "chip", "chip"]
    assert result.kept_bytes == 10
    assert result.greedy_kept_bytes == 6
    assert result.proven_best
    best = max(
        sum(b[3] for b in kept)
        for r in range(4)
        for kept in itertools.combinations(buffers, r)
        if fits(list(kept), 10)
    )
    assert result.kept_bytes == best
    assert "moved out 1 of 3 buffers" in str(result)


def test_benefit_changes_what_is_kept():
    problem = telamalloc.Problem(
        [
            telamalloc.Buffer("big", 0, 4, 6, benefit=100),
            telamalloc.Buffer("a", 0, 4, 5),
            telamalloc.Buffer("b", 0, 4, 5),
        ]
    )
    assert problem[0].benefit == 100 and problem[1].benefit is None
    result = telamalloc.solve(problem, capacity=10, spill=True)
    assert result.memory[0] == "chip"
    assert result.kept_bytes == 6


def test_memories_take_the_cheapest_assignment():
    problem = telamalloc.Problem(
        [
            telamalloc.Buffer("weights", 0, 4, 4, memories=["sram"]),
            ("a", 0, 4, 4),
            ("b", 2, 6, 4),
        ],
        memories=[("sram", 8, 1), ("dram", 64, 10)],
    )
    assert problem.memories == [("sram", 8, 1), ("dram", 64, 10)]
    assert problem[0].memories == ["sram"]
    result = telamalloc.solve(problem)
    assert result.status == "solved"
    assert result.memory[0] == "sram"
    assert sorted(result.memory[1:]) == ["dram", "sram"]
    assert result.cost == 4 + 4 + 40
    assert result.proven_best
    with pytest.raises(telamalloc.TelamallocError, match="memories"):
        telamalloc.solve(problem, capacity=8)


@pytest.mark.parametrize(
    "buffers, memories, match",
    [
        ([("a", 0, 1, 4)], [("sram", 0)], "capacity 0"),
        ([("a", 0, 1, 4)], [("sram", 8), ("sram", 8)], "duplicate memory id 'sram'"),
        (
            [telamalloc.Buffer("a", 0, 1, 4, memories=["tcm"])],
            [("sram", 8)],
            r"buffers\[0\]: field 'memories': unknown memory 'tcm'",
        ),
        ([("a", 0, 1, 16)], [("sram", 8)], r"buffers\[0\]: field 'size'"),
    ],
)
def test_bad_memory_specs_name_the_field(buffers, memories, match):
    with pytest.raises(telamalloc.TelamallocError, match=match):
        telamalloc.Problem(buffers, memories=memories)


def test_a_memories_file_with_a_bad_line_names_file_line_and_field(tmp_path):
    problem = tmp_path / "p.csv"
    problem.write_text("id,lower,upper,size,memories\na,0,2,4,sram\nb,1,3,4,\n")
    memories = tmp_path / "m.csv"
    memories.write_text("id,capacity,cost\nsram,8,1\ndram,-4,3\n")
    with pytest.raises(telamalloc.TelamallocError, match=r"m.csv: line 3: field 'capacity'"):
        telamalloc.read_csv(problem, memories=memories)
    memories.write_text("id,capacity,cost\nsram,4,1\ndram,64,3\n")
    loaded = telamalloc.read_csv(problem, memories=memories)
    result = telamalloc.solve(loaded)
    assert result.memory == ["sram", "dram"] or result.memory == ["dram", "sram"]
    assert result.cost == 4 * 1 + 4 * 3
