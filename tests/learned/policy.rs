//! The learned policy's inference side (no training framework needed): the model file
//! round-trips, a hand-made model that scores like the fixed order searches exactly like the
//! fixed policy, a model that cannot be used falls back to the fixed policy with a warning
//! naming the reason (the solver refuses such a file), and a learned search returns only valid
//! solutions and the same verdicts as the fixed one.

use crate::support as common;

use common::{naive_load, perfect_problem, tiny_problem, TinyShape};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::path::PathBuf;
use telamalloc::generate::{random, RandomOptions};
use telamalloc::learned::{
    fallback_warning, DenseLayer, LearnedPolicy, ModelError, ModelFile, Network, BUILT_IN_MODEL,
    DEFAULT_MODEL_PATH,
};
use telamalloc::search::{
    Candidate, FixedPolicy, NodePolicy, NodeView, Portfolio, RootNode, SearchOptions,
};
use telamalloc::search::{CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION};
use telamalloc::{
    validate, Allocation, Goal, Limits, PolicySpec, Problem, SearchStats, Solution, Solver, Status,
};

const WIDTH: usize = CANDIDATE_FEATURES.len();
/// Index of "offset / capacity" and "static rank / unplaced buffers" in the features.
const OFFSET: usize = 3;
const RANK: usize = 7;

fn options(boost: bool) -> SearchOptions {
    SearchOptions {
        heuristic_first: false,
        conflict_boost: boost,
        ..SearchOptions::default()
    }
}

fn limits(nodes: u64) -> Limits {
    Limits {
        timeout: None,
        nodes: Some(nodes),
    }
}

/// A temporary file path unique to this test process and `name`.
fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("telamalloc-learned-{}-{name}", std::process::id()))
}

/// A model with two hidden layers and a risk head, weights drawn from `seed`.
fn random_mlp(seed: u64, margin: f32) -> ModelFile {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut layer = |inputs: usize, outputs: usize| DenseLayer {
        inputs,
        outputs,
        weights: (0..inputs * outputs)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect(),
        bias: (0..outputs)
            .map(|_| rng.random_range(-0.1f32..0.1))
            .collect(),
    };
    let hidden = vec![layer(WIDTH, 16), layer(16, 8)];
    let score = layer(8, 1);
    let risk = layer(8, 1);
    let mut model = ModelFile::linear(&[0.0; WIDTH], margin);
    model.normalisation.mean = (0..WIDTH).map(|k| 0.1 * k as f32).collect();
    model.normalisation.std = (0..WIDTH).map(|k| 0.5 + 0.1 * k as f32).collect();
    model.hidden = hidden;
    model.score = score;
    model.risk = Some(risk);
    model.training.data_hash = "0123456789abcdef".into();
    model.metrics.insert("validation_top1".into(), 0.75);
    model
}

/// Scores like the fixed order without conflict boosting: lowest offset first, then the best
/// static rank. The offset weight beats any rank term on the problems below (capacity at most
/// 4096, fewer than 200 buffers), and rounding keeps the order monotone, so the stable sort
/// reproduces the fixed order exactly.
fn fixed_like_model() -> ModelFile {
    let mut weights = [0.0f32; WIDTH];
    weights[OFFSET] = -1.0e6;
    weights[RANK] = -1.0;
    ModelFile::linear(&weights, 0.0)
}

/// A search's verdict and counters, as the tests compare them.
#[derive(Debug)]
struct Searched {
    /// How it ended.
    status: Status,
    /// The (validated) solution, when solved.
    solution: Option<Solution>,
    /// The search's counters.
    stats: SearchStats,
    /// The solver's warnings.
    warnings: Vec<String>,
}

impl Searched {
    fn of(allocation: Allocation) -> Searched {
        Searched {
            status: allocation.status,
            solution: allocation.solution,
            stats: allocation.search.expect("the search ran"),
            warnings: allocation.warnings,
        }
    }

    /// The verdict with its solution (what the old `Outcome` held).
    fn outcome(&self) -> (&Status, Option<&Solution>) {
        (&self.status, self.solution.as_ref())
    }
}

/// Fits `capacity` with `policy` alone (restarted with growing budgets), within `nodes`.
fn search_with<P: NodePolicy + Clone + Sync + 'static>(
    problem: &Problem,
    capacity: u64,
    policy: P,
    options: &SearchOptions,
    nodes: u64,
) -> Searched {
    let solver = Solver::new()
        .options(options.clone())
        .limits(limits(nodes))
        .portfolio(move |_, _| Portfolio::single(Box::new(policy.clone())));
    Searched::of(
        solver
            .solve(problem, Goal::Fit(capacity))
            .expect("a well-formed problem"),
    )
}

/// Fits the problem's own capacity with `policy` alone.
fn run<P: NodePolicy + Clone + Sync + 'static>(
    problem: &Problem,
    policy: P,
    options: &SearchOptions,
    nodes: u64,
) -> Searched {
    let capacity = problem.capacity.expect("generated with a capacity");
    search_with(problem, capacity, policy, options, nodes)
}

/// Fits the problem's own capacity with the policies of `spec`, within `nodes`.
fn run_spec(problem: &Problem, spec: PolicySpec, options: &SearchOptions, nodes: u64) -> Searched {
    let capacity = problem.capacity.expect("generated with a capacity");
    let solver = Solver::new()
        .options(options.clone())
        .limits(limits(nodes))
        .policy(spec);
    Searched::of(
        solver
            .solve(problem, Goal::Fit(capacity))
            .expect("a well-formed problem"),
    )
}

fn solution_of(result: &Searched) -> Option<&Vec<u64>> {
    result.solution.as_ref().map(|s| &s.offsets)
}

#[test]
fn model_file_round_trips() {
    let model = random_mlp(7, 0.25);
    model.check().expect("a well-formed model");
    let text = model.to_json();
    let back = ModelFile::from_json(&text).expect("parses back");
    assert_eq!(back, model);
    // Through a file, as the policy loads it.
    let path = temp_path("round-trip.json");
    std::fs::write(&path, &text).expect("writable temp dir");
    assert_eq!(ModelFile::load(&path).expect("loads"), model);
    let policy = LearnedPolicy::from_path(&path, 10, true).expect("a usable model file");
    assert_eq!(policy.fallback_reason(), None);
    assert_eq!(policy.warning(), None);
    let _ = std::fs::remove_file(&path);
    assert_eq!(
        model.parameters(),
        WIDTH * 16 + 16 + 16 * 8 + 8 + 8 + 1 + 8 + 1
    );
}

#[test]
fn fixed_like_model_searches_exactly_like_the_fixed_policy() {
    let options = options(false);
    let mut compared = 0;
    for seed in 0..12 {
        for buffers in [30, 60, 90] {
            let problem = perfect_problem(buffers, seed);
            let n = problem.len();
            let fixed = run(&problem, FixedPolicy::new(n, false), &options, 20_000);
            let learned = LearnedPolicy::from_model(fixed_like_model(), n, false);
            assert!(learned.fallback_reason().is_none());
            let learned = run(&problem, learned, &options, 20_000);
            assert_eq!(
                learned.outcome(),
                fixed.outcome(),
                "seed {seed}, {buffers} buffers"
            );
            assert_eq!(
                learned.stats.nodes, fixed.stats.nodes,
                "seed {seed}, {buffers} buffers"
            );
            assert_eq!(learned.stats.minor_backtracks, fixed.stats.minor_backtracks);
            compared += (fixed.stats.minor_backtracks > 0) as usize;
        }
    }
    // The comparison means something only if the search had to backtrack somewhere.
    assert!(compared > 3, "only {compared} searches backtracked");
}

#[test]
fn offset_model_keeps_conflict_boosting() {
    // With boosting on, the fixed policy orders by (offset, activity, rank); a model that only
    // prefers low offsets leaves ties in that order, so the search is the same.
    let options = options(true);
    let mut weights = [0.0f32; WIDTH];
    weights[OFFSET] = -1.0e6;
    for seed in 0..12 {
        let problem = perfect_problem(70, seed);
        let n = problem.len();
        let fixed = run(&problem, FixedPolicy::new(n, true), &options, 20_000);
        let learned = LearnedPolicy::from_model(ModelFile::linear(&weights, 0.0), n, true);
        let learned = run(&problem, learned, &options, 20_000);
        assert_eq!(learned.outcome(), fixed.outcome(), "seed {seed}");
        assert_eq!(learned.stats.nodes, fixed.stats.nodes, "seed {seed}");
    }
}

#[test]
fn unsure_model_keeps_the_fixed_order() {
    // A margin no score gap reaches: the model never decides.
    let options = options(true);
    for seed in 0..6 {
        let problem = perfect_problem(60, seed);
        let n = problem.len();
        let fixed = run(&problem, FixedPolicy::new(n, true), &options, 20_000);
        let learned = LearnedPolicy::from_model(random_mlp(seed, 1.0e30), n, true);
        let learned = run(&problem, learned, &options, 20_000);
        assert_eq!(learned.outcome(), fixed.outcome());
        assert_eq!(learned.stats.nodes, fixed.stats.nodes);
    }
}

#[test]
fn schema_mismatch_falls_back_to_the_fixed_policy_with_a_warning_but_the_solver_refuses_it() {
    let mut model = fixed_like_model();
    model.feature_schema_version = FEATURE_SCHEMA_VERSION + 1;
    let path = temp_path("mismatch.json");
    std::fs::write(&path, model.to_json()).expect("writable temp dir");
    assert!(matches!(
        ModelFile::load(&path),
        Err(ModelError::SchemaMismatch(_))
    ));
    // Asked for by path, the file is an error; loaded with a fallback, the fixed policy runs.
    assert!(matches!(
        LearnedPolicy::from_path(&path, 0, true),
        Err(ModelError::SchemaMismatch(_))
    ));
    let policy = LearnedPolicy::new(ModelFile::load(&path), 0, true);
    let reason = policy.fallback_reason().expect("falls back").to_string();
    assert!(reason.contains("feature schema"), "{reason}");
    assert!(
        reason.contains(&format!("{}", FEATURE_SCHEMA_VERSION + 1)),
        "{reason}"
    );
    let warning = policy.warning().expect("a warning");
    assert_eq!(warning, fallback_warning(&reason));
    assert!(
        warning.contains("fixed policy") && warning.contains(&reason),
        "{warning}"
    );
    assert!(policy.network().is_none());

    // Renamed features are a mismatch too.
    let mut renamed = fixed_like_model();
    renamed.features[0] = "something else".into();
    let policy = LearnedPolicy::new(renamed.check().map(|_| renamed.clone()), 0, true);
    assert!(policy.fallback_reason().unwrap().contains("feature schema"));

    // The fallback searches exactly as the fixed policy, boosting included.
    let options = options(true);
    let path_name = path.to_string_lossy().to_string();
    let by_name: PolicySpec = path_name.parse().expect("a .json path is a policy");
    for seed in 0..8 {
        let problem = perfect_problem(70, seed);
        let n = problem.len();
        let fixed = run(&problem, FixedPolicy::new(n, true), &options, 20_000);
        let built = by_name.build(n, &options);
        assert_eq!(built.portfolio.names(), ["learned"]);
        assert!(built.portfolio.ranker.is_none());
        assert_eq!(built.warnings, vec![warning.clone()]);
        let learned = run(
            &problem,
            LearnedPolicy::new(ModelFile::load(&path), n, true),
            &options,
            20_000,
        );
        assert_eq!(learned.outcome(), fixed.outcome(), "seed {seed}");
        assert_eq!(learned.stats.nodes, fixed.stats.nodes, "seed {seed}");
    }
    // The front door does not run a model file it cannot use: the spec check and the solver
    // both say which file and why, and the solve gives no allocation.
    let (checked, why) = by_name.check().expect_err("a mismatched model");
    assert_eq!(checked, path);
    assert!(matches!(why, ModelError::SchemaMismatch(_)));
    let problem = perfect_problem(40, 1);
    let error = Solver::new()
        .policy(by_name.clone())
        .solve(&problem, Goal::Fit(problem.capacity.expect("capacity")))
        .expect_err("a model file that cannot be used is an error");
    let text = error.to_string();
    assert!(
        text.contains(&path_name) && text.contains("feature schema"),
        "{text}"
    );
    assert!(matches!(error, telamalloc::SolveError::Model { .. }));
    let missing: PolicySpec = "no/such/model.json".parse().expect("a path");
    let error = Solver::new()
        .policy(missing)
        .check_available()
        .expect_err("a missing model file");
    assert_eq!(
        error.to_string(),
        "no policy model file at no/such/model.json"
    );
    assert!("learned".parse::<PolicySpec>().unwrap().check().is_ok());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn bad_model_files_never_panic() {
    let cases: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("garbage", "not json at all {".into()),
        (
            "wrong-format",
            fixed_like_model()
                .to_json()
                .replace("telamalloc-policy-model", "x"),
        ),
        ("truncated", {
            let t = random_mlp(1, 0.0).to_json();
            t[..t.len() / 2].to_string()
        }),
        ("wrong-shape", {
            let mut m = random_mlp(2, 0.0);
            m.hidden[1].weights.pop();
            m.to_json()
        }),
        ("chain-mismatch", {
            let mut m = random_mlp(3, 0.0);
            m.score.inputs = 5;
            m.to_json()
        }),
        ("zero-std", {
            let mut m = fixed_like_model();
            m.normalisation.std[2] = 0.0;
            m.to_json()
        }),
        ("two-outputs", {
            let mut m = fixed_like_model();
            m.score.outputs = 2;
            m.score.weights.extend([0.0; WIDTH]);
            m.score.bias.push(0.0);
            m.to_json()
        }),
        ("huge-shape", {
            let mut m = fixed_like_model();
            m.score.inputs = usize::MAX;
            m.to_json()
        }),
    ];
    let problem = perfect_problem(40, 1);
    let n = problem.len();
    let options = options(true);
    let fixed = run(&problem, FixedPolicy::new(n, true), &options, 20_000);
    for (name, text) in cases {
        let path = temp_path(&format!("{name}.json"));
        std::fs::write(&path, text).expect("writable temp dir");
        assert!(
            LearnedPolicy::from_path(&path, n, true).is_err(),
            "{name}: accepted by path"
        );
        let policy = LearnedPolicy::new(ModelFile::load(&path), n, true);
        let reason = policy.fallback_reason().map(str::to_string);
        assert!(reason.is_some(), "{name}: accepted");
        let result = run(&problem, policy, &options, 20_000);
        assert_eq!(result.outcome(), fixed.outcome(), "{name}");
        assert_eq!(result.stats.nodes, fixed.stats.nodes, "{name}");
        let _ = std::fs::remove_file(&path);
    }
    // No file at all.
    let gone = temp_path("does-not-exist.json");
    let error = LearnedPolicy::from_path(&gone, n, true).expect_err("no file, no policy");
    assert!(matches!(error, ModelError::Missing(_)), "{error}");
    let missing = LearnedPolicy::new(ModelFile::load(&gone), n, true);
    assert!(missing.fallback_reason().unwrap().contains("no model file"));
}

/// Small random problems at and around LOAD: the learned search (a random network that always
/// decides, so the order differs from the fixed one) gives the fixed search's verdicts and only
/// valid solutions.
#[test]
fn learned_search_gives_the_fixed_verdicts_and_valid_solutions() {
    const NODES: u64 = 2_000_000;
    let mut problems: Vec<(Problem, u64)> = Vec::new();
    for seed in 0..150u64 {
        let p = tiny_problem(seed, TinyShape::default());
        let load = naive_load(&p);
        for capacity in [load, load + 1, load + 3] {
            problems.push((p.clone(), capacity));
        }
    }
    for seed in 0..60u64 {
        let p = random(
            &RandomOptions {
                buffers: 8 + (seed % 7) as usize,
                horizon: 30,
                max_lifetime: 12,
                min_size: 1,
                max_size: 64,
                tightness: 1.0,
            },
            seed,
        );
        let capacity = p.capacity.expect("random sets a capacity");
        problems.push((p.clone(), capacity));
        problems.push((p, capacity + 2));
    }
    let mut solved = 0;
    let mut refuted = 0;
    let mut reordered = false;
    for (i, (problem, capacity)) in problems.iter().enumerate() {
        for boost in [true, false] {
            let options = options(boost);
            let n = problem.len();
            let fixed = search_with(
                problem,
                *capacity,
                FixedPolicy::new(n, boost),
                &options,
                NODES,
            );
            let policy = LearnedPolicy::from_model(random_mlp(i as u64, 0.0), n, boost);
            let learned = search_with(problem, *capacity, policy, &options, NODES);
            assert!(
                fixed.status != Status::LimitReached && learned.status != Status::LimitReached,
                "case {i}: a tiny search hit the node guard"
            );
            assert_eq!(
                learned.status, fixed.status,
                "case {i} (boost {boost}): verdicts differ"
            );
            if let Some(offsets) = solution_of(&learned) {
                let report = validate(
                    problem,
                    &Solution {
                        offsets: offsets.clone(),
                    },
                    Some(*capacity),
                );
                assert!(report.is_valid(), "case {i}: invalid solution\n{report}");
                solved += 1;
                reordered |= solution_of(&fixed) != Some(offsets);
            } else {
                refuted += 1;
            }
        }
    }
    assert!(
        solved > 100 && refuted > 10,
        "solved {solved}, refuted {refuted}"
    );
    assert!(
        reordered,
        "the random model never changed a solution: the test tests nothing"
    );
}

#[test]
fn scores_and_risk_come_from_one_batched_pass() {
    let problem = perfect_problem(60, 4);
    let capacity = problem.capacity.unwrap();
    let root = RootNode::new(&problem, capacity);
    let view = root.view();
    // The root's candidates, sorted by (offset, rank) as the search hands them to a policy.
    let candidates: Vec<Candidate> = root.candidates();
    assert_eq!(candidates.len(), problem.len(), "no fixed buffers");
    let mut policy = LearnedPolicy::from_model(random_mlp(9, 0.0), problem.len(), true);
    let scores = policy
        .score_candidates(&view, &candidates)
        .expect("a model");
    assert_eq!(scores.len(), candidates.len());
    // Each candidate scored alone gives the same number as in the batch.
    for (k, c) in candidates.iter().enumerate().take(5) {
        let alone = policy
            .score_candidates(&view, std::slice::from_ref(c))
            .unwrap();
        assert!((alone[0] - scores[k]).abs() <= 1e-4 * (1.0 + scores[k].abs()));
        let risk = policy.risk(&view, c).expect("a risk head");
        assert!((0.0..=1.0).contains(&risk));
    }
    // Margin 0: where the best-scored candidate is not the fixed first choice, the candidates
    // end up sorted by score; otherwise the fixed order stays.
    let mut ordered = candidates.clone();
    policy.order_candidates(&view, &mut ordered);
    let best = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if scores[0] == best {
        assert_eq!(ordered, candidates);
    } else {
        let reordered = policy.score_candidates(&view, &ordered).unwrap();
        assert!(reordered.to_vec().windows(2).all(|w| w[0] >= w[1]));
        assert_ne!(ordered, candidates);
    }
    // Without a risk head, no risk.
    let mut plain = LearnedPolicy::from_model(fixed_like_model(), problem.len(), true);
    assert_eq!(plain.risk(&view, &candidates[0]), None);
}

#[test]
fn learned_is_a_policy_name() {
    let options = options(true);
    let spec: PolicySpec = "learned".parse().expect("learned is a policy");
    assert_eq!(spec, PolicySpec::Learned { model: None });
    // The learned policy leads its portfolio (the committed model adds its head's strategies).
    let built = spec.build(5, &options);
    assert_eq!(built.portfolio.names()[0], "learned");
    let spec: PolicySpec = "some/model.JSON".parse().expect("a .json path is a policy");
    assert_eq!(
        spec,
        PolicySpec::Learned {
            model: Some(PathBuf::from("some/model.JSON"))
        }
    );
    // Built without the solver's check, a missing file gives the learned policy (as the fixed
    // one), with the reason; the solver refuses it (see the schema mismatch test).
    let built = spec.build(5, &options);
    assert_eq!(built.portfolio.names(), ["learned"]);
    assert_eq!(built.warnings.len(), 1, "{:?}", built.warnings);
    assert!(
        built.warnings[0].contains("no model file"),
        "{:?}",
        built.warnings
    );
    assert_eq!(DEFAULT_MODEL_PATH, "models/policy.json");
}

/// The committed model loads under this build's feature schema (a missing file fails).
#[test]
fn committed_model_loads() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_MODEL_PATH);
    assert!(
        path.is_file(),
        "{} is committed with the repository",
        path.display()
    );
    let model = ModelFile::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let policy = LearnedPolicy::from_model(model, 10, true);
    assert!(policy.fallback_reason().is_none());
}

/// The built-in model is the committed file byte for byte (a build that compiled in another file
/// fails here), and `learned` searches exactly as the file named by its path does: same verdicts,
/// solutions and node counts, no warnings.
#[test]
fn built_in_model_is_the_committed_file() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_MODEL_PATH);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        BUILT_IN_MODEL.as_bytes() == bytes.as_slice(),
        "the model compiled in differs from {}",
        path.display()
    );
    let from_file = ModelFile::load(&path).expect("the committed model loads");
    assert_eq!(
        ModelFile::built_in().expect("the built-in model"),
        from_file
    );
    assert!(LearnedPolicy::built_in(10, true)
        .fallback_reason()
        .is_none());
    let file_spec: PolicySpec = path.display().to_string().parse().expect("a .json path");
    assert_eq!(
        file_spec,
        PolicySpec::Learned {
            model: Some(path.clone())
        }
    );
    for seed in 0..12u64 {
        let problem = random(
            &RandomOptions {
                buffers: 20 + (seed % 5) as usize,
                horizon: 40,
                max_lifetime: 15,
                min_size: 1,
                max_size: 64,
                tightness: 1.0,
            },
            seed,
        );
        let options = options(true);
        let built_in = run_spec(
            &problem,
            PolicySpec::Learned { model: None },
            &options,
            3000,
        );
        let file = run_spec(&problem, file_spec.clone(), &options, 3000);
        assert!(built_in.warnings.is_empty(), "{:?}", built_in.warnings);
        assert!(file.warnings.is_empty(), "{:?}", file.warnings);
        assert_eq!(built_in.outcome(), file.outcome(), "seed {seed}");
        assert_eq!(built_in.stats.nodes, file.stats.nodes, "seed {seed}");
        assert_eq!(built_in.stats.policy, file.stats.policy, "seed {seed}");
    }
}

#[test]
fn order_prior_and_margin_decide_when_the_model_overrides() {
    use telamalloc::learned::Network;
    // Score = feature 0 (lifetime share); prior 1 per position; margin 0.5.
    let mut weights = [0.0f32; WIDTH];
    weights[0] = 10.0;
    let mut model = ModelFile::linear(&weights, 0.5);
    model.order_prior = 1.0;
    let network = Network::new(&model).expect("valid");
    let rows = |lifetimes: &[f32]| -> Vec<f32> {
        lifetimes
            .iter()
            .flat_map(|&l| {
                let mut row = [0.0f32; WIDTH];
                row[0] = l;
                row
            })
            .collect()
    };
    let view = |data: &Vec<f32>| {
        ndarray::ArrayView2::from_shape((data.len() / WIDTH, WIDTH), data.as_slice())
            .expect("rows")
            .to_owned()
    };
    // Ranking scores 0, 2 - 1 = 1, 0.5 - 2: the second beats the first by 1 >= 0.5.
    let a = rows(&[0.0, 0.2, 0.05]);
    let scores = network.ranking_scores(view(&a).view());
    assert_eq!(scores.to_vec(), vec![0.0, 1.0, -1.5]);
    assert_eq!(
        network.reorder(scores.as_slice().unwrap()),
        Some(vec![1, 0, 2])
    );
    // 0, 1.3 - 1 = 0.3: better, but by less than the margin: the fixed order stays.
    let b = rows(&[0.0, 0.13, 0.0]);
    let scores = network.ranking_scores(view(&b).view());
    assert_eq!(network.reorder(scores.as_slice().unwrap()), None);
    // The fixed first choice is the best: the fixed order stays, whatever follows.
    let c = rows(&[0.5, 0.0, 0.4]);
    let scores = network.ranking_scores(view(&c).view());
    assert_eq!(network.reorder(scores.as_slice().unwrap()), None);
    // Non-finite order prior: rejected.
    model.order_prior = f32::NAN;
    assert!(matches!(model.check(), Err(ModelError::Malformed(_))));
}

/// The forward pass by the book: normalise, each hidden layer and ReLU, the heads.
fn reference_forward(model: &ModelFile, x: &[f32]) -> (f32, Option<f32>) {
    let apply = |layer: &DenseLayer, input: &[f32]| -> Vec<f32> {
        (0..layer.outputs)
            .map(|j| {
                layer.bias[j]
                    + (0..layer.inputs)
                        .map(|i| input[i] * layer.weights[i * layer.outputs + j])
                        .sum::<f32>()
            })
            .collect()
    };
    let mut h: Vec<f32> = x
        .iter()
        .zip(
            model
                .normalisation
                .mean
                .iter()
                .zip(&model.normalisation.std),
        )
        .map(|(v, (m, s))| (v - m) / s)
        .collect();
    for layer in &model.hidden {
        h = apply(layer, &h).into_iter().map(|v| v.max(0.0)).collect();
    }
    let score = apply(&model.score, &h)[0];
    let risk = model
        .risk
        .as_ref()
        .map(|r| 1.0 / (1.0 + (-apply(r, &h)[0]).exp()));
    (score, risk)
}

#[test]
fn network_matches_the_reference_forward_pass() {
    use telamalloc::learned::Network;
    let mut rng = StdRng::seed_from_u64(11);
    for seed in 0..5 {
        let mut linear = ModelFile::linear(&[0.5, -1.0, 2.0, 0.0, 0.25, -0.5, 1.0, 0.1, 3.0], 0.0);
        linear.normalisation.mean = vec![0.3; WIDTH];
        linear.normalisation.std = vec![0.7; WIDTH];
        linear.risk = Some(linear.score.clone());
        for model in [random_mlp(seed, 0.0), linear] {
            let network = Network::new(&model).expect("valid");
            let rows: Vec<f32> = (0..7 * WIDTH)
                .map(|_| rng.random_range(-1.0f32..2.0))
                .collect();
            let view = ndarray::ArrayView2::from_shape((7, WIDTH), rows.as_slice()).unwrap();
            let (scores, risks) = network.forward(view, true);
            let risks = risks.expect("a risk head");
            for (k, row) in rows.chunks(WIDTH).enumerate() {
                let (score, risk) = reference_forward(&model, row);
                assert!(
                    (scores[k] - score).abs() <= 1e-4 * (1.0 + score.abs()),
                    "{} vs {score}",
                    scores[k]
                );
                assert!((risks[k] - risk.unwrap()).abs() <= 1e-5);
            }
        }
    }
}

/// Wraps a learned policy and keeps the features it computes at each node, after ordering.
#[derive(Clone)]
struct Probe {
    inner: LearnedPolicy,
    seen: std::sync::Arc<std::sync::Mutex<Vec<Vec<f32>>>>,
}

impl NodePolicy for Probe {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]) {
        self.inner.preorder(view, buffers);
    }
    fn order_candidates(&mut self, view: &NodeView<'_>, candidates: &mut [Candidate]) {
        self.inner.order_candidates(view, candidates);
        if !candidates.is_empty() {
            let rows = self.inner.features(view, candidates).to_vec();
            self.seen.lock().unwrap().push(rows);
        }
    }
    fn on_conflict(&mut self, buffers: &[u32]) {
        self.inner.on_conflict(buffers);
    }
}

/// The features the policy computes at a node are exactly those the solve log records for it
/// (the training data): the policy reads the search's one conflict counter, as the log does.
#[test]
fn policy_features_match_the_solve_log() {
    use telamalloc::solve_log::{read_log, round_feature, LogRecorder};
    let mut compared = 0usize;
    let mut conflict_rows = 0usize;
    let mut later_runs = 0usize;
    for seed in 0..8 {
        let problem = perfect_problem(80 + seed as usize, seed);
        let capacity = problem.capacity.unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let probe = Probe {
            inner: LearnedPolicy::from_model(random_mlp(seed, 0.0), problem.len(), true),
            seen: seen.clone(),
        };
        // The log records the candidates a node tries; cover branching narrows them after the
        // policy has ordered them all, so here it is off and both see the same lists. A major
        // backtrack that lands at a node has the policy order its candidates again, one more
        // list than the log's one decision, so learned backjumps are off too.
        let solver = Solver::new()
            .options(SearchOptions {
                cover_branching: false,
                learned_backjump: false,
                ..options(true)
            })
            .limits(limits(5000))
            .portfolio(move |_, _| Portfolio::single(Box::new(probe.clone())));
        let mut recorder = LogRecorder::new(Vec::new(), &format!("perfect-{seed}"), 1_000_000);
        solver
            .solve_observed(&problem, Goal::Fit(capacity), &mut recorder)
            .expect("a well-formed problem");
        let log = recorder.finish().expect("writing to memory cannot fail");
        let mut decisions = read_log(log.as_slice()).expect("a readable log").decisions;
        // Decisions are written as nodes finish; the policy saw them as nodes were entered.
        decisions.sort_by_key(|d| (d.run, d.node));
        // The log keeps only nodes with a choice (two candidates or more), with features
        // rounded to 1e-4: compare the policy's view the same way.
        let seen: Vec<Vec<f32>> = seen
            .lock()
            .unwrap()
            .iter()
            .filter(|rows| rows.len() >= 2 * WIDTH)
            .map(|rows| rows.iter().map(|&f| round_feature(f)).collect())
            .collect();
        assert_eq!(decisions.len(), seen.len(), "seed {seed}");
        for (d, rows) in decisions.iter().zip(seen.iter()) {
            let logged: Vec<f32> = d
                .candidates
                .iter()
                .flat_map(|c| c.features.clone())
                .collect();
            assert_eq!(logged.len(), rows.len());
            for (a, b) in logged.chunks(WIDTH).zip(rows.chunks(WIDTH)) {
                // Every feature, the conflict count included, is the log's.
                assert_eq!(a, b, "seed {seed}, node {}", d.node);
                conflict_rows += (a[WIDTH - 1] > 0.0) as usize;
                later_runs += (d.run > 0 && a[WIDTH - 1] > 0.0) as usize;
                compared += 1;
            }
        }
    }
    assert!(compared > 1000, "only {compared} candidates compared");
    eprintln!(
        "{compared} candidates; {conflict_rows} nonzero conflict features, {later_runs} in \
         later runs"
    );
    // The comparison covers the conflict feature only if some conflicts were counted.
    assert!(conflict_rows > 0, "no nonzero conflict feature");
    // Conflicts in later runs of the restart schedule: the counts restart with each run.
    assert!(
        later_runs > 0,
        "no conflict feature in a later run: the test misses restarts"
    );
}

#[test]
fn risky_candidates_are_postponed_and_the_search_stays_complete() {
    // Risk head: sigmoid(1000 x (size / capacity - 0.1)), so the buffers larger than a tenth of
    // the capacity are risky.
    const SIZE: usize = 1;
    let problem = perfect_problem(40, 2);
    let n = problem.len();
    let root = RootNode::new(&problem, 4096);
    let view = root.view();
    let mut risk = DenseLayer {
        inputs: WIDTH,
        outputs: 1,
        weights: vec![0.0; WIDTH],
        bias: vec![-100.0],
    };
    risk.weights[SIZE] = 1000.0;
    let mut model = ModelFile::linear(&[], 0.0);
    model.rank_candidates = false;
    model.risk = Some(risk);
    model.postpone_risk = Some(0.5);
    // Every free buffer at offset 0, ranked by its index.
    let mut candidates: Vec<Candidate> = root.candidates();
    candidates.sort_by_key(|c| c.buffer);
    let candidates: Vec<Candidate> = candidates
        .into_iter()
        .enumerate()
        .map(|(rank, c)| Candidate {
            buffer: c.buffer,
            offset: 0,
            rank: rank as u32,
        })
        .collect();
    let large = |c: &Candidate| problem.buffers[c.buffer as usize].size * 10 > 4096;
    assert!(candidates.iter().any(large) && !candidates.iter().all(large));
    let mut ordered = candidates.clone();
    let mut policy = LearnedPolicy::from_model(model.clone(), n, false);
    policy.order_candidates(&view, &mut ordered);
    let expected: Vec<Candidate> = candidates
        .iter()
        .filter(|c| !large(c))
        .chain(candidates.iter().filter(|c| large(c)))
        .copied()
        .collect();
    assert_eq!(ordered, expected);
    // Without a risk head the threshold is refused; out of (0, 1] too.
    let mut no_head = model.clone();
    no_head.risk = None;
    assert!(matches!(no_head.check(), Err(ModelError::Malformed(_))));
    let mut zero = model.clone();
    zero.postpone_risk = Some(0.0);
    assert!(zero.check().is_err());

    // Postponing only reorders: the verdicts stay the fixed policy's, solutions valid.
    let mut changed = false;
    for seed in 0..120u64 {
        let p = tiny_problem(seed, TinyShape::default());
        let load = naive_load(&p);
        for capacity in [load, load + 2] {
            let options = options(true);
            let fixed = search_with(
                &p,
                capacity,
                FixedPolicy::new(p.len(), true),
                &options,
                2_000_000,
            );
            let mut random = random_mlp(seed, 0.0);
            random.rank_candidates = false;
            random.postpone_risk = Some(0.5);
            let policy = LearnedPolicy::from_model(random, p.len(), true);
            let learned = search_with(&p, capacity, policy, &options, 2_000_000);
            assert_eq!(learned.status, fixed.status, "seed {seed}");
            if let Some(offsets) = solution_of(&learned) {
                let solution = Solution {
                    offsets: offsets.clone(),
                };
                assert!(validate(&p, &solution, Some(capacity)).is_valid());
                changed |= solution_of(&fixed) != Some(offsets);
            }
        }
    }
    assert!(
        changed,
        "postponing never changed a solution: the test tests nothing"
    );
}

#[test]
fn a_model_read_ahead_is_built_without_reading_the_file_again() {
    let path = temp_path("read-once.json");
    std::fs::write(&path, BUILT_IN_MODEL).unwrap();
    let spec = PolicySpec::Learned {
        model: Some(path.clone()),
    };
    let network = spec.load_model().expect("a usable model file");
    assert!(network.is_some());
    std::fs::remove_file(&path).unwrap();
    // Built from the network read ahead: the learned portfolio, no warning, though the file is
    // gone.
    let options = SearchOptions::default();
    let built = spec.build_with_model(100, &options, 0, network);
    assert!(built.warnings.is_empty(), "{:?}", built.warnings);
    assert!(built.portfolio.policies.len() > 1, "the head's strategies");
    // Built without it, the file is read again: gone, so the fixed policy and a warning.
    let fallback = spec.build_with_model(100, &options, 0, None);
    assert_eq!(fallback.warnings.len(), 1, "{:?}", fallback.warnings);
    assert_eq!(fallback.portfolio.policies.len(), 1);
    // Other specs name no file.
    assert!(PolicySpec::Portfolio.load_model().unwrap().is_none());
}

#[test]
fn the_risk_of_one_row_is_the_batched_risk() {
    for seed in 0..6u64 {
        let network = Network::new(&random_mlp(seed, 0.0)).expect("a well-formed model");
        let mut rng = StdRng::seed_from_u64(seed + 100);
        let rows: Vec<f32> = (0..5 * WIDTH)
            .map(|_| rng.random_range(-2.0f32..2.0))
            .collect();
        let batch = ndarray::ArrayView2::from_shape((5, WIDTH), &rows).expect("5 rows");
        let risks = network.forward(batch, true).1.expect("a risk head");
        for (i, row) in rows.chunks(WIDTH).enumerate() {
            let one = network.risk_of_row(row).expect("a risk head");
            assert!((one - risks[i]).abs() < 1e-5, "seed {seed} row {i}");
        }
    }
    let mut no_head = random_mlp(1, 0.0);
    no_head.risk = None;
    let network = Network::new(&no_head).expect("a well-formed model");
    assert_eq!(network.risk_of_row(&[0.0; WIDTH]), None);
}

#[test]
fn learned_backjumps_jump_and_keep_the_verdicts() {
    // Major backtracks land at the placements a random risk head finds riskiest; the failure
    // budget still doubles, so every verdict is the fixed policy's and every solution is valid.
    // The same model under the hand-made rule (major backtracks to the earliest placement
    // behind the conflict, the risk head unread) searches otherwise: the head's answers move
    // the jumps.
    let shape = TinyShape {
        max_buffers: 16,
        max_size: 12,
        horizon: 10,
    };
    let by_rule = SearchOptions {
        major_backtrack: true,
        learned_backjump: false,
        ..options(true)
    };
    let (mut majors, mut rule_majors, mut moved) = (0, 0, 0);
    for seed in 0..80u64 {
        let p = tiny_problem(seed, shape);
        let load = naive_load(&p);
        let mut model = random_mlp(seed, 0.0);
        model.rank_candidates = false;
        model.backjump_risk = Some(0.5);
        let path = temp_path(&format!("backjump-{seed}.json"));
        std::fs::write(&path, model.to_json()).expect("writable temp dir");
        for capacity in [load, load + 1] {
            let fixed = search_with(
                &p,
                capacity,
                FixedPolicy::new(p.len(), true),
                &options(true),
                2_000_000,
            );
            let solver = Solver::new()
                .options(options(true))
                .limits(limits(2_000_000))
                .policy(PolicySpec::Learned {
                    model: Some(path.clone()),
                });
            let learned = Searched::of(solver.solve(&p, Goal::Fit(capacity)).expect("solves"));
            assert_eq!(
                learned.status, fixed.status,
                "seed {seed} capacity {capacity}"
            );
            if let Some(solution) = &learned.solution {
                assert!(validate(&p, solution, Some(capacity)).is_valid());
            }
            majors += learned.stats.major_backtracks;
            let rule = Solver::new()
                .options(by_rule.clone())
                .limits(limits(2_000_000))
                .policy(PolicySpec::Learned {
                    model: Some(path.clone()),
                });
            let rule = Searched::of(rule.solve(&p, Goal::Fit(capacity)).expect("solves"));
            assert_eq!(rule.status, fixed.status, "seed {seed} capacity {capacity}");
            rule_majors += rule.stats.major_backtracks;
            moved += usize::from(
                (rule.stats.nodes, rule.stats.minor_backtracks)
                    != (learned.stats.nodes, learned.stats.minor_backtracks),
            );
        }
        std::fs::remove_file(&path).ok();
    }
    assert!(
        majors > 0 && rule_majors > 0,
        "no major backtrack: the test misses the backjumps ({majors}, {rule_majors})"
    );
    assert!(moved > 0, "the risk head never changed a jump");
    // A threshold needs a risk head, and lies in [0, 1].
    let mut no_head = random_mlp(1, 0.0);
    no_head.backjump_risk = Some(0.5);
    no_head.risk = None;
    assert!(matches!(no_head.check(), Err(ModelError::Malformed(_))));
    let mut above = random_mlp(1, 0.0);
    above.backjump_risk = Some(1.5);
    assert!(above.check().is_err());
}
