//! Replays a portfolio schedule over strategy races: each strategy's run in a round robin is
//! its run alone (a strategy's restarts depend only on its own budgets), so the nodes a
//! portfolio with budget weights needs to decide a problem follow from the nodes each strategy
//! needed alone. This is how share schedules are chosen on validation without running them.

use serde::Deserialize;
use std::path::PathBuf;
use telamalloc::training::{round_budget, Schedule};

/// One run of a strategy race, as `telamalloc eval` writes it to `eval.json`.
#[derive(Deserialize)]
pub struct Run {
    /// The strategy.
    pub policy: String,
    /// The problem's file name.
    pub problem: String,
    /// `solved`, `infeasible`, `limit`, ...
    pub status: String,
    /// Nodes it took.
    pub nodes: u64,
    /// Free buffers of the problem.
    #[serde(default)]
    pub buffers: usize,
}

impl Run {
    /// Whether the run decided its problem (solved it or proved it infeasible).
    pub fn decided(&self) -> bool {
        self.status == "solved" || self.status == "infeasible"
    }
}

/// Every run of the race files `files`, in file order.
pub fn read_runs(files: &[PathBuf]) -> Result<Vec<Run>, String> {
    let mut runs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let mut these: Vec<Run> =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        runs.append(&mut these);
    }
    Ok(runs)
}

/// One problem's race: the free buffers (the round's budget unit) and each strategy's nodes
/// alone when it decided within the race's limit (`None`: not within it).
pub struct Race<'a> {
    /// Buffers the search places.
    pub buffers: usize,
    /// Nodes per strategy, in the races' strategy order.
    pub nodes: &'a [Option<u64>],
}

/// Total nodes until the first strategy decides, when `order` runs round robin with Luby
/// restarts and strategy `order[i]` runs `weights[i]` runs of its own restart schedule each
/// round (as the core's portfolio does); `None` when no strategy decides within `cap` nodes
/// (or none decided in the races at all). Exact: each strategy's runs are its runs alone.
pub fn replay(race: &Race<'_>, order: &[usize], weights: &[u32], cap: u64) -> Option<u64> {
    let weight = |k: usize| weights.get(k).copied().unwrap_or(1).max(1);
    let passes = (0..order.len()).map(weight).max().unwrap_or(1);
    let mut spent = vec![0u64; order.len()];
    let mut own_runs = vec![0u32; order.len()];
    let mut total = 0u64;
    loop {
        for pass in 0..passes {
            for (k, &s) in order.iter().enumerate() {
                if weight(k) <= pass {
                    continue;
                }
                let want = round_budget(Schedule::Luby, own_runs[k], race.buffers)
                    .min(cap.saturating_sub(total));
                own_runs[k] += 1;
                if let Some(needed) = race.nodes[s] {
                    if spent[k] + want >= needed {
                        return Some(total + needed - spent[k]);
                    }
                }
                spent[k] += want;
                total += want;
                if total >= cap {
                    return None;
                }
            }
        }
    }
}

/// A schedule's figures over a set of races at one node cap: problems decided, and the mean
/// PAR2 nodes (a problem not decided counts twice the cap).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Replayed {
    /// Problems decided within the cap.
    pub decided: usize,
    /// Mean nodes, twice the cap for those not decided.
    pub par2: f64,
}

/// Replays every race with the plan `plan` gives it (order and weights) at `cap` nodes.
pub fn replay_all<'a>(
    races: impl IntoIterator<Item = (Race<'a>, (Vec<usize>, Vec<u32>))>,
    cap: u64,
) -> Replayed {
    let (mut decided, mut total, mut count) = (0usize, 0f64, 0usize);
    for (race, (order, weights)) in races {
        count += 1;
        match replay(&race, &order, &weights, cap) {
            Some(nodes) => {
                decided += 1;
                total += nodes as f64;
            }
            None => total += 2.0 * cap as f64,
        }
    }
    Replayed {
        decided,
        par2: total / count.max(1) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_robin_pays_for_every_strategy_until_one_decides() {
        // Buffers 16: Luby rounds of 64, 64, 128, 64, ...
        let nodes = [None, Some(100)];
        let race = Race {
            buffers: 16,
            nodes: &nodes,
        };
        // Alone: the second strategy needs 100 of its own nodes.
        assert_eq!(replay(&race, &[1], &[1], 10_000), Some(100));
        // Round robin: 64 + 64 (round 1), then 64 more for the first and 36 for the second.
        assert_eq!(
            replay(&race, &[0, 1], &[1, 1], 10_000),
            Some(64 + 64 + 64 + 36)
        );
        // Alone with weight 2: its own runs of 64, 64, as alone.
        assert_eq!(replay(&race, &[1], &[2], 10_000), Some(100));
        // Weight 2, either place: every strategy runs in a round's first pass (64 + 64), then
        // only the heavier one, which decides 36 nodes into its second run.
        assert_eq!(replay(&race, &[1, 0], &[2, 1], 10_000), Some(64 + 64 + 36));
        assert_eq!(replay(&race, &[0, 1], &[1, 2], 10_000), Some(64 + 64 + 36));
        // Weight 2 for the other one: round 1 is 64 + 64 + 64 (its runs 1 and 2); round 2
        // starts with its third run (128), then the second decides 36 nodes in.
        assert_eq!(
            replay(&race, &[0, 1], &[2, 1], 10_000),
            Some(64 + 64 + 64 + 128 + 36)
        );
        // A cap below what it needs: not decided.
        assert_eq!(replay(&race, &[0, 1], &[1, 1], 200), None);
        // No strategy decides: not decided, whatever the cap.
        let never = [None, None];
        let race = Race {
            buffers: 16,
            nodes: &never,
        };
        assert_eq!(replay(&race, &[0, 1], &[1, 1], 10_000), None);
    }
}
