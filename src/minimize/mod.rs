//! Minimise mode: the smallest capacity the search can find a layout for, between LOAD and the
//! best baseline peak, with the gap to LOAD that remains unproven. Its first phase always
//! answers, so minimise returns a layout however short the limit. Above 100,000 buffers a fit
//! with the search goes by its phases too ([`lowering`]).

mod bound;
mod by_time;
mod improve;
mod obstacles;
mod options;
mod part_fit;
mod phase;
mod phases;
mod reinsert;
mod shared;
#[cfg(test)]
mod test_layouts;
mod window_first;

pub(crate) mod lowering;

pub use bound::BoundSource;
pub use phase::MinimizePhase;
pub(crate) use shared::{Minimized, Portfolios};

use crate::analysis::Timeline;
use crate::outcome::{Deadline, Limits};
use crate::problem::Problem;
use crate::search::SearchOptions;
use bound::{can_search_at_load, prove};
use options::MinimizeOptions;
use phases::phases;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The time limit minimise mode uses when neither a time nor a node limit is given (a node
/// limit alone sets no clock: the answer is then the same on any machine).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The bound phase gets one part in this many of the time and of the nodes.
const BOUND_SHARE: u64 = 10;

/// Finds the smallest peak the search can reach for `problem` (which passed [`Problem::check`];
/// `timeline` is its timeline). First the phase that always answers ([`first_fit_or_lanes`](crate::baselines::first_fit_or_lanes)),
/// then the other fast baselines while time remains (the first of equal peaks in
/// [`Baseline::FAST`](crate::baselines::Baseline::FAST) order is kept), then the search from the best peak and LOAD: it probes
/// LOAD first, then bisects, each probe a full search (with a fresh portfolio of
/// `portfolios`: its own at LOAD, its lowering one above) given half the time and half the
/// nodes left: the node limit is a total over every probe. Under a node
/// limit alone there is no clock, so the answer (peak, offsets, node count) depends on nothing
/// but the call; with neither limit, the time limit is [`DEFAULT_TIMEOUT`]. The limit (or the
/// cancel flag) stops every phase; the first then lays out in lanes what it has not placed, so
/// there is always a layout. With `enough` (a fit's capacity) every phase stops once the peak
/// is at most that, and no bound is sought.
pub(crate) fn minimize(
    problem: &Problem,
    timeline: &Timeline,
    options: &SearchOptions,
    portfolios: &Portfolios<'_>,
    (limits, enough): (Limits, Option<u64>),
    cancel: Option<&AtomicBool>,
) -> Minimized {
    let start = Instant::now();
    let timeout = limits.timeout_or(DEFAULT_TIMEOUT);
    // The bound phase's share is kept for the end, when it can search a window at LOAD.
    let own = MinimizeOptions::of(options);
    let bounding = own.window_bound && !problem.has_gaps() && enough.is_none();
    let layout_limits = match bounding && can_search_at_load(timeline) {
        true => Limits {
            timeout: timeout.map(|t| t - t / BOUND_SHARE as u32),
            nodes: limits.nodes.map(|n| n - n / BOUND_SHARE),
        },
        false => Limits { timeout, ..limits },
    };
    let deadline = Deadline::after(start, timeout, cancel);
    let mut minimized = phases(
        (problem, timeline),
        (options, own),
        portfolios,
        (start, layout_limits, &deadline),
        (cancel, enough.unwrap_or(0)),
    );
    if bounding {
        let nodes = limits
            .nodes
            .map(|n| n.saturating_sub(minimized.stats.nodes));
        let bound = prove(
            (problem, timeline, &minimized.solution),
            (minimized.lower_bound, minimized.bound_source.clone()),
            options,
            portfolios.own,
            (&deadline, nodes),
        );
        minimized.stats.add(&bound.stats);
        (minimized.lower_bound, minimized.bound_source) = (bound.lower, bound.source);
    }
    minimized.stats.seconds = start.elapsed().as_secs_f64();
    minimized
}
