//! Restarts over a portfolio of policies with growing node budgets, sequential or on several
//! threads; the answer is the same either way (the lowest-index decisive run of the earliest
//! round wins). An [`ExternalMember`], when given, runs after (or before) the policies of a round
//! whenever its share of the work allows, on a doubling schedule of its own.

use super::dfs::{Flow, RunLimits, Searcher, Stop};
use super::external::{ExternalMember, MemberEnd};
use super::hole_walk::{sorted_cut, Cut};
use super::instance::Instance;
use super::observer::{RunObserver, RunSummary, SearchObserver};
use super::options::{Schedule, SearchOptions};
use super::policy::{FixedPolicy, NodePolicy, StaticOrder};
use super::schedule::budget;
use super::slack_fill::{Drawer, Filled, Shape};
use super::state::State;
use super::stats::SearchStats;
use crate::outcome::{Deadline, Infeasibility};
use rayon::prelude::*;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// What the portfolio concluded.
pub enum Verdict {
    /// Offsets of every buffer.
    Found(Vec<u64>),
    /// Proven infeasible: a complete run found nothing, or the external member proved it.
    Infeasible(Infeasibility),
    /// Time, node limit or cancellation.
    Limit,
}

enum RunEnd {
    Found(Vec<u64>),
    Infeasible(Infeasibility),
    Budget,
    Stopped,
    /// A run before it in the round decided first (threads only); its result is not needed.
    Outranked,
    /// A filled problem's run was exhausted: its restriction has no layout, which decides
    /// nothing about the problem.
    Retired,
}

struct Worker<'i> {
    /// The instance this worker searches when it is not the problem's: a filled problem
    /// (see [`super::slack_fill`]).
    filled: Option<&'i Filled>,
    /// A filled problem's worker whose run was exhausted: its restriction has no layout, which
    /// proves nothing about the problem, so it runs no more.
    retired: bool,
    /// The lottery member's drawer: each of its runs searches a newly drawn filled problem.
    drawer: Option<&'i Drawer<'i>>,
    /// The lottery member's current filled problem.
    drawn: Option<Filled>,
    /// How many cuts the lottery member has drawn: the next draw's number.
    draws: u64,
    /// With `distinct-draws`: the lottery's cuts searched so far, each sorted.
    drawn_cuts: HashSet<Cut>,
    /// With `draw-lead`: the static order the lottery's draws are searched in (the round
    /// robin's first strategy's); the fixed policy otherwise.
    draw_order: Option<String>,
    policy: Box<dyn NodePolicy>,
    state: State,
    /// The node cache of this policy's runs: a key decides the search below its node whatever
    /// run meets it (it includes the ranks), so a restart skips what earlier runs refuted.
    failed_nodes: HashSet<u128>,
}

impl<'i> Worker<'i> {
    /// A worker of `policy` on the problem's instance.
    fn new(policy: Box<dyn NodePolicy>, instance: &Instance) -> Worker<'i> {
        Worker {
            filled: None,
            retired: false,
            drawer: None,
            drawn: None,
            draws: 0,
            drawn_cuts: HashSet::new(),
            draw_order: None,
            policy,
            state: State::new(instance),
            failed_nodes: HashSet::new(),
        }
    }

    /// The name of this worker's runs: its policy's, or its shape's for a filled problem's.
    fn name(&self) -> String {
        match (self.filled, self.drawer) {
            (Some(filled), _) => filled.shape.name().to_string(),
            (None, Some(_)) => Shape::Drawn.name().to_string(),
            (None, None) => self.policy.name(),
        }
    }

    /// How many of its problem's buffers are the problem's, for a filled problem's worker.
    fn filled_buffers(&self) -> Option<usize> {
        self.filled
            .map(|f| f.buffers)
            .or(self.drawn.as_ref().map(|d| d.buffers))
    }

    /// The lottery member's next draw: a new filled problem, with a fresh state, node cache and
    /// policy (its buffers differ from draw to draw): the static order of `draw_order` when
    /// there is one, the fixed policy otherwise. With `distinct`, a cut that a fixed
    /// member or an earlier draw searched is drawn again, up to [`REDRAWS`] times (then the
    /// last is taken: the profile may have few cuts).
    fn redraw(
        &mut self,
        drawer: &Drawer<'_>,
        (conflict_boost, distinct): (bool, bool),
        stop: &Deadline<'_>,
    ) {
        let mut cut = drawer.cut(self.draws, stop);
        self.draws += 1;
        if distinct {
            for _ in 0..REDRAWS {
                let sorted = sorted_cut(&cut);
                if !drawer.is_fixed(&sorted) && self.drawn_cuts.insert(sorted) {
                    break;
                }
                cut = drawer.cut(self.draws, stop);
                self.draws += 1;
            }
        }
        let drawn = drawer.fill(&cut);
        self.state = State::new(&drawn.instance);
        self.failed_nodes.clear();
        let order = self.draw_order.as_deref().and_then(StaticOrder::new);
        self.policy = match order {
            Some(order) => Box::new(order),
            None => Box::new(FixedPolicy::new(drawn.instance.sizes.len(), conflict_boost)),
        };
        self.drawn = Some(drawn);
    }
}

/// The most cuts the lottery draws for one run before it takes a repeated one.
const REDRAWS: usize = 64;

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
}

/// One run's result: its index in the round, how it ended, its counters and its observer.
type RunResult = (usize, RunEnd, SearchStats, Option<Box<dyn RunObserver>>);

fn run_one(
    instance: &Instance,
    options: &SearchOptions,
    worker: &mut Worker<'_>,
    limits: RunLimits<'_>,
    observer: Option<Box<dyn RunObserver>>,
) -> (RunEnd, SearchStats, Option<Box<dyn RunObserver>>) {
    if limits
        .outranked
        .is_some_and(|(decided, me)| decided.load(Ordering::Relaxed) < me)
    {
        return (RunEnd::Outranked, SearchStats::default(), None);
    }
    if let Some(drawer) = worker.drawer {
        let switches = (options.conflict_boost, options.distinct_draws);
        worker.redraw(drawer, switches, &limits.stop);
    }
    let Worker {
        filled,
        drawn,
        policy,
        state,
        failed_nodes,
        ..
    } = worker;
    let instance = match (drawn.as_ref(), filled) {
        (Some(drawn), _) => &drawn.instance,
        (None, Some(filled)) => &filled.instance,
        (None, None) => instance,
    };
    policy.on_run_start();
    let mut searcher = Searcher::new(
        instance,
        state,
        options,
        policy.as_mut(),
        limits,
        observer,
        failed_nodes,
    );
    let flow = searcher.run();
    let stats = searcher.stats.clone();
    let observer = searcher.take_observer();
    let end = match flow {
        Flow::Found => RunEnd::Found(state.solution.clone()),
        Flow::Failed => RunEnd::Infeasible(Infeasibility::Exhausted),
        Flow::Stop(Stop::Budget) => RunEnd::Budget,
        Flow::Stop(Stop::Outranked) => RunEnd::Outranked,
        Flow::Stop(_) => RunEnd::Stopped,
        Flow::Unwind(_) => unreachable!("the root re-explores on unwinding"),
    };
    (end, stats, observer)
}

/// The node budget of one lottery draw with the `short-draws` switch, on a problem of `buffers`
/// free buffers (`u64::MAX` without it: one draw per run). A draw that matches the holes is
/// often decided in about one node per buffer (15 of the 30 undecided effort-validation slack
/// packings whose true cut was searched: 351 to 836 nodes for 350 to 500 buffers), and most
/// draws do not match, so a run spends its budget on several short draws.
fn draw_budget(options: &SearchOptions, buffers: usize) -> u64 {
    if options.short_draws {
        (buffers as u64)
            .saturating_mul(DRAW_NODES_PER_BUFFER)
            .max(1)
    } else {
        u64::MAX
    }
}

/// The nodes per buffer of a short draw.
const DRAW_NODES_PER_BUFFER: u64 = 2;

/// One run of the lottery member: draws of at most `per_draw` nodes each, until one decides,
/// the run stops or its budget is spent (a refuted draw proves nothing: the next is drawn). The
/// counters add up over the draws.
fn run_draws(
    instance: &Instance,
    options: &SearchOptions,
    worker: &mut Worker<'_>,
    limits: RunLimits<'_>,
    mut observer: Option<Box<dyn RunObserver>>,
    per_draw: u64,
) -> (RunEnd, SearchStats, Option<Box<dyn RunObserver>>) {
    let mut total = SearchStats::default();
    let mut left = limits.nodes;
    loop {
        let nodes = left.min(per_draw);
        let draw_limits = RunLimits { nodes, ..limits };
        let (end, stats, returned) = run_one(instance, options, worker, draw_limits, observer);
        observer = returned;
        total.add(&stats);
        left = left.saturating_sub(stats.nodes.max(1));
        match end {
            RunEnd::Budget | RunEnd::Infeasible(_) if left > 0 => continue,
            // Its last draw refuted: the next run draws again.
            RunEnd::Infeasible(_) => return (RunEnd::Budget, total, observer),
            end => return (end, total, observer),
        }
    }
}

/// Search depths up to which a run stays on the caller's thread: the search recurses once per
/// placement, and at [`STACK_PER_LEVEL`] bytes a level this many levels fit in the 2 MiB of a
/// small thread (rayon's workers, most callers of the C and Python bindings).
const INLINE_DEPTH: usize = 1024;

/// Stack bytes a run reserves per search level: about twice what one level uses (measured: a
/// release build overflowed the 8 MiB main stack near 20,000 levels, about 420 bytes each).
const STACK_PER_LEVEL: usize = 1024;

/// The stack a search `depth` levels deep needs, with room for the rest of the thread.
fn stack_bytes(depth: usize) -> usize {
    (2 << 20) + depth.saturating_mul(STACK_PER_LEVEL)
}

/// Runs `run` (a search that may recurse `depth` levels) on this thread when that is shallow,
/// else on a thread of its own whose stack holds every level, so that a deep search cannot
/// overflow its caller's stack (an abort, not an error, in Rust). The thread reserves address
/// space; only the pages the search reaches are used.
fn on_stack_for<T: Send>(depth: usize, run: impl FnOnce() -> T + Send) -> T {
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

/// The runs of a round in order: the policies', with the external member's before them when it
/// [runs first](ExternalMember::runs_first), else after them.
fn in_run_order<T>(mut policies: Vec<T>, external: Option<(T, bool)>) -> Vec<T> {
    match external {
        Some((member, true)) => policies.insert(0, member),
        Some((member, false)) => policies.push(member),
        None => {}
    }
    policies
}

/// Each policy's weight, from the settings' (missing entries and zeros count as 1).
fn run_weights(weights: &[u64], policies: usize) -> Vec<u64> {
    (0..policies)
        .map(|i| weights.get(i).copied().unwrap_or(1).max(1))
        .collect()
}

/// Each run's node budget in a round, fixed before the round starts so that threads and
/// sequential runs agree. A run stopped by its budget also counts the node it refused, so under
/// a node limit each run is granted its budget only while that node fits too; the first run
/// whose budget does not fit gets all that is left (its refused node is not counted, see
/// [`count_within`]) and the runs after it nothing: the runs never count more than the limit,
/// and a round the limit does not reach is granted exactly what it asks. `None` when the limit
/// is spent.
fn round_budgets(wanted: &[u64], node_limit: Option<u64>, spent: u64) -> Option<Vec<u64>> {
    let Some(limit) = node_limit else {
        return Some(wanted.to_vec());
    };
    let mut left = limit.checked_sub(spent).filter(|&left| left > 0)?;
    let budgets = wanted
        .iter()
        .map(|&wanted| {
            if wanted < left {
                left -= wanted + 1; // Its nodes and the one it refuses at its budget.
                wanted
            } else {
                std::mem::take(&mut left)
            }
        })
        .collect();
    Some(budgets)
}

/// The nodes a run that counted `nodes` adds under a node limit, `spent` nodes spent before it:
/// at most what is left. Only the run granted the rest of the limit (see [`round_budgets`]) can
/// count one more, the node it refused when its budget ran out, which is no work.
fn count_within(nodes: u64, node_limit: Option<u64>, spent: u64) -> u64 {
    match node_limit {
        Some(limit) => {
            let room = limit.saturating_sub(spent);
            debug_assert!(nodes <= room + 1, "{nodes} nodes with {room} left");
            nodes.min(room)
        }
        None => nodes,
    }
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

/// The portfolio's workers: one per policy (only the first without restarts), after one per
/// filled problem (restarts only: an exhausted run of one proves nothing).
fn workers_for<'i>(
    instance: &Instance,
    options: &SearchOptions,
    policies: Vec<Box<dyn NodePolicy>>,
    (filled, drawer): (&'i [Filled], Option<&'i Drawer<'i>>),
) -> Vec<Worker<'i>> {
    let draw_order = policies
        .first()
        .filter(|_| options.draw_lead)
        .and_then(|lead| lead_order(&lead.name()));
    let mut workers: Vec<Worker> = policies
        .into_iter()
        .map(|policy| Worker::new(policy, instance))
        .collect();
    if !options.restarts {
        workers.truncate(1);
        return workers;
    }
    let filled_workers = filled.iter().map(|filled| {
        let policy = FixedPolicy::new(filled.instance.sizes.len(), options.conflict_boost);
        Worker {
            filled: Some(filled),
            ..Worker::new(Box::new(policy), &filled.instance)
        }
    });
    // The lottery member's policy and state are replaced at each draw.
    let drawing = drawer.map(|drawer| Worker {
        drawer: Some(drawer),
        draw_order: draw_order.clone(),
        ..Worker::new(
            Box::new(FixedPolicy::new(0, options.conflict_boost)),
            instance,
        )
    });
    filled_workers.chain(drawing).chain(workers).collect()
}

/// The plain static order of a strategy named `name` (`WAT~` gives `WAT`), if it is one.
fn lead_order(name: &str) -> Option<String> {
    let word = name.trim_end_matches('~');
    StaticOrder::new(word).map(|_| word.to_string())
}

/// The names and runs per round of the slack-filling members among `workers`: one each, the
/// lottery's two with `double-lottery`.
fn member_weights(workers: &[Worker<'_>], options: &SearchOptions) -> (Vec<String>, Vec<u64>) {
    let lottery = if options.double_lottery { 2 } else { 1 };
    workers
        .iter()
        .filter(|w| w.filled.is_some() || w.drawer.is_some())
        .map(|w| (w.name(), if w.drawer.is_some() { lottery } else { 1 }))
        .unzip()
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
    let mut workers = workers_for(instance, options, policies, members);
    // The slack-filling members run first in every round; the counters name them before the
    // policies.
    let (member_names, member_weights) = member_weights(&workers, options);
    settings
        .weights
        .splice(0..0, member_weights.iter().copied());
    stats.weights.splice(0..0, member_weights);
    stats.portfolio.splice(0..0, member_names.iter().cloned());
    let external = settings.external.filter(|_| options.restarts);
    let first = external.is_some_and(|m| m.runs_first());
    let pool = (options.threads > 1).then(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(options.threads)
            .stack_size(stack_bytes(instance.free.len()))
            .build()
            .expect("thread pool")
    });
    let weights = run_weights(&settings.weights, workers.len());
    let passes = weights.iter().copied().max().unwrap_or(1);
    // Each policy's place in its own restart schedule: its runs so far.
    let mut own_runs = vec![0u32; workers.len()];
    let mut spent: u64 = 0;
    let mut runs: u64 = 0;
    // The node budget of a policy's run `run` of its own schedule.
    let budget_of = |run: u32| {
        if options.restarts {
            budget(options.schedule, run, instance.free.len())
        } else {
            u64::MAX
        }
    };
    let mut member = MemberSchedule::new(weights.iter().sum(), instance.free.len());
    loop {
        for pass in 0..passes {
            // Pass `p` of a round runs the policies whose weight is above `p`, each with the
            // next budget of its own schedule, and the external member when its share allows.
            let in_pass: Vec<usize> = (0..workers.len())
                .filter(|&i| weights[i] > pass && !workers[i].retired)
                .collect();
            let policy_budgets: Vec<u64> =
                in_pass.iter().map(|&i| budget_of(own_runs[i])).collect();
            let member_budget = external.and_then(|m| member.next(m, &policy_budgets));
            let external = external.filter(|_| member_budget.is_some());
            let external_at = external.map(|_| if first { 0 } else { in_pass.len() });
            let wanted = in_run_order(policy_budgets, member_budget.map(|b| (b, first)));
            let Some(budgets) = round_budgets(&wanted, settings.node_limit, spent) else {
                return Verdict::Limit;
            };
            for &i in &in_pass {
                own_runs[i] += 1;
            }
            let first_run = runs as u32;
            let names = in_run_order(
                in_pass.iter().map(|&i| workers[i].name()).collect(),
                external.map(|m| (m.name().to_string(), first)),
            );
            let policy_jobs = workers
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| in_pass.contains(i))
                .enumerate()
                .map(|(k, (_, worker))| {
                    let run = usize::from(external_at == Some(0)) + k;
                    let observer = settings
                        .observer
                        .as_mut()
                        .and_then(|o| o.run_observer(first_run + run as u32, &names[run]));
                    Job::Policy(worker, observer)
                })
                .collect();
            let jobs = in_run_order(policy_jobs, external.map(|m| (Job::External(m), first)));
            let round = Round {
                instance,
                options,
                budgets: &budgets,
                stop: settings.stop,
            };
            let results = match &pool {
                Some(pool) => pool.install(|| round.parallel(jobs)),
                None => round.sequential(jobs),
            };
            // The worker behind run `i` of this pass (`None`: the external member).
            let worker_of = |i: usize| {
                let before = usize::from(external_at == Some(0));
                (external_at != Some(i)).then(|| in_pass[i - before])
            };
            for (i, end, mut run_stats, run_observer) in results {
                run_stats.nodes = count_within(run_stats.nodes, settings.node_limit, spent);
                stats.add(&run_stats);
                if let Some(observer) = settings.observer.as_mut() {
                    let summary = RunSummary {
                        run: first_run + i as u32,
                        policy: names[i].clone(),
                        stats: run_stats.clone(),
                    };
                    observer.on_run_end(&summary, run_observer);
                }
                // The external member's work is its budget, counted when it runs to it.
                spent = spent.saturating_add(if external_at != Some(i) {
                    run_stats.nodes
                } else if matches!(end, RunEnd::Budget) {
                    budgets[i]
                } else {
                    0
                });
                runs += 1;
                stats.restarts = runs - 1;
                let filled_buffers = worker_of(i).and_then(|w| workers[w].filled_buffers());
                match end {
                    RunEnd::Found(mut offsets) => {
                        stats.policy = Some(names[i].clone());
                        if let Some(buffers) = filled_buffers {
                            offsets.truncate(buffers); // the phantoms go
                        }
                        return Verdict::Found(offsets);
                    }
                    RunEnd::Retired => {
                        let w = worker_of(i).expect("a worker's run");
                        workers[w].retired = true;
                    }
                    RunEnd::Infeasible(why) => {
                        stats.policy = Some(names[i].clone());
                        return Verdict::Infeasible(why);
                    }
                    RunEnd::Stopped => return Verdict::Limit,
                    RunEnd::Budget => {}
                    RunEnd::Outranked => unreachable!("an earlier run of the round decided"),
                }
            }
        }
    }
}

/// When the external member runs, and with what budget. It cannot be paused, so its runs start
/// from scratch on the geometric schedule (doubling budgets: its repeated work is at most as
/// much again); each runs in the first pass where the member's runs so far, with it, stay within
/// its share of the node budgets the policies have been given.
struct MemberSchedule {
    /// The policies' total weight (runs per round).
    weight: u64,
    /// Free buffers: the budget unit.
    buffers: usize,
    /// The member's runs so far.
    runs: u32,
    /// The budgets of the member's runs so far, with their overheads.
    member_total: u64,
    /// The budgets given to the policies' runs so far.
    policy_total: u64,
}

impl MemberSchedule {
    fn new(weight: u64, buffers: usize) -> MemberSchedule {
        MemberSchedule {
            weight: weight.max(1),
            buffers,
            runs: 0,
            member_total: 0,
            policy_total: 0,
        }
    }

    /// The member's budget in a pass whose policies get `policy_budgets`, if it runs in it.
    fn next(&mut self, member: &dyn ExternalMember, policy_budgets: &[u64]) -> Option<u64> {
        self.next_with(member.share(), member.overhead(), policy_budgets)
    }

    /// [`MemberSchedule::next`] for a member of `share` (in policies) whose runs cost
    /// `overhead` node equivalents each beyond their budgets.
    fn next_with(&mut self, share: f64, overhead: u64, policy_budgets: &[u64]) -> Option<u64> {
        self.policy_total = policy_budgets
            .iter()
            .fold(self.policy_total, |total, &b| total.saturating_add(b));
        let next = budget(Schedule::Geometric, self.runs, self.buffers);
        let after = self
            .member_total
            .saturating_add(next)
            .saturating_add(overhead);
        // In floating point (exact enough, and the same on every machine): share may be a
        // fraction of a policy.
        let allowed = after as f64 * self.weight as f64 <= share * self.policy_total as f64;
        if share.is_nan() || share <= 0.0 || !allowed {
            return None;
        }
        self.runs += 1;
        self.member_total = after;
        Some(next)
    }
}

/// One run of a round: a policy's search (with its observer), or the external member.
enum Job<'w, 'i> {
    Policy(&'w mut Worker<'i>, Option<Box<dyn RunObserver>>),
    External(&'w dyn ExternalMember),
}

/// One round of the portfolio: every policy once and the external member, each with its budget.
struct Round<'a> {
    instance: &'a Instance,
    options: &'a SearchOptions,
    budgets: &'a [u64],
    stop: Deadline<'a>,
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
                let instance = worker.filled.map_or(self.instance, |f| &f.instance);
                let (end, stats, observer) = if worker.drawer.is_some() {
                    let per_draw = draw_budget(self.options, self.instance.free.len());
                    run_draws(instance, self.options, worker, limits, observer, per_draw)
                } else {
                    run_one(instance, self.options, worker, limits, observer)
                };
                let end = match end {
                    RunEnd::Infeasible(_) if worker.filled.is_some() => RunEnd::Retired,
                    // One drawn shape refuted: the next run draws another.
                    RunEnd::Infeasible(_) if worker.drawer.is_some() => RunEnd::Budget,
                    end => end,
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
    fn sequential(&self, jobs: Vec<Job<'_, '_>>) -> Vec<RunResult> {
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
    fn parallel(&self, jobs: Vec<Job<'_, '_>>) -> Vec<RunResult> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{perfect, CutStyle, PerfectOptions};
    use crate::problem::Problem;
    use crate::search::slack_fill::Members;
    use crate::search::strategy::Portfolio;
    use std::sync::Mutex;

    /// Proves "infeasible" once granted `threshold` node equivalents; records its budgets. Its
    /// share is 4 policies: as much as the four policies of the round robin together.
    struct Oracle {
        threshold: u64,
        first: bool,
        budgets: Mutex<Vec<u64>>,
    }

    impl ExternalMember for Oracle {
        fn name(&self) -> &str {
            "oracle"
        }

        fn share(&self) -> f64 {
            4.0
        }

        fn runs_first(&self) -> bool {
            self.first
        }

        fn run(&self, budget: u64, _stop: &(dyn Fn() -> bool + Sync)) -> MemberEnd {
            self.budgets.lock().unwrap().push(budget);
            if budget >= self.threshold {
                MemberEnd::Infeasible(Infeasibility::ProvenBySolver { solver: "oracle" })
            } else {
                MemberEnd::Undecided
            }
        }
    }

    /// A perfect packing the policies do not solve in the first rounds (with cover branching,
    /// they solve seed 400 in about 12,000 nodes).
    fn instance() -> Instance {
        let options = PerfectOptions {
            capacity: 1 << 20,
            horizon: 1000,
            buffers: 250,
            style: CutStyle::NonGuillotine,
            remove: 7,
            alignment: 1024,
            cuts: Default::default(),
        };
        let (problem, _) = perfect(&options, 404);
        Instance::new(&problem, 1 << 20)
    }

    /// The portfolio with the oracle on [`instance`]; also the budget unit (its free buffers).
    fn search(
        (threads, first): (usize, bool),
        threshold: impl Fn(u64) -> u64,
        node_limit: impl Fn(u64) -> Option<u64>,
    ) -> (Verdict, SearchStats, Vec<u64>, u64) {
        let instance = instance();
        let unit = instance.free.len() as u64;
        let (threshold, node_limit) = (threshold(unit), node_limit(unit));
        // The default (Luby) schedule for the policies; the oracle's budgets double.
        let options = SearchOptions {
            threads,
            ..SearchOptions::default()
        };
        let oracle = Oracle {
            threshold,
            first,
            budgets: Mutex::new(Vec::new()),
        };
        let settings = RunSettings {
            stop: Deadline::none(),
            node_limit,
            observer: None,
            weights: Vec::new(),
            external: Some(&oracle),
            filled: &[],
            drawer: None,
        };
        let policies = Portfolio::round_robin(instance.free.len(), true, 0).policies;
        let mut stats = SearchStats::default();
        let verdict = run(&instance, &options, policies, settings, &mut stats);
        (verdict, stats, oracle.budgets.into_inner().unwrap(), unit)
    }

    /// The verdict and counters of the default portfolio on `instance` within `nodes`.
    fn counted(
        instance: &Instance,
        options: &SearchOptions,
        nodes: u64,
    ) -> (Option<Vec<u64>>, bool, [u64; 4]) {
        let settings = RunSettings {
            stop: Deadline::none(),
            node_limit: Some(nodes),
            observer: None,
            weights: Vec::new(),
            external: None,
            filled: &[],
            drawer: None,
        };
        let policies = Portfolio::round_robin(instance.free.len(), true, 0).policies;
        let mut stats = SearchStats::default();
        let verdict = run(instance, options, policies, settings, &mut stats);
        let counts = [
            stats.nodes,
            stats.minor_backtracks,
            stats.major_backtracks,
            stats.cache_hits,
        ];
        match verdict {
            Verdict::Found(offsets) => (Some(offsets), false, counts),
            Verdict::Infeasible(_) => (None, true, counts),
            Verdict::Limit => (None, false, counts),
        }
    }

    /// Records every run's policy and nodes.
    struct RunLog(Vec<(String, u64)>);

    impl SearchObserver for RunLog {
        fn on_run_end(&mut self, summary: &RunSummary, _: Option<Box<dyn RunObserver>>) {
            self.0.push((summary.policy.clone(), summary.stats.nodes));
        }
    }

    /// The default portfolio on `instance` within `nodes`, with `weights` and the filled
    /// problems `filled`: its verdict and every run's policy and nodes.
    fn logged_run(
        instance: &Instance,
        options: &SearchOptions,
        (nodes, weights): (u64, Vec<u64>),
        filled: &[Filled],
    ) -> (Verdict, Vec<(String, u64)>) {
        let mut log = RunLog(Vec::new());
        let settings = RunSettings {
            stop: Deadline::none(),
            node_limit: Some(nodes),
            observer: Some(&mut log),
            weights,
            external: None,
            filled,
            drawer: None,
        };
        let policies = Portfolio::round_robin(instance.free.len(), true, 0).policies;
        let verdict = run(
            instance,
            options,
            policies,
            settings,
            &mut SearchStats::default(),
        );
        (verdict, log.0)
    }

    /// The runs of the default portfolio with `weights` on [`instance`] within `nodes`.
    fn weighted_runs(weights: Vec<u64>, nodes: u64, threads: usize) -> Vec<(String, u64)> {
        let options = SearchOptions {
            threads,
            ..SearchOptions::default()
        };
        let (verdict, runs) = logged_run(&instance(), &options, (nodes, weights), &[]);
        assert!(matches!(verdict, Verdict::Limit), "not decided this early");
        runs
    }

    /// A perfect packing of 80 buffers with two pieces removed, and its problem.
    fn slack_packing() -> Problem {
        let options = PerfectOptions {
            capacity: 1 << 20,
            horizon: 1000,
            buffers: 80,
            style: CutStyle::Guillotine,
            remove: 2,
            alignment: 1024,
            cuts: Default::default(),
        };
        perfect(&options, 3).0
    }

    /// The portfolio's verdict on `problem` with `filled` as its filled problems, and its runs.
    fn with_filled(problem: &Problem, filled: &[Filled]) -> (Verdict, Vec<(String, u64)>) {
        let instance = Instance::new(problem, 1 << 20);
        let options = SearchOptions::default();
        logged_run(&instance, &options, (1_000_000, Vec::new()), filled)
    }

    #[test]
    fn a_filled_problems_layout_is_the_problems_without_the_phantoms() {
        let problem = slack_packing();
        let instance = Instance::new(&problem, 1 << 20);
        let filled = crate::search::slack_fill::members(
            &problem,
            &instance,
            crate::search::slack_fill::HoleSwitches::default(),
            &crate::outcome::Deadline::none(),
        )
        .filled;
        assert!(
            filled[0].instance.sizes.len() > problem.len(),
            "phantoms added"
        );
        let (verdict, runs) = with_filled(&problem, &filled);
        let Verdict::Found(offsets) = verdict else {
            panic!("solved");
        };
        // The filled problem's run comes first and decides: its phantoms are dropped.
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(runs[0].0, "slack-fill");
        assert_eq!(offsets.len(), problem.len());
        let solution = crate::problem::Solution { offsets };
        assert!(crate::validate(&problem, &solution, Some(1 << 20)).is_valid());
    }

    /// The slack-filling members of `problem` (no learned model).
    fn lottery<'p>(problem: &'p Problem, instance: &'p Instance) -> Members<'p> {
        let switches = crate::search::slack_fill::HoleSwitches::default();
        crate::search::slack_fill::members(problem, instance, switches, &Deadline::none())
    }

    /// A packing of 200 buffers with 8 removed whose slack can be cut more than one way (the
    /// first seed that gives a lottery), and its instance.
    fn lottery_packing() -> (Problem, Instance) {
        (0..20)
            .map(|seed| {
                let packing = PerfectOptions {
                    capacity: 1 << 20,
                    horizon: 1000,
                    buffers: 200,
                    style: CutStyle::Guillotine,
                    remove: 8,
                    alignment: 1024,
                    cuts: Default::default(),
                };
                let problem = perfect(&packing, seed).0;
                let instance = Instance::new(&problem, 1 << 20);
                (problem, instance)
            })
            .find(|(problem, instance)| lottery(problem, instance).drawer.is_some())
            .expect("a packing whose slack can be cut more than one way")
    }

    #[test]
    fn distinct_draws_skip_the_fixed_members_cuts_and_earlier_draws() {
        let (problem, instance) = lottery_packing();
        let members = lottery(&problem, &instance);
        let drawer = members.drawer.as_ref().expect("a lottery");
        let sorted = |draw: u64| sorted_cut(&drawer.cut(draw, &Deadline::none()));
        // The plain draws repeat cuts here: the fixed members' or each other's.
        let plain: Vec<_> = (0..12).map(sorted).collect();
        let repeats = plain
            .iter()
            .enumerate()
            .filter(|&(i, cut)| drawer.is_fixed(cut) || plain[..i].contains(cut))
            .count();
        assert!(repeats > 0, "no repeat to skip in 12 draws");
        let options = SearchOptions::default();
        let mut worker = workers_for(&instance, &options, Vec::new(), (&[], Some(drawer)))
            .pop()
            .expect("the lottery's worker");
        for _ in 0..12 {
            worker.redraw(drawer, (false, true), &Deadline::none());
        }
        assert_eq!(worker.drawn_cuts.len(), 12, "every run a new cut");
        assert!(worker.drawn_cuts.iter().all(|cut| !drawer.is_fixed(cut)));
        // Drawn again: the 12 new cuts took more draws than 12.
        assert!(
            worker.draws >= 12 + repeats as u64,
            "{} draws",
            worker.draws
        );
    }

    #[test]
    fn the_lottery_searches_its_draws_in_the_lead_strategys_plain_order() {
        assert_eq!(lead_order("WAT~").as_deref(), Some("WAT"));
        assert_eq!(lead_order("TWA").as_deref(), Some("TWA"));
        assert_eq!(lead_order("fixed"), None);
        assert_eq!(lead_order("learned"), None);
        let (problem, instance) = lottery_packing();
        let members = lottery(&problem, &instance);
        let drawer = members.drawer.as_ref().expect("a lottery");
        let draw_policy = |lead: &str, draw_lead: bool| {
            let options = SearchOptions {
                draw_lead,
                ..SearchOptions::default()
            };
            let lead = StaticOrder::diversified(lead, 0).map_or_else(
                || Box::new(FixedPolicy::new(0, false)) as Box<dyn NodePolicy>,
                |order| Box::new(order) as Box<dyn NodePolicy>,
            );
            let mut worker = workers_for(&instance, &options, vec![lead], (&[], Some(drawer)))
                .into_iter()
                .find(|w| w.drawer.is_some())
                .expect("the lottery's worker");
            worker.redraw(drawer, (false, false), &Deadline::none());
            worker.policy.name()
        };
        assert_eq!(draw_policy("WAT", true), "WAT");
        assert_eq!(draw_policy("WAT", false), "fixed");
        assert_eq!(draw_policy("fixed", true), "fixed");
    }

    #[test]
    fn a_lottery_run_makes_short_draws_until_its_budget_is_spent() {
        // Every draw counted once: no cut drawn again.
        let options = SearchOptions {
            distinct_draws: false,
            ..SearchOptions::default()
        };
        let (problem, instance) = lottery_packing();
        let members = lottery(&problem, &instance);
        let drawer = members.drawer.as_ref().expect("a lottery");
        let draws_and_nodes = |budget: u64, per_draw: u64| {
            let mut worker = workers_for(&instance, &options, Vec::new(), (&[], Some(drawer)))
                .pop()
                .expect("the lottery's worker");
            let limits = RunLimits {
                nodes: budget,
                stop: Deadline::none(),
                outranked: None,
            };
            let (end, stats, _) =
                run_draws(&instance, &options, &mut worker, limits, None, per_draw);
            assert!(
                matches!(end, RunEnd::Budget),
                "not decided in 5 nodes a draw"
            );
            (worker.draws, stats.nodes)
        };
        // 200 buffers are not placed in 5 nodes: every draw runs to its budget, and counts the
        // node it stops at (6 a draw, as any run counts one node beyond its budget).
        assert_eq!(draws_and_nodes(60, 5), (10, 60));
        // The last draw gets what is left (2 nodes, counted 3): one node beyond, as one run.
        assert_eq!(draws_and_nodes(50, 5), (9, 51));
        // One draw at the run's whole budget without the switch.
        assert_eq!(draws_and_nodes(50, u64::MAX), (1, 51));
        assert_eq!(draw_budget(&options, 200), 400);
        let one = SearchOptions {
            short_draws: false,
            ..SearchOptions::default()
        };
        assert_eq!(draw_budget(&one, 200), u64::MAX);
    }

    #[test]
    fn a_filled_problem_without_a_layout_proves_nothing_and_retires() {
        let problem = slack_packing();
        // A restriction with no layout at all: one more buffer as large as the capacity.
        let mut impossible = problem.clone();
        impossible
            .buffers
            .push(crate::problem::Buffer::new("wall", 0, 1000, 1 << 20));
        let filled = Filled {
            shape: crate::search::slack_fill::Shape::Nested,
            instance: Instance::new(&impossible, 1 << 20),
            buffers: problem.len(),
        };
        let (verdict, runs) = with_filled(&problem, std::slice::from_ref(&filled));
        assert!(
            matches!(verdict, Verdict::Found(_)),
            "the problem is solved"
        );
        let filled_runs = runs.iter().filter(|r| r.0 == "slack-fill").count();
        assert_eq!(filled_runs, 1, "retired after its exhausted run: {runs:?}");
    }

    #[test]
    fn a_weight_is_runs_of_the_policys_own_schedule_per_round() {
        assert_eq!(run_weights(&[], 3), [1, 1, 1]);
        assert_eq!(run_weights(&[3, 0], 3), [3, 1, 1]);
        let unit = instance().free.len() as u64;
        // Luby budgets in units of 4 x buffers: 1, 1, 2, 1, 1, 2, 4. The first policy runs 3
        // times per round, the others once: each policy's runs follow its own schedule.
        let runs = weighted_runs(vec![3, 1, 1, 1], 17 * 4 * unit, 1);
        let round: [(&str, u64); 6] = [
            ("fixed", 1),
            ("WAT~", 1),
            ("TAW~", 1),
            ("TWA", 1),
            ("fixed", 1),
            ("fixed", 2),
        ];
        // Two rounds, then in round 3 what the limit leaves.
        let mut expected = [round, round].concat();
        expected.push(("fixed", 4));
        let got: Vec<(&str, u64)> = runs
            .iter()
            // A run may count the one node it stops on.
            .map(|(p, n)| (p.as_str(), (n + 2 * unit) / (4 * unit)))
            .collect();
        assert_eq!(got[..12], expected[..12]);
        assert_eq!(got.len(), expected.len(), "{got:?}");
        assert_eq!(got[12].0, "fixed");
        assert!(got[12].1 <= 4, "{got:?}");
        // The runs of a policy are its runs alone: the same nodes, run for run, with threads.
        let alone = weighted_runs(vec![1, 1, 1, 1], 17 * 4 * unit, 1);
        let of = |runs: &[(String, u64)], policy: &str| -> Vec<u64> {
            runs.iter().filter(|r| r.0 == policy).map(|r| r.1).collect()
        };
        let (weighted, equal) = (of(&runs, "WAT~"), of(&alone, "WAT~"));
        assert_eq!(weighted[..], equal[..weighted.len()]);
        let threaded = weighted_runs(vec![3, 1, 1, 1], 17 * 4 * unit, 2);
        assert_eq!(threaded, runs);
    }

    #[test]
    fn the_search_decides_alike_with_and_without_stored_neighbour_lists() {
        // Without the lists the search reads the neighbours from the sections, in another
        // order: every decision, conflict and count must stay the same.
        let mut searched = 0;
        for seed in 0..16u64 {
            // Perfect packings at LOAD (hard), and random problems (mostly easy).
            let problem = if seed % 2 == 0 {
                let options = PerfectOptions {
                    capacity: 1 << 16,
                    horizon: 200,
                    buffers: 40 + seed as usize * 5,
                    style: CutStyle::NonGuillotine,
                    remove: 3,
                    alignment: 64,
                    cuts: Default::default(),
                };
                perfect(&options, seed).0
            } else {
                let options = crate::generate::RandomOptions {
                    buffers: 40 + seed as usize * 5,
                    horizon: 60,
                    max_lifetime: 5 + seed * 3,
                    tightness: 1.0,
                    ..Default::default()
                };
                crate::generate::random(&options, seed)
            };
            let capacity = problem.capacity.expect("the generators set it");
            let with_lists = Instance::new(&problem, capacity);
            assert!(!with_lists.neighbours.is_empty());
            let mut without = Instance::new(&problem, capacity);
            without.drop_neighbour_lists();
            // Edge finding reads the sections' member lists, not the neighbour lists, and
            // solves most of these with little search: without it they exercise the
            // neighbour reads far more; with it, they check it reads alike too.
            for edge_finding in [false, true] {
                let options = SearchOptions {
                    edge_finding,
                    ..SearchOptions::default()
                };
                let expected = counted(&with_lists, &options, 3000);
                searched += expected.2[0];
                let label = format!("seed {seed}, edge finding {edge_finding}");
                assert_eq!(counted(&without, &options, 3000), expected, "{label}");
            }
        }
        assert!(
            searched > 5_000,
            "the problems need search: {searched} nodes"
        );
    }

    #[test]
    fn the_external_members_budgets_double_within_its_share() {
        let mut member = MemberSchedule::new(4, 100);
        // Luby budgets of four policies (units of 4 x 100 nodes: 1, 1, 2, 1, 1, 2, 4, 1); the
        // member (share 2: half of the policies' work) runs while its doubling budgets (200,
        // 400, ...) stay within half of theirs.
        let granted: Vec<Option<u64>> = [1, 1, 2, 1, 1, 2, 4, 1]
            .iter()
            .map(|&luby| member.next_with(2.0, 0, &[400 * luby; 4]))
            .collect();
        let expected = [
            Some(200),
            Some(400),
            Some(800),
            Some(1600),
            None,
            Some(3200),
            None,
            None,
        ];
        assert_eq!(granted, expected);
        // Never more than its share, after every pass.
        assert!(member.member_total * 4 <= 2 * member.policy_total);
        // An overhead of 600 per run counts against the share: the second run waits a pass
        // (4 x (800 + 400 + 600) is above half of 3,200 policy nodes).
        let mut slow = MemberSchedule::new(4, 100);
        let granted: Vec<Option<u64>> = [1, 1, 2, 1]
            .iter()
            .map(|&luby| slow.next_with(2.0, 600, &[400 * luby; 4]))
            .collect();
        assert_eq!(granted, [Some(200), None, Some(400), Some(800)]);
        // Share 0: never.
        let mut none = MemberSchedule::new(4, 100);
        assert!((0..20).all(|_| none.next_with(0.0, 0, &[400; 4]).is_none()));
    }

    #[test]
    fn the_external_member_decides_in_its_round_with_any_thread_count() {
        // Its budgets double from 2 units (the policies': Luby, 4 units a run); with share 4
        // they keep within the policies' total, so it runs in each of the first rounds.
        for threads in [1, 2] {
            let (verdict, stats, budgets, unit) =
                search((threads, false), |unit| 16 * unit, |_| None);
            assert!(
                matches!(
                    verdict,
                    Verdict::Infeasible(Infeasibility::ProvenBySolver { solver: "oracle" })
                ),
                "threads {threads}"
            );
            assert_eq!(stats.policy.as_deref(), Some("oracle"));
            assert_eq!(
                budgets,
                [2 * unit, 4 * unit, 8 * unit, 16 * unit],
                "threads {threads}"
            );
            assert_eq!(stats.restarts, 19, "5 runs a round, the last one decides");
        }
    }

    #[test]
    fn a_node_limit_bounds_the_external_members_budget() {
        // Round 0: 4 policies x 4 units, 2 for the oracle; round 1: 4 x 4 and 4; round 2: the
        // 2 units left go to the first policy, none to the oracle (which does not run).
        let (verdict, stats, budgets, unit) =
            search((1, false), |_| u64::MAX, |unit| Some(40 * unit));
        assert!(matches!(verdict, Verdict::Limit));
        assert_eq!(budgets, [2 * unit, 4 * unit]);
        // The runs with the node each refused at its budget, and the oracle's budgets: the limit.
        assert_eq!(stats.nodes + 6 * unit, 40 * unit);
    }

    #[test]
    fn round_budgets_leave_room_for_the_node_each_run_refuses() {
        assert_eq!(round_budgets(&[5, 7], None, 100), Some(vec![5, 7]));
        // A limit the round does not reach: as asked.
        assert_eq!(round_budgets(&[5, 7], Some(114), 100), Some(vec![5, 7]));
        // 13 left: 5 and the node refused after them, then the 7 left; the third run none.
        assert_eq!(
            round_budgets(&[5, 7, 3], Some(113), 100),
            Some(vec![5, 7, 0])
        );
        assert_eq!(
            round_budgets(&[5, 7, 3], Some(110), 100),
            Some(vec![5, 4, 0])
        );
        assert_eq!(round_budgets(&[5], Some(100), 100), None);
        // The run granted the rest counts at most the rest.
        assert_eq!(count_within(8, Some(113), 106), 7);
        assert_eq!(count_within(6, Some(113), 100), 6);
        assert_eq!(count_within(8, None, 106), 8);
    }

    #[test]
    fn an_external_member_that_runs_first_decides_before_the_rounds_policies() {
        for threads in [1, 2] {
            let (verdict, stats, budgets, unit) =
                search((threads, true), |unit| 16 * unit, |_| None);
            assert!(
                matches!(verdict, Verdict::Infeasible(_)),
                "threads {threads}"
            );
            assert_eq!(
                budgets,
                [2 * unit, 4 * unit, 8 * unit, 16 * unit],
                "threads {threads}"
            );
            assert_eq!(
                stats.restarts, 15,
                "three rounds of 5 runs, then the oracle first"
            );
        }
    }
}
