//! `telamalloc collect`: run the search over many problems in parallel and write a solve log per
//! problem (one problem per thread, so each log is the same whatever the thread count).

use super::{CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::batch::collect_logs;
use telamalloc::{PolicySpec, SearchOptions, Solver};

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
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    capacity: Option<u64>,
    #[command(flatten)]
    limit: super::limit_args::LimitArgs,
    /// The most decision lines to record per search run.
    #[arg(long, default_value_t = 20_000)]
    record_limit: u64,
    /// Worker threads (problems run in parallel).
    #[arg(long, default_value_t = 2, value_parser = super::threads_arg())]
    threads: usize,
    /// Policy (default: the portfolio).
    #[arg(long)]
    policy: Option<PolicySpec>,
}

pub fn run(args: CollectArgs) -> Result<i32, CliError> {
    let problems =
        super::read_problems_with_capacity(&args.paths, args.split.as_deref(), args.capacity)?;
    std::fs::create_dir_all(&args.out)
        .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", args.out.display())))?;
    // The search itself is recorded: the baseline shortcut is off.
    let solver = Solver::new()
        .options(SearchOptions {
            heuristic_first: false,
            ..SearchOptions::default()
        })
        .policy(args.policy.clone().unwrap_or_default());
    let solver = args.limit.solver(solver, args.limit.limits()?);
    let bar = super::progress_bar(problems.len(), "problems");
    let collected = collect_logs(
        &problems,
        &solver,
        &args.out,
        args.record_limit,
        args.threads,
        &|| bar.inc(1),
    )
    .map_err(CliError::Usage)?;
    bar.finish();
    println!(
        "{} problems: {} solved, {} infeasible, {} limit reached; logs in {}",
        problems.len(),
        collected.solved,
        collected.infeasible,
        collected.limit,
        args.out.display()
    );
    if let Some(first) = collected.failures.first() {
        return Err(CliError::Usage(format!(
            "{} logs could not be written, first: {first}",
            collected.failures.len()
        )));
    }
    Ok(EXIT_SOLVED)
}
