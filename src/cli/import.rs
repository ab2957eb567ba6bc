//! `telamalloc import`: turn a `.tflite` or `.onnx` model into a problem CSV (activation tensors
//! only; see the `telamalloc::import` module for the lifetime and size conventions).

use super::{write_file, CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::analysis::Timeline;
use telamalloc::import::reorder::{reorder_model, ReorderedModel};
use telamalloc::import::{format_shape, import_model, parse_shape, ImportOptions};
use telamalloc::io::write_csv_problem;
use telamalloc::reorder::ReorderOptions;
use telamalloc::Limits;

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
    /// Reorder the operators for the smallest LOAD first: the problem's lifetimes follow the
    /// new order (the model keeps its own when no order is better).
    #[arg(long)]
    reorder: bool,
    /// With --reorder: the search's wall-clock limit in seconds (default 10).
    #[arg(long, requires = "reorder")]
    timeout: Option<f64>,
    /// With --reorder: write the .tflite model with its operators in the new order here.
    #[arg(long, requires = "reorder", value_name = "FILE")]
    reordered_model: Option<PathBuf>,
}

/// The search limits `--timeout SECONDS` asks for (10 s by default).
pub fn reorder_limits(timeout: Option<f64>) -> Result<ReorderOptions, CliError> {
    let timeout = Limits::timeout_from_secs(timeout.unwrap_or(10.0))
        .map_err(|why| CliError::Usage(format!("--timeout {why}")))?;
    Ok(ReorderOptions {
        timeout: Some(timeout),
        ..ReorderOptions::default()
    })
}

/// One line saying what reordering did: LOAD before and after, proven or not, time.
pub fn reorder_summary(file: &str, reordered: &ReorderedModel) -> String {
    let before = Timeline::new(&reordered.original.problem).load();
    let after = Timeline::new(&reordered.reordered.problem).load();
    let search = &reordered.search;
    let status = if search.optimal {
        "proven minimal".to_string()
    } else {
        format!(
            "not proven minimal (lower bound {}{})",
            search.lower_bound,
            if search.timed_out { ", time limit" } else { "" }
        )
    };
    format!(
        "reordered {file}: LOAD {before} -> {after} ({:.1}% less{}), {status}; {} states, {:.3} s",
        100.0 * before.saturating_sub(after) as f64 / before.max(1) as f64,
        if reordered.changed {
            ""
        } else {
            ", the model's own order kept"
        },
        search.states,
        reordered.elapsed.as_secs_f64()
    )
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
    let file = args.model.display();
    let imported = if args.reorder {
        let reordered = reorder_model(&args.model, &options, &reorder_limits(args.timeout)?)?;
        eprintln!("{}", reorder_summary(&file.to_string(), &reordered));
        if let Some(path) = &args.reordered_model {
            let bytes = reordered.model.as_ref().ok_or_else(|| {
                CliError::Usage(format!(
                    "--reordered-model: {file} is not a .tflite model (only TFLite models are \
                     written)"
                ))
            })?;
            std::fs::write(path, bytes)
                .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display())))?;
        }
        reordered.reordered
    } else {
        import_model(&args.model, &options)?
    };
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
