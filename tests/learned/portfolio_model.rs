//! The learned portfolio head: problem features, the head's file format and checks, the order it
//! gives the portfolio, the portfolio a learned policy name stands for, and that a learned
//! portfolio search (any ranking, any lead) keeps the fixed policy's verdicts with valid solutions.

use crate::support as common;

use common::{
    brute_force_optimum, check_against_optimum, naive_load, perfect_problem, tight_problem,
    tiny_problem, without_heuristics, TinyShape,
};
use std::sync::Arc;
use telamalloc::generate::{perfect, CutStyle, PerfectOptions};
use telamalloc::learned::{
    DenseLayer, LearnedPolicy, ModelError, ModelFile, Network, Normalisation, PortfolioHead,
    PortfolioNetwork, PortfolioRanker, ShareSchedule,
};
use telamalloc::search::{
    FixedPolicy, NodePolicy, Portfolio, RootNode, SearchOptions, StrategyPlan, StrategyRanker,
};
use telamalloc::search::{PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION};
use telamalloc::{
    validate, Allocation, BuiltPortfolio, Goal, Limits, PolicySpec, Problem, Solver, Status,
};

const STRATEGIES: [&str; 4] = ["fixed", "WAT", "TAW", "TWA"];

/// A head without hidden layers whose scores are `bias` whatever the problem.
fn constant_head(bias: [f32; 4], lead: u32) -> PortfolioHead {
    let n = PROBLEM_FEATURES.len();
    PortfolioHead {
        feature_schema_version: PROBLEM_FEATURE_SCHEMA_VERSION,
        features: PROBLEM_FEATURES.iter().map(|s| s.to_string()).collect(),
        strategies: STRATEGIES.iter().map(|s| s.to_string()).collect(),
        normalisation: Normalisation {
            mean: vec![0.0; n],
            std: vec![1.0; n],
        },
        hidden: Vec::new(),
        output: DenseLayer {
            inputs: n,
            outputs: 4,
            weights: vec![0.0; n * 4],
            bias: bias.to_vec(),
        },
        lead,
        confidence_lead: false,
        shares: None,
    }
}

/// A model whose candidate head keeps the fixed order, with `head` as its portfolio head.
fn model_with(head: PortfolioHead) -> ModelFile {
    let mut model = ModelFile::linear(&[], 0.0);
    model.rank_candidates = false;
    model.portfolio = Some(head);
    model
}

/// The portfolio a policy name stands for, on a problem of `buffers` buffers.
fn built(name: &str, buffers: usize, options: &SearchOptions) -> BuiltPortfolio {
    name.parse::<PolicySpec>()
        .unwrap_or_else(|e| panic!("{e}"))
        .build(buffers, options)
}

/// The one policy a name stands for (`fixed` or an order word).
fn single(name: &str, buffers: usize, options: &SearchOptions) -> Box<dyn NodePolicy> {
    let mut portfolio = built(name, buffers, options).portfolio;
    assert_eq!(portfolio.policies.len(), 1, "{name}");
    portfolio.policies.pop().expect("one policy")
}

/// The ranker of the portfolio head in `model` (through the network, as a learned spec builds
/// it), for a portfolio whose learned policy is named `learned`.
fn ranker_of(model: &ModelFile) -> Option<PortfolioRanker> {
    let network = Network::new(model).ok()?;
    let head = network.portfolio()?.clone();
    Some(PortfolioRanker::new(Arc::new(head), "learned"))
}

/// The learned portfolio of `model` on a problem of `buffers` buffers: the learned policy, the
/// head's other strategies by name, and the head as the ranker.
fn learned_portfolio(model: &ModelFile, buffers: usize, options: &SearchOptions) -> Portfolio {
    let learned = LearnedPolicy::from_model(model.clone(), buffers, true);
    let mut policies: Vec<Box<dyn NodePolicy>> = vec![Box::new(learned)];
    for s in &STRATEGIES[1..] {
        policies.push(single(s, buffers, options));
    }
    Portfolio {
        policies,
        ranker: ranker_of(model).map(|r| Box::new(r) as Box<dyn StrategyRanker>),
    }
}

/// Fits `capacity` with the portfolio `factory` makes, under `options` and `limits`.
fn solve_with(
    problem: &Problem,
    capacity: u64,
    options: &SearchOptions,
    limits: Limits,
    factory: impl Fn(usize, &SearchOptions) -> Portfolio + Send + Sync + 'static,
) -> Allocation {
    Solver::new()
        .options(options.clone())
        .limits(limits)
        .portfolio(factory)
        .solve(problem, Goal::Fit(capacity))
        .expect("a well-formed problem")
}

#[test]
fn problem_features_describe_the_problem() {
    let problem = perfect_problem(60, 3);
    let f = RootNode::new(&problem, 4096).problem_view().features();
    assert_eq!(f.len(), PROBLEM_FEATURES.len());
    assert!(f.iter().all(|v| v.is_finite()), "{f:?}");
    // A perfect packing at its capacity: the largest section total is the capacity.
    assert!(
        (f[1] - 1.0).abs() < 1e-6,
        "largest total / capacity {}",
        f[1]
    );
    assert!((f[0] - (61f32).ln() / 10.0).abs() < 1e-6);
    // Half the capacity: the ratio doubles.
    let half = RootNode::new(&problem, 2048).problem_view().features();
    assert!((half[1] - 2.0).abs() < 1e-6);
    assert!((half[6] - 2.0 * f[6]).abs() < 1e-6);
}

#[test]
fn head_round_trips_and_bad_heads_fall_back() {
    let model = model_with(constant_head([0.0, 1.0, 2.0, 3.0], 4));
    let text = model.to_json();
    let back = ModelFile::from_json(&text).expect("a valid head");
    assert_eq!(back, model);
    assert!(LearnedPolicy::from_model(back, 5, true)
        .fallback_reason()
        .is_none());

    type Break = Box<dyn Fn(&mut PortfolioHead)>;
    let broken: Vec<(&str, Break)> = vec![
        ("outputs", Box::new(|h| h.output.outputs = 3)),
        ("strategy", Box::new(|h| h.strategies[1] = "WXY".into())),
        ("twice", Box::new(|h| h.strategies[2] = "WAT".into())),
        ("lead 0", Box::new(|h| h.lead = 0)),
        ("lead 65", Box::new(|h| h.lead = 65)),
        ("std", Box::new(|h| h.normalisation.std[2] = 0.0)),
        ("nan", Box::new(|h| h.output.bias[0] = f32::NAN)),
        ("schema", Box::new(|h| h.feature_schema_version += 1)),
        (
            "names",
            Box::new(|h| h.features[0] = "something else".into()),
        ),
    ];
    let options = SearchOptions::default();
    let path = std::env::temp_dir().join(format!(
        "telamalloc-portfolio-broken-{}.json",
        std::process::id()
    ));
    for (what, breaks) in broken {
        let mut head = constant_head([0.0; 4], 4);
        breaks(&mut head);
        let model = model_with(head);
        let err = model.check().expect_err(what);
        if what == "schema" || what == "names" {
            assert!(
                matches!(err, ModelError::SchemaMismatch(_)),
                "{what}: {err}"
            );
        }
        let policy = LearnedPolicy::new(Ok(model.clone()), 5, true);
        assert!(policy.fallback_reason().is_some(), "{what}");
        // No head without a usable model: the learned policy runs alone, unranked, and says
        // why.
        assert!(Network::new(&model).is_err(), "{what}");
        assert!(ranker_of(&model).is_none(), "{what}");
        std::fs::write(&path, model.to_json()).expect("writable temp dir");
        let spec = built(&path.display().to_string(), 5, &options);
        assert_eq!(spec.portfolio.names(), ["learned"], "{what}");
        assert!(spec.portfolio.ranker.is_none(), "{what}");
        assert_eq!(spec.warnings.len(), 1, "{what}: {:?}", spec.warnings);
    }
    std::fs::remove_file(&path).ok();
}

#[test]
fn head_orders_the_portfolio() {
    let problem = perfect_problem(30, 1);
    let root = RootNode::new(&problem, 4096);
    let view = root.problem_view();
    let slots: Vec<String> = ["learned", "WAT", "TAW", "TWA"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let cases: [([f32; 4], [usize; 4]); 3] = [
        ([0.0, 0.0, 0.0, 5.0], [3, 0, 1, 2]),
        ([0.0; 4], [0, 1, 2, 3]),
        ([1.0, 3.0, 2.0, 0.0], [1, 2, 0, 3]),
    ];
    for (bias, expected) in cases {
        let head = constant_head(bias, 8);
        let network = PortfolioNetwork::new(&head).expect("valid");
        assert_eq!(network.lead(), 8);
        // The ranker holds no state: the lead comes with each problem's plan.
        let ranker = ranker_of(&model_with(head)).expect("a head");
        let StrategyPlan { order, weights } = ranker.rank(&view, &slots).expect("a head ranks");
        assert_eq!(order, expected.to_vec(), "bias {bias:?}");
        assert_eq!(weights, [8, 1, 1, 1]);
        // Names the head does not know go last, in their order.
        let mut more = slots.clone();
        more.insert(1, "ZWA".into());
        let order = ranker.rank(&view, &more).expect("a head ranks").order;
        assert_eq!(order.len(), 5);
        assert_eq!(order[4], 1, "bias {bias:?}: {order:?}");
    }
    // A confidence lead: p(first) / p(second) = e^(score gap), rounded, within 1 to the lead.
    for (gap, lead) in [(5f32.ln(), 5), (0.0, 1), (0.2, 1), (10.0, 16)] {
        let mut head = constant_head([0.0, gap, 0.0, 0.0], 16);
        head.confidence_lead = true;
        let ranker = ranker_of(&model_with(head)).expect("a head");
        let plan = ranker.rank(&view, &slots).expect("a head ranks");
        assert_eq!(plan.order[0], if gap > 0.0 { 1 } else { 0 });
        assert_eq!(plan.weights, [lead, 1, 1, 1], "gap {gap}");
    }
    // Without a head, no ranker: no preference, no lead.
    let plain = ModelFile::linear(&[], 0.0);
    assert!(Network::new(&plain).expect("valid").portfolio().is_none());
    assert!(ranker_of(&plain).is_none());
}

#[test]
fn share_schedules_give_every_strategy_a_bounded_share() {
    let problem = perfect_problem(30, 1);
    let root = RootNode::new(&problem, 4096);
    let view = root.problem_view();
    let slots: Vec<String> = ["learned", "WAT", "TAW", "TWA"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    // p = softmax(bias / temperature); share = max(p, floor); weight = share / least share.
    // (bias, temperature, floor, order, weights)
    type Case = ([f32; 4], f32, f32, [usize; 4], [u32; 4]);
    let cases: [Case; 5] = [
        // p = (1, 8, 1, 1) / 11: shares (0.1, 0.727, 0.1, 0.1).
        (
            [0.0, 8f32.ln(), 0.0, 0.0],
            1.0,
            0.1,
            [1, 0, 2, 3],
            [7, 1, 1, 1],
        ),
        // Twice the temperature: p = (1, 2.83, 1, 1) / 5.83, all above the floor.
        (
            [0.0, 8f32.ln(), 0.0, 0.0],
            2.0,
            0.1,
            [1, 0, 2, 3],
            [3, 1, 1, 1],
        ),
        // A floor of 1: the plain round robin, in the head's order.
        (
            [0.0, 8f32.ln(), 0.0, 0.0],
            1.0,
            1.0,
            [1, 0, 2, 3],
            [1, 1, 1, 1],
        ),
        // Two favourites: p = (4, 4, 1, 1) / 10 -> 4, 4, 1, 1.
        (
            [4f32.ln(), 0.0, 0.0, 4f32.ln()],
            1.0,
            0.05,
            [0, 3, 1, 2],
            [4, 4, 1, 1],
        ),
        // Certainty is capped: the least share is the floor, the weight at most 64.
        (
            [50.0, 0.0, 0.0, 0.0],
            1.0,
            0.001,
            [0, 1, 2, 3],
            [64, 1, 1, 1],
        ),
    ];
    for (bias, temperature, floor, order, weights) in cases {
        let mut head = constant_head(bias, 16);
        head.shares = Some(ShareSchedule { temperature, floor });
        let ranker = ranker_of(&model_with(head)).expect("a head");
        let plan = ranker.rank(&view, &slots).expect("a head ranks");
        assert_eq!(
            plan.order, order,
            "bias {bias:?} T {temperature} floor {floor}"
        );
        assert_eq!(
            plan.weights, weights,
            "bias {bias:?} T {temperature} floor {floor}"
        );
    }
    // A schedule that cannot be used is an error when the model is read.
    for (temperature, floor) in [(0.0, 0.1), (f32::NAN, 0.1), (1.0, 0.0), (1.0, 1.5)] {
        let mut head = constant_head([0.0; 4], 16);
        head.shares = Some(ShareSchedule { temperature, floor });
        assert!(
            matches!(PortfolioNetwork::new(&head), Err(ModelError::Malformed(_))),
            "T {temperature} floor {floor}"
        );
    }
}

#[test]
fn shared_budgets_still_return_valid_layouts() {
    // Weights change only how the runs interleave: with any shares, the learned portfolio
    // returns a valid layout of a feasible problem.
    let options = without_heuristics();
    for seed in 0..6u64 {
        let problem = perfect_problem(24 + 4 * seed as usize, seed);
        for (bias, floor) in [([3.0, 0.0, 0.0, 0.0], 0.05), ([0.0, 0.0, 0.0, 3.0], 0.2)] {
            let mut head = constant_head(bias, 16);
            head.shares = Some(ShareSchedule {
                temperature: 1.0,
                floor,
            });
            let path = std::env::temp_dir().join(format!(
                "telamalloc-shares-{}-{seed}-{floor}.json",
                std::process::id()
            ));
            std::fs::write(&path, model_with(head).to_json()).unwrap();
            let spec: PolicySpec = path.display().to_string().parse().unwrap();
            let result = Solver::new()
                .options(options.clone())
                .policy(spec)
                .nodes(200_000)
                .solve(&problem, Goal::Fit(4096))
                .expect("a well-formed problem");
            std::fs::remove_file(&path).ok();
            let solution = result
                .solution
                .as_ref()
                .expect("a perfect packing is feasible");
            let report = validate(&problem, solution, Some(4096));
            assert!(report.is_valid(), "seed {seed}: {report}");
            let weights = &result.search.as_ref().expect("searched").weights;
            assert_eq!(weights.len(), 4, "seed {seed}");
            assert!(
                weights[0] > 1 && weights[1..].iter().all(|&w| w == 1),
                "{weights:?}"
            );
        }
    }
}

#[test]
fn policy_names_stand_for_portfolios() {
    let options = SearchOptions::default();
    let path =
        std::env::temp_dir().join(format!("telamalloc-portfolio-{}.json", std::process::id()));
    std::fs::write(&path, model_with(constant_head([0.0; 4], 4)).to_json()).unwrap();
    let name = path.display().to_string();
    let with_head = built(&name, 10, &options);
    assert_eq!(
        with_head.portfolio.names(),
        ["learned", "WAT", "TAW", "TWA"]
    );
    assert!(with_head.portfolio.ranker.is_some(), "the head ranks them");
    assert!(with_head.warnings.is_empty(), "{:?}", with_head.warnings);
    std::fs::write(&path, ModelFile::linear(&[], 0.0).to_json()).unwrap();
    let without = built(&name, 10, &options);
    assert_eq!(without.portfolio.names(), ["learned"]);
    assert!(without.portfolio.ranker.is_none());
    std::fs::remove_file(&path).ok();
    // The default is the built-in model's portfolio, planned by its head (`learned-order`);
    // without it, the hand-made round robin in its order.
    let default = built("portfolio", 10, &options);
    assert_eq!(
        default.portfolio.names(),
        ["learned", "TWA", "TAW", "WAT", "TWA+", "WAT+", "TAW+", "ZAT", "ZAT+"]
    );
    assert!(default.portfolio.ranker.is_some());
    let hand_made = SearchOptions {
        learned_order: false,
        ..SearchOptions::default()
    };
    let hand_made = built("portfolio", 10, &hand_made).portfolio;
    assert_eq!(hand_made.names(), ["fixed", "WAT~", "TAW~", "TWA"]);
    assert!(hand_made.ranker.is_none());
    assert_eq!(built("TWA+", 10, &options).portfolio.names(), ["TWA+"]);
    assert_eq!(single("wat+", 10, &options).name(), "WAT+");
    assert_eq!(built("twa~", 10, &options).portfolio.names(), ["TWA~"]);
    assert_eq!(single("taw+~", 10, &options).name(), "TAW+~");
    assert_eq!("taw+~".parse::<PolicySpec>().unwrap().to_string(), "TAW+~");
    assert!("WQ+".parse::<PolicySpec>().is_err());
    assert!("nonsense".parse::<PolicySpec>().is_err());
}

#[test]
fn policies_joined_by_a_slash_are_a_round_robin() {
    let options = SearchOptions::default();
    let spec: PolicySpec = "twa/TWA~/twa+/fixed".parse().expect("a round robin");
    assert_eq!(spec.to_string(), "TWA/TWA~/TWA+/fixed");
    assert_eq!(
        built("TWA/TWA~/TWA+", 10, &options).portfolio.names(),
        ["TWA", "TWA~", "TWA+"]
    );
    for bad in [
        "TWA/TWA",
        "TWA/learned",
        "TWA/",
        "/TWA",
        "TWA/portfolio",
        "TWA/WQ",
    ] {
        assert!(bad.parse::<PolicySpec>().is_err(), "{bad}");
    }
    // A path ending in .json is a model file, slashes or not.
    assert!(matches!(
        "TWA/m.json".parse::<PolicySpec>(),
        Ok(PolicySpec::Learned { model: Some(_) })
    ));
    // The hand-made round robin written out searches exactly as `portfolio` without the
    // learned order.
    let limits = Limits {
        timeout: None,
        nodes: Some(200_000),
    };
    let mut restarted = 0;
    for seed in 0..12 {
        let problem = perfect_problem(80, seed);
        let solve = |spec: &str| {
            Solver::new()
                .options(SearchOptions {
                    heuristic_first: false,
                    learned_order: false,
                    // Without backjumps these problems go past the first round.
                    learned_backjump: false,
                    ..SearchOptions::default()
                })
                .limits(limits)
                .policy(spec.parse().expect("a policy"))
                .solve(&problem, Goal::Fit(4096))
                .expect("a well-formed problem")
        };
        let (default, written) = (solve("portfolio"), solve("fixed/WAT~/TAW~/TWA"));
        assert_eq!(default.solution, written.solution, "seed {seed}");
        let (default, written) = (default.search.unwrap(), written.search.unwrap());
        assert_eq!(default.nodes, written.nodes, "seed {seed}");
        assert_eq!(default.policy, written.policy, "seed {seed}");
        restarted += usize::from(default.restarts > 4);
    }
    assert!(restarted > 0, "no problem went past the first round");
}

#[test]
fn boosted_order_with_the_fixed_keys_is_the_fixed_policy() {
    // WZA+ is the fixed policy under another name: same search, same answer, same nodes.
    let options = SearchOptions {
        heuristic_first: false,
        ..SearchOptions::default()
    };
    let limits = Limits {
        timeout: None,
        nodes: Some(200_000),
    };
    let mut compared = 0;
    for seed in 0..12 {
        let problem = perfect_problem(80, seed);
        let fixed = solve_with(&problem, 4096, &options, limits, |n, _| {
            Portfolio::single(Box::new(FixedPolicy::new(n, true)))
        });
        let boosted = solve_with(&problem, 4096, &options, limits, |n, _| {
            Portfolio::single(Box::new(FixedPolicy::boosted("WZA", n).unwrap()))
        });
        assert_eq!(fixed.status, boosted.status, "seed {seed}");
        assert_eq!(fixed.solution, boosted.solution, "seed {seed}");
        let (fixed, boosted) = (fixed.search.unwrap(), boosted.search.unwrap());
        assert_eq!(fixed.nodes, boosted.nodes, "seed {seed}");
        compared += usize::from(fixed.restarts > 0);
    }
    assert!(
        compared > 0,
        "no problem needed a restart: the test tests little"
    );
}

#[test]
fn learned_portfolio_keeps_the_verdicts_and_returns_valid_solutions() {
    let options = SearchOptions {
        heuristic_first: false,
        ..SearchOptions::default()
    };
    let limits = Limits {
        timeout: None,
        nodes: Some(2_000_000),
    };
    let heads = [
        constant_head([0.0, 0.0, 0.0, 5.0], 16),
        constant_head([0.0, 4.0, 1.0, 0.0], 2),
        constant_head([3.0, 0.0, 1.0, 2.0], 1),
    ];
    let (mut solved, mut refuted) = (0, 0);
    for seed in 0..120u64 {
        let problem = tiny_problem(seed, TinyShape::default());
        let load = naive_load(&problem);
        for capacity in [load, load + 2] {
            let fixed = solve_with(&problem, capacity, &options, limits, |n, _| {
                Portfolio::single(Box::new(FixedPolicy::new(n, true)))
            });
            for (h, head) in heads.iter().enumerate() {
                let model = model_with(head.clone());
                let result = solve_with(&problem, capacity, &options, limits, move |n, o| {
                    learned_portfolio(&model, n, o)
                });
                assert_eq!(
                    result.status, fixed.status,
                    "seed {seed}, capacity {capacity}, head {h}"
                );
                match (&result.status, &result.solution) {
                    (Status::Solved, Some(solution)) => {
                        let report = validate(&problem, solution, Some(capacity));
                        assert!(report.is_valid(), "seed {seed}: {report}");
                        solved += 1;
                    }
                    (Status::Infeasible(_), _) => refuted += 1,
                    other => panic!("seed {seed}: {other:?}"),
                }
            }
        }
    }
    assert!(
        solved > 100 && refuted > 10,
        "solved {solved}, refuted {refuted}"
    );
}

#[test]
fn node_limit_is_exact_for_portfolios_threads_or_not() {
    // A perfect packing with 16 rectangles removed that no strategy, slack-filling member or
    // lottery draw solves within the limits below (with cover branching, slack filling decides
    // those with 7 removed in a few thousand nodes, and this one's seeds 402 and 403 too; with
    // ranked draws, seed 404 in 4,470).
    let (problem, _) = perfect(
        &PerfectOptions {
            capacity: 1 << 20,
            horizon: 1000,
            buffers: 250,
            style: CutStyle::NonGuillotine,
            remove: 16,
            alignment: 1024,
            cuts: Default::default(),
        },
        407,
    );
    let n = problem.len();
    for limit in [1_000u64, 7_777] {
        let mut answers = Vec::new();
        for threads in [1, 2] {
            let options = SearchOptions {
                heuristic_first: false,
                threads,
                ..SearchOptions::default()
            };
            let limits = Limits {
                timeout: None,
                nodes: Some(limit),
            };
            let model = model_with(constant_head([0.0, 0.0, 0.0, 5.0], 16));
            let lead = learned_portfolio(&model, n, &options);
            let default = built("portfolio", n, &options).portfolio;
            assert!(lead.ranker.is_some() && default.ranker.is_some());
            for portfolio in [lead, default] {
                let runs = portfolio.policies.len() as u64;
                let portfolio = std::sync::Mutex::new(Some(portfolio));
                // One solve: the factory hands over the portfolio built above.
                let result = solve_with(&problem, 1 << 20, &options, limits, move |_, _| {
                    portfolio.lock().unwrap().take().expect("one solve")
                });
                assert_eq!(result.status, Status::LimitReached, "limit {limit}");
                let stats = result.search.expect("the search ran");
                // Each run may count the node on which it stops.
                let restarts = stats.restarts + 1;
                assert!(
                    stats.nodes <= limit + restarts && stats.nodes >= limit,
                    "limit {limit}, threads {threads}: {} nodes over {restarts} runs of {runs}",
                    stats.nodes
                );
                answers.push(stats.nodes);
            }
        }
        assert_eq!(
            answers[0..2],
            answers[2..4],
            "threads changed the node counts"
        );
    }
}

#[test]
fn committed_model_runs_its_learned_portfolio() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models/policy.json");
    let model = ModelFile::load(&path).expect("the committed model loads");
    let head = model.portfolio.as_ref().expect("it has a portfolio head");
    let shipped = [
        "fixed", "TWA", "TAW", "WAT", "TWA+", "WAT+", "TAW+", "ZAT", "ZAT+",
    ];
    assert_eq!(head.strategies, shipped.map(String::from).to_vec());
    assert!(
        !model.rank_candidates,
        "the model card says the candidate head is off"
    );
    let name = path.display().to_string();
    let built = built(&name, 10, &SearchOptions::default());
    assert_eq!(
        built.portfolio.names(),
        ["learned", "TWA", "TAW", "WAT", "TWA+", "WAT+", "TAW+", "ZAT", "ZAT+"]
    );
    assert!(
        built.portfolio.ranker.is_some(),
        "the head ranks the portfolio"
    );
    assert!(built.warnings.is_empty(), "{:?}", built.warnings);
}

#[test]
fn default_portfolio_runs_the_built_in_heads_plan() {
    // The default (`learned-order`): the built-in model's portfolio, its strategies in the order
    // its head gives the problem (its own slot `fixed` running as `learned`); off, the hand-made
    // round robin, one run each per round.
    let network = Network::built_in().expect("the built-in model");
    let head = network.portfolio().expect("a portfolio head");
    let member = |strategy: &str| match strategy {
        "fixed" => "learned".to_string(),
        word => word.to_string(),
    };
    let hand_made = ["fixed", "WAT~", "TAW~", "TWA"].map(String::from).to_vec();
    let mut first_choices = std::collections::BTreeSet::new();
    for name in ["A", "C", "E", "K"] {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("datasets/challenging/{name}.1048576.csv"));
        let problem = telamalloc::io::read_problem(&path, None).expect("a hard-set problem");
        let capacity = problem.capacity.expect("its capacity");
        let features = RootNode::new(&problem, capacity).problem_view().features();
        let (ranked, _) = head.rank(&features);
        let expected: Vec<String> = ranked
            .iter()
            .map(|&i| member(&head.strategies()[i]))
            .collect();
        first_choices.insert(expected[0].clone());
        for (learned_order, order) in [(true, &expected), (false, &hand_made)] {
            let options = SearchOptions {
                learned_order,
                ..without_heuristics()
            };
            let result = Solver::new()
                .options(options)
                .nodes(400)
                .solve(&problem, Goal::Fit(capacity))
                .expect("a well-formed problem");
            // The slack-filling members run first in every round; the policies follow.
            let stats = result.search.expect("a search ran");
            let (policies, weights): (Vec<String>, Vec<u64>) = stats
                .portfolio
                .iter()
                .zip(&stats.weights)
                .filter(|(n, _)| !n.starts_with("slack-fill"))
                .map(|(n, &w)| (n.clone(), w))
                .unzip();
            assert_eq!(&policies, order, "{name}, learned order {learned_order}");
            if !learned_order {
                assert!(weights.iter().all(|&w| w == 1), "{name}: {weights:?}");
            }
        }
    }
    // The head does not always choose the same strategy on these four.
    assert!(first_choices.len() > 1, "{first_choices:?}");
}

#[test]
fn learned_order_agrees_with_brute_force_on_tiny_problems() {
    // Only the order of the round robin's members changes: on tiny problems, decided well
    // within the limit, it solves exactly at and above the optimum, with valid layouts.
    let (mut solved, mut refuted) = (0, 0);
    for seed in 0..300u64 {
        let problem = if seed % 2 == 0 {
            tight_problem(seed, 7)
        } else {
            tiny_problem(seed, TinyShape::default())
        };
        let optimum = brute_force_optimum(&problem).peak;
        for capacity in [optimum.saturating_sub(1).max(1), optimum] {
            let result = Solver::new()
                .options(without_heuristics())
                .nodes(200_000)
                .solve(&problem, Goal::Fit(capacity))
                .expect("a well-formed problem");
            let case = format!("seed {seed}");
            if check_against_optimum(&problem, capacity, optimum, result, &case) {
                solved += 1;
            } else {
                refuted += 1;
            }
        }
    }
    assert!(
        solved > 100 && refuted > 100,
        "{solved} solved, {refuted} refuted"
    );
}
