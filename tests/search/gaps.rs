//! Problems with gaps (MiniMalloc's `gaps`, with and without windows) and hints against an
//! independent brute force: every offset of every buffer tried, collisions checked time step by
//! time step from the buffers' fields. Without windows the search's model (the neighbour at the
//! higher offset lies wholly above the other) loses nothing, so the search must answer `Solved`
//! exactly when a packing exists and `Infeasible` otherwise; with windows it may also end
//! without a proof, but never claims infeasibility of a problem that has a packing. Every layout
//! the search or a baseline returns must pass the validator.

use crate::support as common;

use common::{exhaustive_optimum, naive_load, run_search, tiny_gapped_problem, Verdict};
use telamalloc::baselines::Baseline;
use telamalloc::{validate, Limits, Problem, SearchOptions, Solution};

/// A guard against a runaway search (a complete run over five buffers needs far fewer nodes).
const NODE_GUARD: u64 = 2_000_000;

/// What went wrong with the search on `problem` at `capacity`, if anything.
fn verdict(
    problem: &Problem,
    capacity: u64,
    optimum: u64,
    options: &SearchOptions,
) -> Option<String> {
    let limits = Limits {
        timeout: None,
        nodes: Some(NODE_GUARD),
    };
    let windows = problem
        .buffers
        .iter()
        .any(|b| b.gaps.iter().any(|g| g.window.is_some()));
    let feasible = optimum <= capacity;
    match run_search(problem, capacity, options, None, limits).outcome {
        Verdict::InvalidProblem(why) => Some(format!("rejected: {why}")),
        Verdict::Solved(solution) => check_layout(problem, &solution, Some(capacity))
            .or_else(|| (!feasible).then(|| "solved below the optimum".to_string())),
        Verdict::Infeasible(why) if feasible => Some(format!(
            "Infeasible({why:?}) but a packing of peak {optimum} exists"
        )),
        Verdict::Infeasible(_) => None,
        Verdict::LimitReached if windows => None,
        Verdict::LimitReached => Some(format!(
            "LimitReached without windows (expected {})",
            if feasible { "Solved" } else { "Infeasible" }
        )),
    }
}

fn check_layout(problem: &Problem, solution: &Solution, capacity: Option<u64>) -> Option<String> {
    let report = validate(problem, solution, capacity);
    (!report.is_valid()).then(|| format!("invalid layout {:?}: {report}", solution.offsets))
}

fn agree(options: &SearchOptions, windows: bool, cases: u64) {
    let mut failures = Vec::new();
    let mut solved = 0;
    for seed in 0..cases {
        let problem = tiny_gapped_problem(seed, 5, windows);
        if problem.check(None).is_err() {
            continue; // A fixed buffer's hint or the like: not what this test is about.
        }
        let optimum = exhaustive_optimum(&problem);
        let load = naive_load(&problem);
        for capacity in [load, load + 1, optimum.saturating_sub(1), optimum] {
            if capacity == 0 || problem.buffers.iter().any(|b| b.size > capacity) {
                continue;
            }
            match verdict(&problem, capacity, optimum, options) {
                Some(what) => failures.push(format!(
                    "seed {seed} capacity {capacity} (LOAD {load}, optimum {optimum}): {what}\n{}",
                    common::csv(&problem)
                )),
                None => solved += 1,
            }
        }
    }
    assert!(solved > 0);
    assert!(
        failures.is_empty(),
        "{} failures; the first:\n{}",
        failures.len(),
        failures
            .iter()
            .take(4)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn gaps_without_windows_agree_with_brute_force() {
    agree(&SearchOptions::default(), false, 600);
    agree(&common::without_heuristics(), false, 600);
}

#[test]
fn gaps_with_windows_never_give_a_wrong_answer() {
    agree(&SearchOptions::default(), true, 600);
    agree(&common::without_heuristics(), true, 600);
}

#[test]
fn every_switch_flipped_stays_correct_with_gaps() {
    for name in telamalloc::search::switch_names() {
        let mut options = common::without_heuristics();
        let on = !options.get(name).expect("a switch");
        assert!(options.set(name, on));
        agree(&options, false, 150);
    }
}

#[test]
fn every_baseline_layout_of_a_gapped_problem_validates() {
    for seed in 0..1500 {
        let problem = tiny_gapped_problem(seed, 7, true);
        if problem.check(None).is_err() {
            continue;
        }
        for baseline in Baseline::ALL {
            let layout = baseline.allocate(&problem, seed);
            if let Some(what) = check_layout(&problem, &layout, None) {
                panic!(
                    "{} on seed {seed}: {what}\n{}",
                    baseline.name(),
                    common::csv(&problem)
                );
            }
        }
    }
}
