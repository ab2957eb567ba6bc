//! Every baseline returns a valid layout whose peak is at least LOAD, keeps fixed offsets, is
//! deterministic, and `allocate` reports "solved" exactly when that peak fits the capacity.

use crate::common;

use common::{
    live_together, naive_check, naive_load, problems, round_up, share_address, solve_with, Shape,
};
use proptest::prelude::*;
use std::cmp::Reverse;
use std::path::Path;
use telamalloc::baselines::{contention, place_in_order, Baseline};
use telamalloc::placement::Fit;
use telamalloc::{validate, Buffer, Problem, Solution};
use telamalloc::{
    Algorithm, Allocation, Goal, Infeasibility, Limits, MinimizePhase, Solver, Status,
};

/// What `allocate` must answer for a capacity, given the baseline's own peak.
fn expected_status(problem: &Problem, capacity: u64, peak: u64) -> Status {
    if let Some(b) = problem
        .buffers
        .iter()
        .find(|b| b.offset.unwrap_or(0) + b.size > capacity)
    {
        return Status::Infeasible(Infeasibility::BufferTooLarge { id: b.id.clone() });
    }
    let load = naive_load(problem);
    if load > capacity {
        return Status::Infeasible(Infeasibility::LoadExceedsCapacity { load });
    }
    if peak <= capacity {
        Status::Solved
    } else {
        Status::HeuristicExceeded { peak }
    }
}

fn check_baseline(problem: &Problem, baseline: Baseline, seed: u64) -> Result<(), TestCaseError> {
    let name = baseline.name();
    let solution = baseline.allocate(problem, seed);
    let report = validate(problem, &solution, None);
    prop_assert!(report.is_valid(), "{}: {}", name, report);
    prop_assert!(
        naive_check(problem, &solution.offsets, None).is_valid(),
        "{}",
        name
    );
    let peak = solution.peak(problem);
    let load = naive_load(problem);
    prop_assert!(peak >= load, "{}: peak {} below LOAD {}", name, peak, load);
    // Deterministic: the same seed gives the same layout.
    prop_assert_eq!(&baseline.allocate(problem, seed), &solution, "{}", name);
    prop_assert_eq!(
        &baseline.allocate(&problem.clone(), seed),
        &solution,
        "{}",
        name
    );

    let largest = problem
        .buffers
        .iter()
        .map(|b| b.offset.unwrap_or(0) + b.size)
        .max()
        .unwrap_or(1);
    let algorithm = Algorithm::Baseline(baseline);
    let mut capacities = vec![largest, load, peak, peak + 1, peak.saturating_sub(1).max(1)];
    capacities.push(load.saturating_sub(1).max(1));
    for capacity in capacities {
        let result = solve_with(
            problem,
            &algorithm,
            Goal::Fit(capacity),
            Limits::default(),
            seed,
        );
        let expected = expected_status(problem, capacity, peak);
        prop_assert_eq!(
            &result.status,
            &expected,
            "{} at capacity {}",
            name,
            capacity
        );
        prop_assert_eq!(result.load, load);
        prop_assert_eq!(result.status == Status::Solved, peak <= capacity);
        match &result.status {
            Status::Solved => {
                let found = result
                    .solution
                    .as_ref()
                    .expect("a solved allocation has a solution");
                prop_assert_eq!(found, &solution, "{}", name);
                prop_assert!(validate(problem, found, Some(capacity)).is_valid());
                prop_assert_eq!(result.peak, Some(peak));
            }
            Status::HeuristicExceeded { .. } => {
                prop_assert!(result.solution.is_none());
                prop_assert_eq!(result.peak, Some(peak));
            }
            _ => prop_assert!(result.solution.is_none()),
        }
    }
    let result = solve_with(problem, &algorithm, Goal::Minimize, Limits::default(), seed);
    prop_assert_eq!(result.status, Status::Solved);
    prop_assert_eq!(result.solution, Some(solution));
    prop_assert_eq!(result.peak, Some(peak));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn baselines_give_valid_layouts_above_load(
        problem in problems(Shape::CONSTRAINED),
        seed in 0..4u64,
    ) {
        for baseline in Baseline::ALL {
            check_baseline(&problem, baseline, seed)?;
        }
    }

    #[test]
    fn baselines_on_plain_problems(problem in problems(Shape::PLAIN)) {
        for baseline in Baseline::ALL {
            check_baseline(&problem, baseline, 7)?;
        }
    }

    #[test]
    fn hill_climbing_never_loses_to_its_start(problem in problems(Shape::CONSTRAINED), seed in 0..1000u64) {
        // The start is TVM's greedy-by-size order (size, then lifetime, descending) placed
        // first-fit; its peak is computed here without the library's placement core.
        let b = &problem.buffers;
        let mut order: Vec<usize> = (0..b.len()).collect();
        order.sort_by_key(|&i| (Reverse(b[i].size), Reverse(b[i].upper - b[i].lower)));
        let naive = naive_first_fit(&problem, &order);
        let start = Solution { offsets: naive.clone() }.peak(&problem);
        prop_assert_eq!(
            &place_in_order(&problem, &order, Fit::First).offsets,
            &naive,
            "the library's first-fit differs from the naive one"
        );
        let climbed = Baseline::TvmHillClimb.allocate(&problem, seed);
        prop_assert!(naive_check(&problem, &climbed.offsets, None).is_valid());
        let climbed = climbed.peak(&problem);
        prop_assert!(climbed <= start, "hill climbing {} worse than its start {}", climbed, start);
    }

    #[test]
    fn contention_is_the_largest_live_total_over_each_lifetime(problem in problems(Shape::CONSTRAINED)) {
        // The live total changes only where a buffer starts: the largest over a lifetime is at
        // its start or at a later start inside it.
        let b = &problem.buffers;
        let live_total = |t: u64| -> u64 {
            b.iter().filter(|x| x.lower <= t && t < x.upper).map(|x| x.size).sum()
        };
        let naive: Vec<u64> = b
            .iter()
            .map(|me| {
                b.iter()
                    .map(|x| x.lower)
                    .filter(|&t| me.lower <= t && t < me.upper)
                    .chain([me.lower])
                    .map(live_total)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        prop_assert_eq!(contention(&problem), naive);
    }
}

/// First-fit written independently of `placement::Placer`: the fixed buffers where they are, then
/// each buffer of `order` at the lowest aligned offset clear of every placed buffer it shares a
/// time step with. That offset is 0 or the end of such a buffer rounded up to the alignment (the
/// highest end below the lowest free offset is free itself), so only those are tried.
fn naive_first_fit(problem: &Problem, order: &[usize]) -> Vec<u64> {
    let b = &problem.buffers;
    let mut offsets: Vec<Option<u64>> = b.iter().map(|b| b.offset).collect();
    for &i in order {
        if offsets[i].is_some() {
            continue;
        }
        let neighbours: Vec<(u64, u64)> = (0..b.len())
            .filter_map(|j| offsets[j].map(|o| (j, o)))
            .filter(|&(j, _)| live_together(&b[i], &b[j]))
            .map(|(j, o)| (o, o + b[j].size))
            .collect();
        let fits = |x: u64| {
            neighbours
                .iter()
                .all(|&(o, end)| !share_address(x, b[i].size, o, end - o))
        };
        let offset = std::iter::once(0)
            .chain(
                neighbours
                    .iter()
                    .map(|&(_, end)| round_up(end, b[i].alignment)),
            )
            .filter(|&x| fits(x))
            .min()
            .expect("above every neighbour is free");
        offsets[i] = Some(offset);
    }
    offsets.into_iter().map(|o| o.expect("placed")).collect()
}

#[test]
fn hill_climbing_escapes_the_best_fit_trap() {
    // Size-descending first-fit (the hill climbing's start) puts the two 4-byte buffers at 0
    // and reaches 11 (datasets/examples/README.md); a packing at 8 exists, and swapping the
    // order finds one.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/examples/best-fit-trap.8.csv");
    let problem = telamalloc::io::read_problem(&path, None).expect("the example parses");
    let b = &problem.buffers;
    let mut order: Vec<usize> = (0..b.len()).collect();
    order.sort_by_key(|&i| (Reverse(b[i].size), Reverse(b[i].upper - b[i].lower)));
    let start = Solution {
        offsets: naive_first_fit(&problem, &order),
    };
    assert_eq!(start.peak(&problem), 11);
    for seed in 0..4 {
        let climbed = Baseline::TvmHillClimb.allocate(&problem, seed);
        assert!(
            naive_check(&problem, &climbed.offsets, Some(8)).is_valid(),
            "seed {seed}"
        );
        assert_eq!(climbed.peak(&problem), 8, "seed {seed}");
    }
}

#[test]
fn names_round_trip() {
    for baseline in Baseline::ALL {
        assert_eq!(Baseline::from_name(baseline.name()), Some(baseline));
    }
    assert_eq!(Baseline::from_name("no-such-baseline"), None);
}

#[test]
fn empty_problem() {
    let problem = Problem::default();
    for baseline in Baseline::ALL {
        let solution = baseline.allocate(&problem, 0);
        assert!(solution.offsets.is_empty(), "{}", baseline.name());
        let result = solve_with(
            &problem,
            &Algorithm::Baseline(baseline),
            Goal::Minimize,
            Limits::default(),
            0,
        );
        assert_eq!(result.status, Status::Solved);
        assert_eq!(result.peak, Some(0));
    }
}

#[test]
fn a_fixed_buffer_is_worked_around() {
    // The fixed buffer sits in the middle; the others must go around it, never over it.
    let problem = Problem::new(
        vec![
            Buffer {
                offset: Some(8),
                ..Buffer::new("pinned", 0, 10, 8)
            },
            Buffer::new("a", 0, 5, 8),
            Buffer::new("b", 2, 8, 8),
            Buffer::new("c", 5, 10, 4),
        ],
        None,
    );
    for baseline in Baseline::ALL {
        let solution = baseline.allocate(&problem, 0);
        assert_eq!(solution.offsets[0], 8, "{}", baseline.name());
        let report = validate(&problem, &solution, None);
        assert!(report.is_valid(), "{}: {report}", baseline.name());
    }
}

/// The 5-buffer benchmark of CI's `../shared/benchmarks/input.12.csv`, read from the repository's
/// own byte-identical copy so that the test always runs.
#[test]
fn shared_benchmark_input_12() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/examples/tiny.12.csv");
    let problem = telamalloc::io::read_problem(&path, None).expect("the benchmark parses");
    assert_eq!(problem.capacity, Some(12));
    assert_eq!(problem.len(), 5);
    let load = naive_load(&problem);
    assert_eq!(load, 12);
    for baseline in Baseline::ALL {
        let solution = baseline.allocate(&problem, 0);
        assert!(validate(&problem, &solution, Some(u64::MAX)).is_valid());
        assert!(solution.peak(&problem) >= load);
        let result = solve_with(
            &problem,
            &Algorithm::Baseline(baseline),
            Goal::Fit(12),
            Limits::default(),
            0,
        );
        assert_eq!(
            result.status == Status::Solved,
            solution.peak(&problem) <= 12,
            "{}",
            baseline.name()
        );
    }
}

/// Runs `allocate` and turns a panic into an error message.
fn allocate_without_panic(
    problem: &Problem,
    algorithm: &Algorithm,
    goal: Goal,
) -> Result<Result<Allocation, telamalloc::SolveError>, String> {
    let problem = problem.clone();
    let algorithm = *algorithm;
    std::panic::catch_unwind(move || Solver::new().algorithm(algorithm).solve(&problem, goal))
        .map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        })
}

/// Every baseline, then the search.
fn every_algorithm() -> Vec<Algorithm> {
    let mut all: Vec<Algorithm> = Baseline::ALL.into_iter().map(Algorithm::Baseline).collect();
    all.push(Algorithm::from_name("search").expect("the search is an algorithm"));
    all
}

#[test]
fn conflicting_fixed_offsets_are_rejected_by_the_parser() {
    // p is fixed at [0, 8) over [0, 4), q at [4, 12) over [2, 6): they collide at times 2..4.
    let text = "id,lower,upper,size,offset\np,0,4,8,0\nq,2,6,8,4\nr,0,6,4,\n";
    let err = telamalloc::io::parse_csv_problem(text, "in.csv", Some(32))
        .expect_err("colliding fixed buffers are bad input");
    assert_eq!(err.location.file, "in.csv", "{err}");
    assert_eq!(err.location.line, Some(3), "{err}");
    assert_eq!(err.location.field.as_deref(), Some("offset"), "{err}");
    assert!(err.message.contains("'q'"), "{err}");
    assert!(err.message.contains("'p'"), "{err}");
    assert!(err.message.contains("shares addresses"), "{err}");
    assert!(
        err.to_string()
            .starts_with("in.csv: line 3: field 'offset': "),
        "{err}"
    );
}

#[test]
fn conflicting_fixed_offsets_built_in_code_are_reported_invalid_not_a_panic() {
    // The same problem as above, built without the parser's checks.
    let fixed = |id: &str, lower, upper, size, offset| Buffer {
        offset: Some(offset),
        ..Buffer::new(id, lower, upper, size)
    };
    let problem = Problem::new(
        vec![
            fixed("p", 0, 4, 8, 0),
            fixed("q", 2, 6, 8, 4),
            Buffer::new("r", 0, 6, 4),
        ],
        Some(32),
    );
    for algorithm in every_algorithm() {
        for goal in [Goal::Fit(32), Goal::Minimize] {
            let what = format!("{} {goal:?}", algorithm.name());
            let result = allocate_without_panic(&problem, &algorithm, goal)
                .unwrap_or_else(|panic| panic!("{what}: panicked: {panic}"));
            match result {
                Err(telamalloc::SolveError::InvalidProblem(why)) => {
                    assert_eq!(why.buffer, Some(1), "{what}: {why}");
                    assert_eq!(why.field, "offset", "{what}: {why}");
                    let text = why.to_string();
                    assert!(
                        text.contains("'q'") && text.contains("'p'"),
                        "{what}: {text}"
                    );
                }
                Ok(other) => panic!(
                    "{what}: expected an invalid problem, got {:?}",
                    other.status
                ),
                Err(other) => panic!("{what}: expected an invalid problem, got {other}"),
            }
        }
    }
}

#[test]
fn a_fixed_offset_near_the_top_of_the_address_space_is_rejected_not_a_panic() {
    // A fixed buffer ending at u64::MAX leaves no room to stack q above it: the address span
    // overflows 64 bits, which the input checks reject with a clear error.
    let text = format!(
        "id,lower,upper,size,offset\np,0,4,8,{}\nq,2,6,8,\n",
        u64::MAX - 8
    );
    let err = telamalloc::io::parse_csv_problem(&text, "in.csv", None)
        .expect_err("the address span overflows");
    assert_eq!(err.location.field.as_deref(), Some("offset"));
    assert!(err.message.contains("overflow"), "{}", err.message);
    // With room for q, every algorithm runs without panicking and places q either at 0 or in
    // the 8 bytes left above p.
    let top = u64::MAX - 16;
    let text = format!("id,lower,upper,size,offset\np,0,4,8,{top}\nq,2,6,8,\n");
    let problem =
        telamalloc::io::parse_csv_problem(&text, "in.csv", None).expect("the checks accept it");
    for baseline in Baseline::ALL {
        let name = baseline.name();
        let result =
            allocate_without_panic(&problem, &Algorithm::Baseline(baseline), Goal::Minimize)
                .unwrap_or_else(|panic| panic!("{name}: panicked: {panic}"))
                .expect("the checks accept it");
        assert_eq!(result.status, Status::Solved, "{name}");
        assert_eq!(result.load, 16, "{name}");
        let solution = result.solution.expect("solved");
        assert_eq!(
            solution.offsets[0], top,
            "{name}: p stays where it is fixed"
        );
        let q = solution.offsets[1];
        assert!(q == 0 || q == top + 8, "{name}: q at {q}");
        assert!(
            naive_check(&problem, &solution.offsets, None).is_valid(),
            "{name}"
        );
        // The peak is p's end, or q's when q sits above p.
        let expected_peak = if q == 0 { top + 8 } else { u64::MAX };
        assert_eq!(result.peak, Some(expected_peak), "{name}");
    }
}

#[test]
fn solution_peak_is_the_highest_end() {
    let problem = Problem::new(
        vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 5, 6, 10)],
        None,
    );
    let solution = Solution {
        offsets: vec![7, 0],
    };
    assert_eq!(solution.peak(&problem), 11);
}

/// Every allocator honours the limits: with the time already up (or the solve cancelled before
/// it starts) no baseline places a problem of more than a few dozen buffers and the search's
/// baselines-first step stops too; minimise mode with the search answers all the same, from its
/// first phase, every buffer laid out in lanes (that phase never fails to answer).
#[test]
fn a_deadline_already_passed_stops_every_allocator() {
    let problem = telamalloc::generate::random(
        &telamalloc::generate::RandomOptions {
            buffers: 2000,
            horizon: 2000,
            max_lifetime: 50,
            min_size: 1,
            max_size: 4096,
            tightness: 1.2,
        },
        7,
    );
    let capacity = problem.capacity.expect("generated with a capacity");
    let cancelled = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let stopped = [
        Solver::new().timeout(std::time::Duration::from_nanos(1)),
        Solver::new().cancel_flag(cancelled),
    ];
    for solver in stopped {
        for algorithm in every_algorithm() {
            for goal in [Goal::Fit(capacity), Goal::Minimize] {
                let what = format!("{} {goal:?} {solver:?}", algorithm.name());
                let result = solver
                    .clone()
                    .algorithm(algorithm)
                    .solve(&problem, goal)
                    .expect("a valid problem");
                if (algorithm, goal) == (Algorithm::Search, Goal::Minimize) {
                    assert_eq!(result.status, Status::Solved, "{what}");
                    let in_lanes = MinimizePhase::Guarantee {
                        in_lanes: problem.len(),
                    };
                    assert_eq!(result.found_by, Some(in_lanes), "{what}");
                    continue;
                }
                assert_eq!(result.status, Status::LimitReached, "{what}");
                assert!(result.solution.is_none(), "{what}");
            }
        }
    }
    // The same solvers without the stop solve it.
    let result = Solver::new()
        .algorithm(Algorithm::Baseline(Baseline::Tflite))
        .solve(&problem, Goal::Minimize)
        .expect("a valid problem");
    assert_eq!(result.status, Status::Solved);
}
