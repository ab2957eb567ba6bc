//! `telamalloc plot`: draw a solution as SVG (time across, address up).

use super::{read_problem, write_file, CliError, EXIT_NOT_SOLVED, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::io::read_solution;
use telamalloc::plot::render_svg;
use telamalloc::validate;

#[derive(Args)]
pub struct PlotArgs {
    /// Problem file (CSV or .json).
    input: PathBuf,
    /// Solution file (CSV with id and offset columns, or .json).
    solution: PathBuf,
    /// Output SVG file.
    #[arg(long, short)]
    output: PathBuf,
    /// Capacity line to draw (default: the problem's own).
    #[arg(long)]
    capacity: Option<u64>,
}

pub fn run(args: PlotArgs) -> Result<i32, CliError> {
    let problem = read_problem(&args.input, args.capacity)?;
    let solution = read_solution(&args.solution, &problem)?;
    let report = validate(&problem, &solution, problem.capacity);
    let svg = render_svg(&problem, &solution, problem.capacity);
    write_file(&args.output, &svg)?;
    if report.is_valid() {
        eprintln!("wrote {}", args.output.display());
        Ok(EXIT_SOLVED)
    } else {
        // Still drawn (to see what is wrong), but said clearly.
        eprintln!(
            "wrote {}, but the solution is invalid:\n{report}",
            args.output.display()
        );
        Ok(EXIT_NOT_SOLVED)
    }
}
