//! CP-SAT as the external member of the search's portfolio rounds (`--with cpsat`): the model is
//! built once, and each round solves it from scratch (CP-SAT cannot be paused) with a
//! deterministic time limit made from the round's node budget, one worker and the solver's
//! seed, so that the search's answer is the same run to run and with any thread count.
//!
//! The budget: a round gives each policy `nodes`; CP-SAT asks for [`ROUND_SHARE`] times that in
//! node equivalents, which [`crate::cpsat`] turns into `max_deterministic_time` at
//! [`NODES_PER_DETERMINISTIC_SECOND`](crate::cpsat::NODES_PER_DETERMINISTIC_SECOND). Under a node
//! limit the search grants it from what the limit has left, like a policy's budget, so `--nodes
//! N` bounds CP-SAT's deterministic time (over all rounds) by `N` node equivalents too. The wall
//! timeout and the cancel flag stop a solve at once.

use crate::cpsat::{CpSatError, CpSatStats, FitModel, Run};
use crate::outcome::{Limits, Status};
use crate::problem::Problem;
use crate::search::{ExternalMember, MemberEnd};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// CP-SAT's budget per round, in multiples of one policy's node budget. With four policies it
/// gets about a fifth of the wall time. Tuned on `tight-validation` at 10 s (benches/RESULTS.md,
/// "CP-SAT in the portfolio"): 1 decides 83 of 103 problems and loses none the search alone
/// decides; 4 still misses the two non-guillotine problems CP-SAT alone needs 3 s for and loses
/// a thin one the search decides at 6-9 s.
pub(crate) const ROUND_SHARE: u64 = 1;

/// Whether CP-SAT runs before the policies in each round. After them: on six problems at 10 s,
/// running first lost a thin problem the search decides late (the policies' last round starts
/// later) and won nothing the other order did not.
const RUNS_FIRST: bool = false;

/// CP-SAT, ready to run in the rounds of one search.
pub(crate) struct CpSatMember<'a> {
    model: FitModel,
    run: Run<'a>,
    /// Every round's counters, summed.
    stats: Mutex<Option<CpSatStats>>,
    /// A failure of a round's solve (a bug: a rejected model, an unreadable answer).
    failure: Mutex<Option<CpSatError>>,
}

impl<'a> CpSatMember<'a> {
    /// CP-SAT for `problem` (already checked, not trivially infeasible) under `capacity`, run
    /// with `seed`, within `timeout` of `start` and until `cancel` is set.
    pub(crate) fn new(
        problem: &Problem,
        capacity: u64,
        seed: u64,
        (timeout, start): (Option<Duration>, Instant),
        cancel: Option<&'a AtomicBool>,
    ) -> Result<CpSatMember<'a>, CpSatError> {
        let run = Run {
            limits: Limits {
                timeout,
                nodes: None,
            },
            cancel,
            workers: 1,
            seed,
            start,
        };
        Ok(CpSatMember {
            model: FitModel::new(problem, capacity)?,
            run,
            stats: Mutex::new(None),
            failure: Mutex::new(None),
        })
    }

    /// The counters of every round's solve, summed (`None` if it never ran), or the failure of
    /// one.
    pub(crate) fn finish(self) -> Result<Option<CpSatStats>, CpSatError> {
        let failure = self.failure.into_inner().unwrap_or_else(|e| e.into_inner());
        match failure {
            Some(failure) => Err(failure),
            None => Ok(self.stats.into_inner().unwrap_or_else(|e| e.into_inner())),
        }
    }
}

impl ExternalMember for CpSatMember<'_> {
    fn name(&self) -> &str {
        "cpsat"
    }

    fn budget(&self, nodes: u64) -> u64 {
        nodes.saturating_mul(ROUND_SHARE)
    }

    fn runs_first(&self) -> bool {
        RUNS_FIRST
    }

    fn run(&self, budget: u64, stop: &(dyn Fn() -> bool + Sync)) -> MemberEnd {
        if self
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
        {
            return MemberEnd::Undecided;
        }
        let run = Run {
            limits: Limits {
                nodes: Some(budget),
                ..self.run.limits
            },
            ..self.run
        };
        let answer = match self.model.solve(&run, stop) {
            Ok(answer) => answer,
            Err(failure) => {
                *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(failure);
                return MemberEnd::Undecided;
            }
        };
        if let Some(new) = &answer.stats {
            let mut stats = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            match stats.as_mut() {
                Some(sum) => sum.absorb(new),
                None => *stats = Some(new.clone()),
            }
        }
        match (answer.status, answer.solution) {
            (Status::Solved, Some(solution)) => MemberEnd::Found(solution.offsets),
            (Status::Infeasible(why), _) => MemberEnd::Infeasible(why),
            _ => MemberEnd::Undecided,
        }
    }
}
