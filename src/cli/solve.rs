//! `telamalloc solve`: solve one problem and print or write the validated solution.

use super::{read_problem, write_file, CliError, EXIT_NOT_SOLVED, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::allocate::{allocate_recorded, Goal, Status};
use telamalloc::io::{render_solution, Format};
use telamalloc::search::Recording;

#[derive(Args)]
pub struct SolveArgs {
    /// Problem file (CSV or .json).
    input: PathBuf,
    /// Capacity in bytes (default: the file's own, or NAME.CAPACITY.csv in the file name).
    #[arg(long, conflicts_with = "minimize")]
    capacity: Option<u64>,
    /// Find the smallest peak instead of fitting a capacity.
    #[arg(long)]
    minimize: bool,
    /// Algorithm: `search` (the hybrid search) or a baseline.
    #[arg(long, default_value = "search", value_parser = algorithm_names())]
    algo: String,
    #[command(flatten)]
    search: super::search_args::SearchArgs,
    /// Print the search statistics (nodes, backtracks, restarts, time) on standard error.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    limit: super::limit_args::LimitArgs,
    /// Seed for the randomised parts (the same seed gives the same answer).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Write the solution here instead of standard output (.json writes JSON).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Print the solution as JSON instead of CSV.
    #[arg(long)]
    json: bool,
    /// Write a solve log of the search (JSON lines; see the README) to this file
    /// (gzip-compressed if the name ends in `.gz`).
    #[arg(long, conflicts_with = "minimize")]
    record: Option<PathBuf>,
    /// The most decision lines to record per search run.
    #[arg(long, default_value_t = 100_000)]
    record_limit: u64,
}

/// The names `--algo` accepts.
pub fn algorithm_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(telamalloc::allocate::algorithm_names())
}

/// The goal from `--capacity` / `--minimize` and the problem's own capacity.
pub fn goal(
    minimize: bool,
    capacity: Option<u64>,
    input: &std::path::Path,
) -> Result<Goal, CliError> {
    if minimize {
        return Ok(Goal::Minimize);
    }
    match capacity {
        Some(0) => Err(CliError::Usage("--capacity must be greater than 0".into())),
        Some(c) => Ok(Goal::Fit(c)),
        None => Err(CliError::Usage(format!(
            "{}: no capacity: give --capacity N or --minimize (or name the file NAME.CAPACITY.csv)",
            input.display()
        ))),
    }
}

pub fn run(args: SolveArgs) -> Result<i32, CliError> {
    if args.capacity == Some(0) {
        return Err(CliError::Usage("--capacity must be greater than 0".into()));
    }
    let problem = read_problem(&args.input, args.capacity)?;
    let goal = goal(args.minimize, problem.capacity, &args.input)?;
    let algorithm = args.search.algorithm(&args.algo)?;
    let limits = args.limit.limits()?;
    let mut log_file = match &args.record {
        Some(path) => {
            if !matches!(algorithm, telamalloc::allocate::Algorithm::Search { .. }) {
                return Err(CliError::Usage("--record needs --algo search".into()));
            }
            Some(
                telamalloc::search::record::create_log_file(path).map_err(|e| {
                    CliError::Usage(format!("cannot write {}: {e}", path.display()))
                })?,
            )
        }
        None => None,
    };
    let recording = log_file.as_mut().map(|writer| Recording {
        writer: &mut **writer,
        problem: args
            .input
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default(),
        limit_per_run: args.record_limit,
    });
    let result = allocate_recorded(&problem, &algorithm, goal, limits, args.seed, recording);
    if let Some(e) = &result.log_error {
        return Err(CliError::Usage(format!("cannot write the solve log: {e}")));
    }
    let seconds = result.elapsed.as_secs_f64();
    if args.stats {
        if let Some(stats) = &result.search {
            eprintln!(
                "stats: {}",
                serde_json::to_string(stats).expect("plain data")
            );
        }
    }
    match (&result.status, &result.solution) {
        (Status::Solved, Some(solution)) => {
            let format = match &args.output {
                Some(path) if !args.json => Format::from_path(path),
                _ if args.json => Format::Json,
                _ => Format::Csv,
            };
            let mut text = render_solution(&problem, solution, format);
            if format == Format::Json {
                // Add how it was found: the status, the search counters, the optimality gap.
                let mut value: serde_json::Value =
                    serde_json::from_str(&text).expect("our own JSON");
                value["status"] = "solved".into();
                value["algorithm"] = algorithm.name().into();
                if let Some(stats) = &result.search {
                    value["stats"] = serde_json::to_value(stats).expect("plain data");
                }
                if let Some(bound) = result.lower_bound {
                    value["lower_bound"] = bound.into();
                }
                text = serde_json::to_string_pretty(&value).expect("plain data") + "\n";
            }
            match &args.output {
                Some(path) => write_file(path, &text)?,
                None => print!("{text}"),
            }
            let peak = solution.peak(&problem);
            let capacity = match goal {
                Goal::Fit(c) => format!(", capacity {c}"),
                Goal::Minimize => String::new(),
            };
            eprintln!(
                "solved by {}: peak {peak} (LOAD {}{capacity}) in {seconds:.3} s",
                algorithm.name(),
                result.load
            );
            if let Some(bound) = result.lower_bound {
                let gap = peak - bound;
                if gap == 0 {
                    eprintln!("gap to the lower bound: 0 (proven optimal)");
                } else {
                    eprintln!(
                        "gap to the lower bound {bound}: {gap} bytes ({:.2}% of the peak; not proven optimal)",
                        100.0 * gap as f64 / peak as f64
                    );
                }
            }
            Ok(EXIT_SOLVED)
        }
        (status, _) => {
            eprintln!("{}: {status} after {seconds:.3} s", algorithm.name());
            Ok(EXIT_NOT_SOLVED)
        }
    }
}
