//! Criterion benchmarks of the hybrid search on small and medium problems, through the front door
//! (the search itself: the baseline shortcut is off).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use telamalloc::generate::{overlap, perfect, CutStyle, PerfectOptions};
use telamalloc::solve_log::LogRecorder;
use telamalloc::{Goal, SearchOptions, Solver, Status};

/// The search alone: the baseline shortcut is off.
fn solver() -> Solver {
    Solver::new().options(SearchOptions {
        heuristic_first: false,
        ..SearchOptions::default()
    })
}

fn perfect_packings(c: &mut Criterion) {
    let mut group = c.benchmark_group("search_perfect_at_load");
    group.sample_size(10);
    for buffers in [20usize, 60, 120] {
        let (problem, _) = perfect(
            &PerfectOptions {
                capacity: 1 << 16,
                horizon: 400,
                buffers,
                style: CutStyle::Mixed,
                remove: 0,
                alignment: 1,
                cuts: Default::default(),
            },
            3,
        );
        let capacity = problem.capacity.expect("generated with a capacity");
        group.bench_with_input(BenchmarkId::from_parameter(buffers), &problem, |b, p| {
            let solver = solver();
            b.iter(|| {
                let result = solver.solve(p, Goal::Fit(capacity)).expect("valid");
                assert_eq!(result.status, Status::Solved);
                black_box(result)
            })
        });
    }
    group.finish();
}

fn all_overlapping(c: &mut Criterion) {
    let mut group = c.benchmark_group("search_all_overlapping");
    group.sample_size(10);
    let problem = overlap(1000, 1, 100_000, 1);
    let capacity = problem.capacity.expect("generated with a capacity");
    let solver = solver();
    group.bench_function("1000", |b| {
        b.iter(|| black_box(solver.solve(&problem, Goal::Fit(capacity))))
    });
    group.finish();
}

/// The cost of solve logs: the same search with recording off (the default) and on (into memory).
fn recording(c: &mut Criterion) {
    let mut group = c.benchmark_group("search_recording");
    group.sample_size(10);
    let (problem, _) = perfect(
        &PerfectOptions {
            capacity: 1 << 16,
            horizon: 400,
            buffers: 120,
            style: CutStyle::Mixed,
            remove: 0,
            alignment: 1,
            cuts: Default::default(),
        },
        3,
    );
    let capacity = problem.capacity.expect("generated with a capacity");
    let solver = solver();
    group.bench_function("off", |b| {
        b.iter(|| black_box(solver.solve(&problem, Goal::Fit(capacity))))
    });
    group.bench_function("on", |b| {
        b.iter(|| {
            let mut log = LogRecorder::new(Vec::new(), "bench", u64::MAX);
            let result = solver.solve_observed(&problem, Goal::Fit(capacity), &mut log);
            let bytes = log.finish().expect("in memory");
            black_box((result, bytes.len()))
        })
    });
    group.finish();
}

criterion_group!(benches, perfect_packings, all_overlapping, recording);
criterion_main!(benches);
