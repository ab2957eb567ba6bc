//! The node limit is what its help says: a machine-independent limit on the search's nodes, for
//! results that are reproducible. A solve never reports more nodes than the limit (fitting a
//! capacity or minimising, on one thread or several), and minimise under a node limit alone
//! has no clock: the same call gives the same peak, offsets and node count every time.

use crate::common;

use common::{telamalloc, Scratch};
use telamalloc::generate::{perfect, CutStyle, PerfectOptions};
use telamalloc::{Allocation, Goal, Problem, SearchOptions, Solver, Status};

/// A thin perfect packing with holes (`gen perfect --style thin --remove 20`): no search
/// decides it within the small limits below, so every run is cut by them.
fn holed_packing(buffers: usize, seed: u64) -> Problem {
    let options = PerfectOptions {
        capacity: 1 << 20,
        horizon: 1000,
        buffers,
        style: CutStyle::Thin,
        remove: 20,
        ..PerfectOptions::default()
    };
    perfect(&options, seed).0
}

fn nodes(result: &Allocation) -> u64 {
    result.search.as_ref().expect("the search ran").nodes
}

#[test]
fn a_fit_never_reports_more_nodes_than_the_limit() {
    let problem = holed_packing(300, 3);
    for threads in [1, 2] {
        for heuristic_first in [true, false] {
            for limit in [1, 3, 777, 2500] {
                let result = Solver::new()
                    .options(SearchOptions {
                        heuristic_first,
                        threads,
                        ..SearchOptions::default()
                    })
                    .nodes(limit)
                    .solve(&problem, Goal::Fit(1 << 20))
                    .expect("a valid problem");
                let what = format!("limit {limit}, threads {threads}, heuristic {heuristic_first}");
                assert_eq!(result.status, Status::LimitReached, "{what}");
                assert!(nodes(&result) <= limit, "{what}: {} nodes", nodes(&result));
                // The limit is spent, not left unused: the runs share it out exactly.
                assert_eq!(nodes(&result), limit, "{what}");
            }
        }
    }
}

/// Minimise under `limit` nodes alone, on `threads` threads: the solve's answer.
fn minimise(problem: &Problem, limit: u64, threads: usize) -> Allocation {
    Solver::new()
        .options(SearchOptions {
            threads,
            ..SearchOptions::default()
        })
        .nodes(limit)
        .solve(problem, Goal::Minimize)
        .expect("a valid problem")
}

#[test]
fn minimise_under_a_node_limit_spends_at_most_the_limit_and_repeats_exactly() {
    let problem = holed_packing(600, 3);
    let limit = 3000;
    let first = minimise(&problem, limit, 1);
    assert_eq!(first.status, Status::Solved);
    assert!(
        nodes(&first) <= limit,
        "{} nodes over all probes",
        nodes(&first)
    );
    let answer = |a: &Allocation| {
        (
            a.peak,
            a.lower_bound,
            a.solution.clone(),
            a.search.as_ref().map(|s| (s.nodes, s.restarts)),
        )
    };
    for (run, threads) in [(2, 1), (3, 2)] {
        let again = minimise(&problem, limit, threads);
        assert_eq!(
            answer(&again),
            answer(&first),
            "run {run}, {threads} threads"
        );
    }
}

#[test]
fn minimise_honours_both_limits_when_both_are_given() {
    let problem = holed_packing(600, 3);
    let result = Solver::new()
        .nodes(2000)
        .timeout(std::time::Duration::from_secs(600))
        .solve(&problem, Goal::Minimize)
        .expect("a valid problem");
    assert_eq!(result.status, Status::Solved);
    assert!(nodes(&result) <= 2000, "{} nodes", nodes(&result));
}

/// The command line: `--nodes` reports at most its limit, and `--minimize --nodes N` prints
/// the same layout and node count twice.
#[test]
fn the_command_line_node_limit_is_a_total_and_reproducible() {
    let scratch = Scratch::new();
    let path = scratch.path("holed.csv");
    let generated = telamalloc([
        "gen",
        "perfect",
        "--seed",
        "3",
        "--buffers",
        "600",
        "--style",
        "thin",
        "--remove",
        "20",
        "-o",
        path.to_str().expect("a UTF-8 path"),
    ]);
    assert_eq!(generated.code, 0, "{}", generated.stderr);
    let stats_nodes = |stderr: &str| -> u64 {
        let line = stderr
            .lines()
            .find_map(|l| l.strip_prefix("stats: "))
            .unwrap_or_else(|| panic!("no stats line in {stderr}"));
        let stats: serde_json::Value = serde_json::from_str(line).expect("JSON stats");
        stats["nodes"].as_u64().expect("a node count")
    };
    let path = path.to_str().expect("a UTF-8 path");
    let fit = telamalloc([
        "solve",
        path,
        "--capacity",
        "1048576",
        "--nodes",
        "1000",
        "--stats",
    ]);
    assert_eq!(fit.code, 1, "{}", fit.stderr);
    assert_eq!(stats_nodes(&fit.stderr), 1000, "{}", fit.stderr);
    let args = ["solve", path, "--minimize", "--nodes", "3000", "--stats"];
    let first = telamalloc(args);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(stats_nodes(&first.stderr) <= 3000, "{}", first.stderr);
    let second = telamalloc(args);
    assert_eq!(second.stdout, first.stdout, "the layouts differ");
    assert_eq!(
        stats_nodes(&second.stderr),
        stats_nodes(&first.stderr),
        "the node counts differ"
    );
}
