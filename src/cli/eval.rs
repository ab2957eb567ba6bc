//! `telamalloc eval`: compare search policies over a split (or files), in parallel, with a
//! progress bar; prints a table and writes it, the runs (JSON) and a plot (SVG).

use super::{write_file, CliError, EXIT_SOLVED};
use clap::Args;
use std::path::PathBuf;
use telamalloc::evaluate::{
    cactus_svg, evaluate, paired, paired_markdown, summarise, summary_markdown,
};
use telamalloc::io::file_name;
use telamalloc::{Algorithm, PolicySpec, SearchOptions, Solver};

#[derive(Args)]
pub struct EvalArgs {
    /// Problem files or folders.
    paths: Vec<PathBuf>,
    /// Comma-separated policies: `portfolio` (the default search, and the default here),
    /// `fixed`, order words such as WAT, TWA+ or TWA~, round robins such as TWA/TWA~/TWA+,
    /// `learned`, or model files; the first is the one the others are paired against.
    #[arg(long, value_delimiter = ',', default_value = "portfolio")]
    policies: Vec<PolicySpec>,
    /// A split: the problems listed in `datasets/splits/NAME.txt`.
    #[arg(long)]
    split: Option<String>,
    #[command(flatten)]
    limit: super::limit_args::LimitArgs,
    #[command(flatten)]
    switches: super::search_args::SwitchArgs,
    /// `search` (the policies above) or `cpsat` (CP-SAT alone, one worker; its nodes are the
    /// node equivalents of its deterministic time, and `--nodes` limits them).
    #[arg(long, default_value = "search", value_parser = ["search", "cpsat"])]
    algo: String,
    /// Runs in parallel (each run is single-threaded).
    #[arg(long, default_value_t = 2, value_parser = super::threads_arg())]
    threads: usize,
    /// Seed of every run (diversified orders such as TWA~ depend on it): the same seed gives
    /// the same runs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Folder for `eval.md` (the table), `eval.json` (every run) and `eval.svg` (the plot).
    /// While the evaluation runs, each finished run is appended to `eval.partial.jsonl` there
    /// (one JSON object a line, as in `eval.json`), so an interrupted evaluation keeps what it
    /// did; the file is removed once `eval.json` is written.
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
    args.switches.apply(&mut options)?;
    let algorithm = super::search_args::algorithm(&args.algo)?;
    let solver = Solver::new().algorithm(algorithm).options(options);
    let solver = args
        .limit
        .solver(solver, args.limit.limits_or(10.0)?)
        .seed(args.seed);
    solver.check_available()?;
    // CP-SAT has no policies: one run per problem.
    let policies = match algorithm {
        Algorithm::Search => args.policies.clone(),
        _ => vec![PolicySpec::default()],
    };
    let partial = match &args.out {
        Some(out) => Some(PartialRuns::create(out)?),
        None => None,
    };
    let bar = super::progress_bar(problems.len() * policies.len(), "runs");
    let on_done = |run: &telamalloc::evaluate::EvalRun| {
        if let Some(partial) = &partial {
            partial.append(run);
        }
        bar.inc(1);
    };
    let runs =
        evaluate(&problems, &policies, &solver, args.threads, &on_done).map_err(CliError::Usage)?;
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
    if let Some(partial) = partial {
        partial.remove();
    }
    Ok(EXIT_SOLVED)
}

/// `eval.partial.jsonl`: the runs of an evaluation, appended as they finish.
struct PartialRuns {
    path: PathBuf,
    file: std::sync::Mutex<std::fs::File>,
}

impl PartialRuns {
    /// A new, empty file in `out` (created with its folders).
    fn create(out: &std::path::Path) -> Result<PartialRuns, CliError> {
        std::fs::create_dir_all(out)
            .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", out.display())))?;
        let path = out.join("eval.partial.jsonl");
        let file = std::fs::File::create(&path)
            .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display())))?;
        Ok(PartialRuns {
            path,
            file: std::sync::Mutex::new(file),
        })
    }

    /// Appends `run` as one line. Best effort: a failed write costs only the partial record
    /// (the final files are written, and checked, at the end).
    fn append(&self, run: &telamalloc::evaluate::EvalRun) {
        use std::io::Write;
        let line = serde_json::to_string(run).expect("plain data") + "\n";
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = file.write_all(line.as_bytes());
    }

    /// Removes the file: the complete runs are in `eval.json` now.
    fn remove(self) {
        drop(self.file);
        let _ = std::fs::remove_file(&self.path);
    }
}
