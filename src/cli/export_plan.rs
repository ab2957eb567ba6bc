//! `telamalloc export-plan`: write a solution into a `.tflite` model as TensorFlow Lite Micro's
//! offline memory plan (see the `telamalloc::export` module).

use super::{CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::export::PlanTarget;
use telamalloc::io::read_solution;
use telamalloc::InputError;

#[derive(Args)]
pub struct ExportPlanArgs {
    /// The model (`.tflite`) the problem was imported from.
    model: PathBuf,
    /// A solution of the problem `telamalloc import MODEL` wrote (CSV or .json): offsets by
    /// buffer id.
    solution: PathBuf,
    /// The planned model to write.
    #[arg(long, short)]
    output: PathBuf,
}

pub fn run(args: ExportPlanArgs) -> Result<i32, CliError> {
    let model_name = args.model.display().to_string();
    let bytes = std::fs::read(&args.model).map_err(|e| {
        InputError::at_line(&model_name, None, None, format!("cannot read file: {e}"))
    })?;
    let target = PlanTarget::read(&bytes, &model_name)?;
    let solution_name = args.solution.display().to_string();
    let solution = read_solution(&args.solution, target.problem())?;
    let planned = target.write_plan(&bytes, &solution, &solution_name)?;
    std::fs::write(&args.output, &planned.bytes)
        .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", args.output.display())))?;
    eprintln!(
        "wrote {}: an offline plan for {} of {} tensors, planned section {} bytes{}",
        args.output.display(),
        planned.planned,
        planned.plan.offsets.len(),
        planned.peak,
        if planned.replaced {
            " (the model's previous plan replaced)"
        } else {
            ""
        }
    );
    Ok(EXIT_SOLVED)
}
