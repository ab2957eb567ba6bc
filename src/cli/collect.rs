//! `telamalloc collect`: run the search over many problems in parallel and write a solve log per
//! problem (one problem per thread, so each log is the same whatever the thread count).

use super::{CliError, EXIT_SOLVED};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use telamalloc::bench::problem_files;
use telamalloc::search::record::create_log_file;
use telamalloc::search::{policies_by_name, search_recorded, Outcome, Recording, SearchOptions};

#[derive(Args)]
pub struct CollectArgs {
    /// Problem files or folders.
    paths: Vec<PathBuf>,
    /// A split: reads the problem paths listed in `datasets/splits/NAME.txt` (one per line,
    /// relative to the repository root).
    #[arg(long)]
    split: Option<String>,
    /// Where to write the logs (`<problem>.jsonl.gz` each, gzip-compressed JSON lines).
    #[arg(long)]
    out: PathBuf,
    /// Capacity in bytes (default: each file's own).
    #[arg(long)]
    capacity: Option<u64>,
    #[command(flatten)]
    limit: super::limit_args::LimitArgs,
    /// The most decision lines to record per search run.
    #[arg(long, default_value_t = 20_000)]
    record_limit: u64,
    /// Worker threads (problems run in parallel).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Policy (default: the portfolio).
    #[arg(long)]
    policy: Option<String>,
}

pub fn split_files(name: &str) -> Result<Vec<PathBuf>, CliError> {
    let list = Path::new("datasets/splits").join(format!("{name}.txt"));
    let text = std::fs::read_to_string(&list)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", list.display())))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(PathBuf::from)
        .collect())
}

pub fn run(args: CollectArgs) -> Result<i32, CliError> {
    let mut paths = args.paths.clone();
    if let Some(split) = &args.split {
        paths.extend(split_files(split)?);
    }
    let files = problem_files(&paths)?;
    if files.is_empty() {
        return Err(CliError::Usage("no problem files given".into()));
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", args.out.display())))?;
    let options = SearchOptions {
        heuristic_first: false,
        ..SearchOptions::default()
    };
    if let Some(name) = &args.policy {
        if policies_by_name(name, 0, &options).is_none() {
            return Err(CliError::Usage(format!("--policy {name}: unknown policy")));
        }
    }
    let limits = args.limit.limits()?;
    // Read every problem first, so that bad input stops the command before any work.
    let problems = files
        .iter()
        .map(|f| Ok((f.clone(), super::read_problem(f, args.capacity)?)))
        .collect::<Result<Vec<_>, CliError>>()?;
    if let Some((file, _)) = problems.iter().find(|(_, p)| p.capacity.is_none()) {
        return Err(CliError::Usage(format!(
            "{}: no capacity (give --capacity or name it NAME.CAPACITY.csv)",
            file.display()
        )));
    }
    let bar = ProgressBar::new(problems.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} problems, {elapsed} ({eta} left) {msg}")
            .expect("valid template"),
    );
    let counts = [
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    ];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.max(1))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start threads: {e}")))?;
    let failures: Vec<String> = pool.install(|| {
        problems
            .par_iter()
            .filter_map(|(file, problem)| {
                let name = file
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default();
                let path = args.out.join(format!("{name}.jsonl.gz"));
                let result = (|| -> Result<Outcome, String> {
                    let mut writer = create_log_file(&path).map_err(|e| e.to_string())?;
                    let policies = args
                        .policy
                        .as_deref()
                        .and_then(|n| policies_by_name(n, problem.len(), &options));
                    let capacity = problem.capacity.expect("checked above");
                    let result = search_recorded(
                        problem,
                        capacity,
                        &options,
                        policies,
                        limits,
                        None,
                        Some(Recording {
                            writer: &mut *writer,
                            problem: name.clone(),
                            limit_per_run: args.record_limit,
                        }),
                    );
                    match result.log_error {
                        Some(e) => Err(e),
                        None => Ok(result.outcome),
                    }
                })();
                bar.inc(1);
                match result {
                    Ok(outcome) => {
                        let slot = match outcome {
                            Outcome::Solved(_) => 0,
                            Outcome::Infeasible(_) => 1,
                            _ => 2,
                        };
                        counts[slot].fetch_add(1, Ordering::Relaxed);
                        None
                    }
                    Err(e) => Some(format!("{}: {e}", path.display())),
                }
            })
            .collect()
    });
    bar.finish();
    let [solved, infeasible, limit] = counts.map(|c| c.into_inner());
    println!(
        "{} problems: {solved} solved, {infeasible} infeasible, {limit} limit reached; logs in {}",
        problems.len(),
        args.out.display()
    );
    if let Some(first) = failures.first() {
        return Err(CliError::Usage(format!(
            "{} logs could not be written, first: {first}",
            failures.len()
        )));
    }
    Ok(EXIT_SOLVED)
}
