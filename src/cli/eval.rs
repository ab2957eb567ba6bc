//! `telamalloc eval`: compare search policies over a split (or files), in parallel, with a
//! progress bar; prints a table and writes it, the runs (JSON) and a plot (SVG).

use super::{write_file, CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::evaluate::{
    cactus_svg, evaluate, paired, paired_markdown, summarise, summary_markdown,
};
use telamalloc::io::file_name;
use telamalloc::{PolicySpec, SearchOptions, Solver};

#[derive(Args)]
pub struct EvalArgs {
    /// Problem files or folders.
    paths: Vec<PathBuf>,
    /// Comma-separated policies: `fixed`, `portfolio` (the default portfolio), order words such as
    /// WAT, TWA+ or TWA~, round robins such as TWA/TWA~/TWA+, `learned`, or model files.
    #[arg(long, value_delimiter = ',', default_value = "fixed,WAT,TAW,TWA")]
    policies: Vec<PolicySpec>,
    /// A split: the problems listed in `datasets/splits/NAME.txt`.
    #[arg(long)]
    split: Option<String>,
    #[command(flatten)]
    limit: super::limit_args::LimitArgs,
    /// Turn search techniques off (comma-separated; `telamalloc solve --help` lists them).
    #[arg(long = "no", value_delimiter = ',', value_name = "TECHNIQUE")]
    disable: Vec<String>,
    /// Turn search techniques on, e.g. `--with cpsat` (CP-SAT in every portfolio round).
    #[arg(long = "with", value_delimiter = ',', value_name = "TECHNIQUE")]
    enable: Vec<String>,
    /// Runs in parallel (each run is single-threaded).
    #[arg(long, default_value_t = 2, value_parser = super::threads_arg())]
    threads: usize,
    /// Seed of every run (diversified orders such as TWA~ depend on it): the same seed gives
    /// the same runs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Folder for `eval.md` (the table), `eval.json` (every run) and `eval.svg` (the plot).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: EvalArgs) -> Result<i32, CliError> {
    let problems: Vec<(String, telamalloc::Problem)> =
        super::read_problems_with_capacity(&args.paths, args.split.as_deref(), None)?
            .into_iter()
            .map(|(file, problem)| (file_name(&file), problem))
            .collect();
    // The search itself is evaluated: the baseline shortcut is off.
    let mut options = SearchOptions {
        heuristic_first: false,
        ..SearchOptions::default()
    };
    options
        .apply_switches(&args.disable, &args.enable)
        .map_err(CliError::Usage)?;
    let solver = Solver::new()
        .options(options)
        .limits(args.limit.limits_or(Some(10.0))?)
        .seed(args.seed);
    solver.check_available()?;
    let bar = super::progress_bar(problems.len() * args.policies.len(), "runs");
    let runs = evaluate(&problems, &args.policies, &solver, args.threads, &|| {
        bar.inc(1)
    })
    .map_err(CliError::Usage)?;
    bar.finish_and_clear();
    let mut table = summary_markdown(&summarise(&runs));
    let pairs = paired(&runs);
    if !pairs.is_empty() {
        table.push('\n');
        table.push_str(&paired_markdown(&pairs));
    }
    println!("{table}");
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)
            .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", out.display())))?;
        write_file(&out.join("eval.md"), &table)?;
        let json = serde_json::to_string_pretty(&runs).expect("plain data");
        write_file(&out.join("eval.json"), &json)?;
        write_file(&out.join("eval.svg"), &cactus_svg(&runs))?;
    }
    Ok(EXIT_SOLVED)
}
