//! `telamalloc logs`: read solve logs back through the library and summarise them.

use super::{CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::solve_log::{log_files, summarise_logs};

#[derive(Args)]
pub struct LogsArgs {
    /// Log files, or folders of `.jsonl` / `.jsonl.gz` files.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

pub fn run(args: LogsArgs) -> Result<i32, CliError> {
    let files = log_files(&args.paths).map_err(CliError::Usage)?;
    let summary = summarise_logs(&files).map_err(CliError::Usage)?;
    let (schema, features) = summary.versions;
    println!(
        "{} (schema version {schema}, feature version {features}): {}, {}, {}, {} on solution \
         paths",
        counted(summary.logs as u64, "log", "logs"),
        counted(summary.decisions, "decision", "decisions"),
        counted(summary.candidates, "candidate", "candidates"),
        counted(summary.tries, "try", "tries"),
        summary.on_path
    );
    let outcomes: Vec<String> = summary
        .outcomes
        .iter()
        .map(|(k, v)| format!("{v} {k}"))
        .collect();
    println!("outcomes: {}", outcomes.join(", "));
    Ok(EXIT_SOLVED)
}

/// `n` and the noun, singular for one: "1 log", "2 logs".
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
