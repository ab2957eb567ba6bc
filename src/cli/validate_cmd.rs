//! `telamalloc validate`: check a solution file against a problem.

use super::{CliError, EXIT_NOT_SOLVED, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::io::{read_assigned, read_memories, read_problem_in, read_problem_to_spill};
use telamalloc::InputError;
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
    /// Capacity in bytes (default: the problem's own, if any). Not with `--memories`: each
    /// memory has its own.
    #[arg(long, conflicts_with = "memories", value_parser = clap::value_parser!(u64).range(1..))]
    capacity: Option<u64>,
}

pub fn run(args: ValidateArgs) -> Result<i32, CliError> {
    let memories = args.memories.as_deref().map(read_memories).transpose()?;
    // Read as `solve --spill` and `solve --memories` read it (a buffer beyond the capacity may
    // be moved out; with memories the one capacity is not used), and for a plain solution
    // again with every rule of the capacity.
    let problem = read_problem_to_spill(&args.input, args.capacity, memories)?;
    let (solution, assignment) = read_assigned(&args.solution, &problem)?;
    let problem =
        match &assignment {
            Some(_) => problem,
            None if !problem.memories.is_empty() => return Err(InputError::at_line(
                &args.solution.display().to_string(),
                None,
                Some("memory"),
                "the problem has memories but the solution gives no buffer's memory (a solution \
                 of solve --memories has a memory column, or field)",
            )
            .into()),
            None => read_problem_in(&args.input, args.capacity, None)?,
        };
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
