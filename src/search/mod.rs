//! The TelaMalloc hybrid search engine: a node policy picks which buffer to place next, the
//! buffer goes to its lowest feasible offset, propagation narrows what is left, and the search
//! backtracks (minor: the next candidate; major: back to the placements behind a conflict, with
//! the buffers involved prioritised), restarting over a portfolio of policies with growing
//! budgets.
//!
//! Laid out by phase: `instance` (the immutable problem data), `state` (placement,
//! propagation and undo), `edge_finding` (per-section reasoning over address windows), `dfs`
//! (decisions and backtracking), `portfolio` and `schedule` (restarts), `slack` (slack filling:
//! restrictions of nearly full problems searched as members of the portfolio), `policy` and
//! `strategy` (the two decision seams: [`NodePolicy`], [`StrategyRanker`]), `observer` (who
//! watches: [`SearchObserver`]), `features` (what learned components see: [`CANDIDATE_FEATURES`],
//! [`PROBLEM_FEATURES`], [`RUN_FEATURES`]). This module re-exports the seams; the engine itself is private. The
//! crate's front door, [`crate::Solver`], is the only caller of the engine's entry point.

mod dfs;
pub(crate) mod edge_finding;
pub(crate) mod external;
pub(crate) mod features;
pub(crate) mod instance;
mod judge;
pub(crate) mod max_tree;
mod observer;
mod options;
pub(crate) mod policy;
mod portfolio;
mod root;
pub(crate) mod schedule;
pub(crate) mod slack;
pub(crate) mod state;
mod stats;
mod strategy;

pub(crate) use external::{ExternalMember, MemberEnd};
pub use features::{
    run_features, RunProgress, CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION, NODE_FEATURES,
    PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION, RUN_FEATURES, RUN_FEATURE_SCHEMA_VERSION,
};
pub(crate) use judge::LearnedHooks;
pub use judge::{PlacementRisk, RunJudge};
pub use observer::{
    RunEnded, RunObserver, RunSummary, SearchObserver, SearchStart, TryCounts, TryEnd,
};
pub use options::{
    switch_names, technique_names, Layer, Schedule, SearchOptions, Switch, LAYERS, SWITCHES,
};
pub(crate) use policy::{parse_policy_name, PolicyName, StaticOrder};
pub use policy::{Candidate, Diversity, FixedPolicy, NodePolicy, NodeView};
pub use root::RootNode;
pub use stats::SearchStats;
pub use strategy::{Portfolio, ProblemView, StrategyPlan, StrategyRanker};
pub(crate) use strategy::{PortfolioConfig, PortfolioSwitches};

use crate::analysis::Timeline;
use crate::baselines::Baseline;
use crate::outcome::{trivially_infeasible, Deadline, Infeasibility, Limits, Status};
use crate::problem::{Problem, Solution};
use instance::Instance;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// How a search ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A layout under the capacity (not yet validated).
    Found(Solution),
    /// Proven: no solution exists.
    Infeasible(Infeasibility),
    /// The time or node limit, or cancellation, came first.
    LimitReached,
}

impl Outcome {
    /// The matching [`Status`].
    pub(crate) fn status(&self) -> Status {
        match self {
            Outcome::Found(_) => Status::Solved,
            Outcome::Infeasible(why) => Status::Infeasible(why.clone()),
            Outcome::LimitReached => Status::LimitReached,
        }
    }
}

/// The result of [`fit`].
pub(crate) struct SearchResult {
    /// How it ended.
    pub(crate) outcome: Outcome,
    /// Counters.
    pub(crate) stats: SearchStats,
    /// Whether the search tried every layout of its model and found none while the problem has
    /// layouts outside it (gap windows that can interleave): the outcome is then a limit, not a
    /// proof, and the caller says why.
    pub(crate) exhausted_model: bool,
}

/// How to run one search, besides the problem.
pub(crate) struct FitRequest<'a> {
    /// The portfolio (not empty) and how to run it.
    pub(crate) portfolio: PortfolioConfig,
    /// The problem's timeline (sections and LOAD), built once by the caller.
    pub(crate) timeline: &'a Timeline,
    /// The technique switches.
    pub(crate) options: &'a SearchOptions,
    /// Time and node limits.
    pub(crate) limits: Limits,
    /// Stops the search when it becomes true.
    pub(crate) cancel: Option<&'a AtomicBool>,
    /// Watches the search.
    pub(crate) observer: Option<&'a mut dyn SearchObserver>,
    /// One more member of the portfolio (with restarts on), run before or after the policies of
    /// a round as it asks, at its share of the work.
    pub(crate) external: Option<&'a dyn ExternalMember>,
}

/// Fits `problem` (which passed [`Problem::check`]) under `capacity` with the request's
/// portfolio, or proves it cannot, within the request's limits. A found layout is returned
/// unvalidated: the caller validates every answer once.
///
/// In order: the trivial proofs of infeasibility, the warm start from the problem's hints, the
/// fast baselines (`heuristic-first`), then the portfolio's search.
pub(crate) fn fit(problem: &Problem, capacity: u64, request: FitRequest<'_>) -> SearchResult {
    let start = Instant::now();
    let FitRequest {
        portfolio,
        timeline,
        options,
        limits,
        cancel,
        mut observer,
        external,
    } = request;
    // The solver gives an empty portfolio the default one (`Engine::portfolio` in `fit`): nothing
    // to run would never decide.
    debug_assert!(
        !portfolio.portfolio.policies.is_empty(),
        "an empty portfolio"
    );
    let load = timeline.load();
    if let Some(o) = observer.as_mut() {
        o.on_start(&SearchStart {
            problem,
            capacity,
            load,
        });
    }
    // With gaps, only the techniques sound for pieces (see `SearchOptions::for_gaps`).
    let gap_options;
    let options = if problem.has_gaps() {
        gap_options = options.for_gaps();
        &gap_options
    } else {
        options
    };
    let mut stats = SearchStats::default();
    let mut exhausted_model = false;
    let stop = Deadline::after(start, limits.timeout, cancel);
    // Made only for a problem with hints.
    let dive = || FitRequest {
        portfolio: portfolio.for_hint_dive(problem.len()),
        timeline,
        options,
        limits: Limits {
            timeout: limits.timeout.map(|t| t.saturating_sub(start.elapsed())),
            nodes: limits.nodes,
        },
        cancel,
        observer: None,
        external: None,
    };
    let outcome = if let Some(why) = trivially_infeasible(problem, capacity, load) {
        Outcome::Infeasible(why)
    } else if let Some(layout) = warm_start(problem, capacity, dive, &mut stats) {
        Outcome::Found(layout)
    } else {
        match heuristic_fit(problem, capacity, options, &stop) {
            Heuristic::Fits(baseline, layout) => {
                stats.heuristic = Some(baseline.name().to_string());
                Outcome::Found(layout)
            }
            Heuristic::OutOfTime => Outcome::LimitReached,
            Heuristic::NoFit => {
                let search = FitRequest {
                    portfolio,
                    timeline,
                    options,
                    limits,
                    cancel,
                    observer: observer
                        .as_mut()
                        .map(|o| &mut **o as &mut dyn SearchObserver),
                    external,
                };
                let (outcome, exhausted) =
                    search_portfolio(problem, capacity, (search, stop), &mut stats);
                exhausted_model = exhausted;
                outcome
            }
        }
    };
    stats.seconds = start.elapsed().as_secs_f64();
    if let Some(o) = observer.as_mut() {
        o.on_finish(&outcome.status(), &stats);
    }
    SearchResult {
        outcome,
        stats,
        exhausted_model,
    }
}

/// With hints, the hint dive (see [`hint_dive`], run under the request `dive` makes): its layout, if it found one
/// (the counters are then the dive's); else its work is added to `stats` and the search goes on
/// without the hints.
fn warm_start<'a>(
    problem: &Problem,
    capacity: u64,
    dive: impl FnOnce() -> FitRequest<'a>,
    stats: &mut SearchStats,
) -> Option<Solution> {
    if !problem.has_hints() {
        return None;
    }
    let (layout, dive_stats) = hint_dive(problem, capacity, dive())?;
    let Some(layout) = layout else {
        stats.add(&dive_stats);
        return None;
    };
    *stats = dive_stats;
    stats.heuristic = Some(format!(
        "hints ({})",
        stats.heuristic.as_deref().unwrap_or("search")
    ));
    Some(layout)
}

/// The portfolio's search under `request` until `stop`: the portfolio ordered and weighted for
/// the problem, the slack-filling members (with `slack-fill` and restarts), then the rounds.
/// The outcome, and whether the search exhausted a model that is not exact (see
/// [`SearchResult::exhausted_model`]).
fn search_portfolio(
    problem: &Problem,
    capacity: u64,
    (mut request, stop): (FitRequest<'_>, Deadline<'_>),
    stats: &mut SearchStats,
) -> (Outcome, bool) {
    let options = request.options;
    let PortfolioConfig {
        mut portfolio,
        switches,
        learned,
    } = request.portfolio;
    // Building the instance looks at pairs of buffers (with gaps, each buffer with gaps against
    // those live with it), which on a large problem can outlast the limit.
    let Some(instance) = Instance::within(problem, request.timeline, capacity, &stop) else {
        return (Outcome::LimitReached, false);
    };
    let view = ProblemView {
        instance: &instance,
    };
    let weights = portfolio.apply_ranking(&view, switches.shares);
    stats.portfolio = portfolio.names();
    stats.weights = weights.clone();
    // Not once the time is up: filling builds an instance per shape.
    let slack = slack::SlackFill::new(options, learned.hole_model);
    let members = if options.slack_fill && options.restarts {
        slack::members(problem, &instance, slack, &stop)
    } else {
        slack::Members::none()
    };
    let settings = portfolio::RunSettings {
        stop,
        // The hint dive's nodes count against the limit.
        node_limit: request.limits.nodes.map(|n| n.saturating_sub(stats.nodes)),
        observer: request
            .observer
            .as_mut()
            .map(|o| &mut **o as &mut dyn SearchObserver),
        weights,
        external: request.external,
        filled: &members.filled,
        drawer: members.drawer.as_ref(),
        slack,
        switches,
        learned: &learned,
    };
    match portfolio::run(&instance, options, portfolio.policies, settings, stats) {
        portfolio::Verdict::Found(offsets) => (Outcome::Found(Solution { offsets }), false),
        portfolio::Verdict::Infeasible(why) if instance.exact => (Outcome::Infeasible(why), false),
        // Windows that can interleave: the exhausted search proves nothing.
        portfolio::Verdict::Infeasible(_) => (Outcome::LimitReached, true),
        portfolio::Verdict::Limit => (Outcome::LimitReached, false),
    }
}

/// The most nodes the hint dive may take per buffer (at least [`HINT_DIVE_NODES`] in all).
const HINT_DIVE_NODES_PER_BUFFER: u64 = 8;

/// The least node budget of the hint dive.
const HINT_DIVE_NODES: u64 = 1000;

/// The warm start of a problem with hints: every free buffer with a hint that fits the
/// capacity held at its hint (as if fixed), and the rest fitted around them by a short search
/// (the fast baselines first, with `heuristic-first`) within `request`'s limits and at most
/// [`HINT_DIVE_NODES_PER_BUFFER`] nodes per buffer: the layout if one fits, and the dive's
/// counters. `None` when the hints collide (no dive); without a layout the caller solves the
/// problem itself, hints ignored.
fn hint_dive(
    problem: &Problem,
    capacity: u64,
    mut request: FitRequest<'_>,
) -> Option<(Option<Solution>, SearchStats)> {
    let mut hinted = problem.clone();
    for b in &mut hinted.buffers {
        if let Some(hint) = b.hint.take() {
            if b.offset.is_none() && hint.checked_add(b.size).is_some_and(|top| top <= capacity) {
                b.offset = Some(hint);
            }
        }
    }
    hinted.check(Some(capacity)).ok()?;
    let budget = (HINT_DIVE_NODES_PER_BUFFER * problem.len() as u64).max(HINT_DIVE_NODES);
    request.limits.nodes = Some(request.limits.nodes.map_or(budget, |n| n.min(budget)));
    let result = fit(&hinted, capacity, request);
    match result.outcome {
        Outcome::Found(layout) => Some((Some(layout), result.stats)),
        _ => Some((None, result.stats)),
    }
}

/// What trying the fast baselines first gave.
enum Heuristic {
    /// This baseline's layout fits the capacity.
    Fits(Baseline, Solution),
    /// None fits (or the switch is off): search.
    NoFit,
    /// The time ran out (or the search was cancelled) while a baseline placed.
    OutOfTime,
}

/// With the `heuristic-first` switch: the first fast baseline whose layout fits the capacity,
/// within the deadline.
fn heuristic_fit(
    problem: &Problem,
    capacity: u64,
    options: &SearchOptions,
    deadline: &Deadline<'_>,
) -> Heuristic {
    if !options.heuristic_first {
        return Heuristic::NoFit;
    }
    for baseline in [
        Baseline::TfliteMicro,
        Baseline::Tflite,
        Baseline::StartOrder,
    ] {
        match baseline.allocate_within(problem, 0, deadline) {
            None => return Heuristic::OutOfTime,
            Some(layout) if layout.peak(problem) <= capacity => {
                return Heuristic::Fits(baseline, layout)
            }
            Some(_) => {}
        }
    }
    Heuristic::NoFit
}
