//! Restarts over a portfolio of policies with growing node budgets, sequential or on several
//! threads; the answer is the same either way (the lowest-index decisive run of the earliest
//! round wins).

use super::dfs::{Flow, RunLimits, Searcher, Stop};
use super::model::Model;
use super::options::SearchOptions;
use super::policy::Policy;
use super::schedule::budget;
use super::state::State;
use super::SearchStats;
use rayon::prelude::*;
use std::sync::atomic::AtomicBool;
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
}

struct Worker {
    policy: Box<dyn Policy>,
    state: State,
}

fn run_one(
    model: &Model,
    options: &SearchOptions,
    worker: &mut Worker,
    nodes: u64,
    deadline: Option<Instant>,
    cancel: Option<&AtomicBool>,
) -> (RunEnd, SearchStats) {
    let limits = RunLimits {
        nodes,
        deadline,
        cancel,
    };
    let mut searcher = Searcher::new(
        model,
        &mut worker.state,
        options,
        worker.policy.as_mut(),
        limits,
    );
    let flow = searcher.run();
    let stats = searcher.stats.clone();
    let end = match flow {
        Flow::Found => RunEnd::Found(worker.state.solution.clone()),
        Flow::Failed => RunEnd::Exhausted,
        Flow::Stop(Stop::Budget) => RunEnd::Budget,
        Flow::Stop(_) => RunEnd::Stopped,
        Flow::Unwind(_) => unreachable!("the root re-explores on unwinding"),
    };
    (end, stats)
}

/// Runs the portfolio until a verdict.
pub fn run(
    model: &Model,
    options: &SearchOptions,
    policies: Vec<Box<dyn Policy>>,
    deadline: Option<Instant>,
    node_limit: Option<u64>,
    cancel: Option<&AtomicBool>,
    stats: &mut SearchStats,
) -> Verdict {
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
        let mut nodes = if options.restarts {
            budget(options.schedule, round, model.free.len())
        } else {
            u64::MAX
        };
        if let Some(limit) = node_limit {
            if spent >= limit {
                return Verdict::Limit;
            }
            nodes = nodes.min(limit - spent);
        }
        let results: Vec<(RunEnd, SearchStats)> = if options.threads > 1 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(options.threads)
                .build()
                .expect("thread pool");
            pool.install(|| {
                workers
                    .par_iter_mut()
                    .map(|w| run_one(model, options, w, nodes, deadline, cancel))
                    .collect()
            })
        } else {
            let mut results = Vec::new();
            for w in workers.iter_mut() {
                let result = run_one(model, options, w, nodes, deadline, cancel);
                let decisive = matches!(
                    result.0,
                    RunEnd::Found(_) | RunEnd::Exhausted | RunEnd::Stopped
                );
                results.push(result);
                if decisive {
                    break;
                }
            }
            results
        };
        for (i, (end, run_stats)) in results.into_iter().enumerate() {
            stats.add(&run_stats);
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
            }
        }
    }
    unreachable!("the round loop only ends by returning")
}
