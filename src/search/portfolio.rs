//! Restarts over a portfolio of policies with growing node budgets, sequential or on several
//! threads; the answer is the same either way (the lowest-index decisive run of the earliest
//! round wins).

use super::dfs::{Flow, RunLimits, Searcher, Stop};
use super::instance::Instance;
use super::observer::{RunObserver, RunSummary, SearchObserver};
use super::options::SearchOptions;
use super::policy::NodePolicy;
use super::schedule::budget;
use super::state::State;
use super::stats::SearchStats;
use crate::outcome::Deadline;
use rayon::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What the portfolio concluded.
pub enum Verdict {
    /// Offsets of every buffer.
    Found(Vec<u64>),
    /// A complete run found nothing: infeasible.
    Exhausted,
    /// Time, node limit or cancellation.
    Limit,
}

enum RunEnd {
    Found(Vec<u64>),
    Exhausted,
    Budget,
    Stopped,
    /// A run before it in the round decided first (threads only); its result is not needed.
    Outranked,
}

struct Worker {
    policy: Box<dyn NodePolicy>,
    state: State,
}

/// The limits of a portfolio, and who watches it.
pub struct RunSettings<'a> {
    /// The deadline and the cancellation flag.
    pub stop: Deadline<'a>,
    /// Limit on nodes over all runs.
    pub node_limit: Option<u64>,
    /// The observer of the search, if any.
    pub observer: Option<&'a mut dyn SearchObserver>,
    /// The first policy's node budget per round, in multiples of the others' (1: plain round
    /// robin).
    pub lead: u64,
}

/// One run's result: its index in the round, how it ended, its counters and its observer.
type RunResult = (usize, RunEnd, SearchStats, Option<Box<dyn RunObserver>>);

fn run_one(
    instance: &Instance,
    options: &SearchOptions,
    worker: &mut Worker,
    limits: RunLimits<'_>,
    observer: Option<Box<dyn RunObserver>>,
) -> (RunEnd, SearchStats, Option<Box<dyn RunObserver>>) {
    if limits
        .outranked
        .is_some_and(|(decided, me)| decided.load(Ordering::Relaxed) < me)
    {
        return (RunEnd::Outranked, SearchStats::default(), None);
    }
    let mut searcher = Searcher::new(
        instance,
        &mut worker.state,
        options,
        worker.policy.as_mut(),
        limits,
        observer,
    );
    let flow = searcher.run();
    let stats = searcher.stats.clone();
    let observer = searcher.take_observer();
    let end = match flow {
        Flow::Found => RunEnd::Found(worker.state.solution.clone()),
        Flow::Failed => RunEnd::Exhausted,
        Flow::Stop(Stop::Budget) => RunEnd::Budget,
        Flow::Stop(Stop::Outranked) => RunEnd::Outranked,
        Flow::Stop(_) => RunEnd::Stopped,
        Flow::Unwind(_) => unreachable!("the root re-explores on unwinding"),
    };
    (end, stats, observer)
}

/// Each run's node budget in a round, fixed before the round starts so that threads and
/// sequential runs agree; under a node limit, later runs get what earlier ones leave (exactly
/// the limit). `None` when the limit is spent.
fn round_budgets(
    nodes: u64,
    lead: u64,
    runs: usize,
    node_limit: Option<u64>,
    spent: u64,
) -> Option<Vec<u64>> {
    let mut left = match node_limit {
        Some(limit) if spent >= limit => return None,
        Some(limit) => Some(limit - spent),
        None => None,
    };
    let budgets = (0..runs)
        .map(|i| {
            let wanted = if i == 0 {
                nodes.saturating_mul(lead.max(1))
            } else {
                nodes
            };
            match left.as_mut() {
                Some(left) => {
                    let granted = wanted.min(*left);
                    *left -= granted;
                    granted
                }
                None => wanted,
            }
        })
        .collect();
    Some(budgets)
}

/// Runs the portfolio until a verdict.
pub fn run(
    instance: &Instance,
    options: &SearchOptions,
    policies: Vec<Box<dyn NodePolicy>>,
    mut settings: RunSettings<'_>,
    stats: &mut SearchStats,
) -> Verdict {
    let mut workers: Vec<Worker> = policies
        .into_iter()
        .map(|policy| Worker {
            policy,
            state: State::new(instance),
        })
        .collect();
    if !options.restarts {
        workers.truncate(1);
    }
    let pool = (options.threads > 1).then(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .build()
            .expect("thread pool")
    });
    let mut spent: u64 = 0;
    let mut runs: u64 = 0;
    for round in 0u32.. {
        let nodes = if options.restarts {
            budget(options.schedule, round, instance.free.len())
        } else {
            u64::MAX
        };
        let Some(budgets) = round_budgets(
            nodes,
            settings.lead,
            workers.len(),
            settings.node_limit,
            spent,
        ) else {
            return Verdict::Limit;
        };
        let first_run = runs as u32;
        let mut observers: Vec<Option<Box<dyn RunObserver>>> = (0..workers.len())
            .map(|i| {
                let observer = settings.observer.as_mut()?;
                observer.run_observer(first_run + i as u32, &workers[i].policy.name())
            })
            .collect();
        let round = Round {
            instance,
            options,
            budgets: &budgets,
            stop: settings.stop,
        };
        let results = match &pool {
            Some(pool) => pool.install(|| round.parallel(&mut workers, &mut observers)),
            None => round.sequential(&mut workers, &mut observers),
        };
        for (i, end, run_stats, run_observer) in results {
            stats.add(&run_stats);
            if let Some(observer) = settings.observer.as_mut() {
                let summary = RunSummary {
                    run: first_run + i as u32,
                    policy: workers[i].policy.name(),
                    stats: run_stats.clone(),
                };
                observer.on_run_end(&summary, run_observer);
            }
            spent = spent.saturating_add(run_stats.nodes);
            runs += 1;
            stats.restarts = runs - 1;
            match end {
                RunEnd::Found(offsets) => {
                    stats.policy = Some(workers[i].policy.name());
                    return Verdict::Found(offsets);
                }
                RunEnd::Exhausted => {
                    stats.policy = Some(workers[i].policy.name());
                    return Verdict::Exhausted;
                }
                RunEnd::Stopped => return Verdict::Limit,
                RunEnd::Budget => {}
                RunEnd::Outranked => unreachable!("an earlier run of the round decided"),
            }
        }
    }
    unreachable!("the round loop only ends by returning")
}

/// One round of the portfolio: every policy once, with its budget.
struct Round<'a> {
    instance: &'a Instance,
    options: &'a SearchOptions,
    budgets: &'a [u64],
    stop: Deadline<'a>,
}

impl Round<'_> {
    fn limits<'b>(
        &'b self,
        i: usize,
        outranked: Option<(&'b AtomicUsize, usize)>,
    ) -> RunLimits<'b> {
        RunLimits {
            nodes: self.budgets[i],
            stop: self.stop,
            outranked,
        }
    }

    /// The runs one after another, up to the first that decides or stops.
    fn sequential(
        &self,
        workers: &mut [Worker],
        observers: &mut [Option<Box<dyn RunObserver>>],
    ) -> Vec<RunResult> {
        let mut results = Vec::new();
        for (i, w) in workers.iter_mut().enumerate() {
            if self.budgets[i] == 0 {
                continue;
            }
            let (end, stats, observer) = run_one(
                self.instance,
                self.options,
                w,
                self.limits(i, None),
                observers[i].take(),
            );
            let decisive = matches!(end, RunEnd::Found(_) | RunEnd::Exhausted | RunEnd::Stopped);
            results.push((i, end, stats, observer));
            if decisive {
                break;
            }
        }
        results
    }

    /// The runs on the pool's threads. The lowest index that decided this round stops later
    /// runs; earlier ones go on (one of them may still decide, and the earliest decisive run is
    /// the answer).
    fn parallel(
        &self,
        workers: &mut [Worker],
        observers: &mut [Option<Box<dyn RunObserver>>],
    ) -> Vec<RunResult> {
        let decided = AtomicUsize::new(usize::MAX);
        workers
            .par_iter_mut()
            .zip(observers.par_iter_mut())
            .enumerate()
            .filter(|(i, _)| self.budgets[*i] > 0)
            .map(|(i, (w, observer))| {
                let limits = self.limits(i, Some((&decided, i)));
                let (end, stats, observer) =
                    run_one(self.instance, self.options, w, limits, observer.take());
                if matches!(end, RunEnd::Found(_) | RunEnd::Exhausted) {
                    decided.fetch_min(i, Ordering::Relaxed);
                }
                (i, end, stats, observer)
            })
            .collect()
    }
}
