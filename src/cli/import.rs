//! `telamalloc import`: turn a `.tflite` or `.onnx` model into a problem CSV (activation tensors
//! only; see the `telamalloc::import` module for the lifetime and size conventions).

use super::{write_file, CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::analysis::Timeline;
use telamalloc::import::{format_shape, import_model, parse_shape, ImportOptions};
use telamalloc::io::write_csv_problem;

#[derive(Args)]
pub struct ImportArgs {
    /// The model file (`.tflite` or `.onnx`; other names are recognised by their content).
    model: PathBuf,
    /// Output CSV file (default: standard output).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Round every buffer size up to a multiple of this power of two.
    #[arg(long, default_value_t = 64)]
    alignment: u64,
    /// The value given to dynamic or unknown dimensions.
    #[arg(long, default_value_t = 1)]
    batch: u64,
    /// The shape of a graph input, replacing the model's: NAME=1x3x224x224 (repeatable).
    #[arg(long = "input-shape", value_name = "NAME=DIMS")]
    input_shapes: Vec<String>,
}

pub fn run(args: ImportArgs) -> Result<i32, CliError> {
    let mut input_shapes = Vec::new();
    for text in &args.input_shapes {
        let (name, dims) = text.rsplit_once('=').ok_or_else(|| {
            CliError::Usage(format!(
                "--input-shape '{text}': expected NAME=DIMS, e.g. input=1x3x224x224"
            ))
        })?;
        let dims = parse_shape(dims)
            .map_err(|e| CliError::Usage(format!("--input-shape '{text}': {e}")))?;
        input_shapes.push((name.to_string(), dims));
    }
    let options = ImportOptions {
        alignment: args.alignment,
        batch: args.batch,
        input_shapes,
    };
    let imported = import_model(&args.model, &options)?;
    let file = args.model.display();
    for warning in &imported.warnings {
        eprintln!("warning: {file}: {warning}");
    }
    let text = write_csv_problem(&imported.problem);
    match &args.output {
        Some(path) => write_file(path, &text)?,
        None => print!("{text}"),
    }
    let inputs: Vec<String> = imported
        .input_shapes
        .iter()
        .map(|(name, dims)| format!("{name}={}", format_shape(dims)))
        .collect();
    eprintln!(
        "imported {file} ({}): {} buffers over {} steps, LOAD {}; inputs {}",
        imported.format.name(),
        imported.problem.len(),
        imported.steps,
        Timeline::new(&imported.problem).load(),
        inputs.join(" ")
    );
    Ok(EXIT_SOLVED)
}
