//! Criterion benchmarks of the placement core: size-descending best-fit (TFLite's baseline)
//! over random problems, with short lifetimes only and with some long-lived buffers.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use telamalloc::baselines::Baseline;
use telamalloc::generate::{random, random_with_long, LongLived, RandomOptions};

fn best_fit(c: &mut Criterion) {
    let mut group = c.benchmark_group("size_descending_best_fit");
    group.sample_size(10);
    for buffers in [10_000usize, 100_000] {
        let problem = random(
            &RandomOptions {
                buffers,
                horizon: buffers as u64,
                max_lifetime: 200,
                min_size: 1,
                max_size: 4096,
                tightness: 1.2,
            },
            7,
        );
        group.bench_with_input(BenchmarkId::from_parameter(buffers), &problem, |b, p| {
            b.iter(|| black_box(Baseline::Tflite.allocate(p, 0)))
        });
    }
    group.finish();
}

/// The scale problems of benches/RESULTS.md ("Heuristics at 10k, 100k and 1M buffers"): as
/// many time steps as buffers, lifetimes up to 100 steps, and 1% of the buffers living up to
/// 10,000 steps (`telamalloc gen random --buffers N --horizon N --max-lifetime 100
/// --long-per-mille 10 --long-lifetime 10000 --tightness 1.0 --seed 1`); 1M takes about 1.5 s
/// an iteration.
fn best_fit_with_long_lived(c: &mut Criterion) {
    let mut group = c.benchmark_group("best_fit_with_long_lived");
    group.sample_size(10);
    for buffers in [100_000usize, 1_000_000] {
        let options = RandomOptions {
            buffers,
            horizon: buffers as u64,
            max_lifetime: 100,
            min_size: 1,
            max_size: 4096,
            tightness: 1.0,
        };
        let long = LongLived {
            per_mille: 10,
            max_lifetime: 10_000,
        };
        let problem = random_with_long(&options, &long, 1);
        group.bench_with_input(BenchmarkId::from_parameter(buffers), &problem, |b, p| {
            b.iter(|| black_box(Baseline::Tflite.allocate(p, 0)))
        });
    }
    group.finish();
}

criterion_group!(benches, best_fit, best_fit_with_long_lived);
criterion_main!(benches);
