//! One entry point for every allocator: run it, validate what it returns, report the outcome.

use crate::analysis::Timeline;
use crate::baselines::Baseline;
use crate::io::{check_problem_for, BufferPlaces};
use crate::problem::{Problem, Solution};
use crate::search::{self, SearchOptions, SearchStats};
use crate::validate::validate;
use std::time::{Duration, Instant};

/// Which allocator to run.
#[derive(Clone, Debug)]
pub enum Algorithm {
    /// A production heuristic (no search).
    Baseline(Baseline),
    /// The hybrid search with its options and an optional policy name (`fixed`, `WAT`, ...;
    /// `None` runs the default portfolio).
    Search {
        /// The technique switches.
        options: SearchOptions,
        /// The policy to run, or `None` for the default portfolio.
        policy: Option<String>,
    },
}

/// Every name [`Algorithm::from_name`] accepts.
pub fn algorithm_names() -> Vec<&'static str> {
    let mut names = vec!["search"];
    names.extend(Baseline::ALL.iter().map(|b| b.name()));
    names
}

impl Algorithm {
    /// The algorithm with this command-line name.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        if name == "search" {
            return Some(Algorithm::Search {
                options: SearchOptions::default(),
                policy: None,
            });
        }
        Baseline::from_name(name).map(Algorithm::Baseline)
    }

    /// The command-line name of the algorithm.
    pub fn name(&self) -> String {
        match self {
            Algorithm::Baseline(b) => b.name().to_string(),
            Algorithm::Search { .. } => "search".to_string(),
        }
    }
}

/// What is asked: fit a capacity, or find the smallest peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// Find offsets with every `offset + size <= capacity`, or show there are none.
    Fit(u64),
    /// Find offsets with the smallest peak the algorithm can reach.
    Minimize,
}

/// Why a problem has no solution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Infeasibility {
    /// The live total at some time exceeds the capacity.
    LoadExceedsCapacity {
        /// LOAD.
        load: u64,
    },
    /// A buffer, or a fixed offset, does not fit under the capacity.
    BufferTooLarge {
        /// The buffer's id.
        id: String,
    },
    /// The search explored every possibility.
    Exhausted,
}

/// How an allocation ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// A valid solution was found (and checked by the validator).
    Solved,
    /// There is provably no solution under the capacity.
    Infeasible(Infeasibility),
    /// The time or node limit was reached first.
    LimitReached,
    /// A heuristic's layout needs more than the capacity (this proves nothing).
    HeuristicExceeded {
        /// The peak the heuristic reached.
        peak: u64,
    },
    /// The problem breaks the model's rules (the same checks the readers apply).
    InvalidProblem(String),
}

impl Status {
    /// A one-word label for tables and logs: `solved`, `infeasible`, `limit`, `exceeds` (a
    /// heuristic above the capacity) or `invalid`.
    pub fn label(&self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::Infeasible(_) => "infeasible",
            Status::LimitReached => "limit",
            Status::HeuristicExceeded { .. } => "exceeds",
            Status::InvalidProblem(_) => "invalid",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Status::Solved => write!(f, "solved"),
            Status::Infeasible(Infeasibility::LoadExceedsCapacity { load }) => {
                write!(f, "infeasible (proven: LOAD {load} exceeds the capacity)")
            }
            Status::Infeasible(Infeasibility::BufferTooLarge { id }) => {
                write!(f, "infeasible (proven: buffer '{id}' does not fit the capacity)")
            }
            Status::Infeasible(Infeasibility::Exhausted) => {
                write!(f, "infeasible (proven: search space exhausted)")
            }
            Status::LimitReached => write!(f, "not solved: limit reached"),
            Status::InvalidProblem(why) => write!(f, "invalid problem: {why}"),
            Status::HeuristicExceeded { peak } => write!(
                f,
                "not solved: the heuristic needs {peak} bytes, more than the capacity (no proof of infeasibility)"
            ),
        }
    }
}

/// Limits on one allocation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Wall-clock limit.
    pub timeout: Option<Duration>,
    /// Limit on search nodes (ignored by heuristics).
    pub nodes: Option<u64>,
}

/// The result of [`allocate`].
#[derive(Clone, Debug)]
pub struct Allocation {
    /// How it ended.
    pub status: Status,
    /// The solution: present exactly when the status is `Solved`; always validated.
    pub solution: Option<Solution>,
    /// The peak of the best layout found, if any (also for `HeuristicExceeded`).
    pub peak: Option<u64>,
    /// LOAD of the problem (a lower bound on any peak).
    pub load: u64,
    /// Wall-clock time spent.
    pub elapsed: Duration,
    /// Search counters, when the algorithm searched.
    pub search: Option<SearchStats>,
    /// A proven lower bound on the peak (minimisation with the search: LOAD, or more when
    /// smaller capacities were proven infeasible); the solution is optimal when it equals the
    /// peak.
    pub lower_bound: Option<u64>,
    /// Why the solve log could not be written, if recording failed.
    pub log_error: Option<String>,
}

/// Runs `algorithm` on `problem` for `goal`. A returned solution has passed [`validate`]; an
/// allocator bug that produces an invalid layout panics with the validator's report rather
/// than returning it.
///
/// ```
/// use telamalloc::{Buffer, Problem};
/// use telamalloc::allocate::{allocate, Algorithm, Goal, Limits, Status};
/// use telamalloc::baselines::Baseline;
/// let problem = Problem::new(vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 1, 3, 4)], None);
/// let result = allocate(&problem, &Algorithm::Baseline(Baseline::Tflite), Goal::Fit(8),
///                       Limits::default(), 0);
/// assert_eq!(result.status, Status::Solved);
/// assert_eq!(result.peak, Some(8));
/// ```
pub fn allocate(
    problem: &Problem,
    algorithm: &Algorithm,
    goal: Goal,
    limits: Limits,
    seed: u64,
) -> Allocation {
    allocate_recorded(problem, algorithm, goal, limits, seed, None)
}

/// [`allocate`] that also writes a solve log of the search (see [`search::record`]); the
/// recording is used only by `Algorithm::Search` with `Goal::Fit`.
pub fn allocate_recorded(
    problem: &Problem,
    algorithm: &Algorithm,
    goal: Goal,
    limits: Limits,
    seed: u64,
    recording: Option<search::Recording<'_>>,
) -> Allocation {
    let start = Instant::now();
    if let Err(e) = check_problem_for(problem, None, "problem", &BufferPlaces::None) {
        return Allocation {
            status: Status::InvalidProblem(e.to_string()),
            solution: None,
            peak: None,
            load: 0,
            elapsed: start.elapsed(),
            search: None,
            lower_bound: None,
            log_error: None,
        };
    }
    let load = Timeline::new(problem).load();
    let capacity = match goal {
        Goal::Fit(c) => Some(c),
        Goal::Minimize => None,
    };
    if let Some(capacity) = capacity {
        if let Some(status) = trivially_infeasible(problem, capacity, load) {
            return Allocation {
                status,
                solution: None,
                peak: None,
                load,
                elapsed: start.elapsed(),
                search: None,
                lower_bound: None,
                log_error: None,
            };
        }
    }
    let layout = match algorithm {
        Algorithm::Baseline(b) => b.allocate(problem, seed),
        Algorithm::Search { options, policy } => {
            return run_search(
                problem,
                options,
                policy.as_deref(),
                goal,
                limits,
                (load, start),
                recording,
            )
        }
    };
    // Check the layout itself (capacity aside); the capacity is compared through the peak.
    let report = validate(problem, &layout, Some(u64::MAX));
    assert!(
        report.is_valid(),
        "internal error: {} produced an invalid layout:\n{report}",
        algorithm.name()
    );
    let peak = layout.peak(problem);
    let (status, solution) = match capacity {
        Some(c) if peak > c => (Status::HeuristicExceeded { peak }, None),
        _ => (Status::Solved, Some(layout)),
    };
    Allocation {
        status,
        solution,
        peak: Some(peak),
        load,
        elapsed: start.elapsed(),
        search: None,
        lower_bound: None,
        log_error: None,
    }
}

fn run_search(
    problem: &Problem,
    options: &SearchOptions,
    policy: Option<&str>,
    goal: Goal,
    limits: Limits,
    (load, start): (u64, Instant),
    recording: Option<search::Recording<'_>>,
) -> Allocation {
    let policies = policy.map(|name| {
        search::policies_by_name(name, problem.len(), options)
            .unwrap_or_else(|| panic!("unknown policy '{name}'"))
    });
    match goal {
        Goal::Fit(capacity) => {
            let result = search::search_recorded(
                problem, capacity, options, policies, limits, None, recording,
            );
            let status = result.outcome.status();
            let solution = match result.outcome {
                search::Outcome::Solved(s) => Some(s),
                _ => None,
            };
            Allocation {
                status,
                peak: solution.as_ref().map(|s| s.peak(problem)),
                solution,
                load,
                elapsed: start.elapsed(),
                search: Some(result.stats),
                lower_bound: None,
                log_error: result.log_error,
            }
        }
        Goal::Minimize => {
            let result = search::minimize::minimize(problem, options, policy, limits)
                .expect("allocate checked the problem");
            Allocation {
                status: Status::Solved,
                peak: Some(result.peak),
                lower_bound: Some(result.lower_bound),
                solution: Some(result.solution),
                load,
                elapsed: start.elapsed(),
                search: Some(result.stats),
                log_error: None,
            }
        }
    }
}

/// The cheap proofs of infeasibility: a buffer larger than the capacity, or LOAD above it.
pub fn trivially_infeasible(problem: &Problem, capacity: u64, load: u64) -> Option<Status> {
    for b in &problem.buffers {
        let top = b.offset.unwrap_or(0).checked_add(b.size);
        if top.is_none_or(|t| t > capacity) {
            return Some(Status::Infeasible(Infeasibility::BufferTooLarge {
                id: b.id.clone(),
            }));
        }
    }
    (load > capacity).then_some(Status::Infeasible(Infeasibility::LoadExceedsCapacity {
        load,
    }))
}
