//! Latency of the front door on common problems: every whole-model problem of the corpus
//! (`datasets/models/*.csv`) planned at capacity = LOAD and at the best baseline's peak, and
//! the on-chip problems of the test split's list (`datasets/splits/test.txt`, when generated),
//! each solved `REPEATS` times in-process; prints per corpus and capacity the p50 and p99 over
//! problems of each problem's median time, and what answered (a baseline first, or the search).
//!
//! `cargo bench --bench latency` (no criterion: one line per corpus is what is reported).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use telamalloc::baselines::Baseline;
use telamalloc::io::{problem_files, read_problem, split_files};
use telamalloc::{analysis, Goal, Problem, Solver, Status};

const REPEATS: usize = 21;

/// One problem's solve: its median time, and who answered.
struct Timed {
    median: Duration,
    by_heuristic: bool,
    solved: bool,
}

fn time_solve(solver: &Solver, problem: &Problem, capacity: u64) -> Timed {
    let mut times = Vec::with_capacity(REPEATS);
    let mut last = None;
    for _ in 0..REPEATS {
        let start = Instant::now();
        let result = solver
            .solve(problem, Goal::Fit(capacity))
            .expect("a valid problem");
        times.push(start.elapsed());
        last = Some(result);
    }
    times.sort();
    let result = last.expect("at least one run");
    Timed {
        median: times[REPEATS / 2],
        by_heuristic: result
            .search
            .as_ref()
            .is_some_and(|s| s.heuristic.is_some()),
        solved: result.status == Status::Solved,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn report(label: &str, timed: &[Timed]) {
    let mut times: Vec<Duration> = timed.iter().map(|t| t.median).collect();
    times.sort();
    let heuristic = timed.iter().filter(|t| t.by_heuristic).count();
    let solved = timed.iter().filter(|t| t.solved).count();
    println!(
        "| {label} | {} | {solved} | {heuristic} | {:.1} | {:.1} | {:.1} |",
        timed.len(),
        percentile(&times, 0.5).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6,
        times.last().copied().unwrap_or_default().as_secs_f64() * 1e6,
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // A limit for the few problems the search cannot settle fast at LOAD.
    let solver = Solver::new().timeout(Duration::from_millis(200));
    let models: Vec<PathBuf> = problem_files(&[root.join("datasets/models")])
        .expect("the corpus")
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n != "manifest.csv"))
        .collect();
    let problems: Vec<Problem> = models
        .iter()
        .map(|p| read_problem(p, None).expect("a corpus problem"))
        .collect();
    println!("| corpus, capacity | problems | solved | by a baseline first | p50 (us) | p99 (us) | max (us) |");
    println!("|---|---|---|---|---|---|---|");
    let at_load: Vec<Timed> = problems
        .iter()
        .map(|p| time_solve(&solver, p, analysis::load(p)))
        .collect();
    report("whole models, capacity = LOAD", &at_load);
    let mut slowest: Vec<(Duration, usize)> = at_load
        .iter()
        .enumerate()
        .map(|(i, t)| (t.median, i))
        .collect();
    slowest.sort();
    for &(time, i) in slowest.iter().rev().take(3) {
        let p = &problems[i];
        let check = {
            let start = Instant::now();
            for _ in 0..REPEATS {
                p.check(None).expect("valid");
                std::hint::black_box(analysis::Timeline::new(p));
            }
            start.elapsed() / REPEATS as u32
        };
        let baseline = {
            let start = Instant::now();
            for _ in 0..REPEATS {
                std::hint::black_box(Baseline::TfliteMicro.allocate(p, 0));
            }
            start.elapsed() / REPEATS as u32
        };
        eprintln!(
            "slow at LOAD: {} ({} buffers): {:.0} us; rules + timeline {:.0} us, one baseline {:.0} us, answered by {}",
            models[i].display(),
            p.len(),
            time.as_secs_f64() * 1e6,
            check.as_secs_f64() * 1e6,
            baseline.as_secs_f64() * 1e6,
            if at_load[i].by_heuristic { "a baseline" } else { "the search" }
        );
    }
    let at_best: Vec<Timed> = problems
        .iter()
        .map(|p| {
            let best = Baseline::ALL
                .iter()
                .map(|b| b.allocate(p, 0).peak(p))
                .min()
                .expect("baselines");
            time_solve(&solver, p, best)
        })
        .collect();
    report("whole models, capacity = best baseline peak", &at_best);
    // The on-chip test split, if built (datasets/tools/build_splits.sh), every fourth problem.
    std::env::set_current_dir(root).expect("the repository root");
    if let Ok(files) = split_files("test") {
        let onchip: Vec<Timed> = files
            .iter()
            .step_by(4)
            .filter_map(|f| read_problem(f, None).ok())
            .filter_map(|p| p.capacity.map(|c| (p, c)))
            .map(|(p, c)| time_solve(&solver, &p, c))
            .collect();
        if !onchip.is_empty() {
            report("on-chip test split (every 4th), its capacity", &onchip);
        }
    }
}
