//! The front door's dispatch: one goal of a checked problem handed to the engine that answers
//! it (a baseline, CP-SAT, the search's fit, the fit by lowering above 100,000 buffers, or
//! minimise), its answer not yet validated. [`Solver::solve`] and the assignment's fits of
//! each memory both enter here.

use super::{Algorithm, Allocation, Goal, SolveError, Solver};
use crate::analysis::Timeline;
use crate::fit::{limits_left, Engine};
use crate::learned::Network;
use crate::minimize::lowering::{fit_by_lowering, lowers_to_fit, minimized};
use crate::outcome::{Deadline, Limits, Status};
use crate::problem::{Problem, Solution};
use crate::search::SearchObserver;
use std::sync::Arc;
use std::time::Instant;

impl Solver {
    /// What every search of one solve runs with, built once per solve; `model`: the network
    /// of the policy's model file, read once per solve.
    pub(super) fn engine(&self, model: Option<Arc<Network>>) -> Engine<'_> {
        Engine {
            options: &self.options,
            policy: &self.policy,
            seed: self.seed,
            cancel: self.cancel.as_deref(),
            learned: crate::learned::hooks(&self.options, model.as_ref()),
            model,
        }
    }

    /// Answers `goal` ([`Goal::Fit`] or [`Goal::Minimize`]) for `problem`, which passed
    /// [`Problem::check`] (`timeline` is its timeline), within `limits` timed from `start`:
    /// the allocation (status, counters, warnings) and the layout found, not yet validated.
    /// `observer` watches the search's fit of the whole problem; the same path runs without it.
    pub(super) fn dispatch(
        &self,
        problem: &Problem,
        goal: Goal,
        (timeline, start, limits): (&Timeline, Instant, Limits),
        engine: &Engine<'_>,
        observer: Option<&mut dyn SearchObserver>,
    ) -> Result<(Allocation, Option<Solution>), SolveError> {
        let load = timeline.load();
        let mut allocation = Allocation::nothing_yet(Status::LimitReached, load);
        let layout = match (self.algorithm, goal) {
            (Algorithm::Baseline(baseline), _) => {
                let deadline = Deadline::after(start, limits.timeout, self.cancel.as_deref());
                let capacity = match goal {
                    Goal::Fit(c) => Some(c),
                    _ => None,
                };
                let answer = (capacity, load);
                self.baseline(problem, baseline, answer, &deadline, &mut allocation)
            }
            // The lowering path's searches fit windows of time cut from the problem, not the
            // problem itself: the observer sees none of them.
            (Algorithm::Search, Goal::Fit(c)) if lowers_to_fit(&self.options, problem) => {
                let lowered =
                    fit_by_lowering(engine, problem, (timeline, c), limits_left(limits, start));
                allocation.status = lowered.status;
                allocation.found_by = lowered.found_by;
                allocation.search = lowered.stats;
                allocation.warnings = lowered.warnings;
                lowered.solution
            }
            (Algorithm::Search, Goal::Fit(c)) => {
                self.check_library()?;
                let fit = engine
                    .search(problem, (timeline, c, start), limits, observer)
                    .map_err(SolveError::CpSat)?;
                allocation.status = fit.status;
                allocation.search = Some(fit.stats);
                allocation.warnings = fit.warnings;
                allocation.cpsat = fit.cpsat;
                fit.solution
            }
            (Algorithm::Search, Goal::Minimize) => {
                let limits = limits_left(limits, start);
                let (result, warnings) = minimized(engine, problem, timeline, (limits, None));
                allocation.warnings = warnings;
                allocation.status = Status::Solved;
                allocation.found_by = Some(result.phase);
                allocation.lower_bound = Some(result.lower_bound);
                allocation.lower_bound_source = Some(result.bound_source);
                allocation.search = Some(result.stats);
                Some(result.solution)
            }
            (Algorithm::CpSat, _) => self
                .cpsat(problem, goal, load, (start, limits), &mut allocation)
                .map_err(SolveError::CpSat)?,
            (_, Goal::Spill(_) | Goal::Memories) => unreachable!("answered by assign"),
        };
        Ok((allocation, layout))
    }
}
