//! Evaluation with the core's own inference code (`telamalloc::training::Network`), so
//! the figures describe exactly what the search will compute.

use crate::data::{Dataset, WIDTH};
use ndarray::{Array1, ArrayView2};
use telamalloc::training::Network;

/// Ranking figures over a dataset's ranking examples.
#[derive(Clone, Debug, Default)]
pub struct RankMetrics {
    /// Examples.
    pub examples: usize,
    /// Mean listwise negative log-likelihood of the target.
    pub nll: f64,
    /// Share where the model's best candidate is the target.
    pub top1: f64,
    /// Share where the target is among the model's best three.
    pub top3: f64,
    /// Share where the logging (fixed) policy's first candidate is the target.
    pub fixed_top1: f64,
    /// Share where the target is among the fixed policy's first three.
    pub fixed_top3: f64,
    /// Mean 1-based rank of the target under the model.
    pub mean_rank: f64,
    /// Mean 1-based rank of the target under the fixed policy.
    pub fixed_mean_rank: f64,
    /// Top-1 of the model where the fixed policy's first candidate is not the target.
    pub top1_where_fixed_wrong: f64,
    /// Top-1 of the model where the fixed policy's first candidate is the target.
    pub top1_where_fixed_right: f64,
    /// Per example: (how much the model's best outscores the fixed policy's first candidate,
    /// model's best is the target, fixed's first is the target).
    pub margins: Vec<(f32, bool, bool)>,
}

/// Scores every ranking example with `network`.
pub fn rank_metrics(network: &Network, data: &Dataset) -> RankMetrics {
    let mut m = RankMetrics {
        examples: data.rank.len(),
        ..RankMetrics::default()
    };
    for e in &data.rank {
        let n = e.len();
        let view = ArrayView2::from_shape((n, WIDTH), &e.features).expect("rows of WIDTH");
        let scores = network.ranking_scores(view);
        let best = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let log_sum = best as f64
            + scores
                .iter()
                .map(|&s| ((s - best) as f64).exp())
                .sum::<f64>()
                .ln();
        m.nll += log_sum - scores[e.target] as f64;
        // Stable order by score, ties in the fixed order, as the policy sorts.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        let rank = order.iter().position(|&i| i == e.target).unwrap_or(n);
        m.top1 += (rank == 0) as u8 as f64;
        m.top3 += (rank < 3) as u8 as f64;
        m.mean_rank += rank as f64 + 1.0;
        m.fixed_top1 += (e.target == 0) as u8 as f64;
        m.fixed_top3 += (e.target < 3) as u8 as f64;
        m.fixed_mean_rank += e.target as f64 + 1.0;
        if e.target == 0 {
            m.top1_where_fixed_right += (rank == 0) as u8 as f64;
        } else {
            m.top1_where_fixed_wrong += (rank == 0) as u8 as f64;
        }
        m.margins
            .push((scores[order[0]] - scores[0], rank == 0, e.target == 0));
    }
    let right = m.margins.iter().filter(|x| x.2).count();
    m.top1_where_fixed_right /= right.max(1) as f64;
    m.top1_where_fixed_wrong /= (m.examples - right).max(1) as f64;
    let count = m.examples.max(1) as f64;
    for v in [
        &mut m.nll,
        &mut m.top1,
        &mut m.top3,
        &mut m.fixed_top1,
        &mut m.fixed_top3,
        &mut m.mean_rank,
        &mut m.fixed_mean_rank,
    ] {
        *v /= count;
    }
    m
}

/// The confidence margin that maximises the top-1 agreement of the policy as it runs (the
/// model's order where its best candidate outscores the fixed policy's first by at least the
/// margin, the fixed order elsewhere), ties going to the larger (more conservative) margin; with
/// its agreement and the share of nodes where the model overrides the fixed order.
pub fn choose_margin(margins: &[(f32, bool, bool)]) -> (f32, f64, f64) {
    let count = margins.len().max(1) as f64;
    let mut sorted: Vec<(f32, bool, bool)> = margins.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Threshold above every margin: the fixed policy everywhere.
    let never = sorted.last().map_or(1.0, |m| m.0 * 2.0 + 1.0);
    let fixed_hits: f64 = sorted.iter().filter(|m| m.2).count() as f64;
    let mut best = (never, fixed_hits, 0usize);
    // Threshold at sorted[i].0: the model decides examples i.. (equal margins included).
    let mut model_hits_above: f64 = 0.0;
    let mut fixed_hits_above: f64 = 0.0;
    let mut i = sorted.len();
    while i > 0 {
        let value = sorted[i - 1].0;
        while i > 0 && sorted[i - 1].0 == value {
            i -= 1;
            model_hits_above += sorted[i].1 as u8 as f64;
            fixed_hits_above += sorted[i].2 as u8 as f64;
        }
        let hits = fixed_hits - fixed_hits_above + model_hits_above;
        if value > 0.0 && hits > best.1 {
            best = (value, hits, sorted.len() - i);
        }
    }
    (best.0, best.1 / count, best.2 as f64 / count)
}

/// The area under the ROC curve of the risk head on the risk examples, all of them and those
/// on the solution path only (`None` without both classes or without a risk head).
pub fn risk_auc(network: &Network, data: &Dataset) -> (Option<f64>, Option<f64>) {
    let Some(risks) = risk_estimates(network, data) else {
        return (None, None);
    };
    let scored: Vec<(f32, bool, bool)> = risks
        .iter()
        .zip(&data.risk)
        .map(|(&p, r)| (p, r.failed > 0.5, r.on_path))
        .collect();
    let all = auc(scored.iter().map(|s| (s.0, s.1)).collect());
    let on_path = auc(scored.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect());
    (all, on_path)
}

/// The risk head's mean logistic loss over a dataset's risk examples (`None` without a risk
/// head or examples): the loss it is trained on, measured on other logs.
pub fn risk_log_loss(network: &Network, data: &Dataset) -> Option<f64> {
    let risks = risk_estimates(network, data)?;
    let total: f64 = risks
        .iter()
        .zip(&data.risk)
        .map(|(&p, r)| {
            let p = (p as f64).clamp(1e-7, 1.0 - 1e-7);
            let y = r.failed as f64;
            -(y * p.ln() + (1.0 - y) * (1.0 - p).ln())
        })
        .sum();
    Some(total / data.risk.len() as f64)
}

/// The risk head's estimate for each of a dataset's risk examples (`None` without a risk head
/// or examples).
fn risk_estimates(network: &Network, data: &Dataset) -> Option<Array1<f32>> {
    if !network.has_risk() || data.risk.is_empty() {
        return None;
    }
    let rows: Vec<f32> = data.risk.iter().flat_map(|r| r.features).collect();
    let view = ArrayView2::from_shape((data.risk.len(), WIDTH), &rows).expect("rows");
    network.forward(view, true).1
}

/// The area under the ROC curve of (score, positive) pairs.
fn auc(mut scored: Vec<(f32, bool)>) -> Option<f64> {
    scored.sort_by(|a, b| a.0.total_cmp(&b.0));
    let positives = scored.iter().filter(|s| s.1).count() as f64;
    let negatives = scored.len() as f64 - positives;
    if positives == 0.0 || negatives == 0.0 {
        return None;
    }
    // Mann-Whitney U with average ranks for ties.
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < scored.len() {
        let mut j = i;
        while j < scored.len() && scored[j].0 == scored[i].0 {
            j += 1;
        }
        let average = (i + 1 + j) as f64 / 2.0;
        rank_sum += scored[i..j].iter().filter(|s| s.1).count() as f64 * average;
        i = j;
    }
    Some((rank_sum - positives * (positives + 1.0) / 2.0) / (positives * negatives))
}

/// The top-1 agreement of the policy as it runs with `margin` (see [`choose_margin`]), and the
/// share of nodes where the model overrides the fixed order.
pub fn policy_top1(margins: &[(f32, bool, bool)], margin: f32) -> (f64, f64) {
    let count = margins.len().max(1) as f64;
    let (mut hits, mut overrides) = (0.0, 0.0);
    for &(m, model, fixed) in margins {
        if m > 0.0 && m >= margin {
            overrides += 1.0;
            hits += model as u8 as f64;
        } else {
            hits += fixed as u8 as f64;
        }
    }
    (hits / count, overrides / count)
}
