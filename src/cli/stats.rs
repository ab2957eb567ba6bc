//! `telamalloc stats`: buffers, horizon, LOAD, LOAD / capacity, sections, partitions.

use super::{read_problem, CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::analysis::Stats;
use telamalloc::io::problem_files;

#[derive(Args)]
pub struct StatsArgs {
    /// Problem files (CSV or .json) or folders (their .csv and .json problems).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Capacity in bytes (default: each file's own).
    #[arg(long)]
    capacity: Option<u64>,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(args: StatsArgs) -> Result<i32, CliError> {
    if !args.json {
        println!(
            "{:<28} {:>8} {:>10} {:>12} {:>12} {:>9} {:>9} {:>10} {:>9}",
            "problem",
            "buffers",
            "horizon",
            "LOAD",
            "capacity",
            "LOAD/cap",
            "sections",
            "partitions",
            "max/LOAD"
        );
    }
    for input in &problem_files(&args.inputs)? {
        let problem = read_problem(input, args.capacity)?;
        let stats = Stats::of(&problem);
        if args.json {
            let mut value = serde_json::to_value(&stats).expect("plain data");
            value["problem"] = input.display().to_string().into();
            println!("{value}");
            continue;
        }
        println!(
            "{:<28} {:>8} {:>10} {:>12} {:>12} {:>9} {:>9} {:>10} {:>9.3}",
            input
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
            stats.buffers,
            stats.horizon,
            stats.load,
            stats
                .capacity
                .map(|c| c.to_string())
                .unwrap_or_else(|| "-".into()),
            stats
                .load_over_capacity
                .map(|r| format!("{r:.3}"))
                .unwrap_or_else(|| "-".into()),
            stats.sections,
            stats.partitions,
            stats.largest_over_load
        );
    }
    Ok(EXIT_SOLVED)
}
