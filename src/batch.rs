//! Many problems at once: a parallel runner with results in input order, and the solve-log
//! collection built on it (one problem per thread, so each log is the same whatever the thread
//! count).

use crate::io::file_name;
use crate::outcome::Status;
use crate::problem::Problem;
use crate::solve_log::{create_log_file, LogRecorder};
use crate::solver::{Goal, Solver};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// Runs `job` on every item on `threads` worker threads; the results come in item order.
/// `on_done` is called after each job (e.g. to advance a progress bar).
pub(crate) fn run_parallel<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    on_done: &(dyn Fn() + Sync),
    job: impl Fn(&T) -> R + Sync,
) -> Result<Vec<R>, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| format!("cannot start threads: {e}"))?;
    Ok(pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                let result = job(item);
                on_done();
                result
            })
            .collect()
    }))
}

/// What [`collect_logs`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collected {
    /// Problems solved.
    pub solved: usize,
    /// Problems proven infeasible.
    pub infeasible: usize,
    /// Problems left at the limit.
    pub limit: usize,
    /// Logs that could not be written, with why.
    pub failures: Vec<String>,
}

/// Solves every problem (each under its own capacity, which it must have) with `solver` and
/// writes its solve log, `<problem file name>.jsonl.gz`, into `out` (at most `record_limit`
/// decisions per run).
pub fn collect_logs(
    problems: &[(PathBuf, Problem)],
    solver: &Solver,
    out: &Path,
    record_limit: u64,
    threads: usize,
    on_done: &(dyn Fn() + Sync),
) -> Result<Collected, String> {
    let results = run_parallel(problems, threads, on_done, |(file, problem)| {
        let name = file_name(file);
        let path = out.join(format!("{name}.jsonl.gz"));
        let capacity = problem
            .capacity
            .ok_or_else(|| format!("{name}: no capacity"))?;
        let writer = create_log_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut log = LogRecorder::new(writer, &name, record_limit);
        let result = solver
            .solve_observed(problem, Goal::Fit(capacity), &mut log)
            .map_err(|e| format!("{name}: {e}"))?;
        log.finish()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(result.status)
    })?;
    let mut collected = Collected::default();
    for result in results {
        match result {
            Ok(Status::Solved) => collected.solved += 1,
            Ok(Status::Infeasible(_)) => collected.infeasible += 1,
            Ok(_) => collected.limit += 1,
            Err(e) => collected.failures.push(e),
        }
    }
    Ok(collected)
}
