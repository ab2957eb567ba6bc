//! Tests of the portfolio: rounds, weights, the external member, the slack-filling members.

use super::*;
use crate::generate::{perfect, CutStyle, PerfectOptions};
use crate::problem::Problem;
use crate::search::dfs::RunLimits;
use crate::search::external::MemberEnd;
use crate::search::observer::RunObserver;
use crate::search::options::Schedule;
use crate::search::policy::{FixedPolicy, StaticOrder};
use crate::search::slack::lottery::draw_budget;
use crate::search::slack::walk::sorted_cut;
use crate::search::slack::{Lottery, Members};
use crate::search::strategy::Portfolio;
use crate::search::RunJudge;
use std::sync::Mutex;
use worker::{lead_order, run_draws, Kind};

/// The portfolio switches of the tests that give no options: the default boosting and shares,
/// the lottery's draws by the fixed policy.
const PLAIN_SWITCHES: PortfolioSwitches = PortfolioSwitches {
    conflict_boost: true,
    shares: true,
    draw_lead: false,
};

/// The settings of a test run with nothing beside the policies: no clock, `node_limit`, no
/// observer, oracle, lottery or judge, and [`PLAIN_SWITCHES`].
fn plain_settings<'a>(node_limit: Option<u64>) -> RunSettings<'a> {
    RunSettings {
        stop: Deadline::none(),
        node_limit,
        observer: None,
        weights: Vec::new(),
        external: None,
        filled: &[],
        drawer: None,
        slack: SlackFill::default(),
        switches: PLAIN_SWITCHES,
        learned: &NO_HOOKS,
    }
}

/// No learned part.
static NO_HOOKS: LearnedHooks = LearnedHooks {
    hole_model: None,
    run_judge: None,
    placement_risk: None,
};

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
        external: Some(&oracle),
        ..plain_settings(node_limit)
    };
    let policies = Portfolio::round_robin(instance.sizes.len(), true, 0).policies;
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
    let settings = plain_settings(Some(nodes));
    let policies = Portfolio::round_robin(instance.sizes.len(), true, 0).policies;
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
        slack: SlackFill::new(options, None),
        switches: crate::policy_spec::configured(Portfolio::new(Vec::new()), options).switches,
        learned: &NO_HOOKS,
    };
    let policies = Portfolio::round_robin(instance.sizes.len(), true, 0).policies;
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
    let filled = crate::search::slack::members(
        &problem,
        &instance,
        SlackFill::default(),
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
    let switches = SlackFill::default();
    crate::search::slack::members(problem, instance, switches, &Deadline::none())
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
    let mut lottery = Lottery::new(drawer);
    for _ in 0..12 {
        lottery.next_filled(true, &Deadline::none());
    }
    assert_eq!(lottery.drawn_cuts.len(), 12, "every run a new cut");
    assert!(lottery.drawn_cuts.iter().all(|cut| !drawer.is_fixed(cut)));
    // Drawn again: the 12 new cuts took more draws than 12.
    assert!(
        lottery.draws >= 12 + repeats as u64,
        "{} draws",
        lottery.draws
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
        let switches = PortfolioSwitches {
            draw_lead,
            ..PLAIN_SWITCHES
        };
        let lead = StaticOrder::diversified(lead, 0).map_or_else(
            || Box::new(FixedPolicy::new(0, false)) as Box<dyn NodePolicy>,
            |order| Box::new(order) as Box<dyn NodePolicy>,
        );
        let members = (&[][..], Some(drawer));
        let mut worker = workers_for(&instance, (true, switches), vec![lead], members)
            .into_iter()
            .find(|w| matches!(w.kind, Kind::Lottery { .. }))
            .expect("the lottery's worker");
        worker.redraw(false, &Deadline::none());
        worker.policy.name()
    };
    assert_eq!(draw_policy("WAT", true), "WAT");
    assert_eq!(draw_policy("WAT", false), "fixed");
    assert_eq!(draw_policy("fixed", true), "fixed");
}

#[test]
fn a_lottery_run_makes_short_draws_until_its_budget_is_spent() {
    // Every draw counted once: no cut drawn again.
    let options = SearchOptions::default();
    let switches = crate::policy_spec::configured(Portfolio::new(Vec::new()), &options).switches;
    let (problem, instance) = lottery_packing();
    let members = lottery(&problem, &instance);
    let drawer = members.drawer.as_ref().expect("a lottery");
    let draws_and_nodes = |budget: u64, per_draw: u64| {
        let members = (&[][..], Some(drawer));
        let mut worker = workers_for(&instance, (true, switches), Vec::new(), members)
            .pop()
            .expect("the lottery's worker");
        let limits = RunLimits {
            nodes: budget,
            stop: Deadline::none(),
            outranked: None,
        };
        let how = (&options, false);
        let limits = (limits, NO_HOOKS.for_run(false));
        let (end, stats, _) = run_draws(&instance, how, &mut worker, limits, (None, per_draw));
        assert!(
            matches!(end, RunEnd::Budget),
            "not decided in 5 nodes a draw"
        );
        let Kind::Lottery { lottery, .. } = &worker.kind else {
            panic!("the lottery's worker");
        };
        (lottery.draws, stats.nodes)
    };
    // 200 buffers are not placed in 5 nodes: every draw runs to its budget, and counts the
    // node it stops at (6 a draw, as any run counts one node beyond its budget).
    assert_eq!(draws_and_nodes(60, 5), (10, 60));
    // The last draw gets what is left (2 nodes, counted 3): one node beyond, as one run.
    assert_eq!(draws_and_nodes(50, 5), (9, 51));
    // One draw at the run's whole budget without the switch.
    assert_eq!(draws_and_nodes(50, u64::MAX), (1, 51));
    assert_eq!(draw_budget(true, 200), 400);
    assert_eq!(draw_budget(false, 200), u64::MAX);
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
        shape: crate::search::slack::Shape::Nested,
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
fn with_gaps_the_search_decides_alike_with_and_without_stored_neighbour_lists() {
    // Without the lists the search reads the neighbours and their distances from the sections
    // and the pieces: every decision, conflict and count must stay the same.
    let mut searched = 0;
    for seed in 0..40u64 {
        let problem = crate::generate::random_gapped(seed);
        let load = crate::analysis::load(&problem);
        for capacity in [load, load + load / 8] {
            let with_lists = Instance::new(&problem, capacity);
            let mut without = Instance::new(&problem, capacity);
            without.drop_neighbour_lists();
            let options = SearchOptions::default().for_gaps();
            let expected = counted(&with_lists, &options, 3000);
            searched += expected.2[0];
            let label = format!("seed {seed}, capacity {capacity}");
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
        let (verdict, stats, budgets, unit) = search((threads, false), |unit| 16 * unit, |_| None);
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
    let (verdict, stats, budgets, unit) = search((1, false), |_| u64::MAX, |unit| Some(40 * unit));
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
        let (verdict, stats, budgets, unit) = search((threads, true), |unit| 16 * unit, |_| None);
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

/// A restart model that predicts every run doomed: it ends each run it may end at the run's
/// first checkpoint.
fn dooming_model() -> crate::learned::RestartModel {
    use crate::learned::DenseLayer;
    use crate::search::features::{RUN_FEATURES, RUN_FEATURE_SCHEMA_VERSION};
    let model = crate::learned::RestartModel {
        format: crate::learned::restart_model::RESTART_MODEL_FORMAT.into(),
        version: crate::learned::restart_model::RESTART_MODEL_FORMAT_VERSION,
        feature_schema: RUN_FEATURE_SCHEMA_VERSION,
        features: RUN_FEATURES.iter().map(|s| s.to_string()).collect(),
        layers: vec![DenseLayer {
            inputs: RUN_FEATURES.len(),
            outputs: 1,
            weights: vec![0.0; RUN_FEATURES.len()],
            bias: vec![10.0],
        }],
        threshold: 0.5,
        training: serde_json::Value::Null,
    };
    model.check().expect("a usable model");
    model
}

#[test]
fn the_restart_model_ends_only_runs_within_their_workers_largest_budget() {
    let instance = instance();
    let n = instance.free.len();
    let options = SearchOptions::default();
    let model: &'static dyn RunJudge = Box::leak(Box::new(dooming_model()));
    let learned = LearnedHooks {
        run_judge: Some(model),
        ..LearnedHooks::default()
    };
    let mut log = RunLog(Vec::new());
    let settings = RunSettings {
        observer: Some(&mut log),
        learned: &learned,
        ..plain_settings(Some(40_000))
    };
    let policies = Portfolio::round_robin(instance.sizes.len(), true, 0).policies;
    let mut stats = SearchStats::default();
    run(&instance, &options, policies, settings, &mut stats);
    assert!(stats.doomed_runs > 0, "no run was ended early");
    // Each policy's runs follow its own Luby schedule: the k-th run's budget is
    // budget(Luby, k); one within an earlier budget of the same policy ends at its first
    // checkpoint (every max(n / 2, 32) nodes), the others run to their budget (or decide).
    let stride = (n as u64 / 2).max(32);
    let runs = log.0.len();
    let mut own: std::collections::HashMap<String, (u32, u64)> = Default::default();
    let mut ended_early = 0;
    for (i, (policy, nodes)) in log.0.iter().enumerate() {
        let (k, largest) = own.entry(policy.clone()).or_default();
        let budget = budget(Schedule::Luby, *k, n);
        if i + 1 == runs {
            // The run that decided, or the one the node limit cut.
            assert!(*nodes <= budget + 1);
            ended_early += u64::from(budget <= *largest && *nodes == stride);
        } else if budget <= *largest {
            assert_eq!(*nodes, stride, "run {i} ({policy}) may end early");
            ended_early += 1;
        } else {
            assert_eq!(*nodes, budget + 1, "run {i} ({policy}) runs to its budget");
        }
        *k += 1;
        *largest = (*largest).max(budget);
    }
    assert_eq!(stats.doomed_runs, ended_early);
}
