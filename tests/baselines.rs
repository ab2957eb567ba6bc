//! Every baseline returns a valid layout whose peak is at least LOAD, keeps fixed offsets, is
//! deterministic, and `allocate` reports "solved" exactly when that peak fits the capacity.

mod common;

use common::{naive_check, naive_load, problems, Shape};
use proptest::prelude::*;
use std::cmp::Reverse;
use std::path::Path;
use telamalloc::allocate::{allocate, Algorithm, Goal, Infeasibility, Limits, Status};
use telamalloc::baselines::{place_in_order, Baseline};
use telamalloc::placement::Fit;
use telamalloc::{validate, Buffer, Problem, Solution};

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
        let result = allocate(
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
    let result = allocate(problem, &algorithm, Goal::Minimize, Limits::default(), seed);
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
        let b = &problem.buffers;
        let mut order: Vec<usize> = (0..b.len()).collect();
        order.sort_by_key(|&i| (Reverse(b[i].size), Reverse(b[i].upper - b[i].lower)));
        let start = place_in_order(&problem, &order, Fit::First).peak(&problem);
        let climbed = Baseline::TvmHillClimb.allocate(&problem, seed).peak(&problem);
        prop_assert!(climbed <= start, "hill climbing {} worse than its start {}", climbed, start);
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
        let result = allocate(
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

/// The benchmark shipped beside the repository in CI (`../shared`), when it is there.
#[test]
fn shared_benchmark_when_present() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join("benchmarks")
        .join("input.12.csv");
    if !path.exists() {
        eprintln!("skipped: {} is absent", path.display());
        return;
    }
    let problem = telamalloc::io::read_problem(&path, None).expect("the benchmark parses");
    assert_eq!(problem.capacity, Some(12));
    let load = naive_load(&problem);
    for baseline in Baseline::ALL {
        let solution = baseline.allocate(&problem, 0);
        assert!(validate(&problem, &solution, Some(u64::MAX)).is_valid());
        assert!(solution.peak(&problem) >= load);
        let result = allocate(
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
    baseline: Baseline,
    goal: Goal,
) -> Result<Status, String> {
    let problem = problem.clone();
    std::panic::catch_unwind(move || {
        allocate(
            &problem,
            &Algorithm::Baseline(baseline),
            goal,
            Limits::default(),
            0,
        )
        .status
    })
    .map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn conflicting_fixed_offsets_do_not_panic() {
    let text = "id,lower,upper,size,offset\np,0,4,8,0\nq,2,6,8,4\nr,0,6,4,\n";
    let parsed = telamalloc::io::parse_csv_problem(text, "in.csv", Some(32));
    let Ok(problem) = parsed else {
        return; // Rejecting the input is a fine answer too.
    };
    for baseline in Baseline::ALL {
        for goal in [Goal::Fit(32), Goal::Minimize] {
            let status = allocate_without_panic(&problem, baseline, goal);
            assert!(
                matches!(&status, Ok(s) if *s != Status::Solved),
                "{} {goal:?}: {status:?}",
                baseline.name()
            );
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
    // With room for q, every baseline runs without panicking.
    let text = format!(
        "id,lower,upper,size,offset\np,0,4,8,{}\nq,2,6,8,\n",
        u64::MAX - 16
    );
    let problem =
        telamalloc::io::parse_csv_problem(&text, "in.csv", None).expect("the checks accept it");
    for baseline in Baseline::ALL {
        let status = allocate_without_panic(&problem, baseline, Goal::Minimize);
        assert!(status.is_ok(), "{}: {status:?}", baseline.name());
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
