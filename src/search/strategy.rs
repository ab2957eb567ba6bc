//! The per-problem seam of the search: which node policies run (a [`Portfolio`]), and a
//! [`StrategyRanker`] that may order them for a problem and give each its share of every
//! restart round's node budget.

use super::features::{problem_features, PROBLEM_FEATURES};
use super::instance::Instance;
use super::judge::LearnedHooks;
use super::policy::{FixedPolicy, NodePolicy, StaticOrder};

/// What a strategy ranker sees of a whole problem before the search starts.
pub struct ProblemView<'a> {
    pub(crate) instance: &'a Instance,
}

impl ProblemView<'_> {
    /// The problem's features (see [`PROBLEM_FEATURES`]).
    pub fn features(&self) -> [f32; PROBLEM_FEATURES.len()] {
        problem_features(self.instance)
    }

    /// Buffers the search places (those without a fixed offset).
    pub fn free_buffers(&self) -> usize {
        self.instance.free.len()
    }

    /// The capacity searched.
    pub fn capacity(&self) -> u64 {
        self.instance.capacity
    }
}

/// A ranker's plan for one problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StrategyPlan {
    /// The order in which to run the portfolio's policies: indices into its names, each once.
    pub order: Vec<usize>,
    /// Each policy's runs per round, in the order of `order` (all 1: the plain round robin):
    /// a policy of weight `w` runs the next `w` runs of its own restart schedule each round.
    /// Zeros and missing entries count as 1, so every policy keeps a share and the search stays
    /// complete: a policy of weight `w` out of a total `W` gets about `w / W` of the nodes, so
    /// trusting the wrong one costs about `W / w` times running the right one alone.
    pub weights: Vec<u32>,
}

impl StrategyPlan {
    /// A plan that gives the first policy of `order` `lead` runs per round, the others one.
    pub fn with_lead(order: Vec<usize>, lead: u32) -> StrategyPlan {
        let weights = (0..order.len())
            .map(|i| if i == 0 { lead.max(1) } else { 1 })
            .collect();
        StrategyPlan { order, weights }
    }
}

/// Orders a portfolio's strategies for a problem (e.g. a learned portfolio head). Whatever it
/// says, every strategy keeps running in the round robin, so the search stays complete; a plan
/// that is not a permutation of the strategies is ignored.
pub trait StrategyRanker: Send + Sync {
    /// The plan for the problem of `problem`, given the portfolio's policy names in their
    /// default order; `None` keeps that order with equal budgets.
    fn rank(&self, problem: &ProblemView<'_>, strategies: &[String]) -> Option<StrategyPlan>;
}

/// The node policies a search runs round robin with growing budgets, and an optional ranker
/// that orders them per problem.
pub struct Portfolio {
    /// The policies, in their default order.
    pub policies: Vec<Box<dyn NodePolicy>>,
    /// Orders the policies per problem, if present.
    pub ranker: Option<Box<dyn StrategyRanker>>,
}

impl Portfolio {
    /// A portfolio of `policies` in this order, without a ranker.
    pub fn new(policies: Vec<Box<dyn NodePolicy>>) -> Portfolio {
        Portfolio {
            policies,
            ranker: None,
        }
    }

    /// One policy alone (restarts of it with growing budgets).
    pub fn single(policy: Box<dyn NodePolicy>) -> Portfolio {
        Portfolio::new(vec![policy])
    }

    /// The default round robin (`fixed/WAT~/TAW~/TWA`): the fixed policy, then the static
    /// orders WAT and TAW with diversified restarts (seeded by `seed`; see
    /// [`Diversity`](super::Diversity)) and TWA plain (what each choice is worth:
    /// benches/ARCHIVE.md, "Diversified restarts win every validation set").
    pub fn round_robin(buffers: usize, conflict_boost: bool, seed: u64) -> Portfolio {
        let mut policies: Vec<Box<dyn NodePolicy>> =
            vec![Box::new(FixedPolicy::new(buffers, conflict_boost))];
        for word in ["WAT", "TAW"] {
            policies.push(Box::new(
                StaticOrder::diversified(word, seed).expect("an order word"),
            ));
        }
        policies.push(Box::new(StaticOrder::new("TWA").expect("an order word")));
        Portfolio::new(policies)
    }

    /// The policies' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.policies.iter().map(|p| p.name()).collect()
    }

    /// Applies the ranker's plan for `problem`: reorders the policies and returns their
    /// weights (runs per round) in the new order (all 1 without a usable plan, or when `use_weights` is
    /// off).
    pub(crate) fn apply_ranking(
        &mut self,
        problem: &ProblemView<'_>,
        use_weights: bool,
    ) -> Vec<u64> {
        let equal = vec![1; self.policies.len()];
        let Some(ranker) = &self.ranker else {
            return equal;
        };
        let Some(plan) = ranker.rank(problem, &self.names()) else {
            return equal;
        };
        if !is_permutation(&plan.order, self.policies.len()) {
            return equal;
        }
        let mut slots: Vec<Option<Box<dyn NodePolicy>>> = std::mem::take(&mut self.policies)
            .into_iter()
            .map(Some)
            .collect();
        self.policies = plan.order.iter().filter_map(|&i| slots[i].take()).collect();
        if use_weights {
            (0..self.policies.len())
                .map(|i| u64::from(plan.weights.get(i).copied().unwrap_or(1).max(1)))
                .collect()
        } else {
            equal
        }
    }
}

/// The portfolio switches: how the search runs a portfolio beyond its policies. Read from the
/// search options in one place, where the portfolio is configured (see
/// [`PolicySpec::configure`](crate::PolicySpec)); the engine reads them only from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortfolioSwitches {
    /// Conflict boosting in the fixed policy of the members the search makes itself (the hint
    /// dive's round robin, the slack-filling members).
    pub(crate) conflict_boost: bool,
    /// Whether the ranker's weights give the policies their runs per round (else one each).
    pub(crate) shares: bool,
    /// Whether the lottery's draws are searched in the plain static order of the portfolio's
    /// first strategy, when it is one (else by the fixed policy).
    pub(crate) draw_lead: bool,
}

/// What one search runs: the portfolio (its policies and ranker) and the switches that say how.
pub(crate) struct PortfolioConfig {
    /// The policies and their ranker.
    pub(crate) portfolio: Portfolio,
    /// How the search runs them.
    pub(crate) switches: PortfolioSwitches,
    /// The learned parts its runs consult (the solve's, built once by the front door).
    pub(crate) learned: LearnedHooks,
}

impl PortfolioConfig {
    /// The hint dive's portfolio under the same switches: the default round robin whatever the
    /// caller's policy, with its diversified orders at seed 0 (the dive is the same for every
    /// seed).
    pub(crate) fn for_hint_dive(&self, buffers: usize) -> PortfolioConfig {
        PortfolioConfig {
            portfolio: Portfolio::round_robin(buffers, self.switches.conflict_boost, 0),
            switches: self.switches,
            learned: self.learned.clone(),
        }
    }
}

/// Whether `order` holds each of `0..len` exactly once.
fn is_permutation(order: &[usize], len: usize) -> bool {
    let mut seen = vec![false; len];
    order.len() == len
        && order
            .iter()
            .all(|&i| i < len && !std::mem::replace(&mut seen[i], true))
}
