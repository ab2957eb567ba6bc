//! The two algorithms beside the search, as the front door runs them: a production heuristic
//! (a baseline) and CP-SAT, each filling in the allocation's status and counters.

use super::{Allocation, Goal, Solver};
use crate::baselines::Baseline;
use crate::cpsat::{self, CpSatError};
use crate::minimize::{BoundSource, DEFAULT_TIMEOUT as DEFAULT_MINIMIZE_TIMEOUT};
use crate::outcome::{trivially_infeasible, Deadline, Limits, Status};
use crate::problem::{Problem, Solution};
use std::time::Instant;

impl Solver {
    /// A baseline's layout, if it fits within the deadline; the status says how it went.
    pub(super) fn baseline(
        &self,
        problem: &Problem,
        baseline: Baseline,
        (capacity, load): (Option<u64>, u64),
        deadline: &Deadline<'_>,
        allocation: &mut Allocation,
    ) -> Option<Solution> {
        if let Some(why) = capacity.and_then(|c| trivially_infeasible(problem, c, load)) {
            allocation.status = Status::Infeasible(why);
            return None;
        }
        let Some(layout) = baseline.allocate_within(problem, self.seed, deadline) else {
            allocation.status = Status::LimitReached;
            return None;
        };
        let peak = layout.peak(problem);
        match capacity {
            Some(c) if peak > c => {
                // Checked like every layout, though it is not returned.
                super::assert_valid(problem, &layout, None, baseline.name());
                allocation.status = Status::HeuristicExceeded { peak };
                allocation.peak = Some(peak);
                None
            }
            _ => {
                allocation.status = Status::Solved;
                Some(layout)
            }
        }
    }

    /// CP-SAT's layout, if it found one; the status (and for minimise the lower bound) says how
    /// it went. Minimise runs under the same default time limit as the search's.
    pub(super) fn cpsat(
        &self,
        problem: &Problem,
        goal: Goal,
        load: u64,
        (start, limits): (Instant, Limits),
        allocation: &mut Allocation,
    ) -> Result<Option<Solution>, CpSatError> {
        let mut run = cpsat::Run {
            limits,
            cancel: self.cancel.as_deref(),
            workers: self.options.threads,
            seed: self.seed,
            start,
        };
        let answer = match goal {
            Goal::Fit(capacity) => cpsat::fit(problem, capacity, load, &run)?,
            Goal::Minimize => {
                run.limits.timeout = limits.timeout_or(DEFAULT_MINIMIZE_TIMEOUT);
                cpsat::minimize(problem, load, &run)?
            }
            Goal::Spill(_) | Goal::Memories => unreachable!("answered by assign"),
        };
        allocation.status = answer.status;
        allocation.lower_bound = answer.lower_bound;
        allocation.lower_bound_source = answer.lower_bound.map(|bound| match bound > load {
            true => BoundSource::CpSat,
            false => BoundSource::Load,
        });
        allocation.cpsat = answer.stats;
        Ok(answer.solution)
    }
}
