//! Running a round's runs: one after another, or on a pool's threads with the same answer
//! (the lowest-index decisive run wins), each on a stack deep enough for its search.

use super::worker::{run_draws, run_one, Kind, RunEnd, Worker};
use crate::outcome::Deadline;
use crate::search::dfs::RunLimits;
use crate::search::external::{ExternalMember, MemberEnd};
use crate::search::instance::Instance;
use crate::search::observer::RunObserver;
use crate::search::options::SearchOptions;
use crate::search::slack::{lottery::draw_budget, SlackFill};
use crate::search::stats::SearchStats;
use crate::search::LearnedHooks;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// One run's result: its index in the round, how it ended, its counters and its observer.
pub(super) type RunResult = (usize, RunEnd, SearchStats, Option<Box<dyn RunObserver>>);

/// Search depths up to which a run stays on the caller's thread: the search recurses once per
/// placement, and at [`STACK_PER_LEVEL`] bytes a level this many levels fit in the 2 MiB of a
/// small thread (rayon's workers, most callers of the C and Python bindings).
const INLINE_DEPTH: usize = 1024;

/// Stack bytes a run reserves per search level: about twice what one level uses (measured: a
/// release build overflowed the 8 MiB main stack near 20,000 levels, about 420 bytes each).
const STACK_PER_LEVEL: usize = 1024;

/// The stack a search `depth` levels deep needs, with room for the rest of the thread.
pub(super) fn stack_bytes(depth: usize) -> usize {
    (2 << 20) + depth.saturating_mul(STACK_PER_LEVEL)
}

/// Runs `run` (a search that may recurse `depth` levels) on this thread when that is shallow,
/// else on a thread of its own whose stack holds every level, so that a deep search cannot
/// overflow its caller's stack (an abort, not an error, in Rust). The thread reserves address
/// space; only the pages the search reaches are used.
pub(super) fn on_stack_for<T: Send>(depth: usize, run: impl FnOnce() -> T + Send) -> T {
    if depth <= INLINE_DEPTH {
        return run();
    }
    let bytes = stack_bytes(depth);
    // Shared with the thread, so that the run is still here if the thread cannot be made.
    let run = std::sync::Mutex::new(Some(run));
    let take = || run.lock().unwrap_or_else(|e| e.into_inner()).take();
    let answer = std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name("telamalloc-search".into())
            .stack_size(bytes)
            .spawn_scoped(scope, || take().map(|run| run()));
        match thread {
            Ok(thread) => thread
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        }
    });
    // No thread (out of threads or address space): run here, as shallow problems do.
    answer.unwrap_or_else(|| take().expect("the run did not start")())
}

/// One run of a round: a policy's search (with its observer), or the external member.
pub(super) enum Job<'w, 'i> {
    Policy(&'w mut Worker<'i>, Option<Box<dyn RunObserver>>),
    External(&'w dyn ExternalMember),
}

/// One round of the portfolio: every policy once and the external member, each with its budget.
pub(super) struct Round<'a> {
    pub(super) instance: &'a Instance,
    pub(super) options: &'a SearchOptions,
    pub(super) slack: &'a SlackFill<'a>,
    pub(super) budgets: &'a [u64],
    /// Whether each run may end early (see `Rounds::largest_budgets`).
    pub(super) may_end_early: &'a [bool],
    /// The learned parts of the runs (the judge only for the runs that may end early).
    pub(super) learned: &'a LearnedHooks,
    pub(super) stop: Deadline<'a>,
}

impl Round<'_> {
    /// Runs job `i`; `outranked` (threads only) tells it when an earlier run of the round
    /// decided.
    fn run_job(
        &self,
        i: usize,
        job: Job<'_, '_>,
        outranked: Option<(&AtomicUsize, usize)>,
    ) -> RunResult {
        match job {
            Job::Policy(worker, observer) => {
                let limits = RunLimits {
                    nodes: self.budgets[i],
                    stop: self.stop,
                    outranked,
                };
                let limits = (limits, self.learned.for_run(self.may_end_early[i]));
                let how = (self.options, self.slack.distinct_draws);
                let (end, stats, observer) = match worker.kind {
                    Kind::Lottery { .. } => {
                        let per_draw =
                            draw_budget(self.slack.short_draws, self.instance.free.len());
                        run_draws(self.instance, how, worker, limits, (observer, per_draw))
                    }
                    _ => run_one(self.instance, how, worker, limits, observer),
                };
                let end = match (end, &worker.kind) {
                    (RunEnd::Infeasible(_), Kind::Filled { .. }) => RunEnd::Retired,
                    // One drawn shape refuted: the next run draws another.
                    (RunEnd::Infeasible(_), Kind::Lottery { .. }) => RunEnd::Budget,
                    (end, _) => end,
                };
                (i, end, stats, observer)
            }
            Job::External(member) => {
                let (end, stats) = self.run_external(member, self.budgets[i], outranked);
                (i, end, stats, None)
            }
        }
    }

    /// One run of the external member: its wall time goes to `external_seconds`; an undecided
    /// run ended by its budget unless the stop check fired.
    fn run_external(
        &self,
        member: &dyn ExternalMember,
        budget: u64,
        outranked: Option<(&AtomicUsize, usize)>,
    ) -> (RunEnd, SearchStats) {
        let is_outranked =
            || outranked.is_some_and(|(decided, me)| decided.load(Ordering::Relaxed) < me);
        if is_outranked() {
            return (RunEnd::Outranked, SearchStats::default());
        }
        let start = Instant::now();
        let stop = self.stop;
        let end = member.run(budget, &|| stop.passed() || is_outranked());
        let stats = SearchStats {
            external_seconds: start.elapsed().as_secs_f64(),
            ..SearchStats::default()
        };
        let end = match end {
            MemberEnd::Found(offsets) => RunEnd::Found(offsets),
            MemberEnd::Infeasible(why) => RunEnd::Infeasible(why),
            MemberEnd::Undecided if is_outranked() => RunEnd::Outranked,
            MemberEnd::Undecided if stop.passed() => RunEnd::Stopped,
            MemberEnd::Undecided => RunEnd::Budget,
        };
        (end, stats)
    }

    /// The runs one after another, up to the first that decides or stops.
    pub(super) fn sequential(&self, jobs: Vec<Job<'_, '_>>) -> Vec<RunResult> {
        let mut results = Vec::new();
        for (i, job) in jobs.into_iter().enumerate() {
            if self.budgets[i] == 0 {
                continue;
            }
            let result = self.run_job(i, job, None);
            let decisive = matches!(
                result.1,
                RunEnd::Found(_) | RunEnd::Infeasible(_) | RunEnd::Stopped
            );
            results.push(result);
            if decisive {
                break;
            }
        }
        results
    }

    /// The runs on the pool's threads. The lowest index that decided this round stops later
    /// runs; earlier ones go on (one of them may still decide, and the earliest decisive run is
    /// the answer).
    pub(super) fn parallel(&self, jobs: Vec<Job<'_, '_>>) -> Vec<RunResult> {
        let decided = AtomicUsize::new(usize::MAX);
        jobs.into_par_iter()
            .enumerate()
            .filter(|(i, _)| self.budgets[*i] > 0)
            .map(|(i, job)| {
                let result = self.run_job(i, job, Some((&decided, i)));
                if matches!(result.1, RunEnd::Found(_) | RunEnd::Infeasible(_)) {
                    decided.fetch_min(i, Ordering::Relaxed);
                }
                result
            })
            .collect()
    }
}
