//! `telamalloc validate`: check a solution file against a problem.

use super::{read_problem, CliError, EXIT_NOT_SOLVED, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::io::read_solution;
use telamalloc::validate;

#[derive(Args)]
pub struct ValidateArgs {
    /// Problem file (CSV or .json).
    input: PathBuf,
    /// Solution file (CSV with id and offset columns, or .json).
    solution: PathBuf,
    /// Capacity in bytes (default: the problem's own, if any).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    capacity: Option<u64>,
}

pub fn run(args: ValidateArgs) -> Result<i32, CliError> {
    let problem = read_problem(&args.input, args.capacity)?;
    let solution = read_solution(&args.solution, &problem)?;
    let report = validate(&problem, &solution, problem.capacity);
    if report.is_valid() {
        println!(
            "valid: {} buffers, peak {}{}",
            problem.len(),
            solution.peak(&problem),
            problem
                .capacity
                .map(|c| format!(", capacity {c}"))
                .unwrap_or_default()
        );
        Ok(EXIT_SOLVED)
    } else {
        println!("invalid:\n{report}");
        Ok(EXIT_NOT_SOLVED)
    }
}
