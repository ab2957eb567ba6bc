//! `telamalloc plan`: a `.tflite` model in; out, the model with its operators reordered for the
//! smallest LOAD and telamalloc's layout for that order written in as TFLite Micro's offline
//! memory plan (import, reorder, solve --minimize, export-plan in one).

use super::import::{reorder_limits, reorder_summary};
use super::{write_file, CliError, EXIT_NOT_SOLVED, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;
use telamalloc::export::{PlanTarget, TFLM_ALIGNMENT};
use telamalloc::import::reorder::reorder_bytes;
use telamalloc::import::{ImportOptions, ModelFormat};
use telamalloc::io::{file_name, Format};
use telamalloc::{solution_text, Goal, InputError, Limits, Solver};

#[derive(Args)]
pub struct PlanArgs {
    /// The model (`.tflite`).
    model: PathBuf,
    /// The planned model to write.
    #[arg(long, short)]
    output: PathBuf,
    /// Keep the model's operator order: only plan the layout.
    #[arg(long)]
    no_reorder: bool,
    /// Wall-clock limit in seconds for the whole command (default 20): the reordering may take
    /// up to half, the layout search takes what is left.
    #[arg(long)]
    timeout: Option<f64>,
    /// Also write the layout here (CSV, or JSON for a `.json` name): offsets by buffer id.
    #[arg(long, value_name = "FILE")]
    solution: Option<PathBuf>,
}

pub fn run(args: PlanArgs) -> Result<i32, CliError> {
    let started = Instant::now();
    let name = args.model.display().to_string();
    let total = Limits::timeout_from_secs(args.timeout.unwrap_or(20.0))
        .map_err(|why| CliError::Usage(format!("--timeout {why}")))?;
    let original = std::fs::read(&args.model)
        .map_err(|e| InputError::at_line(&name, None, None, format!("cannot read file: {e}")))?;
    // Every check of the plan's model first (a TFLite Micro plan needs static shapes, ...), so
    // that a model it cannot take fails before any work and any line saying it was reordered.
    let target = PlanTarget::read(&original, &name)?;
    let (model, target) = if args.no_reorder {
        (original, target)
    } else {
        let mut limits = reorder_limits(None)?;
        limits.timeout = Some(total / 2);
        // TFLite Micro's sizes: rounded up to its 16-byte alignment.
        let options = ImportOptions {
            alignment: TFLM_ALIGNMENT,
            ..ImportOptions::default()
        };
        let mut reordered =
            reorder_bytes(&original, ModelFormat::Tflite, &name, &options, &limits)?;
        let model = reordered
            .model
            .take()
            .expect("a TFLite model is written back");
        let target = PlanTarget::read(&model, &name)?;
        eprintln!("{}", reorder_summary(&name, &reordered));
        (model, target)
    };
    let solver = Solver::new().timeout(total.saturating_sub(started.elapsed()));
    let result = solver.solve(target.problem(), Goal::Minimize)?;
    for warning in &result.warnings {
        eprintln!("{warning}");
    }
    let Some(solution) = &result.solution else {
        eprintln!(
            "{name}: no layout found within the time limit ({:?}); nothing written",
            result.status
        );
        return Ok(EXIT_NOT_SOLVED);
    };
    let planned = target.write_plan(&model, solution, &name)?;
    if let Some(path) = &args.solution {
        let text = solution_text(
            target.problem(),
            solution,
            &result,
            solver.algorithm_name(),
            Format::from_path(path),
        );
        write_file(path, &text)?;
    }
    std::fs::write(&args.output, &planned.bytes)
        .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", args.output.display())))?;
    eprintln!(
        "wrote {}: an offline plan for {} of {} tensors, planned section {} bytes, LOAD {} \
         ({}), {:.3} s",
        file_name(&args.output),
        planned.planned,
        planned.plan.offsets.len(),
        planned.peak,
        result.load,
        if planned.peak == result.load {
            "the layout is at LOAD: optimal for this order"
        } else {
            "above LOAD"
        },
        started.elapsed().as_secs_f64()
    );
    Ok(EXIT_SOLVED)
}
