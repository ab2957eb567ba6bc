//! Minimise mode: the smallest capacity the search can find a layout for, between LOAD and the
//! best baseline peak, with the gap to LOAD that remains unproven.

use crate::analysis::Timeline;
use crate::baselines::best_fast;
use crate::outcome::{Deadline, Limits};
use crate::problem::{Problem, Solution};
use crate::search::{self, FitRequest, Outcome, PortfolioConfig, SearchOptions, SearchStats};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The time limit minimise mode uses when neither a time nor a node limit is given (a node
/// limit alone sets no clock: the answer is then the same on any machine).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The result of [`minimize`].
pub(crate) struct Minimized {
    /// The best layout found (not yet validated).
    pub(crate) solution: Solution,
    /// A proven lower bound on any peak (LOAD, or higher when capacities were proven infeasible).
    pub(crate) lower_bound: u64,
    /// Counters, summed over every probe.
    pub(crate) stats: SearchStats,
}

/// Finds the smallest peak the search can reach for `problem` (which passed [`Problem::check`];
/// `timeline` is its timeline):
/// starts from the best baseline and LOAD, probes LOAD first, then bisects, each probe a full
/// search (with a fresh `portfolio()`) given half the time and half the nodes left: the node
/// limit is a total over every probe. Under a node limit alone there is no clock, so the answer
/// (peak, offsets, node count) depends on nothing but the call; with neither limit, the time
/// limit is [`DEFAULT_TIMEOUT`]. `None` when the time ran out (or the solve was cancelled)
/// before any baseline had placed every buffer.
pub(crate) fn minimize(
    problem: &Problem,
    timeline: &Timeline,
    options: &SearchOptions,
    portfolio: &dyn Fn() -> PortfolioConfig,
    limits: Limits,
    cancel: Option<&AtomicBool>,
) -> Option<Minimized> {
    let start = Instant::now();
    let timeout = match limits {
        Limits {
            timeout: None,
            nodes: None,
        } => Some(DEFAULT_TIMEOUT),
        Limits { timeout, .. } => timeout,
    };
    let deadline = Deadline::after(start, timeout, cancel);
    let mut stats = SearchStats::default();
    let mut best = best_fast(problem, &deadline)?;
    let mut peak = best.peak(problem);
    let mut lower = timeline.load();
    let mut probe_low = lower; // Lowest capacity not yet tried (not proven infeasible).
    let mut nodes_left = limits.nodes;
    while probe_low < peak {
        if deadline.passed() || nodes_left == Some(0) {
            break;
        }
        // LOAD first (often reachable); then halve the interval.
        let capacity = if probe_low == lower {
            probe_low
        } else {
            probe_low + (peak - probe_low) / 2
        };
        let request = FitRequest {
            portfolio: portfolio(),
            timeline,
            options,
            limits: Limits {
                timeout: timeout.map(|t| t.saturating_sub(start.elapsed()) / 2),
                // Half of what is left, rounded up: the last node too is spent.
                nodes: nodes_left.map(|left| left - left / 2),
            },
            cancel,
            observer: None,
            external: None,
            hole_model: crate::learned::hole_model::lottery_weights(options),
        };
        let result = search::fit(problem, capacity, request);
        stats.add(&result.stats);
        stats.restarts += result.stats.restarts;
        if let Some(left) = nodes_left.as_mut() {
            *left = left.saturating_sub(result.stats.nodes);
        }
        match result.outcome {
            Outcome::Found(solution) => {
                peak = solution.peak(problem);
                best = solution;
            }
            Outcome::Infeasible(_) => {
                // Infeasible at a capacity means infeasible at every smaller one too.
                lower = lower.max(capacity + 1);
                probe_low = capacity + 1;
            }
            Outcome::LimitReached => probe_low = capacity + 1,
        }
    }
    stats.seconds = start.elapsed().as_secs_f64();
    Some(Minimized {
        solution: best,
        lower_bound: lower.min(peak),
        stats,
    })
}
