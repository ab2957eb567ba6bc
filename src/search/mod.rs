//! The TelaMalloc hybrid search engine: a node policy picks which buffer to place next, the
//! buffer goes to its lowest feasible offset, propagation narrows what is left, and the search
//! backtracks (minor: the next candidate; major: back to the placements behind a conflict, with
//! the buffers involved prioritised), restarting over a portfolio of policies with growing
//! budgets.
//!
//! Laid out by phase: `instance` (the immutable problem data), `state` (placement,
//! propagation and undo), `dfs` (decisions and backtracking), `portfolio` and `schedule`
//! (restarts), [`policy`] and [`strategy`] (the two decision seams), [`observer`] (who watches),
//! [`features`] (what learned components see). The crate's front door, [`crate::Solver`], is the
//! only caller of the engine's entry point.

mod dfs;
pub mod external;
pub mod features;
pub(crate) mod instance;
pub(crate) mod max_tree;
pub mod observer;
pub mod options;
pub mod policy;
mod portfolio;
pub mod root;
pub mod schedule;
pub(crate) mod state;
pub mod stats;
pub mod strategy;

pub use external::{ExternalMember, MemberEnd};
pub use observer::{RunObserver, RunSummary, SearchObserver, SearchStart, TryCounts, TryEnd};
pub use options::{Schedule, SearchOptions, Switch};
pub use policy::{
    parse_order, parse_policy_name, Candidate, FixedPolicy, NodePolicy, NodeView, OrderKey,
    PolicyName, StaticOrder,
};
pub use root::RootNode;
pub use stats::SearchStats;
pub use strategy::{Portfolio, ProblemView, StrategyPlan, StrategyRanker};

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
}

/// How to run one search, besides the problem and its portfolio.
pub(crate) struct FitRequest<'a> {
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
    /// One more member of every portfolio round (with restarts on), before or after the
    /// policies as it asks.
    pub(crate) external: Option<&'a dyn ExternalMember>,
}

/// Fits `problem` (which passed [`Problem::check`]) under `capacity` with `portfolio`, or proves
/// it cannot, within the request's limits. A found layout is returned unvalidated: the caller
/// validates every answer once.
pub(crate) fn fit(
    problem: &Problem,
    capacity: u64,
    mut portfolio: Portfolio,
    request: FitRequest<'_>,
) -> SearchResult {
    let start = Instant::now();
    let FitRequest {
        timeline,
        options,
        limits,
        cancel,
        mut observer,
        external,
    } = request;
    if portfolio.policies.is_empty() {
        // Nothing to run would never decide: an empty portfolio means the default one.
        portfolio = Portfolio::round_robin(problem.len(), options.conflict_boost);
    }
    let load = timeline.load();
    if let Some(o) = observer.as_mut() {
        o.on_start(&SearchStart {
            problem,
            capacity,
            load,
        });
    }
    let mut stats = SearchStats::default();
    let stop = Deadline::after(start, limits.timeout, cancel);
    let outcome = match trivially_infeasible(problem, capacity, load) {
        Some(why) => Outcome::Infeasible(why),
        None => match heuristic_fit(problem, capacity, options, &stop) {
            Heuristic::Fits(baseline, layout) => {
                stats.heuristic = Some(baseline.name().to_string());
                Outcome::Found(layout)
            }
            Heuristic::OutOfTime => Outcome::LimitReached,
            Heuristic::NoFit => {
                let instance = Instance::with_timeline(problem, timeline, capacity);
                let view = ProblemView {
                    instance: &instance,
                };
                let lead = portfolio.apply_ranking(&view, options.portfolio_lead);
                stats.portfolio = portfolio.names();
                stats.lead = lead;
                let settings = portfolio::RunSettings {
                    stop,
                    node_limit: limits.nodes,
                    observer: observer
                        .as_mut()
                        .map(|o| &mut **o as &mut dyn SearchObserver),
                    lead,
                    external,
                };
                match portfolio::run(&instance, options, portfolio.policies, settings, &mut stats) {
                    portfolio::Verdict::Found(offsets) => Outcome::Found(Solution { offsets }),
                    portfolio::Verdict::Infeasible(why) => Outcome::Infeasible(why),
                    portfolio::Verdict::Limit => Outcome::LimitReached,
                }
            }
        },
    };
    stats.seconds = start.elapsed().as_secs_f64();
    if let Some(o) = observer.as_mut() {
        o.on_finish(&outcome.status(), &stats);
    }
    SearchResult { outcome, stats }
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
