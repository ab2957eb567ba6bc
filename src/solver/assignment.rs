//! [`Goal::Spill`] and [`Goal::Memories`] at the front door: the assignment search, each
//! memory fitted through the front door's dispatch (the problem checked, the policy's model
//! read and the answer validated once, for the whole assignment).

use super::{Allocation, Goal, Solver, DEFAULT_ASSIGN_TIMEOUT};
use crate::analysis::Timeline;
use crate::assign::{self, Fitted};
use crate::fit::Engine;
use crate::outcome::{Deadline, Limits, Status};
use crate::problem::Problem;
use crate::validate::validate_assignment;
use std::time::Instant;

impl Solver {
    /// [`Goal::Spill`] and [`Goal::Memories`] for `problem` (checked): a place for every
    /// buffer, each memory fitted by this solver's algorithm with the solve's `engine`; the
    /// answer validated like every layout.
    pub(super) fn assign(
        &self,
        problem: &Problem,
        goal: Goal,
        start: Instant,
        engine: &Engine<'_>,
    ) -> Allocation {
        let (slots, capacity) = match goal {
            Goal::Spill(c) if problem.memories.is_empty() => {
                (assign::Slots::spill(problem, c), Some(c))
            }
            _ => (assign::Slots::memories(problem), None),
        };
        // A node limit is a total over every memory's fits and the assignment search, and
        // alone it sets no clock: the answer is then the same on any machine.
        let limit = match self.limits {
            Limits {
                timeout: None,
                nodes: None,
            } => Some(DEFAULT_ASSIGN_TIMEOUT),
            Limits { timeout, .. } => timeout,
        };
        let deadline = Deadline::after(start, limit, self.cancel.as_deref());
        let fit = |sub: &Problem, capacity: u64, nodes: Option<u64>| {
            let timeout = limit.map(|t| t.saturating_sub(start.elapsed()));
            self.fit_memory(sub, capacity, Limits { timeout, nodes }, engine)
        };
        let answer = assign::solve(problem, &slots, (&deadline, self.limits.nodes), &fit);
        let load = Timeline::new(problem).load();
        let mut allocation = Allocation::nothing_yet(answer.status, load);
        allocation.greedy = answer.greedy;
        if let Some((layout, assignment)) = answer.placed {
            let report = validate_assignment(problem, &layout, &assignment, capacity);
            assert!(
                report.is_valid(),
                "internal error: the assignment of {} is invalid:\n{report}",
                self.algorithm.name()
            );
            allocation.peak = Some(
                problem
                    .buffers
                    .iter()
                    .zip(&layout.offsets)
                    .zip(&assignment.memory)
                    .filter(|(_, m)| m.is_some())
                    .map(|((b, &o), _)| o + b.size)
                    .max()
                    .unwrap_or(0),
            );
            allocation.solution = Some(layout);
            allocation.assignment = Some(assignment);
        }
        allocation.elapsed = start.elapsed();
        allocation
    }

    /// Fits one memory's buffers `sub` (cut from a checked problem) in `capacity` within
    /// `limits` from now: what it gave, and the search nodes it spent. Only what cutting can
    /// break is checked (fixed buffers of several memories that meet in this one).
    fn fit_memory(
        &self,
        sub: &Problem,
        capacity: u64,
        limits: Limits,
        engine: &Engine<'_>,
    ) -> (Fitted, u64) {
        if sub.check_fixed_buffers().is_err() {
            return (Fitted::DoesNot, 0);
        }
        let start = Instant::now();
        let timeline = Timeline::new(sub);
        let answer = self.dispatch(
            sub,
            Goal::Fit(capacity),
            (&timeline, start, limits),
            engine,
            None,
        );
        match answer {
            Ok((allocation, layout)) => {
                let spent = allocation.search.as_ref().map_or(0, |s| s.nodes);
                let fitted = match (allocation.status, layout) {
                    (Status::Solved, Some(layout)) => Fitted::Fits(layout.offsets),
                    // Without gaps an exhausted search is a proof (see fit's EXHAUSTED_MODEL).
                    (Status::Infeasible(_), _) if !sub.has_gaps() => Fitted::DoesNot,
                    _ => Fitted::Unknown,
                };
                (fitted, spent)
            }
            // Checked before the assignment starts (check_available): never a proof.
            Err(_) => (Fitted::Unknown, 0),
        }
    }
}
