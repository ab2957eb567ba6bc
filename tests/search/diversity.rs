//! Diversified restarts (`TWA~`, `TWA+~`): the first run is the plain order, later runs sort by
//! seeded, noisy keys. The search stays complete and valid, the seed decides the answer (run to
//! run and with any thread count), and the noise really changes the search.
//!
//! Every search here runs under a node limit only, so nothing depends on the machine's speed.

use crate::support as common;

use common::{brute_force_optimum, tiny_problem, TinyShape};
use telamalloc::analysis::load;
use telamalloc::generate::{self, CutStyle, PerfectOptions};
use telamalloc::{validate, Allocation, Goal, Limits, Problem, SearchOptions, Solver, Status};

/// Edge finding and cover branching are off: they solve most of these packings without a
/// restart, and these tests are about what restarts do.
fn solve(problem: &Problem, capacity: u64, policy: &str, seed: u64, threads: usize) -> Allocation {
    Solver::new()
        .options(SearchOptions {
            heuristic_first: false,
            edge_finding: false,
            cover_branching: false,
            threads,
            ..SearchOptions::default()
        })
        .policy(policy.parse().expect("a policy name"))
        .seed(seed)
        .limits(Limits {
            timeout: None,
            nodes: Some(400_000),
        })
        .solve(problem, Goal::Fit(capacity))
        .expect("a valid problem")
}

/// Perfect packings that need restarts: their LOAD is the capacity.
fn packings() -> Vec<Problem> {
    (0..12)
        .map(|seed| {
            let options = PerfectOptions {
                capacity: 1 << 12,
                horizon: 200,
                buffers: 100,
                style: [CutStyle::NonGuillotine, CutStyle::Mixed][seed as usize % 2],
                remove: 0,
                alignment: 1,
                cuts: Default::default(),
            };
            generate::perfect(&options, 900 + seed).0
        })
        .collect()
}

#[test]
fn diversified_orders_agree_with_brute_force_on_tiny_problems() {
    let mut refuted = 0;
    for seed in 0..60 {
        let problem = tiny_problem(seed, TinyShape::default());
        let optimum = brute_force_optimum(&problem).peak;
        for capacity in [optimum.saturating_sub(1).max(1), optimum] {
            for policy in ["TWA~", "WZA+~"] {
                let result = solve(&problem, capacity, policy, seed, 1);
                match (result.status, result.solution) {
                    (Status::Solved, Some(solution)) => {
                        assert!(capacity >= optimum, "seed {seed}: below the optimum");
                        let report = validate(&problem, &solution, Some(capacity));
                        assert!(report.is_valid(), "seed {seed} {policy}: {report}");
                    }
                    (Status::Infeasible(_), _) => {
                        assert!(capacity < optimum, "seed {seed} {policy}: wrongly refuted");
                        refuted += 1;
                    }
                    (status, _) => panic!("seed {seed} {policy}: {status:?} within the limit"),
                }
            }
        }
    }
    assert!(
        refuted > 20,
        "only {refuted} refutations: the test is too easy"
    );
}

#[test]
fn the_first_run_of_a_diversified_order_is_the_plain_order() {
    // Problems the plain order decides in its first run: the diversified one must decide them
    // the same way, node for node.
    let mut compared = 0;
    for problem in packings() {
        let capacity = load(&problem);
        let plain = solve(&problem, capacity, "TWA", 0, 1);
        let stats = plain.search.clone().expect("the search ran");
        if plain.status != Status::Solved || stats.restarts > 0 {
            continue;
        }
        let diversified = solve(&problem, capacity, "TWA~", 0, 1);
        assert_eq!(diversified.solution, plain.solution);
        assert_eq!(diversified.search.expect("searched").nodes, stats.nodes);
        compared += 1;
    }
    assert!(compared >= 2, "only {compared} problems decided in one run");
}

#[test]
fn restarts_are_diversified_by_the_seed_and_reproducible() {
    let mut changed = 0;
    let mut restarted = 0;
    for problem in packings() {
        let capacity = load(&problem);
        let plain = solve(&problem, capacity, "TWA", 0, 1);
        if plain.search.expect("searched").restarts == 0 {
            continue;
        }
        restarted += 1;
        let runs: Vec<(Status, Option<Vec<u64>>, u64)> = [(1, 1), (1, 2), (2, 1)]
            .into_iter()
            .map(|(seed, threads)| {
                let a = solve(&problem, capacity, "TWA~", seed, threads);
                if let Some(solution) = &a.solution {
                    assert!(validate(&problem, solution, Some(capacity)).is_valid());
                }
                let nodes = a.search.expect("searched").nodes;
                (a.status, a.solution.map(|s| s.offsets), nodes)
            })
            .collect();
        assert_eq!(runs[0], runs[1], "the thread count changed the answer");
        assert_eq!(runs[0], solve_again(&problem, capacity), "run to run");
        changed += usize::from(runs[0].2 != runs[2].2);
    }
    assert!(restarted >= 3, "only {restarted} problems need restarts");
    assert!(changed >= 2, "the seed changed only {changed} searches");
}

fn solve_again(problem: &Problem, capacity: u64) -> (Status, Option<Vec<u64>>, u64) {
    let a = solve(problem, capacity, "TWA~", 1, 1);
    let nodes = a.search.expect("searched").nodes;
    (a.status, a.solution.map(|s| s.offsets), nodes)
}
