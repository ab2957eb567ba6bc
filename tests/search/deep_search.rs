//! A search as deep as the problem has buffers must not overflow the caller's stack: Rust
//! aborts the process on a stack overflow, so without a thread of its own for deep runs a
//! library caller (a test thread here, with its 2 MiB stack) would die instead of getting an
//! answer. The problem below is solved by one dive of about 6,000 placements; a debug build's
//! frames overflow 2 MiB far sooner (checked: with deep runs kept on the caller's thread this
//! test aborts with "has overflowed its stack").

use telamalloc::generate::{random, RandomOptions};
use telamalloc::search::SearchOptions;
use telamalloc::{Goal, Solver, Status};

#[test]
fn a_search_thousands_of_levels_deep_answers_on_a_small_stack() {
    let options = RandomOptions {
        buffers: 6000,
        horizon: 6000,
        max_lifetime: 100,
        min_size: 1,
        max_size: 4096,
        tightness: 1.0,
    };
    let problem = random(&options, 4);
    let capacity = problem.capacity.expect("a capacity");
    // Alone and with a pool of worker threads (whose stacks rayon sizes), each solve on a
    // thread with a stack as small as rayon's default and many callers' threads.
    for threads in [1, 2] {
        let problem = problem.clone();
        let result = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                Solver::new()
                    .options(SearchOptions {
                        heuristic_first: false,
                        ..SearchOptions::default()
                    })
                    .threads(threads)
                    .nodes(20_000)
                    .solve(&problem, Goal::Fit(capacity))
                    .expect("a valid problem")
            })
            .expect("a test thread")
            .join()
            .expect("no panic");
        assert_eq!(result.status, Status::Solved, "{threads} threads");
        let stats = result.search.expect("the search ran");
        assert!(stats.nodes >= 5000, "deep: {} nodes", stats.nodes);
    }
}
