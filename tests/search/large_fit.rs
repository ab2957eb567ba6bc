//! A fit with the search above 100,000 buffers: first-fit's layout lowered to the capacity by
//! windows of time, as minimise does at that size, instead of a model of the whole problem
//! (gigabytes at a million buffers). It answers within the limits, proves only what LOAD
//! proves, and gives the same layout on one thread or two.

use telamalloc::analysis::Timeline;
use telamalloc::generate::{random, RandomOptions};
use telamalloc::search::{SearchObserver, SearchStart};
use telamalloc::{Goal, MinimizePhase, Problem, SearchOptions, Solver, Status};

/// `gen random --buffers 120000 --horizon 120000 --max-lifetime 100 --tightness 1.0 --seed 1`:
/// first-fit reaches 200,948 against LOAD 178,944, minimise 184,225 within 20,000 nodes.
fn random_120k() -> Problem {
    let options = RandomOptions {
        buffers: 120_000,
        horizon: 120_000,
        max_lifetime: 100,
        max_size: 4096,
        tightness: 1.0,
        ..RandomOptions::default()
    };
    random(&options, 1)
}

fn solver(threads: usize, nodes: u64) -> Solver {
    Solver::new()
        .options(SearchOptions {
            threads,
            ..SearchOptions::default()
        })
        .nodes(nodes)
}

#[test]
fn a_fit_above_100000_buffers_lowers_first_fit_to_the_capacity() {
    let problem = random_120k();
    let load = Timeline::new(&problem).load();
    assert_eq!(load, 178_944);
    let capacity = 190_000; // below first-fit's 200,948
    let mut layouts = Vec::new();
    for threads in [1, 2] {
        let result = solver(threads, 20_000)
            .solve(&problem, Goal::Fit(capacity))
            .expect("a valid problem");
        assert_eq!(result.status, Status::Solved, "threads {threads}");
        assert!(result.peak.unwrap() <= capacity, "threads {threads}");
        assert!(
            matches!(
                result.found_by,
                Some(MinimizePhase::Improve { .. } | MinimizePhase::Reinsert { .. })
            ),
            "threads {threads}: {:?}",
            result.found_by
        );
        assert!(result.search.as_ref().unwrap().nodes <= 20_000);
        layouts.push(result.solution.unwrap());
    }
    assert_eq!(
        layouts[0], layouts[1],
        "the same layout on one thread or two"
    );
}

#[test]
fn a_fit_above_100000_buffers_answers_as_a_fit_does() {
    let problem = random_120k();
    // First-fit fits: no window is needed.
    let roomy = solver(1, 20_000)
        .solve(&problem, Goal::Fit(201_000))
        .unwrap();
    assert_eq!(roomy.status, Status::Solved);
    assert_eq!(
        roomy.found_by,
        Some(MinimizePhase::Guarantee { in_lanes: 0 })
    );
    // Below LOAD: proven infeasible, nothing searched.
    let below = solver(1, 20_000)
        .solve(&problem, Goal::Fit(178_943))
        .unwrap();
    assert!(
        matches!(below.status, Status::Infeasible(_)),
        "{:?}",
        below.status
    );
    assert!(below.solution.is_none());
    // At LOAD with a single node: the limit, and no layout above the capacity.
    let tight = solver(1, 1).solve(&problem, Goal::Fit(178_944)).unwrap();
    assert_eq!(tight.status, Status::LimitReached);
    assert!(tight.solution.is_none());
}

/// Counts the searches it is told of.
#[derive(Default)]
struct Starts(usize);

impl SearchObserver for Starts {
    fn on_start(&mut self, _: &SearchStart<'_>) {
        self.0 += 1;
    }
}

#[test]
fn an_observer_does_not_change_the_path_above_100000_buffers() {
    let problem = random_120k();
    let goal = Goal::Fit(201_000);
    let plain = solver(1, 20_000).solve(&problem, goal).unwrap();
    let mut observer = Starts::default();
    let observed = solver(1, 20_000)
        .solve_observed(&problem, goal, &mut observer)
        .unwrap();
    assert_eq!(observed.status, plain.status);
    assert_eq!(observed.found_by, plain.found_by);
    assert_eq!(
        observed.found_by,
        Some(MinimizePhase::Guarantee { in_lanes: 0 })
    );
    assert_eq!(observed.solution, plain.solution, "the same layout");
    // The lowering path searches windows cut from the problem: the observer sees none.
    assert_eq!(observer.0, 0);
}
