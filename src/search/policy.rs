//! The decision seam of the search: a [`Policy`] orders the buffers of a (sub)problem, orders the
//! candidates at each node, may estimate risk, and hears about conflicts.

use super::model::Model;
use super::state::State;
use std::cmp::Reverse;

/// A candidate placement at a search node: a buffer at its lowest feasible offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The buffer.
    pub buffer: u32,
    /// Its lowest feasible offset.
    pub offset: u64,
    /// Its static rank in the current (sub)problem (0 = most preferred).
    pub rank: u32,
}

/// What a policy may look at: the problem model and the current search state.
pub struct NodeView<'a> {
    /// The immutable problem model.
    pub model: &'a Model,
    /// The current search state.
    pub state: &'a State,
    /// The current decision depth.
    pub depth: u32,
    /// Buffers still unplaced in the current (sub)problem.
    pub unplaced: usize,
}

/// A search policy: the seam through which a fixed ordering or a learned model guides the search.
/// Policies only order; the search stays complete whatever they say.
pub trait Policy: Send {
    /// A short name (`fixed`, `WAT`, `learned`, ...).
    fn name(&self) -> String;

    /// Sorts `buffers` (the unplaced buffers of a (sub)problem) from most to least preferred.
    /// The position becomes each buffer's static rank, which also breaks canonical ties.
    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]);

    /// Orders the candidates of a node in place; they arrive sorted by (offset, rank).
    fn order_candidates(&mut self, view: &NodeView<'_>, candidates: &mut [Candidate]) {
        let _ = (view, candidates);
    }

    /// The estimated probability that placing `candidate` now leads to a major backtrack,
    /// if the policy has an estimate.
    fn risk(&mut self, view: &NodeView<'_>, candidate: &Candidate) -> Option<f32> {
        let _ = (view, candidate);
        None
    }

    /// Hears that a conflict involved `buffers` (the unplaced buffers of a failing section).
    fn on_conflict(&mut self, buffers: &[u32]) {
        let _ = buffers;
    }

    /// For a whole problem, the order in which to run the portfolio's policies (`names`, in
    /// their default order), as indices into `names`, if this policy has a preference. The
    /// search asks the portfolio's first policy before the first run.
    fn rank_portfolio(&mut self, view: &NodeView<'_>, names: &[String]) -> Option<Vec<usize>> {
        let _ = (view, names);
        None
    }

    /// The strategies (policy names) this policy wants to run alongside it in a portfolio, if
    /// it brings its own (see [`crate::search::policies_by_name`]).
    fn portfolio_strategies(&self) -> Vec<String> {
        Vec::new()
    }

    /// When this policy ranked the portfolio ([`Policy::rank_portfolio`]), how many times the
    /// others' node budget its first choice gets each round (1: the plain round robin).
    fn portfolio_lead(&self) -> u32 {
        1
    }

    /// An independent copy for another portfolio worker or restart sequence.
    fn boxed_clone(&self) -> Box<dyn Policy>;
}

/// One letter of a static order word: a key, larger first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderKey {
    /// `W`: lifetime (upper - lower).
    Lifetime,
    /// `A`: area (size x lifetime).
    Area,
    /// `T`: the largest unplaced total over the buffer's sections.
    Total,
    /// `Z`: size.
    Size,
}

/// Parses an order word over `W`, `A`, `T`, `Z` (e.g. `WAT`); `None` if it has another letter
/// or is empty.
pub fn parse_order(word: &str) -> Option<Vec<OrderKey>> {
    if word.is_empty() {
        return None;
    }
    word.chars()
        .map(|c| match c.to_ascii_uppercase() {
            'W' => Some(OrderKey::Lifetime),
            'A' => Some(OrderKey::Area),
            'T' => Some(OrderKey::Total),
            'Z' => Some(OrderKey::Size),
            _ => None,
        })
        .collect()
}

/// Sorts `buffers` by the keys of `word`, larger first, ties by buffer index.
pub fn sort_by_order(view: &NodeView<'_>, word: &[OrderKey], buffers: &mut [u32]) {
    let model = view.model;
    let total = |b: usize| {
        model.sections[b]
            .clone()
            .map(|s| view.state.totals[s])
            .max()
            .unwrap_or(0)
    };
    let key = |&b: &u32| -> (Vec<Reverse<u128>>, u32) {
        let i = b as usize;
        let values = word
            .iter()
            .map(|k| {
                Reverse(match k {
                    OrderKey::Lifetime => model.lifetimes[i] as u128,
                    OrderKey::Area => model.lifetimes[i] as u128 * model.sizes[i] as u128,
                    OrderKey::Total => total(i) as u128,
                    OrderKey::Size => model.sizes[i] as u128,
                })
            })
            .collect();
        (values, b)
    };
    buffers.sort_by_cached_key(key);
}

/// A MiniMalloc-style static order (`WAT`, `TAW`, `TWA`, ...): candidates by lowest offset,
/// ties by the order's rank.
#[derive(Clone, Debug)]
pub struct StaticOrder {
    word: String,
    keys: Vec<OrderKey>,
}

impl StaticOrder {
    /// The order of `word`, or `None` if the word is not over `W`, `A`, `T`, `Z`.
    pub fn new(word: &str) -> Option<StaticOrder> {
        Some(StaticOrder {
            word: word.to_ascii_uppercase(),
            keys: parse_order(word)?,
        })
    }
}

impl Policy for StaticOrder {
    fn name(&self) -> String {
        self.word.clone()
    }

    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]) {
        sort_by_order(view, &self.keys, buffers);
    }

    fn boxed_clone(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}

/// TelaMalloc's ordering (longest lifetime, then largest size, then largest area) with
/// conflict-driven boosting: buffers of failing sections gain activity, which decays over time
/// (as VSIDS does), and among candidates at the same offset the most active go first.
#[derive(Clone, Debug)]
pub struct FixedPolicy {
    name: String,
    keys: Vec<OrderKey>,
    activity: Vec<f64>,
    increment: f64,
    boost: bool,
}

/// Activity decay per conflict (the increment grows by 1 / DECAY).
const DECAY: f64 = 0.95;

impl FixedPolicy {
    /// The fixed policy for a problem of `buffers` buffers; `boost` turns conflict-driven
    /// prioritisation on.
    pub fn new(buffers: usize, boost: bool) -> FixedPolicy {
        FixedPolicy {
            name: "fixed".into(),
            keys: vec![OrderKey::Lifetime, OrderKey::Size, OrderKey::Area],
            activity: vec![0.0; buffers],
            increment: 1.0,
            boost,
        }
    }

    /// The static order of `word` (see [`parse_order`]) with conflict-driven boosting, named
    /// `word+` (e.g. `TWA+`); `None` if the word is not an order word.
    pub fn boosted(word: &str, buffers: usize) -> Option<FixedPolicy> {
        Some(FixedPolicy {
            name: format!("{}+", word.to_ascii_uppercase()),
            keys: parse_order(word)?,
            activity: vec![0.0; buffers],
            increment: 1.0,
            boost: true,
        })
    }

    /// The current activity of each buffer.
    pub fn activity(&self) -> &[f64] {
        &self.activity
    }
}

impl Policy for FixedPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]) {
        sort_by_order(view, &self.keys, buffers);
    }

    fn order_candidates(&mut self, _view: &NodeView<'_>, candidates: &mut [Candidate]) {
        if !self.boost {
            return;
        }
        let activity = &self.activity;
        candidates.sort_by(|a, b| {
            a.offset
                .cmp(&b.offset)
                .then_with(|| {
                    activity[b.buffer as usize]
                        .partial_cmp(&activity[a.buffer as usize])
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .then(a.rank.cmp(&b.rank))
        });
    }

    fn on_conflict(&mut self, buffers: &[u32]) {
        if !self.boost {
            return;
        }
        for &b in buffers {
            self.activity[b as usize] += self.increment;
        }
        self.increment /= DECAY;
        if self.increment > 1e100 {
            self.activity.iter_mut().for_each(|a| *a *= 1e-100);
            self.increment *= 1e-100;
        }
    }

    fn boxed_clone(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
