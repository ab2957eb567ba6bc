//! How soon a solve stops: after its cancellation flag is set (what Ctrl-C in the Python
//! binding sets, and what a compiler's own cancel would), and after its timeout. For each
//! problem and mode, `DELAYS` solves are cancelled at staggered times (so every phase of the
//! search is hit) and the time from setting the flag to the return is reported as p50, p90 and
//! max; then `TIMEOUTS` solves report how far past their timeout they returned.
//!
//! `cargo bench --bench cancel` (no criterion: the figures are latencies, not throughput).
//! The problems are ones the search leaves undecided for well over a second, so every solve
//! ends by the flag or the timeout.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use telamalloc::generate::{perfect, CutPositions, CutStyle, PerfectOptions};
use telamalloc::io::read_problem;
use telamalloc::{Goal, Problem, Solver};

/// Cancellations per problem and mode, at delays from `FIRST_DELAY` in steps of `DELAY_STEP`.
const DELAYS: u32 = 25;
const FIRST_DELAY: Duration = Duration::from_millis(20);
/// Not a divisor of common poll periods, so the delays fall at every phase of them.
const DELAY_STEP: Duration = Duration::from_millis(17);
/// The timeouts whose overshoot is measured.
const TIMEOUTS: [Duration; 3] = [
    Duration::from_millis(100),
    Duration::from_millis(250),
    Duration::from_millis(500),
];
/// The limit of a cancelled solve: never reached.
const LONG: Duration = Duration::from_secs(60);

/// Solves `problem` with `solver` (given its own flag) and sets the flag after `delay`; the time
/// from setting it to the solve's return.
fn cancel_latency(solver: &Solver, problem: &Problem, goal: Goal, delay: Duration) -> Duration {
    let flag = Arc::new(AtomicBool::new(false));
    let solver = solver.clone().cancel_flag(flag.clone());
    std::thread::scope(|scope| {
        let setter = scope.spawn(|| {
            std::thread::sleep(delay);
            flag.store(true, Ordering::Relaxed);
            Instant::now()
        });
        solver.solve(problem, goal).expect("a valid problem");
        let returned = Instant::now();
        let set = setter.join().expect("the setter");
        assert!(
            returned >= set,
            "the solve ended before its cancellation: pick a harder problem"
        );
        returned - set
    })
}

/// The time past `timeout` at which a solve with that timeout returned.
fn overshoot(solver: &Solver, problem: &Problem, goal: Goal, timeout: Duration) -> Duration {
    let solver = solver.clone().timeout(timeout);
    let start = Instant::now();
    solver.solve(problem, goal).expect("a valid problem");
    let took = start.elapsed();
    assert!(
        took >= timeout,
        "ended within {timeout:?}: pick a harder problem"
    );
    took - timeout
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(label: &str, solver: &Solver, problem: &Problem, goal: Goal) {
    let mut latencies: Vec<Duration> = (0..DELAYS)
        .map(|i| cancel_latency(solver, problem, goal, FIRST_DELAY + DELAY_STEP * i))
        .collect();
    latencies.sort();
    let at = |p: f64| latencies[((latencies.len() - 1) as f64 * p).round() as usize];
    let worst_overshoot = TIMEOUTS
        .iter()
        .map(|&t| overshoot(solver, problem, goal, t))
        .max()
        .unwrap_or_default();
    println!(
        "| {label} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
        problem.buffers.len(),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(at(1.0)),
        ms(worst_overshoot),
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The Python tests' hard problem: effort-validation's
    // perfect.guillotine.edge.n450.r18.s20003, feasible, undecided for well over 20 s.
    let packing = read_problem(&root.join("python/tests/data/hard.1048576.csv"), None)
        .expect("the Python tests' hard problem");
    // A larger packing with pieces removed, where a node takes longer.
    let (large, _) = perfect(
        &PerfectOptions {
            capacity: 1 << 20,
            horizon: 4096,
            buffers: 4000,
            style: CutStyle::Guillotine,
            remove: 160,
            alignment: 1024,
            cuts: CutPositions::Edge,
        },
        7,
    );
    let base = Solver::new().timeout(LONG);
    println!("| problem, mode | buffers | cancel p50 (ms) | p90 (ms) | max (ms) | timeout overshoot, max (ms) |");
    println!("|---|---|---|---|---|---|");
    let fit = |p: &Problem| Goal::Fit(p.capacity.expect("a capacity"));
    report("450-buffer packing, fit", &base, &packing, fit(&packing));
    report(
        "450-buffer packing, fit, 2 threads",
        &base.clone().threads(2),
        &packing,
        fit(&packing),
    );
    report(
        "450-buffer packing, minimize",
        &base,
        &packing,
        Goal::Minimize,
    );
    report("4,000-buffer packing, fit", &base, &large, fit(&large));
}
