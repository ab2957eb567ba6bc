//! Minimise's phases run with a solve's portfolios: minimise itself, and the fit of a problem
//! too large for the search's model of the whole problem (above [`WHOLE_SEARCH_MOST`]
//! buffers, which would take gigabytes), which lowers first-fit's layout to the capacity.

use super::options::MinimizeOptions;
use super::phase::MinimizePhase;
use super::shared::{Minimized, Portfolios, WHOLE_SEARCH_MOST};
use crate::analysis::Timeline;
use crate::fit::Engine;
use crate::outcome::{trivially_infeasible, Limits, Status};
use crate::problem::{Problem, Solution};
use crate::search::{SearchOptions, SearchStats};
use std::cell::RefCell;

/// What a fit by lowering gave.
pub(crate) struct Lowered {
    /// How it ended: solved, infeasible by a cheap proof, or the limit reached.
    pub(crate) status: Status,
    /// The layout, when its peak is within the capacity (not yet validated).
    pub(crate) solution: Option<Solution>,
    /// The phase that found it.
    pub(crate) found_by: Option<MinimizePhase>,
    /// The searches' counters, when minimise ran.
    pub(crate) stats: Option<SearchStats>,
    /// What the caller should be told.
    pub(crate) warnings: Vec<String>,
}

/// Whether a fit with the search goes by [`fit_by_lowering`]: above [`WHOLE_SEARCH_MOST`]
/// buffers, with the `lns` switch, without gaps, hints or CP-SAT.
pub(crate) fn lowers_to_fit(options: &SearchOptions, problem: &Problem) -> bool {
    problem.len() > WHOLE_SEARCH_MOST
        && MinimizeOptions::of(options).lns
        && !options.cpsat
        && !problem.has_gaps()
        && !problem.has_hints()
}

/// A fit of a problem too large for the search's model of the whole problem: minimise's
/// phases, first-fit then windows of time re-placed by the search, stopped once the peak is at
/// most `capacity`; the limit reached otherwise (nothing is proven).
pub(crate) fn fit_by_lowering(
    engine: &Engine<'_>,
    problem: &Problem,
    (timeline, capacity): (&Timeline, u64),
    limits: Limits,
) -> Lowered {
    if let Some(why) = trivially_infeasible(problem, capacity, timeline.load()) {
        return Lowered {
            status: Status::Infeasible(why),
            solution: None,
            found_by: None,
            stats: None,
            warnings: Vec::new(),
        };
    }
    let (result, warnings) = minimized(engine, problem, timeline, (limits, Some(capacity)));
    let fits = result.solution.peak(problem) <= capacity;
    Lowered {
        status: match fits {
            true => Status::Solved,
            false => Status::LimitReached,
        },
        found_by: fits.then_some(result.phase),
        solution: fits.then_some(result.solution),
        stats: Some(result.stats),
        warnings,
    }
}

/// Minimise's phases with the engine's portfolios (see [`minimize`](super::minimize)), stopped
/// once the peak is at most `enough`, and the warnings building them raised (each once).
pub(crate) fn minimized(
    engine: &Engine<'_>,
    problem: &Problem,
    timeline: &Timeline,
    (limits, enough): (Limits, Option<u64>),
) -> (Minimized, Vec<String>) {
    let warnings = RefCell::new(Vec::new());
    let portfolio = |buffers: usize| {
        let (portfolio, new) = engine.portfolio(buffers);
        let mut seen = warnings.borrow_mut();
        for w in new {
            if !seen.contains(&w) {
                seen.push(w);
            }
        }
        portfolio
    };
    let lowering = |buffers: usize| match engine.lowering_portfolio(buffers) {
        Some(portfolio) => portfolio,
        None => portfolio(buffers),
    };
    let portfolios = Portfolios {
        own: &portfolio,
        lowering: &lowering,
    };
    let result = super::minimize(
        problem,
        timeline,
        engine.options,
        &portfolios,
        (limits, enough),
        engine.cancel,
    );
    (result, warnings.into_inner())
}
