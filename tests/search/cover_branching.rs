//! Cover branching (`cover-branching`): where the policy's first candidate covers a point of the
//! floor that must be covered, a node branches over that point's covers alone. The search must
//! stay complete (agreement with brute force on tiny problems without slack, where the point
//! reasoning fires most), its solutions valid, and its first dive the policy's own: only the
//! alternatives shrink.
//!
//! Every search here runs under a node limit only, so nothing depends on the machine's speed.

use crate::support as common;

use common::{
    brute_force_optimum, check_against_optimum, naive_load, tight_problem, tiny_problem, TinyShape,
};
use telamalloc::generate::{self, CutStyle, PerfectOptions};
use telamalloc::{validate, Allocation, Goal, Limits, Problem, SearchOptions, SearchStats};
use telamalloc::{Solver, Status};

/// One complete run of the fixed policy (no restarts, no slack filling, no baseline first), so
/// that the node counts and the answer are the branching's alone.
fn solve_once(problem: &Problem, capacity: u64, cover_branching: bool) -> Allocation {
    Solver::new()
        .options(SearchOptions {
            cover_branching,
            heuristic_first: false,
            restarts: false,
            slack_fill: false,
            ..SearchOptions::default()
        })
        .policy("fixed".parse().expect("a policy name"))
        .limits(Limits {
            timeout: None,
            nodes: Some(2_000_000),
        })
        .solve(problem, Goal::Fit(capacity))
        .expect("a valid problem")
}

/// The search counters of an answer (every answer here comes from the search).
fn stats(result: &Allocation) -> &SearchStats {
    result.search.as_ref().expect("the search ran")
}

/// Perfect packings of five cut styles, some with a piece or two removed: feasible at the
/// capacity, and full of floors that must be covered.
fn packings() -> Vec<Problem> {
    let styles = [
        CutStyle::Guillotine,
        CutStyle::NonGuillotine,
        CutStyle::Mixed,
        CutStyle::Thin,
        CutStyle::TimeSlab,
    ];
    (0..30)
        .map(|seed| {
            let options = PerfectOptions {
                capacity: 1 << 12,
                horizon: 200,
                buffers: 60 + 10 * (seed as usize % 5),
                style: styles[seed as usize % 5],
                remove: seed as usize % 3,
                alignment: 1,
                cuts: Default::default(),
            };
            generate::perfect(&options, 700 + seed).0
        })
        .collect()
}

#[test]
fn cover_branching_agrees_with_brute_force() {
    // Problems without slack at any step, where the branching fires most, and random ones
    // (a third with alignments), where some sections keep slack and their points may stay
    // uncovered: branching on those would refute feasible problems.
    let (mut narrowed, mut refuted) = (0, 0);
    for seed in 0..800 {
        let problem = if seed % 2 == 0 {
            tight_problem(seed, 7)
        } else {
            tiny_problem(seed, TinyShape::default())
        };
        let optimum = brute_force_optimum(&problem).peak;
        let load = naive_load(&problem);
        let below = optimum.saturating_sub(1).max(1);
        for capacity in [load.saturating_sub(1).max(1), load, below, optimum] {
            let result = solve_once(&problem, capacity, true);
            narrowed += stats(&result).cover_branches;
            if !check_against_optimum(&problem, capacity, optimum, result, &format!("seed {seed}"))
            {
                refuted += 1;
            }
        }
    }
    assert!(
        narrowed > 100,
        "only {narrowed} narrowed nodes: the test does not reach the branching"
    );
    assert!(
        refuted > 50,
        "only {refuted} refutations: the test is too easy"
    );
}

#[test]
fn cover_branching_solves_perfect_packings_with_valid_layouts() {
    let mut narrowed = 0;
    for (k, problem) in packings().iter().enumerate() {
        let capacity = 1 << 12;
        let result = solve_once(problem, capacity, true);
        narrowed += stats(&result).cover_branches;
        assert_eq!(result.status, Status::Solved, "packing {k}");
        let solution = result.solution.expect("a layout");
        let report = validate(problem, &solution, Some(capacity));
        assert!(report.is_valid(), "packing {k}: {report}");
    }
    assert!(narrowed > 0, "cover branching never narrowed a node");
}

#[test]
fn the_first_dive_is_the_policys_own() {
    // Where the fixed policy packs without a single backtrack, cover branching changes nothing:
    // its first choice at every node is the policy's, so the same layout comes out.
    let mut compared = 0;
    for (k, problem) in packings().iter().enumerate() {
        let capacity = 1 << 12;
        let plain = solve_once(problem, capacity, false);
        if stats(&plain).minor_backtracks > 0 {
            continue;
        }
        let covered = solve_once(problem, capacity, true);
        assert_eq!(covered.solution, plain.solution, "packing {k}");
        compared += 1;
    }
    assert!(
        compared >= 3,
        "only {compared} packings without backtracks to compare"
    );
}

#[test]
fn cover_branching_needs_fewer_nodes_where_the_plain_search_backtracks() {
    // Not a speed target: the node counts of one deterministic run each, summed over the
    // packings the plain search has to backtrack on, show that the branching prunes.
    let (mut plain_nodes, mut covered_nodes) = (0, 0);
    for problem in packings() {
        let capacity = 1 << 12;
        let plain = solve_once(&problem, capacity, false);
        if stats(&plain).minor_backtracks == 0 {
            continue;
        }
        plain_nodes += stats(&plain).nodes;
        covered_nodes += stats(&solve_once(&problem, capacity, true)).nodes;
    }
    assert!(plain_nodes > 0, "no packing needed a backtrack");
    assert!(
        covered_nodes < plain_nodes,
        "cover branching took {covered_nodes} nodes against {plain_nodes}"
    );
}
