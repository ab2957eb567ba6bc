//! `telamalloc bench`: a table per problem and algorithm (status, peak/LOAD, peak/capacity, time).

use super::{write_file, CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::bench;
use telamalloc::io::problem_files;

#[derive(Args)]
pub struct BenchArgs {
    /// Problem files or folders (their .csv and .json files).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Comma-separated algorithms.
    #[arg(long, value_delimiter = ',', required_unless_present = "ablation", value_parser = super::search_args::algorithm_names())]
    algo: Vec<String>,
    /// Run the search with its options as given and with each technique switch flipped in
    /// turn, and print the comparison as Markdown tables.
    #[arg(long)]
    ablation: bool,
    /// Measure instead what each algorithm costs alone, at scale: a baseline's allocation, or
    /// for `search` its setup only; time and peak memory (Linux), without reading, checking or
    /// validating. `--timeout` stops a baseline (hill climbing keeps its best so far).
    #[arg(long, conflicts_with_all = ["ablation", "markdown", "capacity", "minimize"])]
    footprint: bool,
    /// Print Markdown tables (a matrix and totals) after the rows.
    #[arg(long)]
    markdown: bool,
    /// Capacity in bytes (default: each file's own).
    #[arg(long, conflicts_with = "minimize", value_parser = clap::value_parser!(u64).range(1..))]
    capacity: Option<u64>,
    /// Find the smallest peak instead of fitting the capacity.
    #[arg(long)]
    minimize: bool,
    #[command(flatten)]
    limit: super::limit_args::LimitArgs,
    /// Seed for the randomised parts.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    #[command(flatten)]
    search: super::search_args::SearchArgs,
    /// Also write the rows as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

pub fn run(args: BenchArgs) -> Result<i32, CliError> {
    let files = problem_files(&args.paths)?;
    if files.is_empty() {
        return Err(CliError::Usage("no problem files found".into()));
    }
    args.limit.check_goal(args.minimize)?;
    let limits = args.limit.limits()?;
    if args.footprint {
        return footprint(&files, &args.algo, args.seed, limits.timeout, &args.json);
    }
    let mut solvers = Vec::new();
    for name in &args.algo {
        let solver = args.search.solver(super::search_args::algorithm(name)?)?;
        solvers.push((
            name.clone(),
            args.limit.solver(solver, limits).seed(args.seed),
        ));
    }
    if args.ablation {
        let search = args.search.solver(telamalloc::Algorithm::Search)?;
        let base = args.limit.solver(search, limits).seed(args.seed);
        solvers.retain(|(name, _)| name != "search");
        solvers.extend(bench::ablation(&base));
    }
    for (_, solver) in &solvers {
        solver.check_available()?;
    }
    println!("{}", bench::table_header());
    let rows = bench::run(&files, &solvers, args.capacity, args.minimize, |row| {
        println!("{}", bench::table_line(row))
    })?;
    if args.ablation || args.markdown {
        let cell = if args.minimize {
            bench::Cell::PeakOverCapacity
        } else {
            bench::Cell::Time
        };
        println!("\n{}", bench::matrix_markdown(&rows, cell));
        println!("{}", bench::summary_markdown(&rows));
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&rows).expect("plain data");
        write_file(path, &text)?;
    }
    Ok(EXIT_SOLVED)
}

/// `bench --footprint`: a row per problem and algorithm, each measured alone.
fn footprint(
    files: &[PathBuf],
    algorithms: &[String],
    seed: u64,
    timeout: Option<std::time::Duration>,
    json: &Option<PathBuf>,
) -> Result<i32, CliError> {
    let mut rows = Vec::new();
    println!("{}", bench::footprint_header());
    for file in files {
        let problem = telamalloc::io::read_problem(file, None)?;
        for name in algorithms {
            let algorithm = super::search_args::algorithm(name)?;
            let Some(mut row) = bench::footprint(&problem, name, algorithm, seed, timeout) else {
                return Err(CliError::Usage(format!(
                    "--footprint measures the baselines and the search's setup, not {name}"
                )));
            };
            row.problem = telamalloc::io::file_name(file);
            println!("{}", bench::footprint_line(&row));
            rows.push(row);
        }
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&rows).expect("plain data");
        write_file(path, &text)?;
    }
    Ok(EXIT_SOLVED)
}
