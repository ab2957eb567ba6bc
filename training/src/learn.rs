//! `telamalloc-train learn`: the user loop. A folder of a deployment's problems is split, by a
//! hash of each file name, into three disjoint parts: one trains, one chooses, one reports. The
//! loop races the search's strategies under a node budget on the first two, trains a portfolio
//! head (which strategies to run, with what share of the budget, per problem) on the training
//! part with early stopping and its share schedule on the choosing part, records solve logs of
//! the training part and trains the ranking and risk heads on them (`learn_heads`), runs the
//! shipped default and every candidate side by side on the choosing part and keeps the best
//! there. Only then does it run the kept candidate and the shipped default on the reporting
//! part, which nothing was chosen on: the report's figures and how sure the win is (paired
//! resamples) come from that part alone. The model is written when the kept candidate wins on
//! the choosing part, and describes its own data.
//!
//! Every run is limited by nodes, not time, so the same folder, budget and seed give the same
//! model and the same report's node figures on any machine.

use crate::learn_heads;
use crate::portfolio::{self, PortfolioArgs};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use telamalloc::evaluate::{evaluate, summarise, EvalRun, PolicySummary};
use telamalloc::io::file_name;
use telamalloc::learned::BUILT_IN_MODEL;
use telamalloc::training::{
    DenseLayer, ModelFile, Normalisation, PortfolioHead, ShareSchedule, PROBLEM_FEATURES,
    PROBLEM_FEATURE_SCHEMA_VERSION,
};
use telamalloc::{Limits, PolicySpec, Problem, SearchOptions, Solver};

/// Learns a model from a folder of problems and reports it against the shipped default.
#[derive(Parser, Debug)]
#[command(bin_name = "telamalloc-train learn")]
pub struct LearnArgs {
    /// The folder of problem files (CSV or JSON, each with its capacity).
    problems: PathBuf,
    /// Node budget of every run: of each strategy's race and of each side of the comparison.
    #[arg(long, default_value_t = 10_000)]
    nodes: u64,
    /// Percent of the problems (chosen by a hash of the file name) that the candidates are
    /// chosen on.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=98))]
    choose_percent: u64,
    /// Percent of the problems (chosen by the same hash, disjoint from the choosing part) that
    /// the report's figures come from; nothing is chosen on them. The rest trains.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=98))]
    report_percent: u64,
    /// The strategies raced, `fixed` first: the policy of the model file and order words over
    /// W, A, T, Z (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "fixed,TWA,TAW,WAT,TWA+,WAT+,TAW+,ZAT,ZAT+"
    )]
    strategies: Vec<String>,
    /// Runs in parallel (each single-threaded; the results do not depend on it).
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Seed of the runs and of the training.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Folder for the races, the candidate model and the report.
    #[arg(long, default_value = "learn")]
    work: PathBuf,
    /// Where the model is written when it beats the shipped default on the choosing part.
    #[arg(long, short = 'o', default_value = "model.json")]
    out: PathBuf,
}

/// One policy's figures on one part of the problems.
struct Figures {
    /// Problems, decided, median and p90 nodes of the decided.
    summary: PolicySummary,
    /// Nodes, with each undecided run counted as twice the budget.
    par2_nodes: u64,
    /// Each problem's PAR2 nodes, by problem name.
    par2_by_problem: BTreeMap<String, u64>,
    /// Seconds, with each undecided run counted twice.
    par2_seconds: f64,
}

impl Figures {
    fn of(policy: &str, runs: &[EvalRun], budget: u64) -> Figures {
        let mine: Vec<EvalRun> = runs
            .iter()
            .filter(|r| r.policy == policy)
            .cloned()
            .collect();
        let summary = summarise(&mine).pop().unwrap_or(PolicySummary {
            policy: policy.to_string(),
            problems: 0,
            decided: 0,
            median_seconds: 0.0,
            p90_seconds: 0.0,
            median_nodes: 0,
            p90_nodes: 0,
            total_seconds: 0.0,
            major_backtracks: 0,
        });
        Figures {
            summary,
            par2_nodes: mine.iter().map(|r| r.par2_nodes(budget)).sum(),
            par2_by_problem: mine
                .iter()
                .map(|r| (r.problem.clone(), r.par2_nodes(budget)))
                .collect(),
            par2_seconds: mine.iter().map(EvalRun::par2_seconds).sum(),
        }
    }

    /// The order of merit: the most decided first, then the fewest PAR2 nodes.
    fn rank_key(&self) -> (std::cmp::Reverse<usize>, u64) {
        (std::cmp::Reverse(self.summary.decided), self.par2_nodes)
    }

    /// Whether these figures beat `other`'s: at least as many decided and fewer PAR2 nodes.
    fn beats(&self, other: &Figures) -> bool {
        self.summary.decided >= other.summary.decided && self.par2_nodes < other.par2_nodes
    }

    /// The share of [`RESAMPLES`] paired bootstrap resamples of the problems both ran in which
    /// these figures need fewer PAR2 nodes than `other`'s (0 when they share no problem).
    fn win_confidence(&self, other: &Figures, seed: u64) -> f64 {
        let differences: Vec<i64> = self
            .par2_by_problem
            .iter()
            .filter_map(|(problem, &mine)| {
                let theirs = *other.par2_by_problem.get(problem)?;
                Some(mine as i64 - theirs as i64)
            })
            .collect();
        if differences.is_empty() {
            return 0.0;
        }
        let mut rng = StdRng::seed_from_u64(seed);
        let wins = (0..RESAMPLES)
            .filter(|_| {
                let total: i64 = (0..differences.len())
                    .map(|_| differences[rng.random_range(0..differences.len())])
                    .sum();
                total < 0
            })
            .count();
        wins as f64 / RESAMPLES as f64
    }

    fn row(&self, confidence: Option<f64>) -> String {
        let s = &self.summary;
        let (median, p90) = if s.decided == 0 {
            ("-".to_string(), "-".to_string())
        } else {
            (s.median_nodes.to_string(), s.p90_nodes.to_string())
        };
        let confidence = confidence.map_or("-".to_string(), |c| format!("{c:.2}"));
        format!(
            "| {} | {} | {} | {} | {:.1} | {median} | {p90} | {confidence} |",
            s.policy, s.problems, s.decided, self.par2_nodes, self.par2_seconds,
        )
    }
}

/// Paired bootstrap resamples behind [`Figures::win_confidence`].
const RESAMPLES: usize = 2000;

/// The best candidate of `figures` (the shipped default's first, then the candidates'): the
/// most decided, then the fewest PAR2 nodes, the first of equals; its index in `figures`.
fn best_candidate(figures: &[Figures]) -> usize {
    (1..figures.len())
        .min_by_key(|&i| (figures[i].rank_key(), i))
        .expect("at least one candidate")
}

/// The three disjoint parts of the loop's problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Races, solve logs and training.
    Train,
    /// Early stopping, the share schedule, and the choice among candidates and its gate.
    Choose,
    /// The report's figures only.
    Report,
}

/// The part of the problem file `name`: FNV-1a of the name modulo 100 below `report` percent
/// reports, below `report + choose` chooses, and the rest trains.
fn part_of(name: &str, (choose, report): (u64, u64)) -> Part {
    let bucket = crate::data::fnv1a(crate::data::FNV_START, name.as_bytes()) % 100;
    if bucket < report {
        Part::Report
    } else if bucket < report + choose {
        Part::Choose
    } else {
        Part::Train
    }
}

/// How sure a win with `confidence` (P(win) over paired resamples) is, in words.
fn sureness(confidence: f64) -> &'static str {
    if confidence >= 0.95 {
        "sure"
    } else if confidence >= 0.8 {
        "likely, not sure"
    } else if confidence > 0.5 {
        "not sure: as likely noise as a win"
    } else {
        "a loss more likely than a win"
    }
}

/// Runs `policies` on `problems` under `solver`, with a progress bar, and writes the runs to
/// `file` (as `telamalloc eval` writes `eval.json`).
fn run_and_save(
    problems: &[(String, Problem)],
    policies: &[PolicySpec],
    solver: &Solver,
    threads: usize,
    file: &Path,
) -> Result<Vec<EvalRun>, String> {
    let bar = ProgressBar::new((problems.len() * policies.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} ({eta} left)")
            .expect("valid template"),
    );
    let runs = evaluate(problems, policies, solver, threads, &|_| bar.inc(1))?;
    bar.finish_and_clear();
    let json = serde_json::to_string_pretty(&runs).expect("plain data");
    std::fs::write(file, json).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(runs)
}

/// How many of each strategy's races decided, as one line.
fn race_line(strategies: &[String], runs: &[EvalRun]) -> String {
    strategies
        .iter()
        .map(|s| {
            let decided = runs
                .iter()
                .filter(|r| &r.policy == s && r.decided())
                .count();
            format!("{s} {decided}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How many strategies the smaller head ranks, `fixed` included.
const FEW_STRATEGIES: usize = 4;

/// The strategies' indices in order of merit over their races (see [`Figures::rank_key`]; the
/// first of equals in `strategies` first).
fn ranked(strategies: &[String], runs: &[EvalRun], budget: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..strategies.len()).collect();
    order.sort_by_key(|&i| (Figures::of(&strategies[i], runs, budget).rank_key(), i));
    order
}

/// `fixed` and the `count - 1` other strategies that did best in their races, in the order of
/// `strategies`.
fn fewest_best(strategies: &[String], runs: &[EvalRun], budget: u64, count: usize) -> Vec<String> {
    let mut chosen: Vec<usize> = ranked(strategies, runs, budget)
        .into_iter()
        .filter(|&i| i != 0)
        .take(count.saturating_sub(1))
        .collect();
    chosen.sort_unstable();
    std::iter::once(0)
        .chain(chosen)
        .map(|i| strategies[i].clone())
        .collect()
}

/// A portfolio head that gives every problem the same plan: strategy `lead` first with
/// [`MAX_SHARE_LEAD`] runs of its own restart schedule per round, every other strategy one run
/// (so the search stays complete).
fn leading_head(strategies: &[String], lead: usize) -> PortfolioHead {
    let inputs = PROBLEM_FEATURES.len();
    let k = strategies.len();
    let mut bias = vec![0.0; k];
    bias[lead] = 10.0;
    PortfolioHead {
        feature_schema_version: PROBLEM_FEATURE_SCHEMA_VERSION,
        features: PROBLEM_FEATURES.iter().map(|s| s.to_string()).collect(),
        strategies: strategies.to_vec(),
        normalisation: Normalisation {
            mean: vec![0.0; inputs],
            std: vec![1.0; inputs],
        },
        hidden: Vec::new(),
        output: DenseLayer {
            inputs,
            outputs: k,
            weights: vec![0.0; inputs * k],
            bias,
        },
        lead: 1,
        confidence_lead: false,
        shares: Some(ShareSchedule {
            temperature: 1.0,
            floor: 1.0 / MAX_SHARE_LEAD as f32,
        }),
    }
}

/// How many runs the leading strategy of [`leading_head`] makes per round for one of each other.
const MAX_SHARE_LEAD: u32 = 16;

/// The trained head with other plans than the shares the replay chose (on nearly full problems
/// the replay's figures did not match real runs, and were the same for every share schedule):
/// moderate shares, a lead of 4 runs for the first choice, and the order alone. Each is written
/// in `work`.
fn head_variants(candidate: &Path, work: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let base = ModelFile::load(candidate).map_err(|e| format!("{}: {e}", candidate.display()))?;
    let plans = [
        (
            "shares-t1-f0.1",
            "the trained head, shares at temperature 1, floor 0.1",
            Some(ShareSchedule {
                temperature: 1.0,
                floor: 0.1,
            }),
            1,
        ),
        (
            "lead4",
            "the trained head, its first choice 4 runs a round",
            None,
            4,
        ),
        (
            "order",
            "the trained head, one run each in its order",
            None,
            1,
        ),
    ];
    let mut variants = Vec::new();
    for (name, what, shares, lead) in plans {
        let mut model = base.clone();
        let head = model
            .portfolio
            .as_mut()
            .ok_or("the candidate has no portfolio head")?;
        head.shares = shares;
        head.lead = lead;
        head.confidence_lead = false;
        let file = work.join(format!("candidate-{name}.json"));
        save(&model, &file)?;
        variants.push((what.to_string(), file));
    }
    Ok(variants)
}

/// Checks `model` and writes it to `file`.
fn save(model: &ModelFile, file: &Path) -> Result<(), String> {
    model
        .check()
        .map_err(|e| format!("{}: {e}", file.display()))?;
    portfolio::write_model(model, file)
}

/// The loop's problems by part, each with its file name.
struct Parts {
    train: Vec<(String, Problem)>,
    choose: Vec<(String, Problem)>,
    report: Vec<(String, Problem)>,
}

/// Reads the folder and splits it (see [`part_of`]); an error when a part is empty.
fn read_parts(args: &LearnArgs) -> Result<Parts, String> {
    if args.choose_percent + args.report_percent >= 100 {
        return Err("--choose-percent and --report-percent leave nothing to train on".into());
    }
    let problems =
        telamalloc::io::read_problem_set(std::slice::from_ref(&args.problems), None, None, true)
            .map_err(|e| e.to_string())?;
    let mut parts = Parts {
        train: Vec::new(),
        choose: Vec::new(),
        report: Vec::new(),
    };
    for (file, problem) in problems {
        let name = file_name(&file);
        match part_of(&name, (args.choose_percent, args.report_percent)) {
            Part::Train => parts.train.push((name, problem)),
            Part::Choose => parts.choose.push((name, problem)),
            Part::Report => parts.report.push((name, problem)),
        }
    }
    if parts.train.is_empty() || parts.choose.is_empty() || parts.report.is_empty() {
        return Err(format!(
            "{} training, {} choosing and {} reporting problems: the loop needs some of each \
             (more problems, or other --choose-percent and --report-percent)",
            parts.train.len(),
            parts.choose.len(),
            parts.report.len()
        ));
    }
    Ok(parts)
}

/// FNV-1a over the names and buffers of `problems`, in hex: which problems a part held.
fn problems_hash(problems: &[(String, Problem)]) -> String {
    let mut hash = crate::data::FNV_START;
    for (name, problem) in problems {
        hash = crate::data::fnv1a(hash, name.as_bytes());
        for b in &problem.buffers {
            for v in [b.lower, b.upper, b.size] {
                hash = crate::data::fnv1a(hash, &v.to_le_bytes());
            }
        }
    }
    format!("{hash:016x}")
}

/// A candidate model of the loop.
struct Candidate {
    /// What it is, in words.
    what: String,
    /// Its file in the work folder.
    file: PathBuf,
    /// Whether its ranking and risk heads were trained by this loop (else the shipped ones).
    own_heads: bool,
}

/// Runs the loop.
pub fn run(args: LearnArgs) -> Result<(), String> {
    if args.nodes == 0 || args.threads == 0 {
        return Err("--nodes and --threads must be positive".into());
    }
    if args.strategies.first().map(String::as_str) != Some("fixed") {
        return Err("--strategies must list `fixed` first (the model's own policy)".into());
    }
    let specs: Vec<PolicySpec> = args
        .strategies
        .iter()
        .map(|s| s.parse().map_err(|e| format!("--strategies: {e}")))
        .collect::<Result<_, String>>()?;
    let parts = read_parts(&args)?;
    std::fs::create_dir_all(&args.work)
        .map_err(|e| format!("cannot create {}: {e}", args.work.display()))?;
    let solver = Solver::new()
        .options(SearchOptions {
            heuristic_first: false,
            ..SearchOptions::default()
        })
        .limits(Limits {
            timeout: None,
            nodes: Some(args.nodes),
        })
        .seed(args.seed);
    println!(
        "{} problems: {} train, {} choose, {} report; {} strategies raced at {} nodes a run",
        parts.train.len() + parts.choose.len() + parts.report.len(),
        parts.train.len(),
        parts.choose.len(),
        parts.report.len(),
        specs.len(),
        args.nodes
    );
    let work = |name: &str| args.work.join(name);
    let train_races = run_and_save(
        &parts.train,
        &specs,
        &solver,
        args.threads,
        &work("races-train.json"),
    )?;
    let choose_races = run_and_save(
        &parts.choose,
        &specs,
        &solver,
        args.threads,
        &work("races-choose.json"),
    )?;
    let races = format!(
        "training {}; choosing {}",
        race_line(&args.strategies, &train_races),
        race_line(&args.strategies, &choose_races)
    );
    println!("decided by each strategy alone: {races}");
    let mut report = format!(
        "# telamalloc-train learn\n\nProblems: {} ({} training, {} choosing, {} reporting); \
         every run at most {} nodes; strategies {}; seed {}.\n\nDecided by each strategy alone: \
         {races}.\n\n",
        args.problems.display(),
        parts.train.len(),
        parts.choose.len(),
        parts.report.len(),
        args.nodes,
        args.strategies.join(", "),
        args.seed,
    );
    let (candidates, figures) = choose(&args, &parts, &solver, &train_races, &mut report)?;
    let best = best_candidate(&figures);
    let kept = &candidates[best - 1];
    let chosen_gate = figures[best].beats(&figures[0]);
    // The reporting part: the kept candidate against the shipped default, nothing chosen.
    let kept_spec = PolicySpec::Learned {
        model: Some(kept.file.clone()),
    };
    let policies = [PolicySpec::Portfolio, kept_spec.clone()];
    let runs = run_and_save(
        &parts.report,
        &policies,
        &solver,
        args.threads,
        &work("report.json"),
    )?;
    let default = Figures::of(&PolicySpec::Portfolio.to_string(), &runs, args.nodes);
    let mine = Figures::of(&kept_spec.to_string(), &runs, args.nodes);
    let verdict = Verdict {
        ratio: mine.par2_nodes as f64 / default.par2_nodes.max(1) as f64,
        confidence: mine.win_confidence(&default, args.seed),
        decided: (mine.summary.decided, default.summary.decided),
    };
    report.push_str(&format!(
        "On the reporting part, which nothing was chosen on ({} problems; these are the \
         figures to trust):\n\n| policy | problems | decided | PAR2 nodes | PAR2 s | median \
         nodes | p90 nodes | P(win) |\n|---|---|---|---|---|---|---|---|\n{}\n{}\n\n",
        parts.report.len(),
        default.row(None),
        mine.row(Some(verdict.confidence)),
    ));
    let out = args.out.display().to_string();
    let summary = format!(
        "{}: {:.2}x the shipped default's PAR2 nodes on the reporting part, {} against {} \
         decided, P(win) {:.2} ({})",
        kept.what,
        verdict.ratio,
        verdict.decided.0,
        verdict.decided.1,
        verdict.confidence,
        verdict.words()
    );
    if chosen_gate {
        let mut model =
            ModelFile::load(&kept.file).map_err(|e| format!("{}: {e}", kept.file.display()))?;
        describe(&mut model, &args, &parts, kept, &verdict);
        save(&model, &args.out)?;
        report.push_str(&format!(
            "Written to {out}: {summary}. Use it with `telamalloc solve FILE --policy {out}` \
             (Python: `policy=\"{out}\"`; C: `options.policy = \"{out}\"`).\n"
        ));
    } else {
        report.push_str(&format!(
            "No candidate beats the shipped default on the choosing part: the shipped default \
             stays and {out} is not written. The best there was {summary}.\n"
        ));
    }
    finish(&report, &work("report.md"))
}

/// The kept candidate's figures on the reporting part against the shipped default.
struct Verdict {
    /// Its PAR2 nodes over the default's.
    ratio: f64,
    /// P(win) over paired resamples of the reporting part.
    confidence: f64,
    /// Problems decided: the candidate's, the default's.
    decided: (usize, usize),
}

impl Verdict {
    /// How sure the win is, in words; a tie (same PAR2 nodes, same decided count) is no win.
    fn words(&self) -> &'static str {
        if self.ratio == 1.0 && self.decided.0 == self.decided.1 {
            "no difference"
        } else {
            sureness(self.confidence)
        }
    }
}

/// Rewrites `model`'s training description and figures to its own data: the loop's folder,
/// parts, budget and seed, the hashes of the training and choosing parts, which heads it
/// trained, and the reporting part's figures (the figures of a shipped part it kept are
/// dropped).
fn describe(
    model: &mut ModelFile,
    args: &LearnArgs,
    parts: &Parts,
    kept: &Candidate,
    verdict: &Verdict,
) {
    let heads = match kept.own_heads {
        true => format!(
            "ranking and risk heads trained on {} solve logs ({} examples) of the training part",
            model.training.logs, model.training.examples
        ),
        false => "ranking and risk heads of the shipped model".to_string(),
    };
    let portfolio = model
        .training
        .data
        .find("portfolio head:")
        .map_or(String::new(), |at| {
            format!("; {}", &model.training.data[at..])
        });
    model.training.data = format!(
        "telamalloc-train learn {} --nodes {} --seed {}: {} problems ({} train, {} choose, {} \
         report); kept: {}; {heads}{portfolio}; on the reporting part {:.2}x the shipped \
         default's PAR2 nodes, {} against {} decided, P(win) {:.2}",
        args.problems.display(),
        args.nodes,
        args.seed,
        parts.train.len() + parts.choose.len() + parts.report.len(),
        parts.train.len(),
        parts.choose.len(),
        parts.report.len(),
        kept.what,
        verdict.ratio,
        verdict.decided.0,
        verdict.decided.1,
        verdict.confidence,
    );
    model.training.data_hash = problems_hash(&parts.train);
    model.training.validation_hash = problems_hash(&parts.choose);
    model.training.seed = args.seed;
    if !kept.own_heads {
        model.training.logs = 0;
        model.training.examples = 0;
        model.training.epochs = 0;
        model.metrics.retain(|k, _| k.starts_with("portfolio_"));
    }
    let put = |m: &mut ModelFile, k: &str, v: f64| {
        m.metrics.insert(format!("loop_report_{k}"), v);
    };
    put(model, "par2_nodes_ratio", verdict.ratio);
    put(model, "p_win", verdict.confidence);
    put(model, "decided", verdict.decided.0 as f64);
    put(model, "default_decided", verdict.decided.1 as f64);
    put(model, "problems", parts.report.len() as f64);
}

/// Trains the candidates and runs them with the shipped default on the choosing part: the
/// candidates, and the figures there (the default's first, then each candidate's, in order).
/// Appends what happened and the choosing part's table to `report`.
fn choose(
    args: &LearnArgs,
    parts: &Parts,
    solver: &Solver,
    train_races: &[EvalRun],
    report: &mut String,
) -> Result<(Vec<Candidate>, Vec<Figures>), String> {
    let work = |name: &str| args.work.join(name);
    let shipped = work("shipped.json");
    std::fs::write(&shipped, BUILT_IN_MODEL)
        .map_err(|e| format!("cannot write {}: {e}", shipped.display()))?;
    let path = |p: PathBuf| p.display().to_string();
    let train_head = |strategies: &[String], out: &Path| {
        portfolio::run(PortfolioArgs::parse_from([
            "portfolio".to_string(),
            "--runs".into(),
            path(work("races-train.json")),
            "--validation-runs".into(),
            path(work("races-choose.json")),
            "--problems".into(),
            path(args.problems.clone()),
            "--strategies".into(),
            strategies.join(","),
            "--base".into(),
            path(shipped.clone()),
            "--out".into(),
            path(out.to_path_buf()),
            "--rank-candidates".into(),
            "false".into(),
            "--share-temperatures".into(),
            "0.5,1,2,4".into(),
            "--share-floors".into(),
            "0.02,0.05,0.1,0.2,1".into(),
            "--hidden".into(),
            "16".into(),
            "--seed".into(),
            args.seed.to_string(),
        ]))
    };
    let shipped_heads = |what: String, file: PathBuf| Candidate {
        what,
        file,
        own_heads: false,
    };
    // The candidates: the trained head with its plans (when the races taught it anything), the
    // head over fewer strategies, and the strategy that did best in its races leading.
    let mut candidates: Vec<Candidate> = Vec::new();
    let candidate = work("candidate.json");
    match train_head(&args.strategies, &candidate) {
        Ok(()) => {
            candidates.push(shipped_heads(
                "the trained portfolio head, shares chosen by replaying the races".into(),
                candidate.clone(),
            ));
            for (what, file) in head_variants(&candidate, &args.work)? {
                candidates.push(shipped_heads(what, file));
            }
        }
        Err(why) => report.push_str(&format!("No portfolio head was trained: {why}.\n\n")),
    }
    // Fewer strategies leave a larger share of each round to what they share (the
    // slack-filling lottery): a head over `fixed` and the three that decided the most races.
    let few = fewest_best(&args.strategies, train_races, args.nodes, FEW_STRATEGIES);
    if few.len() < args.strategies.len() {
        let few_candidate = work("candidate-few.json");
        match train_head(&few, &few_candidate) {
            Ok(()) => candidates.push(shipped_heads(
                format!(
                    "a head over {} only, shares chosen by replay",
                    few.join(", ")
                ),
                few_candidate,
            )),
            Err(why) => report.push_str(&format!(
                "No head over {} was trained: {why}.\n\n",
                few.join(", ")
            )),
        }
    }
    let lead = ranked(&args.strategies, train_races, args.nodes)[0];
    let leading = work("leading.json");
    let mut model = ModelFile::from_json(BUILT_IN_MODEL).map_err(|e| e.to_string())?;
    model.rank_candidates = false;
    model.portfolio = Some(leading_head(&args.strategies, lead));
    model.training.data = format!(
        "portfolio head: {} leads ({MAX_SHARE_LEAD} runs a round to one of each other \
         strategy), the most decided of the strategy races on the training part",
        args.strategies[lead],
    );
    model.metrics.clear();
    save(&model, &leading)?;
    candidates.push(shipped_heads(
        format!("{} leading", args.strategies[lead]),
        leading,
    ));

    let learned = |file: &PathBuf| PolicySpec::Learned {
        model: Some(file.clone()),
    };
    let mut policies = vec![PolicySpec::Portfolio];
    policies.extend(candidates.iter().map(|c| learned(&c.file)));
    let side_by_side = run_and_save(
        &parts.choose,
        &policies,
        solver,
        args.threads,
        &work("choose.json"),
    )?;
    let mut figures: Vec<Figures> = policies
        .iter()
        .map(|p| Figures::of(&p.to_string(), &side_by_side, args.nodes))
        .collect();
    let first_best = candidates[best_candidate(&figures) - 1].file.clone();

    // The second stage: ranking and risk heads from the training problems' solve logs, used by
    // the first stage's best.
    println!("recording solve logs of the training problems and training the heads");
    let second = learn_heads::train(
        &parts.train,
        solver,
        args.threads,
        args.seed,
        (&args.problems, &args.work),
    )
    .and_then(|heads| learn_heads::variants(&first_best, &heads, &args.work));
    match second {
        Ok(variants) => {
            let more: Vec<PolicySpec> = variants.iter().map(|(_, file)| learned(file)).collect();
            let runs = run_and_save(
                &parts.choose,
                &more,
                solver,
                args.threads,
                &work("choose-heads.json"),
            )?;
            figures.extend(
                more.iter()
                    .map(|p| Figures::of(&p.to_string(), &runs, args.nodes)),
            );
            candidates.extend(variants.into_iter().map(|(what, file)| Candidate {
                what,
                file,
                own_heads: true,
            }));
        }
        Err(why) => report.push_str(&format!("No ranking or risk head was trained: {why}.\n\n")),
    }
    report.push_str(&format!(
        "On the choosing part, side by side (`{}` is the shipped default; PAR2 counts an \
         undecided run twice: twice the budget in nodes, twice its time in seconds); the best \
         candidate here is kept, so these figures are optimistic:\n\n| policy | problems | \
         decided | PAR2 nodes | PAR2 s | median nodes | p90 nodes | P(win) |\n\
         |---|---|---|---|---|---|---|---|\n{}\n\n",
        PolicySpec::Portfolio,
        figures
            .iter()
            .map(|f| f.row(None))
            .collect::<Vec<_>>()
            .join("\n")
    ));
    for c in &candidates {
        report.push_str(&format!("- `{}`: {}.\n", path(c.file.clone()), c.what));
    }
    report.push('\n');
    Ok((candidates, figures))
}

/// Prints the report and writes it to `file`.
fn finish(report: &str, file: &Path) -> Result<(), String> {
    println!("\n{report}");
    std::fs::write(file, report).map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    println!("report written to {}", file.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_of(policy: &str, status: &str, nodes: u64) -> EvalRun {
        EvalRun {
            policy: policy.into(),
            problem: "p".into(),
            status: status.into(),
            seconds: nodes as f64 / 1000.0,
            nodes,
            major_backtracks: 0,
            buffers: 10,
            deepest: 10,
        }
    }

    #[test]
    fn par2_counts_an_undecided_run_twice() {
        let runs = [
            run_of("a", "solved", 10),
            run_of("a", "limit", 100),
            run_of("a", "infeasible", 30),
            run_of("b", "solved", 5),
        ];
        let a = Figures::of("a", &runs, 100);
        assert_eq!((a.summary.problems, a.summary.decided), (3, 2));
        assert_eq!(a.par2_nodes, 10 + 200 + 30);
        assert!((a.par2_seconds - (0.01 + 0.2 + 0.03)).abs() < 1e-9);
        assert_eq!((a.summary.median_nodes, a.summary.p90_nodes), (30, 30));
        let b = Figures::of("b", &runs, 100);
        assert!(
            !b.beats(&a),
            "fewer decided never wins, however few the nodes"
        );
        let slower = [
            run_of("c", "solved", 11),
            run_of("c", "limit", 100),
            run_of("c", "solved", 30),
        ];
        let c = Figures::of("c", &slower, 100);
        assert!(
            a.beats(&c) && !c.beats(&a) && !a.beats(&a),
            "equal decided: fewer nodes win"
        );
    }

    fn figures_of(policy: &str, nodes: &[u64]) -> Figures {
        let runs: Vec<EvalRun> = nodes
            .iter()
            .enumerate()
            .map(|(i, &n)| EvalRun {
                problem: format!("p{i}"),
                ..run_of(policy, "solved", n)
            })
            .collect();
        Figures::of(policy, &runs, 1000)
    }

    #[test]
    fn a_win_by_one_lucky_problem_is_not_sure() {
        let shipped = figures_of("s", &[1000; 30]);
        let everywhere = figures_of("a", &[990; 30]);
        assert_eq!(everywhere.win_confidence(&shipped, 1), 1.0);
        assert_eq!(shipped.win_confidence(&everywhere, 1), 0.0);
        // Fewer nodes in all, but from one problem: 29 small losses and one large win, so a
        // resample wins when it draws that problem at least once (1 - (29/30)^30, about 0.64).
        let mut lucky_nodes = [1010; 30];
        lucky_nodes[7] = 600;
        let lucky = figures_of("b", &lucky_nodes);
        assert!(lucky.par2_nodes < shipped.par2_nodes && lucky.beats(&shipped));
        let sure = lucky.win_confidence(&shipped, 1);
        assert!((0.5..0.8).contains(&sure), "P(win) {sure}");
        let other = figures_of("c", &[100; 3]);
        assert_eq!(
            figures_of("d", &[]).win_confidence(&other, 1),
            0.0,
            "no shared problem, no confidence"
        );
    }

    #[test]
    fn the_few_best_are_fixed_and_the_most_deciding_in_race_order() {
        let names: Vec<String> = ["fixed", "A", "B", "C", "D"].map(String::from).to_vec();
        let runs = [
            run_of("fixed", "limit", 100),
            run_of("A", "limit", 100),
            run_of("B", "solved", 50),
            run_of("C", "solved", 10),
            run_of("D", "solved", 20),
        ];
        assert_eq!(fewest_best(&names, &runs, 100, 3), ["fixed", "C", "D"]);
        assert_eq!(fewest_best(&names, &runs, 100, 1), ["fixed"]);
        assert_eq!(fewest_best(&names, &runs, 100, 9).len(), 5);
    }

    #[test]
    fn the_three_parts_are_disjoint_and_near_their_shares() {
        let names: Vec<String> = (0..1000).map(|i| format!("p{i}.csv")).collect();
        let count = |part: Part, shares: (u64, u64)| {
            names.iter().filter(|n| part_of(n, shares) == part).count()
        };
        let shares = (20, 30);
        let (choose, report) = (count(Part::Choose, shares), count(Part::Report, shares));
        assert!((150..250).contains(&choose), "{choose} of 1000 choose");
        assert!((250..350).contains(&report), "{report} of 1000 report");
        assert_eq!(count(Part::Train, shares) + choose + report, 1000);
        // Growing the choosing part takes only from training: a problem that reports stays.
        for n in &names {
            if part_of(n, (20, 30)) == Part::Report {
                assert_eq!(part_of(n, (40, 30)), Part::Report, "{n}");
            }
        }
        assert_eq!(count(Part::Train, (0, 0)), 1000);
    }

    #[test]
    fn sureness_grows_with_the_confidence() {
        assert_eq!(sureness(0.97), "sure");
        assert_eq!(sureness(0.9), "likely, not sure");
        assert!(sureness(0.6).starts_with("not sure"));
        assert!(sureness(0.3).starts_with("a loss"));
        let tie = Verdict {
            ratio: 1.0,
            confidence: 0.0,
            decided: (4, 4),
        };
        assert_eq!(tie.words(), "no difference");
        let one_more = Verdict {
            decided: (4, 3),
            ..tie
        };
        assert!(one_more.words().starts_with("a loss"));
    }
}
