//! Minimise's phases before the bound phase: the one that always answers (first-fit, or lanes
//! at the limit), the other fast baselines, window-first, the probes of the whole problem that
//! bisect between LOAD and the best peak, then the improvement phases (windows of time, then
//! ruin and recreate).

use super::bound::BoundSource;
use super::improve::improve;
use super::options::MinimizeOptions;
use super::phase::MinimizePhase;
use super::reinsert::reinsert;
use super::shared::{Minimized, Portfolios, WHOLE_SEARCH_MOST};
use super::window_first::window_first;
use crate::analysis::Timeline;
use crate::baselines::{first_fit_or_lanes, Baseline};
use crate::outcome::{Deadline, Limits};
use crate::problem::{Problem, Solution};
use crate::search::{self, FitRequest, Outcome, PortfolioConfig, SearchOptions, SearchStats};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The seed of ruin and recreate's draws.
const REINSERT_SEED: u64 = 0x5eed;

/// The best layout so far, its peak, and the phase that found it.
struct Best {
    solution: Solution,
    peak: u64,
    phase: MinimizePhase,
}

impl Best {
    /// Keeps `layout` (found by `phase`) when its peak is lower.
    fn offer(&mut self, problem: &Problem, layout: Solution, phase: MinimizePhase) {
        let peak = layout.peak(problem);
        if peak < self.peak {
            (self.solution, self.peak, self.phase) = (layout, peak, phase);
        }
    }
}

/// Where the probes of the whole problem stand: the proven lower bound, and the nodes left.
struct Probed {
    lower: u64,
    nodes_left: Option<u64>,
}

/// The phases of [`minimize`](super::minimize) before the bound phase, from `start` within
/// `limits` (the time limit, if any, given); the first, which always answers, within `whole`,
/// the whole solve's deadline. No phase lowers the peak below `enough` (0: as low as they get).
pub(super) fn phases(
    (problem, timeline): (&Problem, &Timeline),
    (options, own): (&SearchOptions, MinimizeOptions),
    portfolios: &Portfolios<'_>,
    (start, limits, whole): (Instant, Limits, &Deadline<'_>),
    (cancel, enough): (Option<&AtomicBool>, u64),
) -> Minimized {
    let timeout = limits.timeout;
    let deadline = Deadline::after(start, timeout, cancel);
    let mut stats = SearchStats::default();
    let improving = own.lns && !problem.has_gaps();
    let mut best = baselines(problem, improving, whole, &deadline);
    let lower = timeline.load();
    // A layout from the window of the largest live totals, with a quarter of the time and
    // nodes left (not above the probes' limit: its rest is placed over the whole problem).
    let mut limits = limits;
    let windowed = improving && own.window_first && problem.len() <= WHOLE_SEARCH_MOST;
    if windowed && best.peak > lower {
        let share = Deadline::after(start, timeout.map(|t| part_left(start, t, 4)), cancel);
        let nodes = limits.nodes.map(|n| n / 4);
        let built = window_first(
            (problem, timeline),
            (lower, &best.solution),
            options,
            portfolios.own,
            (&share, nodes),
        );
        stats.add(&built.stats);
        limits.nodes = limits.nodes.map(|n| n.saturating_sub(built.stats.nodes));
        if let Some(layout) = built.solution {
            best.offer(problem, layout, MinimizePhase::WindowFirst);
        }
    }
    // With the improvement phase after them, the probes get half of the time and nodes left,
    // and none on a problem too large for the search to build.
    let (probe_timeout, nodes_left, mut improve_nodes) = match improving {
        false => (timeout, limits.nodes, None),
        true if problem.len() > WHOLE_SEARCH_MOST => (Some(Duration::ZERO), Some(0), limits.nodes),
        true => {
            let half = |left: u64| left - left / 2;
            (
                timeout.map(|t| part_left(start, t, 2)),
                limits.nodes.map(half),
                limits.nodes.map(|left| left / 2),
            )
        }
    };
    let probed = probes(
        (problem, timeline),
        options,
        portfolios,
        (start, probe_timeout, nodes_left, cancel),
        (&mut best, &mut stats, enough),
    );
    let lower = probed.lower;
    if improving && best.peak > lower.max(enough) && !deadline.passed() {
        if let (Some(left), Some(share)) = (probed.nodes_left, improve_nodes.as_mut()) {
            *share += left; // what the probes left
        }
        let improved = improvement(
            (problem, timeline),
            (&best.solution, lower, enough),
            (options, own),
            portfolios.lowering,
            (&deadline, improve_nodes),
        );
        stats.add(&improved.stats);
        if let Some((layout, found_by)) = improved.solution {
            best.offer(problem, layout, found_by);
        }
    }
    let bound_source = match lower > timeline.load() {
        true => BoundSource::WholeProblem,
        false => BoundSource::Load,
    };
    Minimized {
        lower_bound: lower.min(best.peak),
        solution: best.solution,
        phase: best.phase,
        bound_source,
        stats,
    }
}

/// The phase that always answers ([`first_fit_or_lanes`], within `whole`), then the other fast
/// baselines within `deadline` (the first of equal peaks in [`Baseline::FAST`] order kept).
/// With the improvement phase to come on a problem too large for probes of the whole, the
/// other baselines (a second or more each at a million buffers) are skipped: the windows
/// start from first-fit, the best of them on the 1M mixes (by 1.5 to 3% of LOAD).
fn baselines(
    problem: &Problem,
    improving: bool,
    whole: &Deadline<'_>,
    deadline: &Deadline<'_>,
) -> Best {
    let (solution, in_lanes) = first_fit_or_lanes(problem, whole);
    let mut best = Best {
        peak: solution.peak(problem),
        solution,
        phase: MinimizePhase::Guarantee { in_lanes },
    };
    let rank = |b: Baseline| Baseline::FAST.iter().position(|&f| f == b);
    let mut best_rank = rank(Baseline::TfliteMicro);
    let others = match improving && problem.len() > WHOLE_SEARCH_MOST {
        true => &[][..],
        false => &Baseline::FAST[..],
    };
    for &baseline in others {
        if baseline == Baseline::TfliteMicro || deadline.passed() {
            continue;
        }
        let Some(layout) = baseline.allocate_within(problem, 0, deadline) else {
            continue;
        };
        let layout_peak = layout.peak(problem);
        if (layout_peak, rank(baseline)) < (best.peak, best_rank) {
            best_rank = rank(baseline);
            (best.solution, best.peak) = (layout, layout_peak);
            best.phase = MinimizePhase::Baseline(baseline);
        }
    }
    best
}

/// The probes of the whole problem from `start`, within `timeout` and `nodes_left`: LOAD first
/// (often reachable), then bisecting between the lowest capacity not yet tried and the best
/// peak, each probe a full search given half the time and half the nodes left, until the peak
/// is at most `enough`. A layout found replaces `best`; an infeasible capacity raises the
/// lower bound.
fn probes(
    (problem, timeline): (&Problem, &Timeline),
    options: &SearchOptions,
    portfolios: &Portfolios<'_>,
    (start, timeout, mut nodes_left, cancel): (
        Instant,
        Option<Duration>,
        Option<u64>,
        Option<&AtomicBool>,
    ),
    (best, stats, enough): (&mut Best, &mut SearchStats, u64),
) -> Probed {
    let mut lower = timeline.load();
    let mut probe_low = lower; // Lowest capacity not yet tried (not proven infeasible).
    let probe_deadline = Deadline::after(start, timeout, cancel);
    while probe_low < best.peak {
        if probe_deadline.passed() || nodes_left == Some(0) || best.peak <= enough {
            break;
        }
        let capacity = if probe_low == lower {
            probe_low
        } else {
            probe_low + (best.peak - probe_low) / 2
        };
        let request = FitRequest {
            portfolio: portfolios.probe(capacity == timeline.load())(problem.len()),
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
        };
        let result = search::fit(problem, capacity, request);
        stats.add(&result.stats);
        stats.restarts += result.stats.restarts;
        if let Some(left) = nodes_left.as_mut() {
            *left = left.saturating_sub(result.stats.nodes);
        }
        match result.outcome {
            Outcome::Found(solution) => {
                best.peak = solution.peak(problem);
                best.solution = solution;
                best.phase = MinimizePhase::Search { capacity };
            }
            Outcome::Infeasible(_) => {
                // Infeasible at a capacity means infeasible at every smaller one too.
                lower = lower.max(capacity + 1);
                probe_low = capacity + 1;
            }
            Outcome::LimitReached => probe_low = capacity + 1,
        }
    }
    Probed { lower, nodes_left }
}

/// The time at one part in `parts` of what is left of `timeout` from `start`, as a time limit
/// from it.
fn part_left(start: Instant, timeout: Duration, parts: u32) -> Duration {
    start.elapsed() + timeout.saturating_sub(start.elapsed()) / parts
}

/// What the improvement phases give: a better layout, if one was found, with the phase that
/// found it, and the search's counters (ruin and recreate counts each buffer it puts back as
/// a node).
struct Improvement {
    solution: Option<(Solution, MinimizePhase)>,
    stats: SearchStats,
}

/// Improves `best` (above `lower`, a proven bound, and above `enough`), within `deadline` and
/// `nodes`: by windows of time ([`improve`]), then, with what they leave when they give up, by
/// ruin and recreate ([`reinsert`], the `reinsert` switch).
fn improvement(
    (problem, timeline): (&Problem, &Timeline),
    (best, lower, enough): (&Solution, u64, u64),
    (options, own): (&SearchOptions, MinimizeOptions),
    portfolio: &dyn Fn(usize) -> PortfolioConfig,
    (deadline, nodes): (&Deadline<'_>, Option<u64>),
) -> Improvement {
    // Above the probes' limit the windows get half of what is left, ruin and recreate the rest.
    let halved = own.reinsert && problem.len() > WHOLE_SEARCH_MOST;
    let windows_deadline = match (halved, deadline.at) {
        (true, Some(at)) => {
            let now = Instant::now();
            Deadline {
                at: Some(now + at.saturating_duration_since(now) / 2),
                cancel: deadline.cancel,
            }
        }
        _ => *deadline,
    };
    let windows_nodes = match halved {
        true => nodes.map(|n| n / 2),
        false => nodes,
    };
    let improved = improve(
        problem,
        best.clone(),
        (lower, enough),
        options,
        portfolio,
        (
            &windows_deadline,
            windows_nodes,
            problem.len() > WHOLE_SEARCH_MOST,
        ),
    );
    let mut stats = improved.stats;
    let mut peak = best.peak(problem);
    let mut solution = None;
    if improved.solution.peak(problem) < peak {
        peak = improved.solution.peak(problem);
        let found_by = MinimizePhase::Improve {
            windows: improved.windows,
        };
        solution = Some((improved.solution, found_by));
    }
    if !own.reinsert || peak <= lower.max(enough) || deadline.passed() {
        return Improvement { solution, stats };
    }
    let from = solution.as_ref().map_or(best, |(layout, _)| layout).clone();
    let nodes = nodes.map(|n| n.saturating_sub(stats.nodes));
    let reinserted = reinsert(
        (problem, timeline),
        from,
        (lower, enough),
        REINSERT_SEED,
        (deadline, nodes),
    );
    stats.nodes += reinserted.placements;
    if reinserted.solution.peak(problem) < peak {
        let found_by = MinimizePhase::Reinsert {
            moves: reinserted.moves,
        };
        solution = Some((reinserted.solution, found_by));
    }
    Improvement { solution, stats }
}
