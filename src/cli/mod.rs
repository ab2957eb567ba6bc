//! Command-line parsing and dispatch. Exit codes: 0 solved, 1 not solved, 2 bad input or usage.
//! Each command parses its flags, makes one library call and prints.

mod bench;
mod collect;
mod completions;
mod eval;
mod export_plan;
mod gen;
mod import;
mod limit_args;
mod logs;
mod plan;
mod plot;
mod search_args;
mod solve;
mod stats;
mod switches;
mod validate_cmd;

use clap::{Parser, Subcommand};
use telamalloc::InputError;

/// Exit code: solved / valid.
pub const EXIT_SOLVED: i32 = 0;
/// Exit code: not solved (limit reached, infeasible) / invalid solution.
pub const EXIT_NOT_SOLVED: i32 = 1;
/// Exit code: bad input or usage.
pub const EXIT_BAD_INPUT: i32 = 2;

#[derive(Parser)]
#[command(
    name = "telamalloc",
    version,
    long_version = long_version(),
    about = "Assigns memory offsets to the buffers of a compiled ML model (TelaMalloc hybrid search)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve a problem: print (or write) a validated solution, or say why there is none.
    Solve(solve::SolveArgs),
    /// Check a solution against a problem.
    Validate(validate_cmd::ValidateArgs),
    /// Print statistics of problems: buffers, horizon, LOAD, sections, partitions.
    Stats(stats::StatsArgs),
    /// Run algorithms over problems and print a comparison table.
    Bench(bench::BenchArgs),
    /// Compare search policies over a split or files: solved, median and p90 time and nodes
    /// (10 s per run unless --timeout or --nodes says otherwise: a node limit alone is not also
    /// cut by the clock).
    Eval(eval::EvalArgs),
    /// Read solve logs back through the library and summarise them.
    Logs(logs::LogsArgs),
    /// Draw a solution as SVG: time across, address up, the capacity and LOAD lines.
    Plot(plot::PlotArgs),
    /// Run the search over many problems in parallel and write a solve log for each.
    Collect(collect::CollectArgs),
    /// Generate a problem (perfect packing, all-overlapping, random, on-chip, CNN-like layers),
    /// deterministic from a seed.
    Gen(gen::GenArgs),
    /// Import a model (.tflite or .onnx) as a problem: one buffer per activation tensor.
    Import(import::ImportArgs),
    /// Write a solution into a .tflite model as TFLite Micro's offline memory plan.
    ExportPlan(export_plan::ExportPlanArgs),
    /// Reorder a .tflite model's operators for the smallest LOAD, lay it out and write both in
    /// (import, reorder, solve --minimize and export-plan in one).
    Plan(plan::PlanArgs),
    /// List the search technique switches (`--no NAME`, `--with NAME`): default and what each does.
    Switches(switches::SwitchesArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to standard output.
    Completions(completions::CompletionsArgs),
}

/// What `--version` prints after the name: the crate version and every learned model built in
/// (`models/*.json`), one line each (`-V` prints the version alone).
fn long_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| {
        use telamalloc::learned::cpsat_gate::BUILT_IN_GATE;
        use telamalloc::learned::hole_model::BUILT_IN_HOLE_MODEL;
        use telamalloc::learned::restart_model::BUILT_IN_RESTART_MODEL;
        use telamalloc::learned::{
            CpSatGate, HoleModel, ModelFile, RestartModel, BUILT_IN_MODEL, DEFAULT_MODEL_PATH,
        };
        let model = match ModelFile::built_in() {
            Ok(model) => format!(
                "{} parameters, feature schema {}, training data {}",
                model.parameters(),
                model.feature_schema_version,
                model.training.data_hash
            ),
            Err(e) => format!("unusable: {e}"),
        };
        let holes = HoleModel::built_in();
        let restarts = RestartModel::built_in();
        let restart_parameters: usize = restarts
            .layers
            .iter()
            .map(|layer| layer.weights.len() + layer.bias.len())
            .sum();
        let gate = CpSatGate::built_in();
        format!(
            "{}\nlearned model: {DEFAULT_MODEL_PATH} built in (FNV-1a {:016x}; {model})\n\
             hole-shape model: models/hole_shapes.json built in (FNV-1a {:016x}; {} weights, \
             feature schema {})\n\
             restart model: models/restarts.json built in (FNV-1a {:016x}; {} parameters, \
             feature schema {}; runs with --with learned-restarts)\n\
             CP-SAT gate: models/cpsat_gate.json built in (FNV-1a {:016x}; {} parameters, \
             feature schema {}; runs with --with cpsat)",
            env!("CARGO_PKG_VERSION"),
            fnv1a(BUILT_IN_MODEL.as_bytes()),
            fnv1a(BUILT_IN_HOLE_MODEL.as_bytes()),
            holes.weights.len(),
            holes.feature_schema,
            fnv1a(BUILT_IN_RESTART_MODEL.as_bytes()),
            restart_parameters,
            restarts.feature_schema,
            fnv1a(BUILT_IN_GATE.as_bytes()),
            gate.weights.len() + 1,
            gate.feature_schema,
        )
    })
}

/// The 64-bit FNV-1a hash of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Parses the arguments, runs the command and returns the exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_BAD_INPUT } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let result = match cli.command {
        Command::Solve(args) => solve::run(args),
        Command::Validate(args) => validate_cmd::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Gen(args) => gen::run(args),
        Command::Collect(args) => collect::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Logs(args) => logs::run(args),
        Command::Import(args) => import::run(args),
        Command::ExportPlan(args) => export_plan::run(args),
        Command::Plan(args) => plan::run(args),
        Command::Switches(args) => switches::run(args),
        Command::Completions(args) => completions::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_BAD_INPUT
        }
    }
}

/// Reads a problem, turning errors into the CLI's error type.
pub fn read_problem(
    path: &std::path::Path,
    capacity: Option<u64>,
) -> Result<telamalloc::Problem, CliError> {
    Ok(telamalloc::io::read_problem(path, capacity)?)
}

/// Reads the problems of `paths` and of a split, each with a capacity (see
/// [`telamalloc::io::read_problem_set`]); none at all is a usage error.
pub fn read_problems_with_capacity(
    paths: &[std::path::PathBuf],
    split: Option<&str>,
    capacity: Option<u64>,
) -> Result<Vec<(std::path::PathBuf, telamalloc::Problem)>, CliError> {
    let problems = telamalloc::io::read_problem_set(paths, split, capacity, true)?;
    if problems.is_empty() {
        return Err(CliError::Usage("no problem files given".into()));
    }
    Ok(problems)
}

/// Writes `text` to `path` (see [`telamalloc::io::write_file`]); `-` is standard output.
pub fn write_file(path: &std::path::Path, text: &str) -> Result<(), CliError> {
    if path.as_os_str() == "-" {
        print!("{text}");
        return Ok(());
    }
    telamalloc::io::write_file(path, text)
        .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display())))
}

/// The values `--threads` takes: 1 to [`telamalloc::Solver::MAX_THREADS`].
pub fn threads_arg() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=telamalloc::Solver::MAX_THREADS as u64)
}

/// A progress bar over `len` items, labelled `what`.
pub fn progress_bar(len: usize, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{bar:40}} {{pos}}/{{len}} {what}, {{elapsed}} ({{eta}} left)"
        ))
        .expect("valid template"),
    );
    bar
}

/// An error that ends a command with exit code 2.
#[derive(Debug)]
pub enum CliError {
    /// Bad input file.
    Input(InputError),
    /// Bad usage or an I/O failure, in words.
    Usage(String),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Input(e) => write!(f, "{e}"),
            CliError::Usage(m) => write!(f, "{m}"),
        }
    }
}

impl From<InputError> for CliError {
    fn from(e: InputError) -> Self {
        CliError::Input(e)
    }
}

impl From<telamalloc::SolveError> for CliError {
    fn from(e: telamalloc::SolveError) -> Self {
        CliError::Usage(e.to_string())
    }
}
