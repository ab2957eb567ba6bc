//! Restarts over a portfolio of policies with growing node budgets, sequential or on several
//! threads; the answer is the same either way (the lowest-index decisive run of the earliest
//! round wins).

use super::dfs::{Flow, RunLimits, Searcher, Stop};
use super::model::Model;
use super::options::SearchOptions;
use super::policy::Policy;
use super::record::{write_line, LogLine, RunRecorder};
use super::schedule::budget;
use super::state::State;
use super::SearchStats;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The round's lowest decided index and this run's index (threads only).
type Outranked<'a> = Option<(&'a AtomicUsize, usize)>;
use std::time::Instant;

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
    policy: Box<dyn Policy>,
    state: State,
}

/// The limits and the optional log of a portfolio.
pub struct RunSettings<'a, 'w> {
    /// Wall-clock deadline.
    pub deadline: Option<Instant>,
    /// Limit on nodes over all runs.
    pub node_limit: Option<u64>,
    /// Cancellation flag.
    pub cancel: Option<&'a AtomicBool>,
    /// Where to write decision lines, and how many per run.
    pub recording: Option<(&'a mut (dyn std::io::Write + Send + 'w), u64)>,
    /// The first policy's node budget per round, in multiples of the others' (1: plain round
    /// robin).
    pub lead: u64,
}

fn run_one(
    model: &Model,
    options: &SearchOptions,
    worker: &mut Worker,
    nodes: u64,
    (deadline, cancel, outranked): (Option<Instant>, Option<&AtomicBool>, Outranked<'_>),
    recorder: Option<(RunRecorder, u32)>,
) -> (RunEnd, SearchStats, Option<RunRecorder>) {
    if outranked.is_some_and(|(decided, me)| decided.load(Ordering::Relaxed) < me) {
        return (RunEnd::Outranked, SearchStats::default(), None);
    }
    let limits = RunLimits {
        nodes,
        deadline,
        cancel,
        outranked,
    };
    let mut searcher = Searcher::new(
        model,
        &mut worker.state,
        options,
        worker.policy.as_mut(),
        limits,
    );
    if let Some((recorder, run)) = recorder {
        searcher.record(recorder, run);
    }
    let flow = searcher.run();
    let stats = searcher.stats.clone();
    let recorder = searcher.take_recorder();
    let end = match flow {
        Flow::Found => RunEnd::Found(worker.state.solution.clone()),
        Flow::Failed => RunEnd::Exhausted,
        Flow::Stop(Stop::Budget) => RunEnd::Budget,
        Flow::Stop(Stop::Outranked) => RunEnd::Outranked,
        Flow::Stop(_) => RunEnd::Stopped,
        Flow::Unwind(_) => unreachable!("the root re-explores on unwinding"),
    };
    (end, stats, recorder)
}

/// Runs the portfolio until a verdict.
pub fn run(
    model: &Model,
    options: &SearchOptions,
    policies: Vec<Box<dyn Policy>>,
    mut settings: RunSettings<'_, '_>,
    stats: &mut SearchStats,
) -> Verdict {
    let (deadline, node_limit, cancel) = (settings.deadline, settings.node_limit, settings.cancel);
    let record_limit = settings.recording.as_ref().map(|(_, limit)| *limit);
    let mut workers: Vec<Worker> = policies
        .into_iter()
        .map(|policy| Worker {
            policy,
            state: State::new(model),
        })
        .collect();
    if !options.restarts {
        workers.truncate(1);
    }
    let mut spent: u64 = 0;
    let mut runs: u64 = 0;
    for round in 0u32.. {
        let nodes = if options.restarts {
            budget(options.schedule, round, model.free.len())
        } else {
            u64::MAX
        };
        // Each run's budget, fixed before the round starts so that threads and sequential runs
        // agree; under a node limit, later runs get what earlier ones leave (exactly the limit).
        let mut left = match node_limit {
            Some(limit) if spent >= limit => return Verdict::Limit,
            Some(limit) => Some(limit - spent),
            None => None,
        };
        let budgets: Vec<u64> = (0..workers.len())
            .map(|i| {
                let wanted = if i == 0 {
                    nodes.saturating_mul(settings.lead.max(1))
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
        let first_run = runs as u32;
        let recorder = |i: usize| record_limit.map(|l| (RunRecorder::new(l), first_run + i as u32));
        type RunResult = (usize, RunEnd, SearchStats, Option<RunRecorder>);
        let results: Vec<RunResult> = if options.threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(options.threads)
                .build()
                .expect("thread pool");
            // The lowest index that decided this round: later runs stop, earlier ones go on
            // (one of them may still decide, and the earliest decisive run is the answer).
            let decided = AtomicUsize::new(usize::MAX);
            pool.install(|| {
                workers
                    .par_iter_mut()
                    .enumerate()
                    .filter(|(i, _)| budgets[*i] > 0)
                    .map(|(i, w)| {
                        let stops = (deadline, cancel, Some((&decided, i)));
                        let (end, stats, log) =
                            run_one(model, options, w, budgets[i], stops, recorder(i));
                        if matches!(end, RunEnd::Found(_) | RunEnd::Exhausted) {
                            decided.fetch_min(i, Ordering::Relaxed);
                        }
                        (i, end, stats, log)
                    })
                    .collect()
            })
        } else {
            let mut results = Vec::new();
            for (i, w) in workers.iter_mut().enumerate() {
                if budgets[i] == 0 {
                    continue;
                }
                let (end, stats, log) = run_one(
                    model,
                    options,
                    w,
                    budgets[i],
                    (deadline, cancel, None),
                    recorder(i),
                );
                let decisive =
                    matches!(end, RunEnd::Found(_) | RunEnd::Exhausted | RunEnd::Stopped);
                results.push((i, end, stats, log));
                if decisive {
                    break;
                }
            }
            results
        };
        for (i, end, run_stats, run_log) in results {
            stats.add(&run_stats);
            if let (Some((writer, _)), Some(log)) = (settings.recording.as_mut(), run_log) {
                stats.recorded_decisions += log.decisions.len() as u64;
                stats.dropped_decisions += log.dropped;
                for decision in log.decisions {
                    // A failing writer is reported by the caller when it writes the footer.
                    let _ = write_line(&mut **writer, &LogLine::Decision(decision));
                }
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
