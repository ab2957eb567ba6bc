//! `telamalloc logs`: read solve logs back through the library and summarise them.

use super::{CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::search::record::{read_log_file, TryResult};

#[derive(Args)]
pub struct LogsArgs {
    /// Log files, or folders of `.jsonl` / `.jsonl.gz` files.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

pub fn run(args: LogsArgs) -> Result<i32, CliError> {
    let mut files = Vec::new();
    for path in &args.paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let name = p.to_string_lossy();
                    name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")
                })
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    let (mut decisions, mut candidates, mut tries, mut on_path) = (0u64, 0u64, 0u64, 0u64);
    let mut outcomes = std::collections::BTreeMap::<String, u64>::new();
    let mut version = None;
    for file in &files {
        let log = read_log_file(file).map_err(CliError::Usage)?;
        version.get_or_insert((log.header.version, log.header.feature_version));
        decisions += log.decisions.len() as u64;
        for d in &log.decisions {
            candidates += d.candidates.len() as u64;
            tries += d.tries.len() as u64;
            on_path += d
                .tries
                .iter()
                .filter(|t| t.result == TryResult::Found)
                .count() as u64;
        }
        let outcome = log.footer.map_or("incomplete".to_string(), |f| f.outcome);
        *outcomes.entry(outcome).or_default() += 1;
    }
    let (schema, features) = version.unwrap_or((0, 0));
    println!(
        "{} logs (schema version {schema}, feature version {features}): {decisions} decisions, {candidates} candidates, {tries} tries, {on_path} on solution paths",
        files.len()
    );
    let outcomes: Vec<String> = outcomes.iter().map(|(k, v)| format!("{v} {k}")).collect();
    println!("outcomes: {}", outcomes.join(", "));
    Ok(EXIT_SOLVED)
}
