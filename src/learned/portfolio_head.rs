//! The portfolio head as a [`StrategyRanker`]: from a whole problem's features it orders the
//! strategies of a learned portfolio and gives each a weight (how many runs of its own restart
//! schedule it makes per round), so a right guess costs little more than running that strategy alone and a wrong one
//! still ends in the round robin (every strategy keeps a share; the search stays complete).

use super::network::PortfolioNetwork;
use crate::search::{ProblemView, StrategyPlan, StrategyRanker};
use std::sync::Arc;

/// Orders a portfolio by a learned head. The head names the learned node policy's own slot
/// `fixed`; in the portfolio that policy is called `own_name`.
pub struct PortfolioRanker {
    head: Arc<PortfolioNetwork>,
    own_name: String,
}

impl PortfolioRanker {
    /// The ranker of `head`, whose `fixed` slot is the policy named `own_name`.
    pub fn new(head: Arc<PortfolioNetwork>, own_name: &str) -> PortfolioRanker {
        PortfolioRanker {
            head,
            own_name: own_name.to_string(),
        }
    }
}

impl StrategyRanker for PortfolioRanker {
    fn rank(&self, problem: &ProblemView<'_>, strategies: &[String]) -> Option<StrategyPlan> {
        let (ranked, ranked_weights) = self.head.rank(&problem.features());
        // A strategy's own name, or failing that, for a head trained on a plain order (`WAT`),
        // its diversified form (`WAT~`), whose first run is that order's.
        let slot = |strategy: &str| {
            strategies
                .iter()
                .position(|n| n == strategy || (strategy == "fixed" && *n == self.own_name))
                .or_else(|| {
                    strategies
                        .iter()
                        .position(|n| n.strip_suffix('~') == Some(strategy))
                })
        };
        let (mut order, mut weights): (Vec<usize>, Vec<u32>) = ranked
            .into_iter()
            .zip(ranked_weights)
            .filter_map(|(i, w)| slot(&self.head.strategies()[i]).map(|s| (s, w)))
            .unzip();
        // Strategies the head does not know run last, with the least share.
        let missing: Vec<usize> = (0..strategies.len())
            .filter(|i| !order.contains(i))
            .collect();
        weights.extend(missing.iter().map(|_| 1));
        order.extend(missing);
        Some(StrategyPlan { order, weights })
    }
}
