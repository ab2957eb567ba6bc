//! `telamalloc bench`: a table per problem and algorithm (status, peak/LOAD, peak/capacity, time).

use super::{write_file, CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::allocate::Algorithm;
use telamalloc::bench;

#[derive(Args)]
pub struct BenchArgs {
    /// Problem files or folders (their .csv and .json files).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Comma-separated algorithms.
    #[arg(long, value_delimiter = ',', required_unless_present = "ablation", value_parser = super::solve::algorithm_names())]
    algo: Vec<String>,
    /// Run the search with its options as given and with each technique switch flipped in
    /// turn, and print the comparison as Markdown tables.
    #[arg(long)]
    ablation: bool,
    /// Print Markdown tables (a matrix and totals) after the rows.
    #[arg(long)]
    markdown: bool,
    /// Capacity in bytes (default: each file's own).
    #[arg(long, conflicts_with = "minimize")]
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
    if args.capacity == Some(0) {
        return Err(CliError::Usage("--capacity must be greater than 0".into()));
    }
    let files = bench::problem_files(&args.paths)?;
    if files.is_empty() {
        return Err(CliError::Usage("no problem files found".into()));
    }
    let mut algorithms: Vec<(String, Algorithm)> = args
        .algo
        .iter()
        .map(|name| Ok((name.clone(), args.search.algorithm(name)?)))
        .collect::<Result<_, CliError>>()?;
    if args.ablation {
        let base = args.search.options()?;
        algorithms.retain(|(name, _)| name != "search");
        let policy = args.search.policy.clone();
        algorithms.push((
            "search".into(),
            Algorithm::Search {
                options: base.clone(),
                policy: policy.clone(),
            },
        ));
        for (label, options) in base.ablation_variants() {
            algorithms.push((
                label,
                Algorithm::Search {
                    options,
                    policy: policy.clone(),
                },
            ));
        }
    }
    let limits = args.limit.limits()?;
    println!("{}", bench::table_header());
    let rows = bench::run(
        &files,
        &algorithms,
        args.capacity,
        args.minimize,
        limits,
        args.seed,
        |row| println!("{}", bench::table_line(row)),
    )?;
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
