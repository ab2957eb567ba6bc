//! `telamalloc-train`: trains the learned search policy from solve logs and writes the model
//! file the core loads (`telamalloc::training::ModelFile`).
//!
//! ```sh
//! cargo run --release -- --logs DIR --validation-logs DIR --out ../models/policy.json
//! cargo run --release -- portfolio --runs A/eval.json --validation-runs B/eval.json \
//!     --problems DIR,DIR --base ../models/policy.json --out ../models/policy.json
//! ```
//!
//! The first form trains the candidate ranking (and risk) heads; the second adds the
//! per-problem portfolio head (see `portfolio.rs`). `replay` replays round robins of strategies
//! over strategy races (see `replay_cmd.rs`); `cpsat-gate` trains the CP-SAT gate
//! (`cpsat_gate.rs`), `hole-shapes` the slack-filling lottery's hole-shape model
//! (`hole_shapes.rs`) and `restarts` the restart model (`restarts.rs`).

mod cpsat_gate;
mod data;
mod eval;
mod hole_shapes;
mod learn;
mod learn_heads;
mod net;
mod portfolio;
mod replay_cmd;
mod restarts;
mod schedule;

use burn::optim::AdamConfig;
use burn::tensor::Device;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use telamalloc::training::{
    ModelFile, Network, Normalisation, TrainingInfo, CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION,
    MODEL_FORMAT, MODEL_FORMAT_VERSION,
};

/// Trains the learned policy on solve logs (`telamalloc collect`) and writes its model file.
#[derive(Parser, Debug)]
#[command(version)]
struct Args {
    /// Folder of training logs (`*.jsonl`).
    #[arg(long)]
    logs: PathBuf,
    /// Folder of validation logs (other problems than the training ones).
    #[arg(long)]
    validation_logs: PathBuf,
    /// Where to write the model file.
    #[arg(long, default_value = "../models/policy.json")]
    out: PathBuf,
    /// The most epochs.
    #[arg(long, default_value_t = 60)]
    epochs: usize,
    /// Stop after this many epochs without a better validation loss (ranking, plus the risk
    /// head's at its weight).
    #[arg(long, default_value_t = 8)]
    patience: usize,
    /// Seed of the initial weights, the shuffling and the sampling.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Hidden layer widths, comma-separated.
    #[arg(long, default_value = "32,32", value_delimiter = ',')]
    hidden: Vec<usize>,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 3e-3)]
    lr: f64,
    /// Decisions per batch.
    #[arg(long, default_value_t = 64)]
    batch: usize,
    /// Weight of the risk head's loss (0: no risk head in the model file).
    #[arg(long, default_value_t = 0.5)]
    risk_weight: f32,
    /// Weight of the decisions where the fixed policy's first candidate failed (the others
    /// weigh 1).
    #[arg(long, default_value_t = 1.0)]
    hard_weight: f32,
    /// Risk examples per log from decisions without a solution below them.
    #[arg(long, default_value_t = 100)]
    failed_per_log: usize,
    /// The order prior's starting value (learned from there; unused with --no-prior).
    #[arg(long, default_value_t = 1.0)]
    initial_prior: f32,
    /// No order prior: rank by the model's score alone.
    #[arg(long)]
    no_prior: bool,
    /// Learn only from the decisions of these policies (comma-separated; `all` for any): the
    /// learned policy starts from the fixed policy's order, so by default only its decisions.
    #[arg(long, default_value = "fixed", value_delimiter = ',')]
    policies: Vec<String>,
    /// Where the ranking labels come from: `path` (every decision on the solution path) or
    /// `corrective` (the found candidate over the failed ones where the first try failed).
    #[arg(long, value_enum, default_value = "path")]
    labels: data::Labels,
    /// Train only a score head on this model file's trunk (its normalisation, hidden layers,
    /// risk head and every other field are kept): the written file is the base with the new
    /// candidate head, `rank_candidates` on.
    #[arg(long)]
    base: Option<PathBuf>,
    /// The confidence margin written to the file (default: the one with the best training
    /// top-1).
    #[arg(long)]
    margin: Option<f32>,
    /// A description of the data, stored in the model file.
    #[arg(long, default_value = "")]
    data_description: String,
}

fn main() -> ExitCode {
    // The arguments without the subcommand's name.
    let rest = || {
        std::env::args()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, a)| a)
    };
    let result = match std::env::args().nth(1).as_deref() {
        Some("portfolio") => portfolio::run(portfolio::PortfolioArgs::parse_from(rest())),
        Some("replay") => replay_cmd::run(replay_cmd::ReplayArgs::parse_from(rest())),
        Some("cpsat-gate") => cpsat_gate::run(cpsat_gate::GateArgs::parse_from(rest())),
        Some("hole-shapes") => hole_shapes::run(hole_shapes::HoleArgs::parse_from(rest())),
        Some("hole-odds") => hole_shapes::odds(hole_shapes::OddsArgs::parse_from(rest())),
        Some("restarts") => restarts::run(restarts::RestartArgs::parse_from(rest())),
        Some("learn") => learn::run(learn::LearnArgs::parse_from(rest())),
        _ => run(Args::parse()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<(), String> {
    if args.hidden.contains(&0) || args.batch == 0 || args.epochs == 0 {
        return Err("--hidden widths, --batch and --epochs must be positive".into());
    }
    let filter = data::PolicyFilter::new(&args.policies);
    let base = match &args.base {
        Some(path) => Some(ModelFile::load(path).map_err(|e| format!("{}: {e}", path.display()))?),
        None => None,
    };
    let train = data::read_dir(
        &args.logs,
        &filter,
        args.labels,
        args.failed_per_log,
        args.seed,
    )?;
    let valid = data::read_dir(
        &args.validation_logs,
        &filter,
        args.labels,
        args.failed_per_log,
        args.seed ^ 0x5eed,
    )?;
    for skipped in train.skipped.iter().chain(&valid.skipped) {
        eprintln!("skipped {skipped}");
    }
    println!(
        "training: {} logs, {} decisions, {} ranking examples, {} risk examples",
        train.logs,
        train.decisions,
        train.rank.len(),
        train.risk.len()
    );
    println!(
        "validation: {} logs, {} decisions, {} ranking examples, {} risk examples",
        valid.logs,
        valid.decisions,
        valid.rank.len(),
        valid.risk.len()
    );
    if train.rank.is_empty() || valid.rank.is_empty() {
        return Err(
            "no decision with a solution below it in the training or validation logs \
                    (collect logs of problems the search solves)"
                .into(),
        );
    }
    let (mean, std) = match &base {
        Some(b) => (b.normalisation.mean.clone(), b.normalisation.std.clone()),
        None => data::normalisation(&train),
    };
    let device = Device::flex().autodiff();
    device.seed(args.seed);
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut network = match &base {
        Some(b) => net::PolicyNet::frozen_trunk(b, &mut rng, &device),
        None => net::PolicyNet::new(&args.hidden, args.initial_prior, &mut rng, &device),
    };
    let mut optim = AdamConfig::new().init();
    let with_risk = base.is_none() && args.risk_weight > 0.0 && !train.risk.is_empty();

    let model_file = |network: &net::PolicyNet, margin: f32| -> ModelFile {
        let (hidden, score, risk, prior) = network.export();
        let order_prior = if args.no_prior { 0.0 } else { prior };
        if let Some(b) = &base {
            return ModelFile {
                score,
                confidence_margin: margin,
                order_prior,
                rank_candidates: true,
                ..b.clone()
            };
        }
        ModelFile {
            format: MODEL_FORMAT.into(),
            format_version: MODEL_FORMAT_VERSION,
            feature_schema_version: FEATURE_SCHEMA_VERSION,
            features: CANDIDATE_FEATURES.iter().map(|s| s.to_string()).collect(),
            normalisation: Normalisation {
                mean: mean.clone(),
                std: std.clone(),
            },
            hidden,
            score,
            risk: with_risk.then_some(risk),
            confidence_margin: margin,
            order_prior,
            rank_candidates: true,
            postpone_risk: None,
            backjump_risk: None,
            portfolio: None,
            training: TrainingInfo::default(),
            metrics: BTreeMap::new(),
        }
    };

    let batches = train.rank.len().div_ceil(args.batch);
    let risk_per_batch = train.risk.len().div_ceil(batches);
    let bar = ProgressBar::new((args.epochs * batches) as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} steps, {elapsed} ({eta} left) {msg}")
            .expect("valid template"),
    );
    let mut rank_order: Vec<usize> = (0..train.rank.len()).collect();
    let mut risk_order: Vec<usize> = (0..train.risk.len()).collect();
    let mut best: Option<(f64, usize, ModelFile)> = None;
    let mut epochs_run = 0;
    for epoch in 0..args.epochs {
        epochs_run = epoch + 1;
        rank_order.shuffle(&mut rng);
        risk_order.shuffle(&mut rng);
        let (mut rank_sum, mut risk_sum) = (0.0, 0.0);
        for (k, chunk) in rank_order.chunks(args.batch).enumerate() {
            let rank: Vec<&data::RankExample> = chunk.iter().map(|&i| &train.rank[i]).collect();
            let risk: Vec<&data::RiskExample> = if with_risk {
                risk_order
                    .iter()
                    .skip(k * risk_per_batch)
                    .take(risk_per_batch)
                    .map(|&i| &train.risk[i])
                    .collect()
            } else {
                Vec::new()
            };
            let (next, rank_loss, risk_loss) = net::step(
                network,
                &mut optim,
                &rank,
                &risk,
                args.hard_weight,
                !args.no_prior,
                if with_risk { args.risk_weight } else { 0.0 },
                args.lr,
                (&mean, &std),
                &device,
            );
            network = next;
            rank_sum += rank_loss as f64;
            risk_sum += risk_loss as f64;
            bar.inc(1);
        }
        let candidate = model_file(&network, 0.0);
        let scorer = Network::new(&candidate).map_err(|e| format!("exported model: {e}"))?;
        let metrics = eval::rank_metrics(&scorer, &valid);
        // Early stopping on the loss trained: ranking plus the risk head's weighted share, so
        // that a model whose risk head is read (learned backjumps) keeps its best risk epoch.
        let risk_loss = if with_risk {
            eval::risk_log_loss(&scorer, &valid)
        } else {
            None
        };
        let stopping_loss = metrics.nll + args.risk_weight as f64 * risk_loss.unwrap_or(0.0);
        let improved = best.as_ref().is_none_or(|b| stopping_loss < b.0);
        bar.set_message(format!(
            "epoch {}: train loss {:.4} (risk {:.4}), validation loss {:.4}, top-1 {:.3}{}",
            epoch + 1,
            rank_sum / batches as f64,
            risk_sum / batches as f64,
            metrics.nll,
            metrics.top1,
            if improved { " *" } else { "" }
        ));
        let line = format!(
            "epoch {:>3}: train loss {:.4} risk {:.4} | validation loss {:.4} risk {:.4} top-1 {:.3} top-3 {:.3}{}",
            epoch + 1,
            rank_sum / batches as f64,
            risk_sum / batches as f64,
            metrics.nll,
            risk_loss.unwrap_or(0.0),
            metrics.top1,
            metrics.top3,
            if improved { "  (best)" } else { "" }
        );
        if bar.is_hidden() {
            println!("{line}");
        } else {
            bar.println(line);
        }
        if improved {
            best = Some((stopping_loss, epoch + 1, candidate));
        } else if best
            .as_ref()
            .is_some_and(|b| epoch + 1 - b.1 >= args.patience)
        {
            break;
        }
    }
    bar.finish_and_clear();
    let (_, best_epoch, mut model) = best.expect("at least one epoch");

    // Final figures of the best epoch's weights.
    let scorer = Network::new(&model).map_err(|e| format!("exported model: {e}"))?;
    let v = eval::rank_metrics(&scorer, &valid);
    let t = eval::rank_metrics(&scorer, &train);
    // The margin is chosen on the training data, so that the validation figures stay honest.
    let margin = args
        .margin
        .unwrap_or_else(|| eval::choose_margin(&t.margins).0);
    let (hybrid_top1, confident) = eval::policy_top1(&v.margins, margin);
    model.confidence_margin = margin;
    let (auc, auc_on_path) = if with_risk {
        eval::risk_auc(&scorer, &valid)
    } else {
        (None, None)
    };
    let mut metrics = BTreeMap::new();
    let mut put = |k: &str, v: f64| {
        metrics.insert(k.to_string(), v);
    };
    put("best_epoch", best_epoch as f64);
    put("train_top1", t.top1);
    put("validation_examples", v.examples as f64);
    put("validation_nll", v.nll);
    put("validation_top1", v.top1);
    put("validation_top3", v.top3);
    put("validation_mean_rank", v.mean_rank);
    put("validation_fixed_top1", v.fixed_top1);
    put("validation_fixed_top3", v.fixed_top3);
    put("validation_fixed_mean_rank", v.fixed_mean_rank);
    put("validation_policy_top1", hybrid_top1);
    put("validation_override_share", confident);
    put(
        "validation_top1_where_fixed_wrong",
        v.top1_where_fixed_wrong,
    );
    put(
        "validation_top1_where_fixed_right",
        v.top1_where_fixed_right,
    );
    if let Some(auc) = auc {
        put("validation_risk_auc", auc);
    }
    if let Some(auc) = auc_on_path {
        put("validation_risk_auc_on_path", auc);
    }
    if base.is_some() {
        // The trunk's training is the base's; the new head's data go into the description.
        model.metrics.extend(metrics);
        model.training.data = format!(
            "{}; candidate head: {} ({:?} labels, data hash {:016x}, {} examples)",
            model.training.data,
            args.data_description,
            args.labels,
            train.hash,
            train.rank.len()
        );
    } else {
        model.metrics = metrics;
        model.training = TrainingInfo {
            data_hash: format!("{:016x}", train.hash),
            validation_hash: format!("{:016x}", valid.hash),
            data: args.data_description.clone(),
            logs: train.logs as u64,
            examples: train.rank.len() as u64,
            epochs: epochs_run as u64,
            seed: args.seed,
        };
    }
    model.check().map_err(|e| format!("exported model: {e}"))?;

    println!();
    println!(
        "model: {} -> {} -> 1{}, {} parameters, best epoch {best_epoch} of {epochs_run}",
        CANDIDATE_FEATURES.len(),
        args.hidden
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()
            .join(" -> "),
        if model.risk.is_some() {
            " (+ risk head)"
        } else {
            ""
        },
        model.parameters()
    );
    println!(
        "validation ({} decisions): top-1 {:.3} (fixed order {:.3}), top-3 {:.3} (fixed {:.3}), \
         mean rank {:.2} (fixed {:.2}), loss {:.4}",
        v.examples,
        v.top1,
        v.fixed_top1,
        v.top3,
        v.fixed_top3,
        v.mean_rank,
        v.fixed_mean_rank,
        v.nll
    );
    println!(
        "model top-1 where the fixed first choice is right {:.3}, where it is wrong {:.3}",
        v.top1_where_fixed_right, v.top1_where_fixed_wrong
    );
    println!(
        "policy as run (model order where its best outscores the fixed first choice by >= \
         {margin:.4}, fixed order elsewhere): top-1 {hybrid_top1:.3}, model overrides at {:.1}% \
         of nodes",
        confident * 100.0
    );
    println!("training top-1 {:.3} (fixed {:.3})", t.top1, t.fixed_top1);
    match auc {
        Some(auc) => println!(
            "risk head: validation AUC {auc:.3} (on the solution path only: {})",
            auc_on_path.map_or("-".to_string(), |a| format!("{a:.3}"))
        ),
        None if with_risk => println!("risk head: no AUC (one class only in validation)"),
        None => {}
    }
    println!(
        "data hash {:016x} (validation {:016x})",
        train.hash, valid.hash
    );
    portfolio::write_model(&model, &args.out)
}
