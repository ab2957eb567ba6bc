//! The node limit is what its help says: a machine-independent limit on the search's nodes, for
//! results that are reproducible. A solve never reports more nodes than the limit, on one
//! thread or several.

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
    let problem = holed_packing(600, 3);
    for threads in [1, 2] {
        for heuristic_first in [true, false] {
            for limit in [1, 2, 3, 5, 100, 777, 1000, 2500] {
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
