//! `telamalloc eval`: compare search policies over a split (or files), in parallel, with a
//! progress bar; prints a table and writes it, the runs (JSON) and a plot (SVG).

use super::{write_file, CliError, EXIT_SOLVED};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use std::path::PathBuf;
use telamalloc::bench::problem_files;
use telamalloc::evaluate::{
    cactus_svg, paired, paired_markdown, run_policy, summarise, summary_markdown, EvalRun,
};
use telamalloc::search::{policies_by_name, SearchOptions};

#[derive(Args)]
pub struct EvalArgs {
    /// Problem files or folders.
    paths: Vec<PathBuf>,
    /// Comma-separated policies: `fixed`, `portfolio` (the default portfolio), order words such as
    /// WAT or TWA+, `learned`, or model files.
    #[arg(long, value_delimiter = ',', default_value = "fixed,WAT,TAW,TWA")]
    policies: Vec<String>,
    /// A split: the problems listed in `datasets/splits/NAME.txt`.
    #[arg(long)]
    split: Option<String>,
    #[command(flatten)]
    limit: super::limit_args::LimitArgs,
    /// Runs in parallel (each run is single-threaded).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Folder for `eval.md` (the table), `eval.json` (every run) and `eval.svg` (the plot).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(args: EvalArgs) -> Result<i32, CliError> {
    let mut paths = args.paths.clone();
    if let Some(split) = &args.split {
        paths.extend(super::collect::split_files(split)?);
    }
    let files = problem_files(&paths)?;
    if files.is_empty() {
        return Err(CliError::Usage("no problem files given".into()));
    }
    // The search itself is evaluated: the baseline shortcut is off.
    let options = SearchOptions {
        heuristic_first: false,
        ..SearchOptions::default()
    };
    for name in &args.policies {
        if policies_by_name(name, 0, &options).is_none() {
            return Err(CliError::Usage(format!(
                "--policies: unknown policy '{name}'"
            )));
        }
    }
    let problems = files
        .iter()
        .map(|f| {
            let problem = super::read_problem(f, None)?;
            if problem.capacity.is_none() {
                return Err(CliError::Usage(format!("{}: no capacity", f.display())));
            }
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            Ok((name, problem))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    let limits = args.limit.limits_or(Some(10.0))?;
    let jobs: Vec<(usize, &String)> = args
        .policies
        .iter()
        .flat_map(|p| (0..problems.len()).map(move |i| (i, p)))
        .collect();
    let bar = ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} ({eta} left)")
            .expect("valid template"),
    );
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.max(1))
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start threads: {e}")))?;
    let runs: Vec<EvalRun> = pool.install(|| {
        jobs.par_iter()
            .map(|&(i, policy)| {
                let (name, problem) = &problems[i];
                let run = run_policy(problem, name, policy, &options, limits);
                bar.inc(1);
                run
            })
            .collect()
    });
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
