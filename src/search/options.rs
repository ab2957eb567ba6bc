//! Every search technique as a named switch, so each one's effect can be measured by turning it off.

use serde::{Deserialize, Serialize};

/// The restart schedule: how the node budget of successive runs grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Schedule {
    /// Budgets `n, 2n, 4n, ...` (n = number of buffers), each round over every policy.
    Geometric,
    /// Budgets `n * luby(i)`: 1, 1, 2, 1, 1, 2, 4, ... times n.
    Luby,
}

/// The switches of the hybrid search. Each is on by default exactly where measurement showed it
/// helps (benches/RESULTS.md has the ablation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchOptions {
    /// Canonical placements: offsets never decrease along a search path (ties by static rank),
    /// so each packing is reached once.
    pub canonical: bool,
    /// Dominance: never place a buffer at or above the lowest end of another unplaced buffer.
    pub dominance: bool,
    /// Section inference: fail when a section's floor plus its unplaced sizes exceed the capacity.
    pub section_inference: bool,
    /// Raise a section's floor to the lowest offset any of its unplaced buffers can take.
    pub unplaced_floor: bool,
    /// Solve independent partitions separately, at the start and whenever placements cut time.
    pub decomposition: bool,
    /// Place a buffer that no unplaced buffer overlaps at once, without branching on it.
    pub forced_isolated: bool,
    /// Conflict-driven prioritisation: buffers in failing sections gain activity (decaying, as
    /// in VSIDS) and are tried earlier at nodes; activity persists across restarts.
    pub conflict_boost: bool,
    /// Major backtracks: after a growing number of failures, jump back to the earliest placement
    /// involved in the last conflict and re-explore its subtree with the new priorities.
    /// Off by default: on the hard set it costs 2.7x more work (benches/RESULTS.md).
    pub major_backtrack: bool,
    /// Restarts over a portfolio of policies with growing node budgets (off: one complete run of
    /// the first policy).
    pub restarts: bool,
    /// The restart schedule.
    pub schedule: Schedule,
    /// When the first policy ranks the portfolio for the problem (a learned portfolio head), give
    /// its first choice the policy's lead (times the others' node budget) each round.
    pub portfolio_lead: bool,
    /// Try the fast baselines first and return at once when one fits the capacity.
    pub heuristic_first: bool,
    /// Worker threads for the portfolio (1 = sequential). The answer does not depend on it.
    pub threads: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            canonical: true,
            dominance: true,
            section_inference: true,
            unplaced_floor: true,
            decomposition: true,
            forced_isolated: true,
            conflict_boost: true,
            major_backtrack: false,
            restarts: true,
            schedule: Schedule::Geometric,
            portfolio_lead: true,
            heuristic_first: true,
            threads: 1,
        }
    }
}

impl SearchOptions {
    /// The names of the boolean switches, as the CLI spells them (`--no-NAME` turns one off).
    pub const SWITCHES: [&'static str; 12] = [
        "canonical",
        "dominance",
        "section-inference",
        "unplaced-floor",
        "decomposition",
        "forced-isolated",
        "conflict-boost",
        "major-backtrack",
        "restarts",
        "portfolio-lead",
        "heuristic-first",
        "luby",
    ];

    /// Whether the switch with this CLI name is on (`None` for an unknown name).
    pub fn get(&self, name: &str) -> Option<bool> {
        Some(match name {
            "canonical" => self.canonical,
            "dominance" => self.dominance,
            "section-inference" => self.section_inference,
            "unplaced-floor" => self.unplaced_floor,
            "decomposition" => self.decomposition,
            "forced-isolated" => self.forced_isolated,
            "conflict-boost" => self.conflict_boost,
            "major-backtrack" => self.major_backtrack,
            "restarts" => self.restarts,
            "portfolio-lead" => self.portfolio_lead,
            "heuristic-first" => self.heuristic_first,
            "luby" => self.schedule == Schedule::Luby,
            _ => return None,
        })
    }

    /// The ablation variants of these options: each switch flipped in turn, labelled
    /// `-name` (turned off) or `+name` (turned on).
    pub fn ablation_variants(&self) -> Vec<(String, SearchOptions)> {
        Self::SWITCHES
            .iter()
            .map(|&name| {
                let on = self.get(name).expect("known switch");
                let mut variant = self.clone();
                variant.set(name, !on);
                let label = format!("{}{name}", if on { "-" } else { "+" });
                (label, variant)
            })
            .collect()
    }

    /// Sets a switch by its CLI name (`luby` selects the Luby schedule). Returns false for an
    /// unknown name.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        match name {
            "canonical" => self.canonical = on,
            "dominance" => self.dominance = on,
            "section-inference" => self.section_inference = on,
            "unplaced-floor" => self.unplaced_floor = on,
            "decomposition" => self.decomposition = on,
            "forced-isolated" => self.forced_isolated = on,
            "conflict-boost" => self.conflict_boost = on,
            "major-backtrack" => self.major_backtrack = on,
            "restarts" => self.restarts = on,
            "portfolio-lead" => self.portfolio_lead = on,
            "heuristic-first" => self.heuristic_first = on,
            "luby" => {
                self.schedule = if on {
                    Schedule::Luby
                } else {
                    Schedule::Geometric
                }
            }
            _ => return false,
        }
        true
    }
}
