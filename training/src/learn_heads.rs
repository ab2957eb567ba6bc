//! The user loop's second stage: solve logs of the training problems, the candidate-ranking and
//! risk heads trained on them (the first form of `telamalloc-train`), and the variants of the
//! first stage's best model that use them (learned backjumps at several thresholds, or none).

use crate::portfolio::write_model;
use clap::Parser;
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
use telamalloc::batch::collect_logs;
use telamalloc::training::{ModelFile, TrainingInfo};
use telamalloc::{Problem, Solver};

/// Backjump thresholds tried with the new risk head (0.8 is the shipped model's).
const THRESHOLDS: [f32; 3] = [0.65, 0.8, 0.9];

/// Percent of the training problems whose logs stop the heads' training (early stopping).
const STOPPING_PERCENT: u64 = 20;

/// Records a solve log of every training problem (of `folder`) under `solver` (the shipped
/// default) in `work`, trains the ranking and risk heads on them and returns the model file
/// that holds them.
pub fn train(
    train: &[(String, Problem)],
    solver: &Solver,
    threads: usize,
    seed: u64,
    (folder, work): (&Path, &Path),
) -> Result<ModelFile, String> {
    let logs = work.join("logs");
    let (fit, stop) = (logs.join("train"), logs.join("stopping"));
    for dir in [&fit, &stop] {
        // Logs of an earlier run in the same folder would be read as this run's.
        if dir.exists() {
            std::fs::remove_dir_all(dir)
                .map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let (mut to_fit, mut to_stop) = (Vec::new(), Vec::new());
    for (name, problem) in train {
        // A second hash (salted) so this split does not follow the held-out one.
        let part = crate::data::fnv1a(0x6c6f_6773, name.as_bytes()) % 100 < STOPPING_PERCENT;
        let item = (PathBuf::from(name), problem.clone());
        if part {
            to_stop.push(item);
        } else {
            to_fit.push(item);
        }
    }
    if to_fit.is_empty() || to_stop.is_empty() {
        return Err("too few training problems to train the ranking and risk heads".into());
    }
    let bar = ProgressBar::new(train.len() as u64);
    for (problems, dir) in [(&to_fit, &fit), (&to_stop, &stop)] {
        let collected = collect_logs(problems, solver, dir, 20_000, threads, &|| bar.inc(1))?;
        if let Some(first) = collected.failures.first() {
            return Err(format!("a solve log could not be written: {first}"));
        }
    }
    bar.finish_and_clear();
    let out = work.join("heads.json");
    let path = |p: &Path| p.display().to_string();
    crate::run(crate::Args::parse_from([
        "telamalloc-train".to_string(),
        "--logs".into(),
        path(&fit),
        "--validation-logs".into(),
        path(&stop),
        "--out".into(),
        path(&out),
        "--policies".into(),
        "all".into(),
        "--risk-weight".into(),
        "1".into(),
        "--epochs".into(),
        "20".into(),
        "--patience".into(),
        "4".into(),
        "--seed".into(),
        seed.to_string(),
        "--data-description".into(),
        format!(
            "telamalloc-train learn: solve logs of {} training problems of {} ({} stop the \
             training)",
            train.len(),
            folder.display(),
            to_stop.len()
        ),
    ]))?;
    ModelFile::load(&out).map_err(|e| format!("{}: {e}", out.display()))
}

/// The variants of `best` (the first stage's chosen model file) with the heads of `heads`:
/// learned backjumps at each of [`THRESHOLDS`], and none; candidate ranking stays as in `best`
/// unless the new head ranked the validation decisions better than the fixed order. Each is
/// written in `work`.
pub fn variants(
    best: &Path,
    heads: &ModelFile,
    work: &Path,
) -> Result<Vec<(String, PathBuf)>, String> {
    let base = ModelFile::load(best).map_err(|e| format!("{}: {e}", best.display()))?;
    let metric = |k: &str| heads.metrics.get(k).copied().unwrap_or(0.0);
    let ranks_better = metric("validation_policy_top1") > metric("validation_fixed_top1");
    let mut with_heads = base.clone();
    with_heads.normalisation = heads.normalisation.clone();
    with_heads.hidden = heads.hidden.clone();
    with_heads.score = heads.score.clone();
    with_heads.risk = heads.risk.clone();
    with_heads.confidence_margin = heads.confidence_margin;
    with_heads.order_prior = heads.order_prior;
    with_heads.rank_candidates = base.rank_candidates || ranks_better;
    // The description and figures of the heads are the new ones; the portfolio head's stay.
    let portfolio_part = base
        .training
        .data
        .find("portfolio head:")
        .map_or("", |at| &base.training.data[at..]);
    with_heads.training = TrainingInfo {
        data: format!(
            "ranking and risk heads: {}; {portfolio_part}",
            heads.training.data
        ),
        ..heads.training.clone()
    };
    with_heads
        .metrics
        .retain(|k, _| k.starts_with("portfolio_"));
    with_heads.metrics.extend(heads.metrics.clone());
    let ranking = if with_heads.rank_candidates {
        ", candidates ranked by the new head"
    } else {
        ""
    };
    let mut out = Vec::new();
    let mut put = |model: ModelFile, name: &str, what: String| -> Result<(), String> {
        let file = work.join(format!("candidate-{name}.json"));
        model
            .check()
            .map_err(|e| format!("{}: {e}", file.display()))?;
        write_model(&model, &file)?;
        out.push((what, file));
        Ok(())
    };
    if with_heads.risk.is_some() {
        for threshold in THRESHOLDS {
            let mut model = with_heads.clone();
            model.backjump_risk = Some(threshold);
            put(
                model,
                &format!("heads-backjump-{threshold}"),
                format!("the first stage's best with the new heads, backjumps at risk {threshold}{ranking}"),
            )?;
        }
    }
    let mut model = base;
    model.backjump_risk = None;
    put(
        model,
        "no-backjump",
        "the first stage's best without learned backjumps".into(),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use telamalloc::learned::BUILT_IN_MODEL;

    #[test]
    fn the_variants_carry_the_new_heads_at_each_threshold_and_one_has_no_backjumps() {
        let work = std::env::temp_dir().join(format!("learn-heads-{}", std::process::id()));
        std::fs::create_dir_all(&work).unwrap();
        let best = work.join("best.json");
        std::fs::write(&best, BUILT_IN_MODEL).unwrap();
        let shipped = ModelFile::from_json(BUILT_IN_MODEL).unwrap();
        let mut heads = shipped.clone();
        // Heads that differ from the shipped ones, and rank worse than the fixed order.
        heads.order_prior += 1.0;
        heads.score.bias[0] += 0.5;
        heads.metrics.insert("validation_policy_top1".into(), 0.5);
        heads.metrics.insert("validation_fixed_top1".into(), 0.9);
        let variants = variants(&best, &heads, &work).unwrap();
        let models: Vec<ModelFile> = variants
            .iter()
            .map(|(_, file)| ModelFile::load(file).unwrap())
            .collect();
        assert_eq!(models.len(), THRESHOLDS.len() + 1);
        for (model, threshold) in models.iter().zip(THRESHOLDS) {
            assert_eq!(model.backjump_risk, Some(threshold));
            assert_eq!(model.score, heads.score);
            assert_eq!(model.order_prior, heads.order_prior);
            assert_eq!(model.portfolio, shipped.portfolio);
            assert_eq!(model.rank_candidates, shipped.rank_candidates);
        }
        assert_eq!(
            models[0].training.data.find("portfolio head:").is_some(),
            shipped.training.data.contains("portfolio head:")
        );
        assert_eq!(models[0].metrics.get("validation_policy_top1"), Some(&0.5));
        let last = models.last().unwrap();
        assert_eq!(last.backjump_risk, None);
        assert_eq!(last.score, shipped.score);
        std::fs::remove_dir_all(&work).unwrap();
    }
}
