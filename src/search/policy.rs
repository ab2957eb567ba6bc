//! The node-level decision seam of the search: a [`NodePolicy`] orders the buffers of a
//! (sub)problem, orders the candidates at each node and hears about conflicts. It sees the search
//! through a [`NodeView`] of accessors. (Which policies run, in what order and with what budgets,
//! is the per-problem seam of [`super::strategy`].)

use super::instance::Instance;
use super::state::State;
use std::cmp::Reverse;

/// A candidate placement at a search node: a buffer at its lowest feasible offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The buffer (its index in the problem).
    pub buffer: u32,
    /// Its lowest feasible offset.
    pub offset: u64,
    /// Its static rank in the current (sub)problem (0 = most preferred).
    pub rank: u32,
}

/// What a policy (or an observer) may look at in a search node: the problem's numbers and the
/// current search state, through accessors. Buffers are named by their index in the problem.
pub struct NodeView<'a> {
    pub(crate) instance: &'a Instance,
    pub(crate) state: &'a State,
    pub(crate) depth: u32,
    pub(crate) unplaced: usize,
    pub(crate) conflicts: &'a [u32],
    pub(crate) nodes: u64,
    pub(crate) failures: u64,
}

impl NodeView<'_> {
    /// The decision depth of the node (0 at the root of a run).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Buffers still unplaced in the current (sub)problem.
    pub fn unplaced(&self) -> usize {
        self.unplaced
    }

    /// Buffers of the whole problem (fixed ones included).
    pub fn buffers(&self) -> usize {
        self.instance.sizes.len()
    }

    /// Buffers the search places (those without a fixed offset).
    pub fn free_buffers(&self) -> usize {
        self.instance.free.len()
    }

    /// The capacity searched.
    pub fn capacity(&self) -> u64 {
        self.instance.capacity
    }

    /// The problem's largest `upper`.
    pub fn horizon(&self) -> u64 {
        self.instance.horizon
    }

    /// The size of `buffer`.
    pub fn size(&self, buffer: u32) -> u64 {
        self.instance.sizes[buffer as usize]
    }

    /// The lifetime (`upper - lower`) of `buffer`.
    pub fn lifetime(&self, buffer: u32) -> u64 {
        self.instance.lifetimes[buffer as usize]
    }

    /// Whether `buffer` is placed (fixed buffers always are).
    pub fn is_placed(&self, buffer: u32) -> bool {
        self.state.is_placed(buffer as usize)
    }

    /// The largest total size of unplaced buffers over the time sections `buffer` lives in
    /// (MiniMalloc's `T` key).
    pub fn largest_unplaced_total(&self, buffer: u32) -> u64 {
        self.instance.sections[buffer as usize]
            .clone()
            .map(|s| self.state.totals[s])
            .max()
            .unwrap_or(0)
    }

    /// The smallest room left over `buffer`'s lifetime if it went at `offset`: over its
    /// sections, `capacity - max(floor, offset) - unplaced total` (negative when a section
    /// cannot fit its unplaced buffers above that height).
    pub fn tightest_slack(&self, buffer: u32, offset: u64) -> f64 {
        self.instance.sections[buffer as usize]
            .clone()
            .map(|s| {
                let floor = self.state.floors[s].max(offset);
                self.instance.capacity as f64 - floor as f64 - self.state.totals[s] as f64
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// How many unplaced free buffers overlap `buffer` in time.
    pub fn unplaced_neighbours(&self, buffer: u32) -> u32 {
        self.state.unplaced_neighbours[buffer as usize]
    }

    /// How many conflicts (failing sections) involved `buffer` in this run so far: the one
    /// conflict count the search keeps, which the solve logs and the learned features share.
    /// Kept only for an observer or a policy whose [`NodePolicy::reads_conflicts`] is true (0
    /// otherwise).
    pub fn conflicts(&self, buffer: u32) -> u32 {
        self.conflicts.get(buffer as usize).copied().unwrap_or(0)
    }

    /// Search nodes expanded in this run so far.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Failures (minor backtracks) in this run so far.
    pub fn failures(&self) -> u64 {
        self.failures
    }
}

/// A node-level search policy: the seam through which a fixed ordering or a learned model
/// guides the search. Policies only order; the search stays complete whatever they say.
pub trait NodePolicy: Send {
    /// A short name (`fixed`, `WAT`, `learned`, ...).
    fn name(&self) -> String;

    /// Sorts `buffers` (the unplaced buffers of a (sub)problem) from most to least preferred.
    /// The position becomes each buffer's static rank, which also breaks canonical ties.
    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]);

    /// Orders the candidates of a node in place; they arrive sorted by (offset, rank).
    fn order_candidates(&mut self, view: &NodeView<'_>, candidates: &mut [Candidate]) {
        let _ = (view, candidates);
    }

    /// Hears that a conflict involved `buffers` (the unplaced buffers of a failing section, or
    /// a buffer that no longer fits).
    fn on_conflict(&mut self, buffers: &[u32]) {
        let _ = buffers;
    }

    /// Whether the policy reads [`NodeView::conflicts`]; the search keeps that count only when
    /// someone does (asked once per run). Without it the count reads 0.
    fn reads_conflicts(&self) -> bool {
        false
    }

    /// Hears that a run of this policy begins (each restart is a new run).
    fn on_run_start(&mut self) {}
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

/// What the name of a single node policy says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyName {
    /// `fixed`: TelaMalloc's order with conflict boosting.
    Fixed,
    /// An order word (upper case), with conflict boosting when written `WORD+` and
    /// diversified restarts when written `WORD~` (both: `WORD+~`).
    Order {
        /// The word, upper case.
        word: String,
        /// Whether it has a `+`.
        boosted: bool,
        /// Whether it ends in `~`: each restart after the first sorts by seeded, noisy keys
        /// (see [`Diversity`]).
        diversified: bool,
    },
}

impl PolicyName {
    /// The name as written canonically (`fixed`, `TWA`, `TWA+`, `TWA~`, `TWA+~`).
    pub fn canonical(&self) -> String {
        match self {
            PolicyName::Fixed => "fixed".to_string(),
            PolicyName::Order {
                word,
                boosted,
                diversified,
            } => format!(
                "{word}{}{}",
                if *boosted { "+" } else { "" },
                if *diversified { "~" } else { "" }
            ),
        }
    }
}

/// Parses the name of a single node policy: `fixed` or an order word over `W`, `A`, `T`, `Z`,
/// optionally followed by `+` (conflict boosting), then `~` (diversified restarts), in any
/// case. The one grammar of policy names: the CLI's policy specs and the strategies of a
/// learned portfolio head both use it.
pub fn parse_policy_name(name: &str) -> Option<PolicyName> {
    if name.eq_ignore_ascii_case("fixed") {
        return Some(PolicyName::Fixed);
    }
    let (name, diversified) = match name.strip_suffix('~') {
        Some(rest) => (rest, true),
        None => (name, false),
    };
    let (word, boosted) = match name.strip_suffix('+') {
        Some(word) => (word, true),
        None => (name, false),
    };
    parse_order(word)?;
    Some(PolicyName::Order {
        word: word.to_ascii_uppercase(),
        boosted,
        diversified,
    })
}

/// How far diversification scales a key: each key of each buffer is multiplied by a factor in
/// `[1, 1 + DIVERSITY_SPREAD)`, so buffers whose keys differ by less than that may swap places.
const DIVERSITY_SPREAD: f64 = 0.25;

/// Diversified restarts (heavy-tailed search gains from them): a policy's first run sorts by its
/// keys; each later run sorts by its keys scaled by seeded noise that is new in every run, so its
/// restarts explore different trees instead of resuming one. The noise depends only on the seed,
/// the policy's name, the run and the buffer, so a search is the same run to run and with any
/// thread count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diversity {
    seed: u64,
    runs: u32,
}

impl Diversity {
    /// The diversity of the policy named `name` under the solver's `seed`.
    pub fn new(seed: u64, name: &str) -> Diversity {
        let seed = name
            .bytes()
            .fold(mix(seed ^ 0xd17e_75e7), |h, b| mix(h ^ u64::from(b)));
        Diversity { seed, runs: 0 }
    }

    /// Counts a new run.
    fn start_run(&mut self) {
        self.runs += 1;
    }

    /// The noise of the current run: `None` in the first run (the plain order).
    fn noise(&self) -> Option<KeyNoise> {
        (self.runs > 1).then(|| KeyNoise(mix(self.seed ^ u64::from(self.runs))))
    }
}

/// One run's noise on the keys of an order.
#[derive(Clone, Copy, Debug)]
struct KeyNoise(u64);

impl KeyNoise {
    /// The factor of key `key` of `buffer`, in `[1, 1 + DIVERSITY_SPREAD)`.
    fn factor(self, buffer: u32, key: usize) -> f64 {
        let h = mix(self.0 ^ (u64::from(buffer) << 8 | key as u64));
        1.0 + DIVERSITY_SPREAD * (h >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash of `x`.
pub(crate) fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The value of key `key` for `buffer`.
fn key_value(view: &NodeView<'_>, key: OrderKey, buffer: u32) -> u128 {
    match key {
        OrderKey::Lifetime => view.lifetime(buffer) as u128,
        OrderKey::Area => view.lifetime(buffer) as u128 * view.size(buffer) as u128,
        OrderKey::Total => view.largest_unplaced_total(buffer) as u128,
        OrderKey::Size => view.size(buffer) as u128,
    }
}

/// Sorts `buffers` by the keys of `word`, larger first, ties by buffer index.
pub fn sort_by_order(view: &NodeView<'_>, word: &[OrderKey], buffers: &mut [u32]) {
    let key = |&b: &u32| -> (Vec<Reverse<u128>>, u32) {
        let values = word
            .iter()
            .map(|&k| Reverse(key_value(view, k, b)))
            .collect();
        (values, b)
    };
    buffers.sort_by_cached_key(key);
}

/// Sorts `buffers` by the keys of `word` with the run's noise on them (see [`Diversity`]),
/// or exactly as [`sort_by_order`] in a policy's first run or without diversity.
fn sort_diversified(
    view: &NodeView<'_>,
    word: &[OrderKey],
    diversity: Option<&Diversity>,
    buffers: &mut [u32],
) {
    let Some(noise) = diversity.and_then(Diversity::noise) else {
        return sort_by_order(view, word, buffers);
    };
    let key = |&b: &u32| -> (Vec<Reverse<u64>>, u32) {
        let values = word
            .iter()
            .enumerate()
            // Non-negative floats order as their bit patterns do.
            .map(|(i, &k)| Reverse((key_value(view, k, b) as f64 * noise.factor(b, i)).to_bits()))
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
    diversity: Option<Diversity>,
}

impl StaticOrder {
    /// The order of `word`, or `None` if the word is not over `W`, `A`, `T`, `Z`.
    pub fn new(word: &str) -> Option<StaticOrder> {
        Some(StaticOrder {
            word: word.to_ascii_uppercase(),
            keys: parse_order(word)?,
            diversity: None,
        })
    }

    /// The order of `word` with diversified restarts under `seed` (see [`Diversity`]), named
    /// `word~`; `None` if the word is not an order word.
    pub fn diversified(word: &str, seed: u64) -> Option<StaticOrder> {
        let mut order = StaticOrder::new(word)?;
        order.word.push('~');
        order.diversity = Some(Diversity::new(seed, &order.word));
        Some(order)
    }
}

impl NodePolicy for StaticOrder {
    fn name(&self) -> String {
        self.word.clone()
    }

    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]) {
        sort_diversified(view, &self.keys, self.diversity.as_ref(), buffers);
    }

    fn on_run_start(&mut self) {
        if let Some(diversity) = &mut self.diversity {
            diversity.start_run();
        }
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
    diversity: Option<Diversity>,
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
            diversity: None,
        }
    }

    /// The static order of `word` (over `W`, `A`, `T`, `Z`, as in
    /// [`PolicySpec`](crate::PolicySpec)) with conflict-driven boosting, named `word+` (e.g.
    /// `TWA+`); `None` if the word is not an order word.
    pub fn boosted(word: &str, buffers: usize) -> Option<FixedPolicy> {
        Some(FixedPolicy {
            name: format!("{}+", word.to_ascii_uppercase()),
            keys: parse_order(word)?,
            activity: vec![0.0; buffers],
            increment: 1.0,
            boost: true,
            diversity: None,
        })
    }

    /// [`FixedPolicy::boosted`] with diversified restarts under `seed` (see [`Diversity`]),
    /// named `word+~`.
    pub fn boosted_diversified(word: &str, buffers: usize, seed: u64) -> Option<FixedPolicy> {
        let mut policy = FixedPolicy::boosted(word, buffers)?;
        policy.name.push('~');
        policy.diversity = Some(Diversity::new(seed, &policy.name));
        Some(policy)
    }

    /// The current activity of each buffer.
    pub fn activity(&self) -> &[f64] {
        &self.activity
    }
}

impl NodePolicy for FixedPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]) {
        sort_diversified(view, &self.keys, self.diversity.as_ref(), buffers);
    }

    fn on_run_start(&mut self) {
        if let Some(diversity) = &mut self.diversity {
            diversity.start_run();
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_read_boosting_then_diversity() {
        let name = parse_policy_name("twa+~").expect("a name");
        assert_eq!(
            name,
            PolicyName::Order {
                word: "TWA".into(),
                boosted: true,
                diversified: true,
            }
        );
        assert_eq!(name.canonical(), "TWA+~");
        for (written, canonical) in [("TWA~", "TWA~"), ("wat+", "WAT+"), ("Z", "Z")] {
            let name = parse_policy_name(written).expect("a name");
            assert_eq!(name.canonical(), canonical);
        }
        for bad in ["TWA~+", "fixed~", "~", "+~", "TWA~~", "TXA~"] {
            assert_eq!(parse_policy_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn diversity_leaves_the_first_run_plain_and_changes_every_later_one() {
        let mut diversity = Diversity::new(7, "TWA~");
        diversity.start_run();
        assert!(
            diversity.noise().is_none(),
            "the first run is the plain order"
        );
        let mut seen = Vec::new();
        for _ in 0..20 {
            diversity.start_run();
            let noise = diversity.noise().expect("noise after the first run");
            let factors: Vec<u64> = (0..50)
                .flat_map(|b| (0..3).map(move |k| noise.factor(b, k)))
                .inspect(|f| assert!((1.0..1.0 + DIVERSITY_SPREAD).contains(f), "{f}"))
                .map(f64::to_bits)
                .collect();
            assert!(!seen.contains(&factors), "a run repeats an earlier one");
            seen.push(factors);
        }
        // The same seed and name give the same noise; another seed or name another.
        let noise_of = |seed: u64, name: &str| {
            let mut d = Diversity::new(seed, name);
            d.start_run();
            d.start_run();
            d.noise().expect("second run").factor(3, 0).to_bits()
        };
        assert_eq!(noise_of(7, "TWA~"), noise_of(7, "TWA~"));
        assert_ne!(noise_of(7, "TWA~"), noise_of(8, "TWA~"));
        assert_ne!(noise_of(7, "TWA~"), noise_of(7, "WAT~"));
    }
}
