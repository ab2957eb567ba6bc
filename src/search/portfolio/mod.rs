//! Restarts over a portfolio of policies with growing node budgets, sequential or on several
//! threads; the answer is the same either way (the lowest-index decisive run of the earliest
//! round wins). An [`ExternalMember`], when given, runs after (or before) the policies of a round
//! whenever its share of the work allows, on a doubling schedule of its own.
//!
//! Laid out as: this file (the rounds and their passes: who runs, at what budget, and what the
//! runs' ends conclude), `rounds` (budgets under a node limit, weights, the external member's
//! schedule), `threads` (running a pass's runs, in order or on threads) and `worker` (the
//! members the search runs itself: policies, fixed slack-filling members, the lottery).

mod rounds;
mod threads;
mod worker;

use super::external::ExternalMember;
use super::instance::Instance;
use super::judge::LearnedHooks;
use super::observer::{RunEnded, RunSummary, SearchObserver};
use super::options::SearchOptions;
use super::policy::NodePolicy;
use super::schedule::budget;
use super::slack::{Drawer, Filled, SlackFill};
use super::stats::SearchStats;
use super::strategy::PortfolioSwitches;
use crate::outcome::{Deadline, Infeasibility};
use rounds::{count_within, in_run_order, round_budgets, run_weights, MemberSchedule};
use threads::{on_stack_for, stack_bytes, Job, Round, RunResult};
use worker::{member_weights, workers_for, RunEnd, Worker};

/// What the portfolio concluded.
pub enum Verdict {
    /// Offsets of every buffer.
    Found(Vec<u64>),
    /// Proven infeasible: a complete run found nothing, or the external member proved it.
    Infeasible(Infeasibility),
    /// Time, node limit or cancellation.
    Limit,
}

/// The limits of a portfolio, and who watches it.
pub struct RunSettings<'a> {
    /// The deadline and the cancellation flag.
    pub stop: Deadline<'a>,
    /// Limit on nodes over all runs.
    pub node_limit: Option<u64>,
    /// The observer of the search, if any.
    pub observer: Option<&'a mut dyn SearchObserver>,
    /// Each policy's runs per round, in policy order: policy `i` runs the next `weights[i]` runs
    /// of its own restart schedule each round, so its runs are exactly its runs alone, only
    /// interleaved with the others' (missing entries and zeros count as 1; all 1: the plain
    /// round robin).
    pub weights: Vec<u64>,
    /// One more member of the rounds, before or after the policies as it asks, at its share.
    pub external: Option<&'a dyn ExternalMember>,
    /// The filled problems (with the `slack-fill` switch): searched first in every round, in
    /// this order, each at one policy's share, by the fixed policy.
    pub filled: &'a [Filled],
    /// The lottery member (with `slack-fill`): after the filled problems, at one policy's
    /// share, each run on a newly drawn filled problem.
    pub drawer: Option<&'a Drawer<'a>>,
    /// How the slack-filling members run (their switches).
    pub slack: SlackFill<'a>,
    /// The portfolio switches (the fixed policy's boosting and the lottery's lead order for the
    /// members the search makes itself).
    pub switches: PortfolioSwitches,
    /// The learned parts the runs consult: the judge (switch `learned-restarts`) may end the
    /// runs within their worker's largest budget so far.
    pub learned: &'a LearnedHooks,
}

/// Runs the portfolio until a verdict, on a stack deep enough for its search (see
/// [`on_stack_for`]).
pub fn run(
    instance: &Instance,
    options: &SearchOptions,
    policies: Vec<Box<dyn NodePolicy>>,
    settings: RunSettings<'_>,
    stats: &mut SearchStats,
) -> Verdict {
    let depth = settings
        .filled
        .iter()
        .map(|filled| filled.instance.free.len())
        .fold(instance.free.len(), usize::max)
        // A drawn problem's phantoms: each closes an opened slack (at most one opened per step
        // of the slack profile, a swap or a learned walk's reopen included) or ends a fall
        // partly (at most once per step), and the profile steps at most at each section's
        // start and at the end.
        .max(settings.drawer.map_or(0, |_| {
            instance.free.len() + 2 * (instance.members.len() + 1)
        }));
    on_stack_for(depth, || {
        run_here(instance, options, policies, settings, stats)
    })
}

/// [`run`] on the current thread (and its pool's threads).
fn run_here(
    instance: &Instance,
    options: &SearchOptions,
    policies: Vec<Box<dyn NodePolicy>>,
    mut settings: RunSettings<'_>,
    stats: &mut SearchStats,
) -> Verdict {
    let members = (settings.filled, settings.drawer);
    let workers = workers_for(
        instance,
        (options.restarts, settings.switches),
        policies,
        members,
    );
    // The slack-filling members run first in every round; the counters name them before the
    // policies.
    let (member_names, member_weights) = member_weights(&workers, &settings.slack);
    settings
        .weights
        .splice(0..0, member_weights.iter().copied());
    stats.weights.splice(0..0, member_weights);
    stats.portfolio.splice(0..0, member_names.iter().cloned());
    let pool = (options.threads > 1).then(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .stack_size(stack_bytes(instance.free.len()))
            .build()
            .expect("thread pool")
    });
    let weights = run_weights(&settings.weights, workers.len());
    let passes = weights.iter().copied().max().unwrap_or(1);
    let mut rounds = Rounds {
        instance,
        options,
        own_runs: vec![0; workers.len()],
        largest_budgets: vec![0; workers.len()],
        member: MemberSchedule::new(weights.iter().sum(), instance.free.len()),
        external: settings.external.filter(|_| options.restarts),
        workers,
        weights,
        pool,
        settings,
        spent: 0,
        runs: 0,
    };
    loop {
        for pass in 0..passes {
            if let Some(verdict) = rounds.pass(pass, stats) {
                return verdict;
            }
        }
    }
}

/// The portfolio's rounds as they go: its members, where each is in its own restart schedule,
/// and what has been spent.
struct Rounds<'a, 's> {
    instance: &'a Instance,
    options: &'a SearchOptions,
    workers: Vec<Worker<'a>>,
    /// Each worker's runs per round.
    weights: Vec<u64>,
    /// Each worker's place in its own restart schedule: its runs so far.
    own_runs: Vec<u32>,
    /// Each worker's largest budget so far: a run within it may end early (switch
    /// `learned-restarts`); one above it runs to its budget, so the search stays complete.
    largest_budgets: Vec<u64>,
    /// The external member, with restarts on.
    external: Option<&'a dyn ExternalMember>,
    /// When the external member runs.
    member: MemberSchedule,
    /// The threads, when there are several.
    pool: Option<rayon::ThreadPool>,
    settings: RunSettings<'s>,
    /// The nodes spent so far (the external member's: its budgets, when it runs to them).
    spent: u64,
    /// The runs so far.
    runs: u64,
}

/// One pass of a round: who runs, in run order, and at what budget.
struct Pass {
    /// The workers that run, by index, in order.
    workers: Vec<usize>,
    /// Where the external member runs among them, if it does.
    external_at: Option<usize>,
    /// Each run's name.
    names: Vec<String>,
    /// Each run's node budget.
    budgets: Vec<u64>,
    /// Whether each run may end early (within its worker's largest budget so far).
    may_end_early: Vec<bool>,
    /// The number of the pass's first run.
    first_run: u32,
}

impl Pass {
    /// The worker behind run `i` of this pass (`None`: the external member).
    fn worker_of(&self, i: usize) -> Option<usize> {
        let before = usize::from(self.external_at == Some(0));
        (self.external_at != Some(i)).then(|| self.workers[i - before])
    }
}

impl Rounds<'_, '_> {
    /// Pass `pass` of a round: the workers whose weight is above `pass`, each with the next
    /// budget of its own schedule, and the external member when its share allows. Its verdict,
    /// if one of its runs decided or the limits were reached.
    fn pass(&mut self, pass: u64, stats: &mut SearchStats) -> Option<Verdict> {
        let Some(plan) = self.plan(pass) else {
            return Some(Verdict::Limit);
        };
        let results = self.run_pass(&plan);
        results
            .into_iter()
            .find_map(|result| self.record(&plan, result, stats))
    }

    /// The runs of pass `pass` and their budgets; None when the node limit is spent.
    fn plan(&mut self, pass: u64) -> Option<Pass> {
        let (options, buffers) = (self.options, self.instance.free.len());
        // The node budget of a policy's run `run` of its own schedule.
        let budget_of = |run: u32| {
            if options.restarts {
                budget(options.schedule, run, buffers)
            } else {
                u64::MAX
            }
        };
        let workers: Vec<usize> = (0..self.workers.len())
            .filter(|&i| self.weights[i] > pass && !self.workers[i].retired())
            .collect();
        let policy_budgets: Vec<u64> = workers
            .iter()
            .map(|&i| budget_of(self.own_runs[i]))
            .collect();
        let member = &mut self.member;
        let member_budget = self.external.and_then(|m| member.next(m, &policy_budgets));
        let external = self.external.filter(|_| member_budget.is_some());
        let first = external.is_some_and(|m| m.runs_first());
        let external_at = external.map(|_| if first { 0 } else { workers.len() });
        let wanted = in_run_order(policy_budgets.clone(), member_budget.map(|b| (b, first)));
        let budgets = round_budgets(&wanted, self.settings.node_limit, self.spent)?;
        let early: Vec<bool> = workers
            .iter()
            .zip(&policy_budgets)
            .map(|(&i, &budget)| {
                let early = budget <= self.largest_budgets[i];
                self.largest_budgets[i] = self.largest_budgets[i].max(budget);
                self.own_runs[i] += 1;
                early
            })
            .collect();
        let may_end_early = in_run_order(early, external.map(|_| (false, first)));
        let names = in_run_order(
            workers.iter().map(|&i| self.workers[i].name()).collect(),
            external.map(|m| (m.name().to_string(), first)),
        );
        Some(Pass {
            workers,
            external_at,
            names,
            budgets,
            may_end_early,
            first_run: self.runs as u32,
        })
    }

    /// Runs the pass's runs, in order or on the pool's threads.
    fn run_pass(&mut self, plan: &Pass) -> Vec<RunResult> {
        let observer = &mut self.settings.observer;
        let policy_jobs = self
            .workers
            .iter_mut()
            .enumerate()
            .filter(|(i, _)| plan.workers.contains(i))
            .enumerate()
            .map(|(k, (_, worker))| {
                let run = usize::from(plan.external_at == Some(0)) + k;
                let run_observer = observer
                    .as_mut()
                    .and_then(|o| o.run_observer(plan.first_run + run as u32, &plan.names[run]));
                Job::Policy(worker, run_observer)
            })
            .collect();
        let first = plan.external_at == Some(0);
        let external = self.external.filter(|_| plan.external_at.is_some());
        let jobs = in_run_order(policy_jobs, external.map(|m| (Job::External(m), first)));
        let round = Round {
            instance: self.instance,
            options: self.options,
            slack: &self.settings.slack,
            budgets: &plan.budgets,
            may_end_early: &plan.may_end_early,
            learned: self.settings.learned,
            stop: self.settings.stop,
        };
        match &self.pool {
            Some(pool) => pool.install(|| round.parallel(jobs)),
            None => round.sequential(jobs),
        }
    }

    /// Counts run `i`'s work and tells its observer; the verdict, if the run decided or
    /// stopped.
    fn record(
        &mut self,
        plan: &Pass,
        (i, end, mut run_stats, run_observer): RunResult,
        stats: &mut SearchStats,
    ) -> Option<Verdict> {
        let node_limit = self.settings.node_limit;
        run_stats.nodes = count_within(run_stats.nodes, node_limit, self.spent);
        stats.add(&run_stats);
        if let Some(observer) = self.settings.observer.as_mut() {
            let summary = RunSummary {
                run: plan.first_run + i as u32,
                policy: plan.names[i].clone(),
                stats: run_stats.clone(),
                ended: match end {
                    RunEnd::Found(_) => RunEnded::Found,
                    RunEnd::Infeasible(_) | RunEnd::Retired => RunEnded::Exhausted,
                    RunEnd::Budget => RunEnded::Budget,
                    RunEnd::Stopped | RunEnd::Outranked => RunEnded::Stopped,
                },
            };
            observer.on_run_end(&summary, run_observer);
        }
        // The external member's work is its budget, counted when it runs to it.
        self.spent = self.spent.saturating_add(if plan.external_at != Some(i) {
            run_stats.nodes
        } else if matches!(end, RunEnd::Budget) {
            plan.budgets[i]
        } else {
            0
        });
        self.runs += 1;
        stats.restarts = self.runs - 1;
        let worker = plan.worker_of(i);
        match end {
            RunEnd::Found(mut offsets) => {
                stats.policy = Some(plan.names[i].clone());
                if let Some(buffers) = worker.and_then(|w| self.workers[w].filled_buffers()) {
                    offsets.truncate(buffers); // the phantoms go
                }
                Some(Verdict::Found(offsets))
            }
            RunEnd::Retired => {
                self.workers[worker.expect("a worker's run")].retire();
                None
            }
            RunEnd::Infeasible(why) => {
                stats.policy = Some(plan.names[i].clone());
                Some(Verdict::Infeasible(why))
            }
            RunEnd::Stopped => Some(Verdict::Limit),
            RunEnd::Budget => None,
            RunEnd::Outranked => unreachable!("an earlier run of the round decided"),
        }
    }
}

#[cfg(test)]
mod tests;
