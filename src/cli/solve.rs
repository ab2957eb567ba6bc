//! `telamalloc solve`: solve one problem and print or write the validated solution.

use super::{write_file, CliError, EXIT_NOT_SOLVED, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;
use telamalloc::io::{file_name, no_capacity_message, Format};
use telamalloc::solve_log::{create_log_file, LogRecorder};
use telamalloc::{cpsat_share_line, solution_text, summary_lines, Goal};

#[derive(Args)]
pub struct SolveArgs {
    /// Problem file (CSV or .json).
    input: PathBuf,
    /// Capacity in bytes (default: the file's own, or NAME.CAPACITY.csv in the file name).
    #[arg(long, conflicts_with = "minimize", value_parser = clap::value_parser!(u64).range(1..))]
    capacity: Option<u64>,
    /// Find the smallest peak instead of fitting a capacity.
    #[arg(long)]
    minimize: bool,
    /// When not everything fits: keep the largest total benefit (the `benefit` column, else
    /// the size) within the capacity and move the rest out (the solution's `memory` column is
    /// `chip` or empty). Prints the bytes kept against greedy admission's.
    #[arg(long, conflicts_with = "minimize")]
    spill: bool,
    /// Several memories: a CSV file `id,capacity[,cost]` (cost per byte, default 0). Each
    /// buffer goes to one its `memories` column allows (empty: any), at the least total cost.
    /// The memories' capacities are the only ones: not with `--capacity`, and the file name's
    /// capacity is not used.
    #[arg(long, conflicts_with_all = ["minimize", "capacity"])]
    memories: Option<PathBuf>,
    /// Algorithm: `search` (the hybrid search), `cpsat` (OR-tools' CP-SAT, needs `pip install
    /// ortools`) or a baseline.
    #[arg(long, default_value = "search", value_parser = super::search_args::algorithm_names())]
    algo: String,
    #[command(flatten)]
    search: super::search_args::SearchArgs,
    /// Print the search statistics (nodes, backtracks, restarts, time), or CP-SAT's (status,
    /// conflicts, branches, times), on standard error.
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
    /// Write a solve log of the search (JSON lines; see docs/commands.md) to this file
    /// (gzip-compressed if the name ends in `.gz`).
    #[arg(long, conflicts_with = "minimize")]
    record: Option<PathBuf>,
    /// The most decision lines to record per search run.
    #[arg(long, default_value_t = 100_000)]
    record_limit: u64,
}

pub fn run(args: SolveArgs) -> Result<i32, CliError> {
    let started = Instant::now();
    let memories = match &args.memories {
        Some(path) => Some(telamalloc::io::read_memories(path).map_err(CliError::from)?),
        None => None,
    };
    // With memories the capacities are theirs: a buffer larger than the file name's capacity
    // is not an error (nor, with spill, one that spill moves out).
    let problem = if args.spill || memories.is_some() {
        telamalloc::io::read_problem_to_spill(&args.input, args.capacity, memories)
    } else {
        telamalloc::io::read_problem_in(&args.input, args.capacity, memories)
    }
    .map_err(CliError::from)?;
    let goal = if args.spill {
        Goal::spill_for(&problem)
    } else {
        Goal::for_problem(&problem, args.minimize)
    };
    let goal = goal.ok_or_else(|| {
        CliError::Usage(format!(
            "{}: {}",
            args.input.display(),
            no_capacity_message(&args.input, true)
        ))
    })?;
    let algorithm = super::search_args::algorithm(&args.algo)?;
    let format = match &args.output {
        _ if args.json => Format::Json,
        Some(path) => Format::from_path(path),
        None => Format::Csv,
    };
    args.limit.check_goal(goal.improves_until_a_limit())?;
    let limits = limits_left(&args.limit, format, started)?;
    let solver = args
        .limit
        .solver(args.search.solver(algorithm)?, limits)
        .seed(args.seed);
    let result = match &args.record {
        None => solver.solve(&problem, goal)?,
        Some(path) => {
            if algorithm != telamalloc::Algorithm::Search {
                return Err(CliError::Usage("--record needs --algo search".into()));
            }
            if matches!(goal, Goal::Spill(_) | Goal::Memories) {
                return Err(CliError::Usage(
                    "--record records a single-capacity search, not --spill or --memories".into(),
                ));
            }
            let cannot = |e: std::io::Error| {
                CliError::Usage(format!("cannot write {}: {e}", path.display()))
            };
            let writer = create_log_file(path).map_err(cannot)?;
            let mut log = LogRecorder::new(writer, &file_name(&args.input), args.record_limit);
            let result = solver.solve_observed(&problem, goal, &mut log)?;
            log.finish()
                .map_err(|e| CliError::Usage(format!("cannot write the solve log: {e}")))?;
            result
        }
    };
    for warning in &result.warnings {
        eprintln!("{warning}");
    }
    if args.stats {
        print_stats(&result);
    }
    let name = solver.algorithm_name();
    if let Some(solution) = &result.solution {
        let text = solution_text(&problem, solution, &result, name, format);
        match &args.output {
            Some(path) => write_file(path, &text)?,
            None => print!("{text}"),
        }
    }
    for line in summary_lines(&result, name, goal) {
        eprintln!("{line}");
    }
    match (goal, &result.assignment) {
        (Goal::Spill(_), Some(assignment)) => {
            if let Some(greedy) = &result.greedy {
                eprintln!("{}", telamalloc::spill_line(&problem, assignment, greedy));
            }
        }
        (Goal::Memories, Some(assignment)) => {
            eprintln!("cost: {} (size x cost per byte)", assignment.cost(&problem));
        }
        _ => {}
    }
    Ok(if result.solution.is_some() {
        EXIT_SOLVED
    } else {
        EXIT_NOT_SOLVED
    })
}

/// `--stats`: the search counters, or CP-SAT's, on standard error.
fn print_stats(result: &telamalloc::Allocation) {
    if let Some(stats) = &result.search {
        eprintln!(
            "stats: {}",
            serde_json::to_string(stats).expect("plain data")
        );
    }
    if let Some(stats) = &result.cpsat {
        eprintln!(
            "cpsat: {}",
            serde_json::to_string(stats).expect("plain data")
        );
        if let Some(line) = cpsat_share_line(result) {
            eprintln!("{line}");
        }
    }
}

/// The limits of the solve itself. The time limit covers the whole command: reading the
/// problem (0.15 s at 200,000 buffers, 0.8 s at a million) is spent from it, and as much again
/// is kept for writing the answer after the solve (0.35 s for the CSV of a million buffers),
/// twice as much for JSON (four times the bytes: 1.2 s).
fn limits_left(
    limit: &super::limit_args::LimitArgs,
    format: Format,
    started: Instant,
) -> Result<telamalloc::Limits, CliError> {
    let mut limits = limit.limits()?;
    let reading = started.elapsed();
    let writing = match format {
        Format::Csv => reading,
        Format::Json => 2 * reading,
    };
    limits.timeout = limits.timeout.map(|t| t.saturating_sub(reading + writing));
    Ok(limits)
}
