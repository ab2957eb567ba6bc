//! The learned portfolio head: problem features, the head's file format and checks, the order it
//! gives the portfolio, the portfolio a learned policy name stands for, and that a learned
//! portfolio search (any ranking, any lead) keeps the fixed policy's verdicts with valid solutions.

#[path = "search_support/mod.rs"]
mod common;

use common::{naive_load, perfect_problem, tiny_problem, TinyShape};
use telamalloc::allocate::Limits;
use telamalloc::generate::{perfect, CutStyle, PerfectOptions};
use telamalloc::search::features::{
    problem_features, PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION,
};
use telamalloc::search::learned::{
    DenseLayer, LearnedPolicy, ModelError, ModelFile, Normalisation,
};
use telamalloc::search::portfolio_model::{PortfolioHead, PortfolioNetwork};
use telamalloc::search::{
    policies_by_name, policy_by_name, search, FixedPolicy, Model, NodeView, Outcome, Policy,
    SearchOptions, State,
};
use telamalloc::validate;

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
    }
}

/// A model whose candidate head keeps the fixed order, with `head` as its portfolio head.
fn model_with(head: PortfolioHead) -> ModelFile {
    let mut model = ModelFile::linear(&[], 0.0);
    model.rank_candidates = false;
    model.portfolio = Some(head);
    model
}

fn names(policies: &[Box<dyn Policy>]) -> Vec<String> {
    policies.iter().map(|p| p.name()).collect()
}

#[test]
fn problem_features_describe_the_problem() {
    let problem = perfect_problem(60, 3);
    let model = Model::new(&problem, 4096);
    let f = problem_features(&model);
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
    let half = problem_features(&Model::new(&problem, 2048));
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
        let policy = LearnedPolicy::new(Ok(model), 5, true);
        assert!(policy.fallback_reason().is_some(), "{what}");
        assert!(policy.portfolio_strategies().is_empty(), "{what}");
    }
}

#[test]
fn head_orders_the_portfolio() {
    let problem = perfect_problem(30, 1);
    let model = Model::new(&problem, 4096);
    let state = State::new(&model);
    let view = NodeView {
        model: &model,
        state: &state,
        depth: 0,
        unplaced: model.free.len(),
    };
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
        let mut policy = LearnedPolicy::from_model(model_with(head), problem.len(), true);
        assert_eq!(
            policy.portfolio_lead(),
            1,
            "no lead before ranking a problem"
        );
        let order = policy.rank_portfolio(&view, &slots).expect("a head ranks");
        assert_eq!(order, expected.to_vec(), "bias {bias:?}");
        assert_eq!(policy.portfolio_lead(), 8);
        // Names the head does not know go last, in their order.
        let mut more = slots.clone();
        more.insert(1, "ZWA".into());
        let order = policy.rank_portfolio(&view, &more).expect("a head ranks");
        assert_eq!(order.len(), 5);
        assert_eq!(order[4], 1, "bias {bias:?}: {order:?}");
    }
    // A confidence lead: p(first) / p(second) = e^(score gap), rounded, within 1 to the lead.
    for (gap, lead) in [(5f32.ln(), 5), (0.0, 1), (0.2, 1), (10.0, 16)] {
        let mut head = constant_head([0.0, gap, 0.0, 0.0], 16);
        head.confidence_lead = true;
        let mut policy = LearnedPolicy::from_model(model_with(head), problem.len(), true);
        let order = policy.rank_portfolio(&view, &slots).expect("a head ranks");
        assert_eq!(order[0], if gap > 0.0 { 1 } else { 0 });
        assert_eq!(policy.portfolio_lead(), lead, "gap {gap}");
    }
    // Without a head, no preference.
    let mut plain = LearnedPolicy::from_model(ModelFile::linear(&[], 0.0), problem.len(), true);
    assert!(plain.rank_portfolio(&view, &slots).is_none());
    assert_eq!(plain.portfolio_lead(), 1);
}

#[test]
fn policy_names_stand_for_portfolios() {
    let options = SearchOptions::default();
    let path =
        std::env::temp_dir().join(format!("telamalloc-portfolio-{}.json", std::process::id()));
    std::fs::write(&path, model_with(constant_head([0.0; 4], 4)).to_json()).unwrap();
    let name = path.display().to_string();
    let with_head = policies_by_name(&name, 10, &options).expect("a model file");
    assert_eq!(names(&with_head), ["learned", "WAT", "TAW", "TWA"]);
    std::fs::write(&path, ModelFile::linear(&[], 0.0).to_json()).unwrap();
    let without = policies_by_name(&name, 10, &options).expect("a model file");
    assert_eq!(names(&without), ["learned"]);
    std::fs::remove_file(&path).ok();
    let default = policies_by_name("portfolio", 10, &options).expect("the default portfolio");
    assert_eq!(names(&default), ["fixed", "WAT", "TAW", "TWA"]);
    assert_eq!(
        names(&policies_by_name("TWA+", 10, &options).unwrap()),
        ["TWA+"]
    );
    assert_eq!(policy_by_name("wat+", 10, &options).unwrap().name(), "WAT+");
    assert!(policy_by_name("WQ+", 10, &options).is_none());
    assert!(policies_by_name("nonsense", 10, &options).is_none());
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
        let problem = perfect_problem(40, seed);
        let run =
            |policy: Box<dyn Policy>| search(&problem, 4096, &options, Some(vec![policy]), limits);
        let fixed = run(Box::new(FixedPolicy::new(problem.len(), true)));
        let boosted = run(Box::new(
            FixedPolicy::boosted("WZA", problem.len()).unwrap(),
        ));
        assert_eq!(fixed.outcome, boosted.outcome, "seed {seed}");
        assert_eq!(fixed.stats.nodes, boosted.stats.nodes, "seed {seed}");
        compared += usize::from(fixed.stats.restarts > 0);
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
            let n = problem.len();
            let fixed = search(
                &problem,
                capacity,
                &options,
                Some(vec![Box::new(FixedPolicy::new(n, true))]),
                limits,
            );
            for (h, head) in heads.iter().enumerate() {
                let learned = LearnedPolicy::from_model(model_with(head.clone()), n, true);
                let mut policies: Vec<Box<dyn Policy>> = vec![Box::new(learned)];
                for s in &STRATEGIES[1..] {
                    policies.push(policy_by_name(s, n, &options).unwrap());
                }
                let result = search(&problem, capacity, &options, Some(policies), limits);
                assert_eq!(
                    result.outcome.status(),
                    fixed.outcome.status(),
                    "seed {seed}, capacity {capacity}, head {h}"
                );
                match &result.outcome {
                    Outcome::Solved(solution) => {
                        let report = validate(&problem, solution, Some(capacity));
                        assert!(report.is_valid(), "seed {seed}: {report}");
                        solved += 1;
                    }
                    Outcome::Infeasible(_) => refuted += 1,
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
    // A perfect packing that no strategy solves within 50,000 nodes (the synthetic corpus's
    // perfect.n150.mixed.s9).
    let (problem, _) = perfect(
        &PerfectOptions {
            capacity: 1 << 20,
            horizon: 1024,
            buffers: 150,
            style: CutStyle::Mixed,
            remove: 0,
            alignment: 1024,
        },
        9,
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
            let learned = LearnedPolicy::from_model(
                model_with(constant_head([0.0, 0.0, 0.0, 5.0], 16)),
                n,
                true,
            );
            let mut lead: Vec<Box<dyn Policy>> = vec![Box::new(learned)];
            for s in &STRATEGIES[1..] {
                lead.push(policy_by_name(s, n, &options).unwrap());
            }
            for policies in [lead, policies_by_name("portfolio", n, &options).unwrap()] {
                let runs = policies.len() as u64;
                let result = search(&problem, 1 << 20, &options, Some(policies), limits);
                assert_eq!(result.outcome, Outcome::LimitReached, "limit {limit}");
                // Each run may count the node on which it stops.
                let restarts = result.stats.restarts + 1;
                assert!(
                    result.stats.nodes <= limit + restarts && result.stats.nodes >= limit,
                    "limit {limit}, threads {threads}: {} nodes over {restarts} runs of {runs}",
                    result.stats.nodes
                );
                answers.push(result.stats.nodes);
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
    assert_eq!(head.strategies, STRATEGIES.map(String::from).to_vec());
    assert!(
        !model.rank_candidates,
        "the model card says the candidate head is off"
    );
    let name = path.display().to_string();
    let policies = policies_by_name(&name, 10, &SearchOptions::default()).expect("a model file");
    assert_eq!(names(&policies), ["learned", "WAT", "TAW", "TWA"]);
}
