//! Criterion benchmarks of the learned policy's inference: the cost per scored candidate, in
//! batches of 32 candidates (one node), for the forward pass alone and for the policy's whole
//! `order_candidates` (features, forward pass, decision), next to the fixed policy's; and the
//! portfolio head's once-per-problem cost (problem features and ranking) on 450 buffers.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ndarray::Array2;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::hint::black_box;
use telamalloc::generate::{perfect, CutStyle, PerfectOptions};
use telamalloc::learned::{DenseLayer, LearnedPolicy, ModelFile, Network};
use telamalloc::search::CANDIDATE_FEATURES;
use telamalloc::search::{Candidate, FixedPolicy, NodePolicy, RootNode};

const WIDTH: usize = CANDIDATE_FEATURES.len();
const BATCH: usize = 32;

/// A dense layer with weights drawn from `rng`.
fn random_layer(rng: &mut StdRng, inputs: usize, outputs: usize) -> DenseLayer {
    DenseLayer {
        inputs,
        outputs,
        weights: (0..inputs * outputs)
            .map(|_| rng.random_range(-0.5f32..0.5))
            .collect(),
        bias: vec![0.01; outputs],
    }
}

/// A model of the trained shape (9 -> 32 -> 32 -> 1 plus a risk head) with random weights, so
/// that the benchmark does not depend on a model file.
fn model(margin: f32) -> ModelFile {
    let mut rng = StdRng::seed_from_u64(5);
    let mut layer = |inputs: usize, outputs: usize| random_layer(&mut rng, inputs, outputs);
    let mut model = ModelFile::linear(&[0.0; WIDTH], margin);
    model.hidden = vec![layer(WIDTH, 32), layer(32, 32)];
    model.score = layer(32, 1);
    model.risk = Some(layer(32, 1));
    model.order_prior = 1.0;
    model
}

fn forward(c: &mut Criterion) {
    let network = Network::new(&model(0.0)).expect("valid model");
    let mut rng = StdRng::seed_from_u64(1);
    let batch = Array2::from_shape_fn((BATCH, WIDTH), |_| rng.random_range(0.0f32..1.0));
    let mut group = c.benchmark_group("learned_inference");
    group.throughput(Throughput::Elements(BATCH as u64));
    group.bench_function("forward_32", |b| {
        b.iter(|| black_box(network.scores(black_box(batch.view()))))
    });
    group.bench_function("forward_with_risk_32", |b| {
        b.iter(|| black_box(network.forward(black_box(batch.view()), true)))
    });
    group.finish();
}

fn order_candidates(c: &mut Criterion) {
    let (problem, _) = perfect(
        &PerfectOptions {
            capacity: 1 << 16,
            horizon: 400,
            buffers: 80,
            style: CutStyle::Mixed,
            remove: 0,
            alignment: 1,
            cuts: Default::default(),
        },
        3,
    );
    let capacity = problem.capacity.expect("generated with a capacity");
    let root = RootNode::new(&problem, capacity);
    let view = root.view();
    // The first BATCH free buffers at their root offsets, ranked in buffer order.
    let mut free = root.candidates();
    free.sort_by_key(|c| c.buffer);
    let mut candidates: Vec<Candidate> = free
        .into_iter()
        .take(BATCH)
        .enumerate()
        .map(|(rank, c)| Candidate {
            rank: rank as u32,
            ..c
        })
        .collect();
    candidates.sort_by_key(|c| (c.offset, c.rank));
    assert_eq!(candidates.len(), BATCH);
    let mut group = c.benchmark_group("learned_order_candidates");
    group.throughput(Throughput::Elements(BATCH as u64));
    let mut work = candidates.clone();
    let mut fixed = FixedPolicy::new(problem.len(), true);
    group.bench_function("fixed_32", |b| {
        b.iter(|| {
            work.copy_from_slice(&candidates);
            fixed.order_candidates(&view, black_box(&mut work));
        })
    });
    // Margin 0: the model decides wherever its best is not the fixed first choice.
    let mut learned = LearnedPolicy::from_model(model(0.0), problem.len(), true);
    group.bench_function("learned_32", |b| {
        b.iter(|| {
            work.copy_from_slice(&candidates);
            learned.order_candidates(&view, black_box(&mut work));
        })
    });
    group.finish();
}

fn portfolio_head(c: &mut Criterion) {
    use telamalloc::learned::{Normalisation, PortfolioHead, PortfolioNetwork};
    use telamalloc::search::{PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION};
    let (problem, _) = perfect(
        &PerfectOptions {
            capacity: 1 << 20,
            horizon: 1024,
            buffers: 450,
            style: CutStyle::Mixed,
            remove: 0,
            alignment: 1024,
            cuts: Default::default(),
        },
        7,
    );
    let root = RootNode::new(&problem, 1 << 20);
    let view = root.problem_view();
    let n = PROBLEM_FEATURES.len();
    let mut rng = StdRng::seed_from_u64(9);
    let mut layer = |inputs: usize, outputs: usize| random_layer(&mut rng, inputs, outputs);
    let head = PortfolioHead {
        feature_schema_version: PROBLEM_FEATURE_SCHEMA_VERSION,
        features: PROBLEM_FEATURES.iter().map(|s| s.to_string()).collect(),
        strategies: ["fixed", "WAT", "TAW", "TWA"].map(String::from).to_vec(),
        normalisation: Normalisation {
            mean: vec![0.0; n],
            std: vec![1.0; n],
        },
        hidden: vec![layer(n, 16)],
        output: layer(16, 4),
        lead: 4,
        confidence_lead: false,
        shares: None,
    };
    let network = PortfolioNetwork::new(&head).expect("valid head");
    let mut group = c.benchmark_group("portfolio_head");
    group.bench_function("problem_features_450", |b| {
        b.iter(|| black_box(black_box(&view).features()))
    });
    // Problem features and the head's ranking (what its ranker does once per problem).
    group.bench_function("rank_450", |b| {
        b.iter(|| black_box(network.rank(&black_box(&view).features())))
    });
    group.finish();
}

criterion_group!(benches, forward, order_candidates, portfolio_head);
criterion_main!(benches);
