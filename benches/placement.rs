//! Criterion benchmarks of the placement core: size-descending best-fit over random problems.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use telamalloc::baselines::Baseline;
use telamalloc::generate::{random, RandomOptions};

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

criterion_group!(benches, best_fit);
criterion_main!(benches);
