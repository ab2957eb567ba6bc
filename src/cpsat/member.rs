//! CP-SAT as the external member of the search's portfolio (`--with cpsat`): the model is built
//! once, and each run solves it from scratch (CP-SAT cannot be paused) with a deterministic time
//! limit made from the run's node budget, one worker and the solver's seed, so that the search's
//! answer is the same run to run and with any thread count.
//!
//! The budgets: the search grants CP-SAT doubling budgets at its share of the policies' work
//! ([`crate::SearchOptions::cpsat_share`], in policies; see [`crate::search::ExternalMember`]),
//! which [`crate::cpsat`] turns into `max_deterministic_time` at
//! [`NODES_PER_DETERMINISTIC_SECOND`](crate::cpsat::NODES_PER_DETERMINISTIC_SECOND). Under a node
//! limit the search grants them from what the limit has left, like a policy's budget, so `--nodes
//! N` bounds CP-SAT's deterministic time (over all runs) by `N` node equivalents too. The wall
//! timeout and the cancel flag stop a solve at once.

use crate::analysis::Timeline;
use crate::cpsat::{CpSatError, CpSatStats, FitModel, Run};
use crate::outcome::{trivially_infeasible, Limits, Status};
use crate::problem::Problem;
use crate::search::{ExternalMember, MemberEnd, SearchOptions};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Whether CP-SAT runs before the policies in each round. After them: on six problems at 10 s,
/// running first lost a thin problem the search decides late (the policies' last round starts
/// later) and won nothing the other order did not.
const RUNS_FIRST: bool = false;

/// The fixed cost of one CP-SAT solve beyond its deterministic budget, in node equivalents:
/// about 20 ms of wall time (building the model's request, presolve, the answer; 17-23 ms a solve
/// measured on the hard set, where the search ran about 100,000 nodes a second).
const RUN_OVERHEAD_NODES: u64 = 2_000;

/// CP-SAT, ready to run in the rounds of one search.
pub(crate) struct CpSatMember<'a> {
    model: FitModel,
    /// Its share of the search's work, in policies.
    share: f64,
    run: Run<'a>,
    /// Every run's counters, summed.
    stats: Mutex<Option<CpSatStats>>,
    /// A failure of a run's solve (a bug: a rejected model, an unreadable answer).
    failure: Mutex<Option<CpSatError>>,
}

impl<'a> CpSatMember<'a> {
    /// CP-SAT for the rounds of a search of `problem` under `capacity`, when the `cpsat` switch
    /// of `options` is on, run with `seed` within `limits` from `start` and until `cancel` is
    /// set; none when its share is 0 or a cheap proof of infeasibility applies (the search
    /// gives it).
    pub(crate) fn for_search(
        problem: &Problem,
        (timeline, capacity, start): (&Timeline, u64, Instant),
        options: &SearchOptions,
        (seed, limits): (u64, Limits),
        cancel: Option<&'a AtomicBool>,
    ) -> Result<Option<CpSatMember<'a>>, CpSatError> {
        if !options.cpsat {
            return Ok(None);
        }
        let share = if options.cpsat_gate {
            let features = crate::search::features::problem_features_of(problem, capacity);
            crate::learned::CpSatGate::built_in().share(&features)
        } else {
            options.cpsat_share
        };
        if share.is_nan() || share <= 0.0 {
            return Ok(None);
        }
        if trivially_infeasible(problem, capacity, timeline.load()).is_some() {
            return Ok(None);
        }
        let run = (seed, limits.timeout, start);
        CpSatMember::new(problem, capacity, share, run, cancel).map(Some)
    }

    /// CP-SAT for `problem` (already checked, not trivially infeasible) under `capacity`, with
    /// `share` of the search's work, run with `seed`, within `timeout` of `start` and until
    /// `cancel` is set.
    pub(crate) fn new(
        problem: &Problem,
        capacity: u64,
        share: f64,
        (seed, timeout, start): (u64, Option<Duration>, Instant),
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
            share,
            run,
            stats: Mutex::new(None),
            failure: Mutex::new(None),
        })
    }

    /// The counters of every run's solve, summed (`None` if it never ran), or the failure of
    /// one.
    pub(crate) fn finish(self) -> Result<Option<CpSatStats>, CpSatError> {
        let failure = self.failure.into_inner().unwrap_or_else(|e| e.into_inner());
        match failure {
            Some(failure) => Err(failure),
            None => {
                let stats = self.stats.into_inner().unwrap_or_else(|e| e.into_inner());
                Ok(stats.map(|stats| CpSatStats {
                    share: Some(self.share),
                    ..stats
                }))
            }
        }
    }
}

impl ExternalMember for CpSatMember<'_> {
    fn name(&self) -> &str {
        "cpsat"
    }

    fn share(&self) -> f64 {
        self.share
    }

    fn overhead(&self) -> u64 {
        RUN_OVERHEAD_NODES
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
