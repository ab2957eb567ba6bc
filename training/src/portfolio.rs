//! `telamalloc-train portfolio`: trains the per-problem portfolio head (which strategy to run
//! first) from strategy races (`telamalloc eval --policies S1,S2,... --nodes N`, one run per
//! strategy and problem), and adds it to a model file.
//!
//! Each problem becomes one example: its [`PROBLEM_FEATURES`] and, per strategy, the nodes it
//! needed (a run that hit the limit counts as twice the limit). The head is an MLP with one
//! output per strategy, trained with a softmax cross-entropy towards soft targets
//! `q_s ~ (best cost / cost_s)^2`, each problem weighted by `ln(worst / best)` (problems where the
//! choice does not matter weigh nothing). Early stopping on the validation regret.
//!
//! With `--share-temperatures` and `--share-floors`, the head's scores become every strategy's
//! budget share ([`ShareSchedule`]); the pair is chosen on validation by replaying the races
//! (`crate::schedule`): most problems decided within the races' node limit, then the lowest
//! PAR2 nodes.

use crate::schedule::{read_runs, replay_all, Race, Replayed};
use burn::module::Module;
use burn::nn::Linear;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::{log_softmax, relu};
use burn::tensor::{Device, Tensor, TensorData};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use telamalloc::training::{
    is_strategy_name, problem_features, ModelFile, Normalisation, PortfolioHead, PortfolioNetwork,
    ShareSchedule, PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION,
};

/// Trains the portfolio head and adds it to a model file.
#[derive(Parser, Debug)]
#[command(bin_name = "telamalloc-train portfolio")]
pub struct PortfolioArgs {
    /// `eval.json` files of strategy races on training problems (comma-separated).
    #[arg(long, required = true, value_delimiter = ',')]
    runs: Vec<PathBuf>,
    /// `eval.json` files of strategy races on validation problems (other problems).
    #[arg(long, required = true, value_delimiter = ',')]
    validation_runs: Vec<PathBuf>,
    /// `eval.json` files of strategy races on other problems (e.g. the public hard set), only
    /// reported: the chosen schedule replayed on them, beside the equal-share round robin.
    #[arg(long, value_delimiter = ',')]
    report_runs: Vec<PathBuf>,
    /// The strategies the head ranks, `fixed` first (comma-separated; default: every policy of
    /// the training races, in the order they first appear).
    #[arg(long, value_delimiter = ',')]
    strategies: Vec<String>,
    /// Folders holding the problems the runs name (found by file name).
    #[arg(long, required = true, value_delimiter = ',')]
    problems: Vec<PathBuf>,
    /// The model file the head is added to (its candidate head is kept as it is).
    #[arg(long, default_value = "../models/policy.json")]
    base: PathBuf,
    /// Where to write the model file with the head.
    #[arg(long, default_value = "../models/policy.json")]
    out: PathBuf,
    /// Whether the written model reorders candidates with its score head (`true`/`false`;
    /// default: as in the base).
    #[arg(long)]
    rank_candidates: Option<bool>,
    /// The first-ranked strategy's budget per round, in multiples of the others' (with
    /// --confidence-lead, the most it may get).
    #[arg(long, default_value_t = 4)]
    lead: u32,
    /// Scale the lead per problem by the head's confidence (p(first) / p(second), rounded).
    #[arg(long)]
    confidence_lead: bool,
    /// Softmax temperatures to try for budget shares (comma-separated; with --share-floors).
    #[arg(long, value_delimiter = ',')]
    share_temperatures: Vec<f32>,
    /// Share floors to try (comma-separated, each in (0, 1]; with --share-temperatures).
    #[arg(long, value_delimiter = ',')]
    share_floors: Vec<f32>,
    /// The most epochs.
    #[arg(long, default_value_t = 400)]
    epochs: usize,
    /// Stop after this many epochs without a lower validation regret.
    #[arg(long, default_value_t = 60)]
    patience: usize,
    /// Seed of the initial weights and the shuffling.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Hidden layer widths, comma-separated.
    #[arg(long, default_value = "16", value_delimiter = ',')]
    hidden: Vec<usize>,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 3e-3)]
    lr: f64,
    /// Problems per batch.
    #[arg(long, default_value_t = 32)]
    batch: usize,
}

/// One problem: its features, the cost of each strategy, and what the races saw.
struct Example {
    features: Vec<f32>,
    costs: Vec<f64>,
    /// Each strategy's nodes when it decided within the races' limit.
    nodes: Vec<Option<u64>>,
    /// Free buffers (the restart rounds' budget unit).
    buffers: usize,
}

impl Example {
    fn best(&self) -> f64 {
        self.costs.iter().copied().fold(f64::INFINITY, f64::min)
    }

    fn worst(&self) -> f64 {
        self.costs.iter().copied().fold(0.0, f64::max)
    }

    /// How much the choice matters: `ln(worst / best)`.
    fn weight(&self) -> f64 {
        (self.worst() / self.best()).ln()
    }

    /// Soft targets `q_s ~ (best / cost_s)^2`.
    fn targets(&self) -> Vec<f32> {
        let best = self.best();
        let raw: Vec<f64> = self.costs.iter().map(|c| (best / c).powi(2)).collect();
        let sum: f64 = raw.iter().sum();
        raw.iter().map(|r| (r / sum) as f32).collect()
    }
}

struct Races {
    strategies: Vec<String>,
    examples: Vec<Example>,
    problems: usize,
    hash: u64,
    /// The races' node limit (the most nodes any run took).
    limit: u64,
}

/// Reads race files: one example per problem that every strategy ran on.
fn read_races(
    files: &[PathBuf],
    strategies: Option<&[String]>,
    index: &HashMap<String, PathBuf>,
) -> Result<Races, String> {
    let runs = read_runs(files)?;
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    // Over what training reads (not the timings), so that re-run races hash the same.
    for r in &runs {
        let line = format!("{},{},{},{}\n", r.policy, r.problem, r.status, r.nodes);
        hash = crate::data::fnv1a(hash, line.as_bytes());
    }
    let strategies: Vec<String> = match strategies {
        Some(s) => s.to_vec(),
        None => {
            let mut names: Vec<String> = Vec::new();
            for r in &runs {
                if !names.contains(&r.policy) {
                    names.push(r.policy.clone());
                }
            }
            names
        }
    };
    if let Some(bad) = strategies.iter().find(|s| !is_strategy_name(s)) {
        return Err(format!(
            "'{bad}' is not a strategy (fixed or an order word)"
        ));
    }
    let limit = runs.iter().map(|r| r.nodes).max().unwrap_or(1) as f64;
    // Per problem and strategy: its nodes if it decided (`Some(None)`: ran, did not decide).
    type Seen = Vec<Option<Option<u64>>>;
    let mut by_problem: BTreeMap<String, (Seen, usize)> = BTreeMap::new();
    for r in &runs {
        let Some(s) = strategies.iter().position(|s| *s == r.policy) else {
            continue;
        };
        let decided = r.decided();
        let entry = by_problem
            .entry(r.problem.clone())
            .or_insert_with(|| (vec![None; strategies.len()], r.buffers));
        entry.0[s] = Some(decided.then_some(r.nodes.max(1)));
    }
    let mut examples = Vec::new();
    let problems = by_problem.len();
    for (name, (seen, buffers)) in by_problem {
        let Some(nodes) = seen.into_iter().collect::<Option<Vec<Option<u64>>>>() else {
            continue; // not every strategy ran on it
        };
        let costs = nodes
            .iter()
            .map(|n| n.map_or(2.0 * limit, |n| n as f64))
            .collect();
        examples.push(Example {
            features: features_of(index, &name)?,
            costs,
            nodes,
            buffers,
        });
    }
    Ok(Races {
        strategies,
        examples,
        problems,
        hash,
        limit: limit as u64,
    })
}

/// File name -> path over the problem folders.
/// The problem features of the problem file named `name`, found through `index`.
pub(crate) fn features_of(
    index: &HashMap<String, PathBuf>,
    name: &str,
) -> Result<Vec<f32>, String> {
    let path = index
        .get(name)
        .ok_or_else(|| format!("problem {name} is in no --problems folder"))?;
    let problem = telamalloc::io::read_problem(path, None).map_err(|e| e.to_string())?;
    let capacity = problem
        .capacity
        .ok_or_else(|| format!("{}: no capacity in the file name", path.display()))?;
    Ok(problem_features(&problem, capacity).to_vec())
}

pub(crate) fn problem_index(folders: &[PathBuf]) -> Result<HashMap<String, PathBuf>, String> {
    let mut index = HashMap::new();
    for folder in folders {
        let entries = std::fs::read_dir(folder)
            .map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                index.insert(name.to_string(), path.clone());
            }
        }
    }
    Ok(index)
}

#[derive(Module, Debug)]
struct HeadNet {
    hidden: Vec<Linear>,
    output: Linear,
}

impl HeadNet {
    fn new(
        inputs: usize,
        hidden: &[usize],
        outputs: usize,
        rng: &mut StdRng,
        device: &Device,
    ) -> HeadNet {
        let mut width = inputs;
        let mut layers = Vec::new();
        for &h in hidden {
            layers.push(crate::net::layer(width, h, rng, device));
            width = h;
        }
        HeadNet {
            hidden: layers,
            output: crate::net::layer(width, outputs, rng, device),
        }
    }

    fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        let h = self.hidden.iter().fold(x, |h, l| relu(l.forward(h)));
        self.output.forward(h)
    }
}

/// Validation figures of a head: mean regret `ln(cost of the first choice / best cost)`, the
/// share of problems whose first choice is within 1.5x of the best, and the same two for
/// always choosing the first strategy (the fixed policy); 0 regret is the per-problem oracle.
struct Figures {
    regret: f64,
    hit: f64,
    fixed_regret: f64,
    fixed_hit: f64,
}

fn figures(network: &PortfolioNetwork, data: &[Example]) -> Figures {
    let n = data.len().max(1) as f64;
    let (mut regret, mut hit, mut fixed_regret, mut fixed_hit) = (0.0, 0.0, 0.0, 0.0);
    for e in data {
        let scores = network.scores(&e.features);
        let pick = (0..scores.len()).fold(0, |b, i| if scores[i] > scores[b] { i } else { b });
        let best = e.best();
        regret += (e.costs[pick] / best).ln();
        hit += f64::from(u8::from(e.costs[pick] <= 1.5 * best));
        fixed_regret += (e.costs[0] / best).ln();
        fixed_hit += f64::from(u8::from(e.costs[0] <= 1.5 * best));
    }
    Figures {
        regret: regret / n,
        hit: hit / n,
        fixed_regret: fixed_regret / n,
        fixed_hit: fixed_hit / n,
    }
}

fn normalisation(data: &[Example]) -> (Vec<f32>, Vec<f32>) {
    let rows: Vec<&[f32]> = data.iter().map(|e| e.features.as_slice()).collect();
    crate::net::normalisation(&rows, PROBLEM_FEATURES.len())
}

fn head_of(
    net: &HeadNet,
    strategies: &[String],
    (mean, std): (&[f32], &[f32]),
    (lead, confidence_lead): (u32, bool),
) -> PortfolioHead {
    PortfolioHead {
        feature_schema_version: PROBLEM_FEATURE_SCHEMA_VERSION,
        features: PROBLEM_FEATURES.iter().map(|s| s.to_string()).collect(),
        strategies: strategies.to_vec(),
        normalisation: Normalisation {
            mean: mean.to_vec(),
            std: std.to_vec(),
        },
        hidden: net.hidden.iter().map(crate::net::dense).collect(),
        output: crate::net::dense(&net.output),
        lead,
        confidence_lead,
        shares: None,
    }
}

/// A head's plans replayed over `data` at `cap` nodes.
fn replay_head(network: &PortfolioNetwork, data: &[Example], cap: u64) -> Replayed {
    replay_all(
        data.iter().map(|e| (race_of(e), network.rank(&e.features))),
        cap,
    )
}

fn race_of(e: &Example) -> Race<'_> {
    Race {
        buffers: e.buffers,
        nodes: &e.nodes,
    }
}

/// Chooses the share schedule on validation: every (temperature, floor) pair replayed, the most
/// decided and then the lowest PAR2 nodes first. Prints the table, with the equal-share round
/// robin of the same strategies and the head's lead schedule for comparison.
fn choose_shares(
    head: &PortfolioHead,
    (temperatures, floors): (&[f32], &[f32]),
    valid: &Races,
) -> Result<(ShareSchedule, Replayed), String> {
    let cap = valid.limit;
    let data = &valid.examples;
    let k = head.strategies.len();
    let equal = replay_all(
        data.iter()
            .map(|e| (race_of(e), ((0..k).collect(), vec![1; k]))),
        cap,
    );
    let lead_net = PortfolioNetwork::new(head).map_err(|e| format!("exported head: {e}"))?;
    let lead = replay_head(&lead_net, data, cap);
    println!(
        "share schedules replayed on validation ({} problems, {cap} nodes): decided, mean PAR2 nodes",
        data.len()
    );
    println!(
        "  round robin of the {k} strategies, equal shares: {} , {:.0}",
        equal.decided, equal.par2
    );
    println!(
        "  the head's first choice with lead {}: {} , {:.0}",
        head.lead, lead.decided, lead.par2
    );
    let mut best: Option<(ShareSchedule, Replayed)> = None;
    for &temperature in temperatures {
        for &floor in floors {
            let schedule = ShareSchedule { temperature, floor };
            let mut with = head.clone();
            with.shares = Some(schedule);
            let net = PortfolioNetwork::new(&with).map_err(|e| format!("--share-*: {e}"))?;
            let r = replay_head(&net, data, cap);
            println!(
                "  temperature {temperature}, floor {floor}: {} , {:.0}",
                r.decided, r.par2
            );
            let better = best.as_ref().is_none_or(|(_, b)| {
                r.decided > b.decided || (r.decided == b.decided && r.par2 < b.par2)
            });
            if better {
                best = Some((schedule, r));
            }
        }
    }
    best.ok_or_else(|| "no share schedule to choose from".into())
}

/// Trains the head and writes the model file.
pub fn run(args: PortfolioArgs) -> Result<(), String> {
    if args.hidden.contains(&0) || args.batch == 0 || args.epochs == 0 {
        return Err("--hidden widths, --batch and --epochs must be positive".into());
    }
    let index = problem_index(&args.problems)?;
    let chosen = (!args.strategies.is_empty()).then_some(args.strategies.as_slice());
    let train = read_races(&args.runs, chosen, &index)?;
    let valid = read_races(&args.validation_runs, Some(&train.strategies), &index)?;
    if train.strategies.first().map(String::as_str) != Some("fixed") {
        return Err("the races must list `fixed` first (the learned policy's own slot)".into());
    }
    // Problems where every strategy costs the same teach nothing.
    let informative = |e: &Example| e.weight() > 0.2f64.ln_1p();
    let train_set: Vec<&Example> = train.examples.iter().filter(|e| informative(e)).collect();
    println!(
        "strategies: {}; training: {} problems, {} where the choice matters; validation: {} \
         problems, {} where it matters",
        train.strategies.join(", "),
        train.examples.len(),
        train_set.len(),
        valid.examples.len(),
        valid.examples.iter().filter(|e| informative(e)).count()
    );
    if train_set.is_empty() {
        return Err("no training problem where the strategies differ".into());
    }
    let owned: Vec<Example> = train_set
        .iter()
        .map(|e| Example {
            features: e.features.clone(),
            costs: e.costs.clone(),
            nodes: e.nodes.clone(),
            buffers: e.buffers,
        })
        .collect();
    let (mean, std) = normalisation(&owned);
    let k = train.strategies.len();
    let width = PROBLEM_FEATURES.len();
    let device = Device::flex().autodiff();
    device.seed(args.seed);
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut net = HeadNet::new(width, &args.hidden, k, &mut rng, &device);
    let mut optim = AdamConfig::new().init();
    let bar = ProgressBar::new(args.epochs as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} epochs, {elapsed} {msg}")
            .expect("valid template"),
    );
    let mut order: Vec<usize> = (0..owned.len()).collect();
    let mut best: Option<(f64, usize, PortfolioHead)> = None;
    let mut epochs_run = 0;
    for epoch in 0..args.epochs {
        epochs_run = epoch + 1;
        order.shuffle(&mut rng);
        let mut loss_sum = 0.0;
        for chunk in order.chunks(args.batch) {
            let b = chunk.len();
            let mut x = Vec::with_capacity(b * width);
            let mut target = Vec::with_capacity(b * k);
            let mut total = 0.0;
            for &i in chunk {
                let e = &owned[i];
                crate::net::push_normalised(&mut x, &e.features, &mean, &std);
                let w = e.weight();
                total += w;
                target.extend(e.targets().iter().map(|q| q * w as f32));
            }
            let x = Tensor::<2>::from_data(TensorData::new(x, [b, width]), &device);
            let target = Tensor::<2>::from_data(TensorData::new(target, [b, k]), &device);
            let loss = (log_softmax(net.forward(x), 1) * target).sum().neg() / total.max(1e-9);
            loss_sum += loss.clone().into_scalar::<f32>() as f64;
            let grads = GradientsParams::from_grads(loss.backward(), &net);
            net = optim.step(args.lr, net, grads);
        }
        let head = head_of(
            &net,
            &train.strategies,
            (&mean, &std),
            (args.lead, args.confidence_lead),
        );
        let scorer = PortfolioNetwork::new(&head).map_err(|e| format!("exported head: {e}"))?;
        let v = figures(&scorer, &valid.examples);
        let improved = best.as_ref().is_none_or(|b| v.regret < b.0 - 1e-9);
        bar.set_message(format!(
            "epoch {}: loss {:.4}, validation regret {:.3} (fixed {:.3}){}",
            epoch + 1,
            loss_sum,
            v.regret,
            v.fixed_regret,
            if improved { " *" } else { "" }
        ));
        bar.inc(1);
        if improved {
            best = Some((v.regret, epoch + 1, head));
        } else if best
            .as_ref()
            .is_some_and(|b| epoch + 1 - b.1 >= args.patience)
        {
            break;
        }
    }
    bar.finish_and_clear();
    let (_, best_epoch, mut head) = best.expect("at least one epoch");
    if !args.share_temperatures.is_empty() || !args.share_floors.is_empty() {
        let (schedule, replayed) = choose_shares(
            &head,
            (&args.share_temperatures, &args.share_floors),
            &valid,
        )?;
        println!(
            "chosen: temperature {}, floor {} ({} decided, mean PAR2 nodes {:.0})",
            schedule.temperature, schedule.floor, replayed.decided, replayed.par2
        );
        head.shares = Some(schedule);
    }
    let scorer = PortfolioNetwork::new(&head).map_err(|e| format!("exported head: {e}"))?;
    let v = figures(&scorer, &valid.examples);
    let t = figures(&scorer, &train.examples);
    let mut model = ModelFile::load(&args.base).map_err(|e| format!("--base: {e}"))?;
    if let Some(rank) = args.rank_candidates {
        model.rank_candidates = rank;
    }
    let put = |m: &mut ModelFile, k: &str, v: f64| {
        m.metrics.insert(format!("portfolio_{k}"), v);
    };
    put(&mut model, "best_epoch", best_epoch as f64);
    put(&mut model, "epochs", epochs_run as f64);
    put(&mut model, "training_problems", train.examples.len() as f64);
    put(&mut model, "training_informative", owned.len() as f64);
    put(
        &mut model,
        "validation_problems",
        valid.examples.len() as f64,
    );
    put(&mut model, "validation_regret", v.regret);
    put(&mut model, "validation_fixed_regret", v.fixed_regret);
    put(&mut model, "validation_hit", v.hit);
    put(&mut model, "validation_fixed_hit", v.fixed_hit);
    if head.shares.is_some() {
        let net = PortfolioNetwork::new(&head).map_err(|e| format!("exported head: {e}"))?;
        let r = replay_head(&net, &valid.examples, valid.limit);
        put(&mut model, "validation_replayed_decided", r.decided as f64);
        put(&mut model, "validation_replayed_par2_nodes", r.par2);
    }
    put(&mut model, "training_regret", t.regret);
    put(&mut model, "training_fixed_regret", t.fixed_regret);
    // Replace the description of an earlier portfolio head, if the base had one.
    let candidate_data = match model.training.data.find("portfolio head:") {
        Some(at) => model.training.data[..at].trim_end_matches("; ").to_string(),
        None => model.training.data.clone(),
    };
    model.training.data = format!(
        "{}{}portfolio head: strategy races {} (FNV-1a over policy, problem, status, nodes: \
         {:016x}), validation {} ({:016x})",
        candidate_data,
        if candidate_data.is_empty() { "" } else { "; " },
        args.runs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        train.hash,
        args.validation_runs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        valid.hash
    );
    model.portfolio = Some(head);
    model.check().map_err(|e| format!("exported model: {e}"))?;
    println!(
        "portfolio head: {} -> {} -> {}, {} parameters, lead {}, best epoch {best_epoch} of {epochs_run}",
        width,
        args.hidden
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()
            .join(" -> "),
        k,
        model.portfolio.as_ref().map_or(0, PortfolioHead::parameters),
        args.lead
    );
    println!(
        "validation ({} problems, {} read): regret ln(first choice / best) {:.3} (fixed first: \
         {:.3}), first choice within 1.5x of the best {:.3} (fixed: {:.3})",
        valid.examples.len(),
        valid.problems,
        v.regret,
        v.fixed_regret,
        v.hit,
        v.fixed_hit
    );
    println!(
        "training: regret {:.3} (fixed {:.3}), hit {:.3} (fixed {:.3})",
        t.regret, t.fixed_regret, t.hit, t.fixed_hit
    );
    if !args.report_runs.is_empty() {
        let other = read_races(&args.report_runs, Some(&train.strategies), &index)?;
        let head = model.portfolio.as_ref().expect("the head was just set");
        let net = PortfolioNetwork::new(head).map_err(|e| format!("exported head: {e}"))?;
        let r = replay_head(&net, &other.examples, other.limit);
        let equal = replay_all(
            other
                .examples
                .iter()
                .map(|e| (race_of(e), ((0..k).collect(), vec![1; k]))),
            other.limit,
        );
        println!(
            "--report-runs ({} problems, {} nodes): the head decides {}, mean PAR2 nodes {:.0}; \
             equal shares {}, {:.0}",
            other.examples.len(),
            other.limit,
            r.decided,
            r.par2,
            equal.decided,
            equal.par2
        );
    }
    write_model(&model, &args.out)
}

/// Writes `model` as JSON to `out`, creating the folder.
pub fn write_model(model: &ModelFile, out: &Path) -> Result<(), String> {
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let text = model.to_json();
    std::fs::write(out, &text).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    println!("wrote {} ({} bytes)", out.display(), text.len());
    Ok(())
}
