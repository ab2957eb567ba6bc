//! Minimise mode: the smallest capacity the search can find a layout for, between LOAD and the
//! best baseline peak, with the gap to LOAD that remains unproven. Its first phase always
//! answers, so minimise returns a layout however short the limit.

use super::bound::{can_search_at_load, prove, BoundSource};
use super::improve::improve;
use super::reinsert::reinsert;
use super::window_first::window_first;
use crate::analysis::Timeline;
use crate::baselines::{first_fit_or_lanes, Baseline};
use crate::outcome::{Deadline, Limits};
use crate::problem::{Problem, Solution};
use crate::search::{self, FitRequest, Outcome, PortfolioConfig, SearchOptions, SearchStats};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The time limit minimise mode uses when neither a time nor a node limit is given (a node
/// limit alone sets no clock: the answer is then the same on any machine).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The most buffers the search probes the whole problem for when the improvement phase follows
/// (the search's model of 100,000 buffers took about 760 MiB; the windows are small); above it,
/// a fit with the search lowers first-fit's layout to the capacity instead.
pub(crate) const WHOLE_SEARCH_MOST: usize = 100_000;

/// The seed of ruin and recreate's draws.
const REINSERT_SEED: u64 = 0x5eed;

/// The bound phase gets one part in this many of the time and of the nodes.
const BOUND_SHARE: u64 = 10;

/// Which phase of minimise produced its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinimizePhase {
    /// The first phase, which always answers: TFLite Micro's first-fit by size descending;
    /// when the limit came first, the buffers it had not placed yet were laid out in lanes
    /// above the others, one lane per buffer live at once (`in_lanes`: how many; 0 when
    /// first-fit placed every buffer).
    Guarantee {
        /// How many buffers were laid out in lanes at the limit.
        in_lanes: usize,
    },
    /// Another fast baseline, run after the first phase while time remained.
    Baseline(Baseline),
    /// The search, fitting this capacity.
    Search {
        /// The capacity the search fitted.
        capacity: u64,
    },
    /// The improvement phase (large-neighbourhood search, the `lns` switch) from the best layout
    /// of the phases before.
    Improve {
        /// How many windows of time it re-placed.
        windows: u64,
    },
    /// The layout built from the window of the largest live totals (the `window-first` switch).
    WindowFirst,
    /// Ruin and recreate (the `reinsert` switch) from the best layout of the phases before.
    Reinsert {
        /// How many moves were kept.
        moves: u64,
    },
}

impl std::fmt::Display for MinimizePhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MinimizePhase::Guarantee { in_lanes: 0 } => {
                write!(
                    f,
                    "first-fit by size (tflite-micro), the phase that always answers"
                )
            }
            MinimizePhase::Guarantee { in_lanes } => write!(
                f,
                "first-fit by size (tflite-micro), stopped by the limit: {in_lanes} buffers \
                 laid out in lanes above the others"
            ),
            MinimizePhase::Baseline(baseline) => write!(f, "baseline {}", baseline.name()),
            MinimizePhase::Search { capacity } => {
                write!(f, "the search, fitting capacity {capacity}")
            }
            MinimizePhase::Improve { windows } => write!(
                f,
                "large-neighbourhood search, {windows} windows of time re-placed"
            ),
            MinimizePhase::WindowFirst => write!(
                f,
                "the search on the window of the largest live totals, the rest around it"
            ),
            MinimizePhase::Reinsert { moves } => write!(
                f,
                "ruin and recreate, {moves} moves of the buffers topping the peak kept"
            ),
        }
    }
}

/// The portfolios of minimise's searches, by what a search is for (the solver decides them).
pub(crate) struct Portfolios<'a> {
    /// The solve's own: the probe at LOAD, window-first's windows and the bound phase's.
    pub(crate) own: &'a dyn Fn(usize) -> PortfolioConfig,
    /// The searches that lower a layout already found: the probes above LOAD and the windows
    /// of the improvement phase.
    pub(crate) lowering: &'a dyn Fn(usize) -> PortfolioConfig,
}

impl Portfolios<'_> {
    /// The portfolio of a probe of the whole problem: its own at LOAD, the lowering one above.
    fn probe(&self, at_load: bool) -> &dyn Fn(usize) -> PortfolioConfig {
        match at_load {
            true => self.own,
            false => self.lowering,
        }
    }
}

/// The result of [`minimize`].
pub(crate) struct Minimized {
    /// The best layout found (not yet validated).
    pub(crate) solution: Solution,
    /// The phase that found it.
    pub(crate) phase: MinimizePhase,
    /// A proven lower bound on any peak (LOAD, or higher when capacities were proven infeasible).
    pub(crate) lower_bound: u64,
    /// Where the lower bound comes from.
    pub(crate) bound_source: BoundSource,
    /// Counters, summed over every probe.
    pub(crate) stats: SearchStats,
}

/// Finds the smallest peak the search can reach for `problem` (which passed [`Problem::check`];
/// `timeline` is its timeline). First the phase that always answers ([`first_fit_or_lanes`]),
/// then the other fast baselines while time remains (the first of equal peaks in
/// [`Baseline::FAST`] order is kept), then the search from the best peak and LOAD: it probes
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
    let timeout = match limits {
        Limits {
            timeout: None,
            nodes: None,
        } => Some(DEFAULT_TIMEOUT),
        Limits { timeout, .. } => timeout,
    };
    // The bound phase's share is kept for the end, when it can search a window at LOAD.
    let bounding = options.window_bound && !problem.has_gaps() && enough.is_none();
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
        options,
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
    options: &SearchOptions,
    portfolio: &dyn Fn(usize) -> PortfolioConfig,
    (deadline, nodes): (&Deadline<'_>, Option<u64>),
) -> Improvement {
    // Above the probes' limit the windows get half of what is left, ruin and recreate the rest.
    let halved = options.reinsert && problem.len() > WHOLE_SEARCH_MOST;
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
    if !options.reinsert || peak <= lower.max(enough) || deadline.passed() {
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

/// The phases of [`minimize`] before the bound phase, from `start` within `limits` (the time
/// limit, if any, given); the first, which always answers, within `whole`, the whole solve's
/// deadline. No phase lowers the peak below `enough` (0: as low as they get).
fn phases(
    (problem, timeline): (&Problem, &Timeline),
    options: &SearchOptions,
    portfolios: &Portfolios<'_>,
    (start, limits, whole): (Instant, Limits, &Deadline<'_>),
    (cancel, enough): (Option<&AtomicBool>, u64),
) -> Minimized {
    let timeout = limits.timeout;
    let deadline = Deadline::after(start, timeout, cancel);
    let mut stats = SearchStats::default();
    let (mut best, in_lanes) = first_fit_or_lanes(problem, whole);
    let mut phase = MinimizePhase::Guarantee { in_lanes };
    let mut peak = best.peak(problem);
    let rank = |b: Baseline| Baseline::FAST.iter().position(|&f| f == b);
    let mut best_rank = rank(Baseline::TfliteMicro);
    let improving = options.lns && !problem.has_gaps();
    // With the improvement phase to come on a problem too large for probes of the whole, the
    // other baselines (a second or more each at a million buffers) are skipped: the windows
    // start from first-fit, the best of them on the 1M mixes (by 1.5 to 3% of LOAD).
    let others = match improving && problem.len() > WHOLE_SEARCH_MOST {
        true => &[][..],
        false => &Baseline::FAST[..],
    };
    for &baseline in others {
        if baseline == Baseline::TfliteMicro || deadline.passed() {
            continue;
        }
        let Some(layout) = baseline.allocate_within(problem, 0, &deadline) else {
            continue;
        };
        let layout_peak = layout.peak(problem);
        if (layout_peak, rank(baseline)) < (peak, best_rank) {
            (best, peak, best_rank) = (layout, layout_peak, rank(baseline));
            phase = MinimizePhase::Baseline(baseline);
        }
    }
    let mut lower = timeline.load();
    // A layout from the window of the largest live totals, with a quarter of the time and
    // nodes left (not above the probes' limit: its rest is placed over the whole problem).
    let mut limits = limits;
    if improving && options.window_first && problem.len() <= WHOLE_SEARCH_MOST && peak > lower {
        let share = Deadline::after(start, timeout.map(|t| part_left(start, t, 4)), cancel);
        let nodes = limits.nodes.map(|n| n / 4);
        let built = window_first(
            (problem, timeline),
            (lower, &best),
            options,
            portfolios.own,
            (&share, nodes),
        );
        stats.add(&built.stats);
        limits.nodes = limits.nodes.map(|n| n.saturating_sub(built.stats.nodes));
        if let Some(layout) = built.solution.filter(|l| l.peak(problem) < peak) {
            (peak, best) = (layout.peak(problem), layout);
            phase = MinimizePhase::WindowFirst;
        }
    }
    let mut probe_low = lower; // Lowest capacity not yet tried (not proven infeasible).
                               // With the improvement phase after them, the probes get half of the time and nodes left,
                               // and none on a problem too large for the search to build.
    let (probe_timeout, mut nodes_left, mut improve_nodes) = match improving {
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
    let probe_deadline = Deadline::after(start, probe_timeout, cancel);
    while probe_low < peak {
        if probe_deadline.passed() || nodes_left == Some(0) || peak <= enough {
            break;
        }
        // LOAD first (often reachable); then halve the interval.
        let capacity = if probe_low == lower {
            probe_low
        } else {
            probe_low + (peak - probe_low) / 2
        };
        let request = FitRequest {
            portfolio: portfolios.probe(capacity == timeline.load())(problem.len()),
            timeline,
            options,
            limits: Limits {
                timeout: probe_timeout.map(|t| t.saturating_sub(start.elapsed()) / 2),
                // Half of what is left, rounded up: the last node too is spent.
                nodes: nodes_left.map(|left| left - left / 2),
            },
            cancel,
            observer: None,
            external: None,
            hole_model: crate::learned::hole_model::lottery_weights(options),
            run_judge: crate::learned::restart_model::run_judge(options),
            placement_risk: crate::learned::placement_risk(options, None),
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
                phase = MinimizePhase::Search { capacity };
            }
            Outcome::Infeasible(_) => {
                // Infeasible at a capacity means infeasible at every smaller one too.
                lower = lower.max(capacity + 1);
                probe_low = capacity + 1;
            }
            Outcome::LimitReached => probe_low = capacity + 1,
        }
    }
    if improving && peak > lower.max(enough) && !deadline.passed() {
        if let (Some(left), Some(share)) = (nodes_left, improve_nodes.as_mut()) {
            *share += left; // what the probes left
        }
        let improved = improvement(
            (problem, timeline),
            (&best, lower, enough),
            options,
            portfolios.lowering,
            (&deadline, improve_nodes),
        );
        stats.add(&improved.stats);
        if let Some((layout, found_by)) = improved.solution.filter(|(l, _)| l.peak(problem) < peak)
        {
            (peak, best, phase) = (layout.peak(problem), layout, found_by);
        }
    }
    let bound_source = match lower > timeline.load() {
        true => BoundSource::WholeProblem,
        false => BoundSource::Load,
    };
    Minimized {
        solution: best,
        phase,
        lower_bound: lower.min(peak),
        bound_source,
        stats,
    }
}
