//! The portfolio's members that the search runs itself: a node policy on the problem, a fixed
//! slack-filling member on its filled problem, or the lottery on a new draw each run; and one
//! run of any of them.

use crate::outcome::{Deadline, Infeasibility};
use crate::search::dfs::{Flow, RunLimits, Searcher, Stop};
use crate::search::instance::Instance;
use crate::search::judge::RunHooks;
use crate::search::observer::RunObserver;
use crate::search::options::SearchOptions;
use crate::search::policy::{FixedPolicy, NodePolicy, StaticOrder};
use crate::search::slack::{Drawer, Filled, Lottery, Shape, SlackFill};
use crate::search::state::State;
use crate::search::stats::SearchStats;
use crate::search::strategy::PortfolioSwitches;
use std::collections::HashSet;
use std::sync::atomic::Ordering;

/// How one run ended.
pub(super) enum RunEnd {
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

/// What a worker searches: the problem, one filled problem, or the lottery's draws.
pub(super) enum Kind<'i> {
    /// A node policy of the portfolio, on the problem.
    Policy,
    /// A fixed slack-filling member: its filled problem (see [`crate::search::slack`]).
    Filled {
        /// The filled problem.
        filled: &'i Filled,
        /// Whether a run was exhausted: its restriction has no layout, which proves nothing
        /// about the problem, so it runs no more.
        retired: bool,
    },
    /// The lottery member: each of its runs searches newly drawn filled problems.
    Lottery {
        /// Its draws so far.
        lottery: Lottery<'i>,
        /// The filled problem of its current draw.
        drawn: Option<Box<Filled>>,
        /// With `draw-lead`: the static order its draws are searched in (the round robin's
        /// first strategy's); the fixed policy otherwise.
        draw_order: Option<String>,
        /// Whether that fixed policy boosts conflicts.
        conflict_boost: bool,
    },
}

/// One member of the portfolio that the search runs: its kind, policy, search state and node
/// cache.
pub(super) struct Worker<'i> {
    pub(super) kind: Kind<'i>,
    pub(super) policy: Box<dyn NodePolicy>,
    state: State,
    /// The node cache of this policy's runs: a key decides the search below its node whatever
    /// run meets it (it includes the ranks), so a restart skips what earlier runs refuted.
    failed_nodes: HashSet<u128>,
}

impl<'i> Worker<'i> {
    /// A worker of `kind` running `policy` on `instance`.
    fn new(kind: Kind<'i>, policy: Box<dyn NodePolicy>, instance: &Instance) -> Worker<'i> {
        Worker {
            kind,
            policy,
            state: State::new(instance),
            failed_nodes: HashSet::new(),
        }
    }

    /// The name of this worker's runs: its policy's, or its shape's for a filled problem's.
    pub(super) fn name(&self) -> String {
        match &self.kind {
            Kind::Filled { filled, .. } => filled.shape.name().to_string(),
            Kind::Lottery { .. } => Shape::Drawn.name().to_string(),
            Kind::Policy => self.policy.name(),
        }
    }

    /// Whether it runs no more (a fixed member whose restriction was exhausted).
    pub(super) fn retired(&self) -> bool {
        matches!(self.kind, Kind::Filled { retired: true, .. })
    }

    /// Retires a fixed member.
    pub(super) fn retire(&mut self) {
        if let Kind::Filled { retired, .. } = &mut self.kind {
            *retired = true;
        }
    }

    /// Whether it is a slack-filling member (fixed or the lottery).
    pub(super) fn fills_slack(&self) -> bool {
        !matches!(self.kind, Kind::Policy)
    }

    /// How many of its problem's buffers are the problem's, for a filled problem's worker.
    pub(super) fn filled_buffers(&self) -> Option<usize> {
        match &self.kind {
            Kind::Filled { filled, .. } => Some(filled.buffers),
            Kind::Lottery { drawn, .. } => drawn.as_ref().map(|d| d.buffers),
            Kind::Policy => None,
        }
    }

    /// The lottery member's next draw: a new filled problem, with a fresh state, node cache and
    /// policy (its buffers differ from draw to draw): the static order of its draw order when
    /// there is one, the fixed policy otherwise. Nothing for the other kinds.
    pub(super) fn redraw(&mut self, distinct: bool, stop: &Deadline<'_>) {
        let Kind::Lottery {
            lottery,
            drawn,
            draw_order,
            conflict_boost,
        } = &mut self.kind
        else {
            return;
        };
        let filled = lottery.next_filled(distinct, stop);
        self.state = State::new(&filled.instance);
        self.failed_nodes.clear();
        let order = draw_order.as_deref().and_then(StaticOrder::new);
        self.policy = match order {
            Some(order) => Box::new(order),
            None => Box::new(FixedPolicy::new(
                filled.instance.sizes.len(),
                *conflict_boost,
            )),
        };
        *drawn = Some(Box::new(filled));
    }
}

/// The portfolio's workers: one per filled problem and the lottery's (restarts only: an
/// exhausted run of one proves nothing), then one per policy (only the first without restarts).
pub(super) fn workers_for<'i>(
    instance: &Instance,
    (restarts, switches): (bool, PortfolioSwitches),
    policies: Vec<Box<dyn NodePolicy>>,
    (filled, drawer): (&'i [Filled], Option<&'i Drawer<'i>>),
) -> Vec<Worker<'i>> {
    let draw_order = policies
        .first()
        .filter(|_| switches.draw_lead)
        .and_then(|lead| lead_order(&lead.name()));
    let mut workers: Vec<Worker> = policies
        .into_iter()
        .map(|policy| Worker::new(Kind::Policy, policy, instance))
        .collect();
    if !restarts {
        workers.truncate(1);
        return workers;
    }
    let filled_workers = filled.iter().map(|filled| {
        let policy = FixedPolicy::new(filled.instance.sizes.len(), switches.conflict_boost);
        let kind = Kind::Filled {
            filled,
            retired: false,
        };
        Worker::new(kind, Box::new(policy), &filled.instance)
    });
    // The lottery member's policy and state are replaced at each draw.
    let drawing = drawer.map(|drawer| {
        let kind = Kind::Lottery {
            lottery: Lottery::new(drawer),
            drawn: None,
            draw_order: draw_order.clone(),
            conflict_boost: switches.conflict_boost,
        };
        let policy = FixedPolicy::new(0, switches.conflict_boost);
        Worker::new(kind, Box::new(policy), instance)
    });
    filled_workers.chain(drawing).chain(workers).collect()
}

/// The plain static order of a strategy named `name` (`WAT~` gives `WAT`), if it is one.
pub(super) fn lead_order(name: &str) -> Option<String> {
    let word = name.trim_end_matches('~');
    StaticOrder::new(word).map(|_| word.to_string())
}

/// The names and runs per round of the slack-filling members among `workers`: one each, the
/// lottery's two with `double-lottery`.
pub(super) fn member_weights(
    workers: &[Worker<'_>],
    slack: &SlackFill<'_>,
) -> (Vec<String>, Vec<u64>) {
    let lottery = if slack.double_lottery { 2 } else { 1 };
    workers
        .iter()
        .filter(|w| w.fills_slack())
        .map(|w| {
            let runs = if matches!(w.kind, Kind::Lottery { .. }) {
                lottery
            } else {
                1
            };
            (w.name(), runs)
        })
        .unzip()
}

/// One run of `worker` within `limits` (a lottery worker's on a new draw). `instance` is the
/// problem's, or the worker's filled problem's.
pub(super) fn run_one(
    instance: &Instance,
    (options, distinct): (&SearchOptions, bool),
    worker: &mut Worker<'_>,
    (limits, learned): (RunLimits<'_>, RunHooks<'_>),
    observer: Option<Box<dyn RunObserver>>,
) -> (RunEnd, SearchStats, Option<Box<dyn RunObserver>>) {
    if limits
        .outranked
        .is_some_and(|(decided, me)| decided.load(Ordering::Relaxed) < me)
    {
        return (RunEnd::Outranked, SearchStats::default(), None);
    }
    // Before the run's setup (its root's propagation, the policy's order), which on a large
    // problem takes long before its first node looks at the clock.
    if limits.stop.passed() {
        return (RunEnd::Stopped, SearchStats::default(), None);
    }
    worker.redraw(distinct, &limits.stop);
    let Worker {
        kind,
        policy,
        state,
        failed_nodes,
    } = worker;
    let instance = match kind {
        Kind::Lottery {
            drawn: Some(drawn), ..
        } => &drawn.instance,
        Kind::Filled { filled, .. } => &filled.instance,
        _ => instance,
    };
    policy.on_run_start();
    let mut searcher = Searcher::new(
        instance,
        state,
        options,
        policy.as_mut(),
        (limits, learned),
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

/// One run of the lottery member: draws of at most `per_draw` nodes each, until one decides,
/// the run stops or its budget is spent (a refuted draw proves nothing: the next is drawn). The
/// counters add up over the draws.
pub(super) fn run_draws(
    instance: &Instance,
    (options, distinct): (&SearchOptions, bool),
    worker: &mut Worker<'_>,
    (limits, learned): (RunLimits<'_>, RunHooks<'_>),
    (mut observer, per_draw): (Option<Box<dyn RunObserver>>, u64),
) -> (RunEnd, SearchStats, Option<Box<dyn RunObserver>>) {
    let mut total = SearchStats::default();
    let mut left = limits.nodes;
    loop {
        let nodes = left.min(per_draw);
        let draw_limits = RunLimits { nodes, ..limits };
        let (end, stats, returned) = run_one(
            instance,
            (options, distinct),
            worker,
            (draw_limits, learned),
            observer,
        );
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
