//! Every allocator honours the time limit and the cancel flag on a problem far too large to
//! finish inside them (100,000 buffers, about 25,000 live at once: placing the same shape with
//! sizes up to 4096 took TFLite Micro 38 s and TVM's greedy-by-conflicts 46 s in a release
//! build). The limits are a small fraction of that, so the outcome, limit reached with no
//! layout, does not depend on the machine's speed; a deadline looked at only before the work,
//! or never, would give a layout instead (checked by hand: with the look before the first
//! placement only, the cancel test gets TFLite's layout after about 40 s).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use telamalloc::baselines::Baseline;
use telamalloc::generate::{random, RandomOptions};
use telamalloc::{Algorithm, Allocation, Goal, Problem, Solver, Status};

/// 100,000 buffers over 1,000 steps with lifetimes up to 500, capacity = LOAD; built in code.
fn large_problem() -> &'static Problem {
    static PROBLEM: OnceLock<Problem> = OnceLock::new();
    PROBLEM.get_or_init(|| {
        let options = RandomOptions {
            buffers: 100_000,
            horizon: 1000,
            max_lifetime: 500,
            min_size: 1,
            max_size: 1024,
            tightness: 1.0,
        };
        random(&options, 12)
    })
}

fn capacity() -> u64 {
    large_problem().capacity.expect("generated with a capacity")
}

/// Long enough for the setup (reading the problem's timeline, the orders) to end well before
/// it, so that the deadline passes while buffers are being placed.
const LIMIT: Duration = Duration::from_millis(300);

fn assert_limit_reached(result: &Allocation, what: &str) {
    assert_eq!(result.status, Status::LimitReached, "{what}");
    assert!(
        result.solution.is_none(),
        "{what}: a layout after the limit"
    );
    assert!(result.peak.is_none(), "{what}: a peak after the limit");
}

#[test]
fn every_baseline_stops_at_the_time_limit_while_placing() {
    let problem = large_problem();
    for baseline in Baseline::ALL {
        for goal in [Goal::Fit(capacity()), Goal::Minimize] {
            let result = Solver::new()
                .algorithm(Algorithm::Baseline(baseline))
                .timeout(LIMIT)
                .solve(problem, goal)
                .expect("a valid problem");
            assert_limit_reached(&result, &format!("{} {goal:?}", baseline.name()));
        }
    }
}

/// The search's first step tries three baselines before any search; minimise mode starts from
/// the fast baselines. Both stop at the limit (and so never build the search's model of so
/// large a problem).
#[test]
fn the_heuristic_first_step_and_minimise_stop_at_the_time_limit() {
    let problem = large_problem();
    for goal in [Goal::Fit(capacity()), Goal::Minimize] {
        let result = Solver::new()
            .timeout(LIMIT)
            .solve(problem, goal)
            .expect("a valid problem");
        assert_limit_reached(&result, &format!("search {goal:?}"));
    }
}

/// A cancel flag set from another thread while a baseline places stops it the same way.
#[test]
fn a_cancel_flag_set_while_placing_stops_every_baseline() {
    let problem = large_problem();
    for baseline in Baseline::ALL {
        let cancel = Arc::new(AtomicBool::new(false));
        let setter = {
            let cancel = Arc::clone(&cancel);
            std::thread::spawn(move || {
                std::thread::sleep(LIMIT);
                cancel.store(true, Ordering::Relaxed);
            })
        };
        let result = Solver::new()
            .algorithm(Algorithm::Baseline(baseline))
            .cancel_flag(Arc::clone(&cancel))
            .solve(problem, Goal::Fit(capacity()))
            .expect("a valid problem");
        setter.join().expect("the setter thread");
        assert_limit_reached(&result, baseline.name());
    }
}
