//! Minimise mode: the smallest capacity the search can find a layout for, between LOAD and the
//! best baseline peak, with the gap to LOAD that remains unproven.

use super::{policies_by_name, search, Outcome, SearchOptions, SearchStats};
use crate::allocate::Limits;
use crate::analysis::Timeline;
use crate::baselines::Baseline;
use crate::error::InputError;
use crate::io::{check_problem_for, BufferPlaces};
use crate::problem::{Problem, Solution};
use std::time::{Duration, Instant};

/// The limit minimise mode uses when none is given.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The result of [`minimize`].
#[derive(Clone, Debug)]
pub struct Minimized {
    /// The best (validated) layout found.
    pub solution: Solution,
    /// Its peak.
    pub peak: u64,
    /// A proven lower bound on any peak (LOAD, or higher when capacities were proven infeasible).
    pub lower_bound: u64,
    /// Counters, summed over every probe.
    pub stats: SearchStats,
}

impl Minimized {
    /// `peak - lower_bound`: 0 means the peak is proven optimal.
    pub fn gap(&self) -> u64 {
        self.peak - self.lower_bound
    }
}

/// Finds the smallest peak the search can reach: starts from the best baseline and LOAD, probes
/// LOAD first, then bisects, each probe a full search with a share of the time left. A problem
/// that breaks the model's rules is returned as the error.
pub fn minimize(
    problem: &Problem,
    options: &SearchOptions,
    policy: Option<&str>,
    limits: Limits,
) -> Result<Minimized, InputError> {
    check_problem_for(problem, None, "problem", &BufferPlaces::None)?;
    let start = Instant::now();
    let timeout = limits.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let mut stats = SearchStats::default();
    let mut best = Baseline::ALL
        .iter()
        .filter(|b| **b != Baseline::TvmHillClimb)
        .map(|b| b.allocate(problem, 0))
        .min_by_key(|s| s.peak(problem))
        .expect("at least one baseline");
    let mut peak = best.peak(problem);
    let mut lower = Timeline::new(problem).load();
    let mut probe_low = lower; // Lowest capacity not yet tried (not proven infeasible).
    while probe_low < peak {
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            break;
        }
        // LOAD first (often reachable); then halve the interval.
        let capacity = if probe_low == lower {
            probe_low
        } else {
            probe_low + (peak - probe_low) / 2
        };
        let probe_limits = Limits {
            timeout: Some(left / 2),
            nodes: limits.nodes,
        };
        let policies = policy
            .map(|name| policies_by_name(name, problem.len(), options).expect("known policy"));
        let result = search(problem, capacity, options, policies, probe_limits);
        stats.nodes += result.stats.nodes;
        stats.minor_backtracks += result.stats.minor_backtracks;
        stats.major_backtracks += result.stats.major_backtracks;
        stats.restarts += result.stats.restarts;
        stats.decompositions += result.stats.decompositions;
        match result.outcome {
            Outcome::Solved(solution) => {
                peak = solution.peak(problem);
                best = solution;
            }
            Outcome::Infeasible(_) => {
                // Infeasible at a capacity means infeasible at every smaller one too.
                lower = lower.max(capacity + 1);
                probe_low = capacity + 1;
            }
            Outcome::LimitReached => probe_low = capacity + 1,
            Outcome::InvalidProblem(_) => unreachable!("the problem was checked first"),
        }
    }
    stats.seconds = start.elapsed().as_secs_f64();
    Ok(Minimized {
        solution: best,
        peak,
        lower_bound: lower.min(peak),
        stats,
    })
}
