"""Solving through the front door: the hard set's K, the examples with known answers, minimise,
the baselines, limits, determinism and the result's fields."""

import pytest

import telamalloc
from conftest import REPO

EXAMPLES = REPO / "datasets" / "examples"
K = REPO / "datasets" / "challenging" / "K.1048576.csv"


def test_solves_k_at_its_capacity_and_validates():
    problem = telamalloc.read_csv(K)
    assert problem.capacity == 1048576
    assert len(problem) == 454
    result = telamalloc.solve(problem, capacity=1048576, timeout=60)
    assert result.status == "solved", result.message
    assert result.solved
    assert result.peak <= 1048576
    assert result.load == problem.load == 1048576
    assert result.offsets.shape == (454,)
    assert result.offsets.dtype.name == "uint64"
    report = telamalloc.validate(problem, result.offsets, capacity=1048576)
    assert report.valid and bool(report) and report.violations == []
    assert str(report) == "valid"
    assert telamalloc.validate(problem, result)  # an Allocation works as offsets too
    assert str(result) == (
        f"solved by search: peak {result.peak} (LOAD 1048576, capacity 1048576) "
        f"in {result.elapsed:.3f} s"
    )


def test_stats_are_the_search_counters():
    result = telamalloc.solve(telamalloc.read_csv(K))
    stats = result.stats
    assert stats["nodes"] > 0
    assert stats["policy"] in stats["portfolio"]
    assert stats["seconds"] <= result.elapsed
    assert 0 < result.elapsed < 60


def test_offsets_are_read_only():
    result = telamalloc.solve(telamalloc.read_csv(EXAMPLES / "tiny.12.csv"))
    with pytest.raises(ValueError):
        result.offsets[0] = 1


def test_buffers_and_tuples_make_the_same_problem():
    objects = telamalloc.Problem(
        [telamalloc.Buffer("a", 0, 3, 4), telamalloc.Buffer("b", 3, 9, 4, alignment=4)],
        capacity=8,
    )
    tuples = telamalloc.Problem([("a", 0, 3, 4), ("b", 3, 9, 4, 4)], capacity=8)
    assert objects == tuples
    assert objects[1] == telamalloc.Buffer("b", 3, 9, 4, alignment=4)
    assert objects[-1].alignment == 4
    assert [b.id for b in objects.buffers] == ["a", "b"]
    assert repr(objects[1]) == "Buffer('b', 3, 9, 4, alignment=4)"
    with pytest.raises(IndexError):
        objects[2]


def test_fixed_offsets_are_kept():
    problem = telamalloc.read_csv(EXAMPLES / "aligned-fixed.48.csv")
    fixed = {i: b.offset for i, b in enumerate(problem.buffers) if b.offset is not None}
    assert fixed
    result = telamalloc.solve(problem)
    assert result.solved
    for i, offset in fixed.items():
        assert result.offsets[i] == offset
    for i, b in enumerate(problem.buffers):
        assert result.offsets[i] % b.alignment == 0


def test_infeasible_at_load_is_proven():
    problem = telamalloc.read_csv(EXAMPLES / "infeasible-at-load.9.csv")
    result = telamalloc.solve(problem)
    assert result.status == "infeasible"
    assert result.offsets is None and result.peak is None
    assert result.message == "infeasible (proven: search space exhausted)"
    load = telamalloc.solve(problem, capacity=8)
    assert load.message == "infeasible (proven: LOAD 9 exceeds the capacity)"


def test_minimize_finds_the_optimum_with_a_proof():
    problem = telamalloc.read_csv(EXAMPLES / "infeasible-at-load.9.csv")
    result = telamalloc.solve(problem, minimize=True, timeout=30)
    assert result.status == "solved"
    assert result.peak == 10  # the optimum (see datasets/examples/README.md)
    assert result.lower_bound == 10
    assert result.lower_bound_source == "the search on the whole problem"
    assert result.capacity is None
    assert telamalloc.validate(problem, result, capacity=10)


def test_a_baseline_runs_as_an_algorithm():
    problem = telamalloc.read_csv(K)
    tflite = telamalloc.solve(problem, algo="tflite")
    assert tflite.status == "exceeds"
    assert tflite.algorithm == "tflite"
    assert tflite.peak > 1048576 and tflite.offsets is None
    assert tflite.stats == {}
    roomy = telamalloc.solve(problem, capacity=2 * 1048576, algo="tflite")
    assert roomy.solved and roomy.peak == tflite.peak
    assert telamalloc.validate(problem, roomy, capacity=roomy.peak)


@pytest.mark.parametrize("algo", [a for a in telamalloc.algorithms() if a != "cpsat"])
def test_every_algorithm_solves_the_tiny_example(algo):
    problem = telamalloc.read_csv(EXAMPLES / "tiny.12.csv")
    result = telamalloc.solve(problem, capacity=24, algo=algo)
    assert result.solved, result.message
    assert telamalloc.validate(problem, result, capacity=24)


def test_the_best_fit_trap_catches_tflite_not_the_search():
    problem = telamalloc.read_csv(EXAMPLES / "best-fit-trap.8.csv")
    assert telamalloc.solve(problem, algo="tflite").status == "exceeds"
    assert telamalloc.solve(problem).peak == 8


@pytest.mark.parametrize("policy", ["portfolio", "WAT", "TWA+"])
def test_same_seed_same_offsets(policy):
    problem = telamalloc.read_csv(K)
    first = telamalloc.solve(problem, policy=policy, seed=7, timeout=60)
    again = telamalloc.solve(problem, policy=policy, seed=7, timeout=60)
    assert first.solved and again.solved
    assert first.offsets.tolist() == again.offsets.tolist()
    assert first.stats["nodes"] == again.stats["nodes"]


def test_a_seeded_heuristic_is_deterministic():
    problem = telamalloc.read_csv(K)
    first = telamalloc.solve(problem, capacity=2 * 1048576, algo="tvm-hill-climb", seed=3)
    again = telamalloc.solve(problem, capacity=2 * 1048576, algo="tvm-hill-climb", seed=3)
    assert first.solved
    assert first.offsets.tolist() == again.offsets.tolist()


def test_threads_do_not_change_the_answer():
    problem = telamalloc.read_csv(K)
    one = telamalloc.solve(problem, threads=1)
    two = telamalloc.solve(problem, threads=2)
    assert one.offsets.tolist() == two.offsets.tolist()


def test_a_node_limit_stops_the_search(data):
    problem = telamalloc.read_csv(data / "hard.1048576.csv")
    result = telamalloc.solve(problem, nodes=1000)
    assert result.status == "limit"
    assert result.message == "not solved: limit reached"
    assert result.stats["nodes"] <= 1000 + 256


def test_a_timeout_stops_the_search(data):
    problem = telamalloc.read_csv(data / "hard.1048576.csv")
    result = telamalloc.solve(problem, timeout=0.2)
    assert result.status == "limit"
    assert result.elapsed < 2


def test_timeout_0_is_no_time_limit_and_needs_nodes_to_improve():
    problem = telamalloc.read_csv(EXAMPLES / "tiny.12.csv")
    result = telamalloc.solve(problem, timeout=0)
    assert result.status == "solved", result.message
    assert telamalloc.validate(problem, result.offsets, capacity=12)
    with_memories = telamalloc.Problem(
        [("a", 0, 2, 4), ("b", 0, 2, 8)], memories=[("sram", 12, 1), ("dram", 64, 20)]
    )
    for solved, options in [
        (problem, {"minimize": True}),
        (problem, {"spill": True}),
        (with_memories, {}),
    ]:
        with pytest.raises(telamalloc.TelamallocError) as raised:
            telamalloc.solve(solved, timeout=0, **options)
        assert str(raised.value).startswith("timeout=0 (no time limit) needs nodes=N"), options
        result = telamalloc.solve(solved, timeout=0, nodes=10000, **options)
        assert result.status == "solved", (options, result.message)
    for bad in [-1, -0.5, float("nan"), float("inf"), float("-inf")]:
        with pytest.raises(telamalloc.TelamallocError, match="must be 0 \\(no time limit\\) or a"):
            telamalloc.solve(problem, timeout=bad)


def test_problem_properties():
    problem = telamalloc.read_csv(EXAMPLES / "tiny.12.csv")
    assert problem.load == 12 and problem.capacity == 12 and problem.horizon == 21
    bigger = problem.with_capacity(100)
    assert bigger.capacity == 100 and problem.capacity == 12
    assert bigger.with_capacity(None).capacity is None
    assert "5 buffers" in repr(problem)


def test_a_policy_model_file_that_is_not_there_is_an_error(tmp_path):
    problem = telamalloc.read_csv(EXAMPLES / "tiny.12.csv")
    missing = tmp_path / "missing.json"
    with pytest.raises(telamalloc.TelamallocError, match="^no policy model file at .*missing.json$"):
        telamalloc.solve(problem, policy=str(missing))


def test_learned_uses_the_built_in_model_from_any_directory(tmp_path, monkeypatch):
    # The shipped model is compiled into the package: no models/policy.json needed here.
    problem = telamalloc.read_csv(K)
    monkeypatch.chdir(tmp_path)
    result = telamalloc.solve(problem, policy="learned", timeout=60)
    assert result.solved, result.message
    assert result.warnings == []
    # The learned policy and its head's strategies, after the slack-filling members (K has 5.6%
    # slack; the hole model's most likely cut and its next three are members of their own).
    assert sorted(result.stats["portfolio"]) == [
        "TAW", "TAW+", "TWA", "TWA+", "WAT", "WAT+", "ZAT", "ZAT+", "learned",
        "slack-fill", "slack-fill-draw", "slack-fill-fifo",
        "slack-fill-likely", "slack-fill-likely", "slack-fill-likely", "slack-fill-likely",
        "slack-fill-match",
    ]
    assert telamalloc.validate(problem, result)
    named = telamalloc.solve(problem, policy=str(REPO / "models" / "policy.json"), timeout=60)
    assert named.offsets.tolist() == result.offsets.tolist()
    assert named.stats["nodes"] == result.stats["nodes"]
