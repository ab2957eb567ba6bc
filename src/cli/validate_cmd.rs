//! `telamalloc validate`: check a solution file against a problem.

use super::{CliError, EXIT_NOT_SOLVED, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::io::{read_assigned, read_memories, read_problem_in};
use telamalloc::{validate, validate_assignment};

#[derive(Args)]
pub struct ValidateArgs {
    /// Problem file (CSV or .json).
    input: PathBuf,
    /// Solution file (CSV with id and offset columns, and a memory column for `--spill` and
    /// `--memories` solutions; or .json).
    solution: PathBuf,
    /// The memories file the solution was made with (`solve --memories`).
    #[arg(long)]
    memories: Option<PathBuf>,
    /// Capacity in bytes (default: the problem's own, if any).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    capacity: Option<u64>,
}

pub fn run(args: ValidateArgs) -> Result<i32, CliError> {
    let memories = args.memories.as_deref().map(read_memories).transpose()?;
    let problem = read_problem_in(&args.input, args.capacity, memories)?;
    let (solution, assignment) = read_assigned(&args.solution, &problem)?;
    let report = match &assignment {
        Some(assignment) => validate_assignment(&problem, &solution, assignment, problem.capacity),
        None => validate(&problem, &solution, problem.capacity),
    };
    if let (true, Some(assignment)) = (report.is_valid(), &assignment) {
        println!(
            "valid: {} buffers, {} moved out, {} bytes kept, cost {}",
            problem.len(),
            assignment.moved_out().len(),
            assignment.kept_bytes(&problem),
            assignment.cost(&problem)
        );
        return Ok(EXIT_SOLVED);
    }
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
