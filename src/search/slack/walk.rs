//! Learned hole shapes: a cut of the slack profile made one choice at a time, each scored by a
//! linear model trained on the holes of generated packings (`models/hole_shapes.json`).
//!
//! The fixed cuts of [`super::cuts`] decide which open slack a fall closes by one rule
//! each; the swapping draws add a hole that ends where another starts, by coin flips. Here every
//! way a hole can end or start at a step is a move ([`Move`]), described by a few facts (is its
//! amount the fall's own, does the rest it leaves close exactly at a later fall, was the slack
//! opened with this amount, is it the latest opened; [`HOLE_FEATURES`]), and a draw picks each
//! move with probability proportional to `exp(weights · features)`. The weights are fitted (by
//! `telamalloc-train hole-shapes`, with burn) to the moves that reproduce the removed pieces of
//! the training split's slack packings ([`super::truth`] gives those moves).
//!
//! Every move keeps the open slack equal to the profile's level, so every walk is a cut: over
//! each section its phantoms add up to the section's slack.

use super::profile::Step;
use crate::search::policy::mix;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

/// A cut of a slack profile: its phantoms, `(lower, upper, size)` each.
pub(crate) type Cut = Vec<(u64, u64, u64)>;

/// `cut`'s phantoms sorted: two cuts are the same cut when these are equal.
pub(crate) fn sorted_cut(cut: &[(u64, u64, u64)]) -> Cut {
    let mut sorted = cut.to_vec();
    sorted.sort_unstable();
    sorted
}

/// The names of a move's features, in the order the walk computes them (the model file
/// stores them and must match).
pub const HOLE_FEATURES: [&str; 15] = [
    "open",
    "swap",
    "whole",
    "part",
    "reopen",
    "exact",
    "short",
    "rest-closes",
    "intact",
    "latest",
    "earliest",
    "rank",
    "own-fall-ahead",
    "exact-latest",
    "exact-intact",
];

/// The version of the move-feature layout; a model file trained on another is refused.
pub const HOLE_FEATURE_SCHEMA_VERSION: u32 = 1;

/// The features of one move.
pub type MoveFeatures = [f32; HOLE_FEATURES.len()];

/// One way a step of the profile can go. `usize` is the index of an open slack (in the order
/// they opened).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    /// At a rise: open a new slack of the rise's amount.
    Open,
    /// At a rise: close this slack wholly and open its amount plus the rise (a hole ends where
    /// a larger one starts).
    Swap(usize),
    /// At a fall: close this slack wholly (its amount is at most what the fall still needs).
    Whole(usize),
    /// At a fall: close what the fall still needs from this larger slack, whose rest stays open
    /// from its start (two holes that started together, one ending here).
    Part(usize),
    /// At a fall: close this larger slack wholly and open its rest here (a hole ends where a
    /// smaller one starts).
    Reopen(usize),
}

/// A slack that is open: since when, how much of it is left, and how much it opened with.
#[derive(Clone, Copy, Debug)]
pub(super) struct OpenSlack {
    pub(super) start: u64,
    pub(super) amount: u64,
    opened: u64,
}

/// The state of a walk along the profile's steps.
#[derive(Clone)]
pub(super) struct Walk {
    /// Open slack, in the order it opened; the amounts add up to the profile's level.
    pub(super) open: VecDeque<OpenSlack>,
    /// The index of the last step that falls by each amount (shared by the walk's copies).
    last_fall: Arc<HashMap<u64, usize>>,
    /// The index of the step the walk is at.
    position: usize,
    /// The phantoms closed so far: `(lower, upper, size)`.
    phantoms: Vec<(u64, u64, u64)>,
}

impl Walk {
    pub(super) fn new(steps: &[(u64, Step)]) -> Walk {
        let mut last_fall: HashMap<u64, usize> = HashMap::new();
        for (i, &(_, step)) in steps.iter().enumerate() {
            if let Step::Fall(fall) = step {
                last_fall.insert(fall, i);
            }
        }
        Walk {
            open: VecDeque::new(),
            last_fall: Arc::new(last_fall),
            position: 0,
            phantoms: Vec::new(),
        }
    }

    /// Whether a step after this one falls by `amount`.
    fn closes_later(&self, amount: u64) -> bool {
        self.last_fall
            .get(&amount)
            .is_some_and(|&last| last > self.position)
    }

    /// The moves at `step` when the fall still needs `need` (0 at a rise).
    fn moves(&self, step: Step, need: u64) -> Vec<Move> {
        let mut moves = Vec::new();
        match step {
            Step::Rise(_) => {
                moves.push(Move::Open);
                moves.extend((0..self.open.len()).map(Move::Swap));
            }
            Step::Fall(_) => {
                for (i, slack) in self.open.iter().enumerate() {
                    if slack.amount <= need {
                        moves.push(Move::Whole(i));
                    } else {
                        moves.push(Move::Part(i));
                        moves.push(Move::Reopen(i));
                    }
                }
            }
        }
        moves
    }

    /// The features of `mv` at `step` (see [`HOLE_FEATURES`]).
    fn features(&self, mv: Move, step: Step, need: u64) -> MoveFeatures {
        let mut x = [0.0f32; HOLE_FEATURES.len()];
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let (kind, i) = match mv {
            Move::Open => {
                let Step::Rise(rise) = step else {
                    unreachable!("a slack opens only at a rise")
                };
                x[0] = 1.0;
                x[7] = flag(self.closes_later(rise));
                return x;
            }
            Move::Swap(i) => (1, i),
            Move::Whole(i) => (2, i),
            Move::Part(i) => (3, i),
            Move::Reopen(i) => (4, i),
        };
        x[kind] = 1.0;
        let slack = self.open[i];
        let a = slack.amount;
        match mv {
            Move::Swap(_) => {
                let Step::Rise(rise) = step else {
                    unreachable!("a swap is a rise's move")
                };
                x[7] = flag(self.closes_later(a + rise));
            }
            Move::Whole(_) => {
                x[5] = flag(a == need);
                x[6] = flag(a < need);
                if a < need {
                    let rest = need - a;
                    let other_open =
                        (0..self.open.len()).any(|j| j != i && self.open[j].amount == rest);
                    x[7] = flag(other_open || self.closes_later(rest));
                }
            }
            _ => x[7] = flag(self.closes_later(a - need)),
        }
        let last = self.open.len() - 1;
        x[8] = flag(a == slack.opened);
        x[9] = flag(i == last);
        x[10] = flag(i == 0);
        x[11] = i as f32 / last.max(1) as f32;
        x[12] = flag(self.closes_later(a));
        x[13] = x[5] * x[9];
        x[14] = x[5] * x[8];
        x
    }

    /// Closes `amount` of open slack `i` at time `at` as a phantom (the slack leaves when all
    /// of it is closed).
    fn close(&mut self, i: usize, at: u64, amount: u64) {
        let slack = &mut self.open[i];
        self.phantoms.push((slack.start, at, amount));
        slack.amount -= amount;
        if slack.amount == 0 {
            self.open.remove(i);
        }
    }

    /// Makes `mv` at time `at`; returns what the fall still needs (0 at a rise).
    fn apply(&mut self, at: u64, step: Step, need: u64, mv: Move) -> u64 {
        let opened = |amount| OpenSlack {
            start: at,
            amount,
            opened: amount,
        };
        let rise = match step {
            Step::Rise(rise) => rise,
            Step::Fall(_) => 0,
        };
        match mv {
            Move::Open => {
                self.open.push_back(opened(rise));
                0
            }
            Move::Swap(i) => {
                let amount = self.open[i].amount;
                self.close(i, at, amount);
                self.open.push_back(opened(amount + rise));
                0
            }
            Move::Whole(i) => {
                let amount = self.open[i].amount;
                self.close(i, at, amount);
                need - amount
            }
            Move::Part(i) => {
                self.close(i, at, need);
                0
            }
            Move::Reopen(i) => {
                let amount = self.open[i].amount;
                self.close(i, at, amount);
                self.open.push_back(opened(amount - need));
                0
            }
        }
    }

    /// Walks `steps`, asking `choose` for every move (with the moves open and their features;
    /// the chosen index must be below their count). Returns the phantoms, or None when
    /// `choose` does (it gave up).
    pub(super) fn run(
        self,
        steps: &[(u64, Step)],
        mut choose: impl FnMut(&Walk, u64, &[Move], &[MoveFeatures]) -> Option<usize>,
    ) -> Option<Vec<(u64, u64, u64)>> {
        let mut cursor = Cursor::new(self);
        while let Some(moves) = cursor.moves(steps) {
            let features = cursor.features(&moves);
            let pick = choose(&cursor.walk, cursor.at, &moves, &features)?;
            cursor.apply(moves[pick]);
        }
        Some(cursor.walk.phantoms)
    }
}

/// A walk that can stop at any choice and go on later: where along the steps it is, and what
/// the current fall still needs.
#[derive(Clone)]
struct Cursor {
    walk: Walk,
    /// The index of the next step to enter.
    next: usize,
    /// The time of the step being walked.
    at: u64,
    /// The step being walked, when it has moves left, and what it still needs (0 at a rise).
    current: Option<(Step, u64)>,
}

impl Cursor {
    fn new(walk: Walk) -> Cursor {
        Cursor {
            walk,
            next: 0,
            at: 0,
            current: None,
        }
    }

    /// The moves open at the next point that has any (entering steps as needed), or None at
    /// the end of the walk.
    fn moves(&mut self, steps: &[(u64, Step)]) -> Option<Vec<Move>> {
        loop {
            if let Some((step, need)) = self.current {
                let moves = self.walk.moves(step, need);
                if !moves.is_empty() {
                    return Some(moves);
                }
                self.current = None;
            }
            let &(at, step) = steps.get(self.next)?;
            self.walk.position = self.next;
            self.next += 1;
            let need = match step {
                Step::Rise(_) => 0,
                Step::Fall(fall) => fall,
            };
            self.at = at;
            self.current = Some((step, need));
        }
    }

    /// The features of `moves` (the ones [`Cursor::moves`] gave).
    fn features(&self, moves: &[Move]) -> Vec<MoveFeatures> {
        let (step, need) = self.current.expect("moves are open");
        moves
            .iter()
            .map(|&mv| self.walk.features(mv, step, need))
            .collect()
    }

    /// Makes `mv`, one of the moves [`Cursor::moves`] gave. A whole close that leaves the fall
    /// needing more stays at the step; any other move ends it.
    fn apply(&mut self, mv: Move) {
        let (step, need) = self.current.expect("moves are open");
        let need = self.walk.apply(self.at, step, need, mv);
        self.current = (matches!(mv, Move::Whole(_)) && need > 0).then_some((step, need));
    }
}

/// A drawn cut of the profile `steps`: each move is picked with probability proportional to
/// `exp(weights · features)`, `uniform()` giving the numbers in `[0, 1)` that pick.
fn draw_with(
    steps: &[(u64, Step)],
    weights: &[f32],
    mut uniform: impl FnMut() -> f64,
) -> Vec<(u64, u64, u64)> {
    let walked = Walk::new(steps).run(steps, |_, _, _, features| {
        if features.len() == 1 {
            return Some(0);
        }
        let scores: Vec<f64> = features.iter().map(|x| score(x, weights)).collect();
        let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let odds: Vec<f64> = scores.iter().map(|s| (s - top).exp()).collect();
        let mut left = uniform() * odds.iter().sum::<f64>();
        let last = odds.len() - 1;
        Some(
            odds.iter()
                .position(|&o| {
                    left -= o;
                    left < 0.0
                })
                .unwrap_or(last),
        )
    });
    walked.expect("a draw always chooses")
}

/// Draw number `draw` of the profile `steps` under `weights` ([`draw_with`] with numbers hashed from
/// the draw number and how many came before: the same number gives the same cut). The
/// slack-filling lottery's random draws are these.
pub(crate) fn numbered_draw(steps: &[(u64, Step)], weights: &[f32], draw: u64) -> Cut {
    let mut coins = 0u64;
    draw_with(steps, weights, || {
        coins += 1;
        (mix(mix(draw) ^ coins) % (1 << 53)) as f64 / (1u64 << 53) as f64
    })
}

/// The most likely cut of the profile `steps` under `weights`: at each step the move with the
/// highest score (the first of equals).
pub(crate) fn most_likely(steps: &[(u64, Step)], weights: &[f32]) -> Vec<(u64, u64, u64)> {
    let walked = Walk::new(steps).run(steps, |_, _, _, features| {
        let scores: Vec<f64> = features.iter().map(|x| score(x, weights)).collect();
        // The first of the highest scores.
        let best =
            (0..scores.len()).fold(0, |best, i| if scores[i] > scores[best] { i } else { best });
        Some(best)
    });
    walked.expect("the walk always chooses")
}

/// The cuts of a slack profile in decreasing probability of their most likely walk under the
/// hole-shape model (a walk's probability is the product of its moves' probabilities in
/// [`draw_with`]; several walks can make one cut, e.g. two whole closes at one fall in either
/// order), one at a time: a best-first search over partial walks, whose probability only falls
/// as they go on, so each walk it completes is the most likely one left; a walk whose cut was
/// given already is passed over. Of equally likely walks, the one reached first comes first,
/// so the order is the same on every run.
pub(crate) struct Ranking {
    steps: Vec<(u64, Step)>,
    weights: Vec<f32>,
    /// The partial walks not expanded yet.
    frontier: BinaryHeap<Partial>,
    /// How many partial walks were pushed (the tie-break).
    reached: u64,
    /// The cuts given so far, each sorted.
    given: HashSet<Cut>,
    /// The most partial walks kept ([`MAX_FRONTIER`]).
    max_frontier: usize,
}

/// The most partial walks a [`Ranking`] keeps: past it the less likely half is dropped. The
/// cuts those would have completed are lost, so past that point the order skips some.
const MAX_FRONTIER: usize = 1 << 13;

impl Ranking {
    /// The ranking of the cuts of the profile `steps` under `weights`.
    pub(crate) fn new(steps: Vec<(u64, Step)>, weights: &[f32]) -> Ranking {
        let start = Partial {
            log_odds: 0.0,
            reached: 0,
            cursor: Cursor::new(Walk::new(&steps)),
        };
        Ranking {
            steps,
            weights: weights.to_vec(),
            frontier: BinaryHeap::from([start]),
            reached: 0,
            given: HashSet::new(),
            max_frontier: MAX_FRONTIER,
        }
    }

    /// The most likely cut not given yet, and the natural log of its most likely walk's
    /// probability, expanding at most `expansions` partial walks at a choice; None when every
    /// cut was given or the expansions ran out first (the ranking can go on after that).
    pub(crate) fn next(&mut self, expansions: usize) -> Option<(Cut, f64)> {
        let mut expanded = 0;
        loop {
            let Partial {
                log_odds,
                reached,
                mut cursor,
            } = self.frontier.pop()?;
            // Forced moves first: they do not change the walk's probability.
            let moves = loop {
                match cursor.moves(&self.steps) {
                    Some(moves) if moves.len() == 1 => cursor.apply(moves[0]),
                    other => break other,
                }
            };
            let Some(moves) = moves else {
                if self.given.insert(sorted_cut(&cursor.walk.phantoms)) {
                    return Some((cursor.walk.phantoms, log_odds));
                }
                continue;
            };
            if expanded == expansions {
                self.frontier.push(Partial {
                    log_odds,
                    reached,
                    cursor,
                });
                return None;
            }
            expanded += 1;
            let scores: Vec<f64> = cursor
                .features(&moves)
                .iter()
                .map(|x| score(x, &self.weights))
                .collect();
            for (&mv, log_p) in moves.iter().zip(log_softmax(&scores)) {
                let mut next = cursor.clone();
                next.apply(mv);
                self.reached += 1;
                self.frontier.push(Partial {
                    log_odds: log_odds + log_p,
                    reached: self.reached,
                    cursor: next,
                });
            }
            if self.frontier.len() > self.max_frontier {
                let mut kept = std::mem::take(&mut self.frontier).into_sorted_vec();
                kept.drain(..kept.len() / 2);
                self.frontier = BinaryHeap::from(kept);
            }
        }
    }
}

/// The natural logs of the softmax of `scores`.
pub(super) fn log_softmax(scores: &[f64]) -> Vec<f64> {
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let log_total = top + scores.iter().map(|s| (s - top).exp()).sum::<f64>().ln();
    scores.iter().map(|s| s - log_total).collect()
}

/// A partial walk of a [`Ranking`]'s search: its log probability so far and when it was reached.
struct Partial {
    log_odds: f64,
    reached: u64,
    cursor: Cursor,
}

impl PartialEq for Partial {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Partial {}

impl PartialOrd for Partial {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Partial {
    /// The more likely first, then the one reached first (a max-heap pops the greatest).
    fn cmp(&self, other: &Self) -> Ordering {
        self.log_odds
            .total_cmp(&other.log_odds)
            .then(other.reached.cmp(&self.reached))
    }
}

/// The model's score of a move: its features' dot product with the weights.
pub(super) fn score(features: &MoveFeatures, weights: &[f32]) -> f64 {
    features
        .iter()
        .zip(weights)
        .map(|(x, w)| f64::from(x * w))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::policy::mix;
    use crate::search::slack::profile::{covered as profile, steps};

    /// Draw number `seed` with `weights`.
    fn drawn(steps: &[(u64, Step)], weights: &[f32], seed: u64) -> Vec<(u64, u64, u64)> {
        let mut n = 0;
        let mut pieces = draw_with(steps, weights, || {
            n += 1;
            (mix(seed ^ n) >> 11) as f64 / (1u64 << 53) as f64
        });
        pieces.sort_unstable();
        pieces
    }

    /// A profile of six sections cut many ways: their starts, their slack and its steps.
    fn six_sections() -> ([u64; 6], [u64; 6], Vec<(u64, Step)>) {
        let (starts, ends) = ([0, 2, 4, 6, 9, 11], [2, 4, 6, 9, 11, 12]);
        let slack = [4, 6, 3, 7, 2, 9];
        (starts, slack, steps(&slack, &starts, &ends))
    }

    fn shipped() -> &'static [f32] {
        crate::learned::HoleModel::built_in().weights.as_slice()
    }

    #[test]
    fn every_drawn_cut_fills_the_profile_exactly() {
        let (starts, slack, steps) = six_sections();
        let uniform = [0.0f32; HOLE_FEATURES.len()];
        for weights in [&uniform[..], shipped()] {
            for seed in 0..64 {
                let pieces = drawn(&steps, weights, seed);
                assert_eq!(profile(&pieces, &starts), slack, "seed {seed}");
                assert!(pieces
                    .iter()
                    .all(|&(lower, upper, size)| lower < upper && size > 0));
                assert_eq!(pieces, drawn(&steps, weights, seed), "a draw repeats");
            }
        }
    }

    /// Every walk of `steps` under `weights`, with the natural log of its probability.
    fn every_walk(steps: &[(u64, Step)], weights: &[f32]) -> Vec<(Cut, f64)> {
        fn go(
            mut cursor: Cursor,
            log_odds: f64,
            steps: &[(u64, Step)],
            weights: &[f32],
            out: &mut Vec<(Cut, f64)>,
        ) {
            let Some(moves) = cursor.moves(steps) else {
                out.push((cursor.walk.phantoms, log_odds));
                return;
            };
            let scores: Vec<f64> = cursor
                .features(&moves)
                .iter()
                .map(|x| score(x, weights))
                .collect();
            for (&mv, log_p) in moves.iter().zip(log_softmax(&scores)) {
                let mut next = cursor.clone();
                next.apply(mv);
                go(next, log_odds + log_p, steps, weights, out);
            }
        }
        let mut out = Vec::new();
        go(Cursor::new(Walk::new(steps)), 0.0, steps, weights, &mut out);
        out
    }

    #[test]
    fn the_ranking_gives_every_cut_once_from_the_most_likely_down() {
        let (starts, slack, steps) = six_sections();
        let uniform = [0.0f32; HOLE_FEATURES.len()];
        for weights in [&uniform[..], shipped()] {
            let every = every_walk(&steps, weights);
            let total: f64 = every.iter().map(|w| w.1.exp()).sum();
            assert!(
                (total - 1.0).abs() < 1e-9,
                "the walks' odds add up to {total}"
            );
            // Each cut (sorted) with the odds of its most likely walk.
            let mut best: HashMap<Cut, f64> = HashMap::new();
            for (cut, log_odds) in &every {
                let entry = best.entry(sorted_cut(cut)).or_insert(f64::NEG_INFINITY);
                *entry = entry.max(*log_odds);
            }
            assert!(
                best.len() > 10 && best.len() < every.len(),
                "a profile cut many ways, some by several walks: {} cuts, {} walks",
                best.len(),
                every.len()
            );
            let ranked = every_ranked_cut(&steps, weights);
            assert_eq!(ranked.len(), best.len(), "every cut once");
            for pair in ranked.windows(2) {
                assert!(pair[0].1 >= pair[1].1, "{} then {}", pair[0].1, pair[1].1);
            }
            for (cut, log_odds) in &ranked {
                assert_eq!(profile(cut, &starts), slack);
                let most_likely = best.get(&sorted_cut(cut)).expect("a cut some walk makes");
                assert!(
                    (log_odds - most_likely).abs() < 1e-9,
                    "{log_odds} against {most_likely}"
                );
            }
        }
    }

    /// Every cut of `steps` in the order of an unbounded ranking, with its log odds.
    fn every_ranked_cut(steps: &[(u64, Step)], weights: &[f32]) -> Vec<(Cut, f64)> {
        let mut ranking = Ranking::new(steps.to_vec(), weights);
        std::iter::from_fn(|| ranking.next(usize::MAX)).collect()
    }

    #[test]
    fn a_ranking_past_its_frontier_bound_keeps_the_likelier_half() {
        let (_, _, steps) = six_sections();
        let all = every_ranked_cut(&steps, shipped());
        let mut bounded = Ranking::new(steps.clone(), shipped());
        bounded.max_frontier = 6;
        let mut kept = Vec::new();
        while let Some(cut) = bounded.next(usize::MAX) {
            // Halved whenever it passes 6: at most 6 plus one expansion's moves.
            assert!(
                bounded.frontier.len() <= 6 + 8,
                "{}",
                bounded.frontier.len()
            );
            kept.push(cut);
        }
        // Fewer cuts (the dropped partials' are lost), still most likely first, all of them
        // among the cuts the whole ranking gives, at most at their most likely walk's odds (a
        // cut whose likeliest walk was dropped comes by another).
        assert!(
            kept.len() < all.len() && !kept.is_empty(),
            "{} of {}",
            kept.len(),
            all.len()
        );
        for pair in kept.windows(2) {
            assert!(pair[0].1 >= pair[1].1);
        }
        let best: HashMap<Cut, f64> = all.iter().map(|(c, p)| (sorted_cut(c), *p)).collect();
        for (cut, log_odds) in &kept {
            let most_likely = best
                .get(&sorted_cut(cut))
                .expect("a cut of the whole ranking");
            assert!(
                *log_odds <= most_likely + 1e-12,
                "{log_odds} above {most_likely}"
            );
        }
        // Here the most likely cut survives the halving: its prefixes are among the likelier.
        assert_eq!(kept[0], all[0]);
    }

    #[test]
    fn a_move_closes_later_exactly_when_a_later_step_falls_by_that_amount() {
        // Falls of 3 at 4 and 10, of 2 at 8 and 12: amounts repeat, so "later" matters.
        let (starts, ends) = ([0, 2, 4, 6, 8, 10], [2, 4, 6, 8, 10, 12]);
        let slack = [3, 6, 3, 5, 3, 2];
        let steps = steps(&slack, &starts, &ends);
        let later_fall = |position: usize, amount: u64| {
            steps[position + 1..]
                .iter()
                .any(|&(_, step)| step == Step::Fall(amount))
        };
        let (mut checked, mut both) = (0, [false, false]);
        for seed in 0..32 {
            let mut n = 0;
            Walk::new(&steps).run(&steps, |walk, _, moves, features| {
                for (mv, x) in moves.iter().zip(features) {
                    let i = match *mv {
                        Move::Open => continue,
                        Move::Swap(i) | Move::Whole(i) | Move::Part(i) | Move::Reopen(i) => i,
                    };
                    let expected = later_fall(walk.position, walk.open[i].amount);
                    assert_eq!(x[12] == 1.0, expected, "{mv:?} at step {}", walk.position);
                    both[usize::from(expected)] = true;
                    checked += 1;
                }
                n += 1;
                Some((mix(seed ^ n) % moves.len() as u64) as usize)
            });
        }
        assert!(
            checked > 50 && both == [true, true],
            "{checked} moves, {both:?}"
        );
    }

    #[test]
    fn a_ranking_out_of_expansions_goes_on_where_it_stopped() {
        let (_, _, steps) = six_sections();
        let all = every_ranked_cut(&steps, shipped());
        // One expansion per call: most calls run out, and the cuts still come in the same order.
        let mut frugal = Ranking::new(steps.clone(), shipped());
        let (mut cuts, mut out_of_expansions) = (Vec::new(), 0);
        while cuts.len() < all.len() {
            match frugal.next(1) {
                Some(cut) => cuts.push(cut),
                None => out_of_expansions += 1,
            }
            assert!(out_of_expansions < 10_000, "the ranking goes on");
        }
        assert!(out_of_expansions > 0);
        assert_eq!(cuts, all);
        assert_eq!(frugal.next(usize::MAX), None, "every cut given");
    }

    #[test]
    fn the_learned_moves_find_rectangular_holes_more_often_than_uniform_ones_and_swap() {
        let hits = |starts: &[u64],
                    ends: &[u64],
                    slack: &[u64],
                    holes: &[(u64, u64, u64)],
                    weights: &[f32]| {
            let steps = steps(slack, starts, ends);
            (0..200)
                .filter(|&s| drawn(&steps, weights, s) == holes)
                .count()
        };
        let uniform = [0.0f32; HOLE_FEATURES.len()];
        // Three rectangular holes: 5 over [0,20), 3 over [5,10), 4 over [8,15).
        let (starts, ends) = ([0, 5, 8, 10, 15], [5, 8, 10, 15, 20]);
        let slack = [5, 8, 12, 9, 5];
        let holes = [(0, 20, 5), (5, 10, 3), (8, 15, 4)];
        let learned = hits(&starts, &ends, &slack, &holes, shipped());
        let by_chance = hits(&starts, &ends, &slack, &holes, &uniform);
        assert!(
            learned > 150 && learned > 2 * by_chance,
            "{learned} against {by_chance}"
        );
        // A hole of 3 ending where one of 5 starts, beside one of 2 over [2,12): the profile
        // rises by 2 at 4, which a fixed cut reads as a new hole.
        let (starts, ends) = ([0, 2, 4, 8], [2, 4, 8, 12]);
        let slack = [3, 5, 7, 2];
        let holes = [(0, 4, 3), (2, 12, 2), (4, 8, 5)];
        assert!(hits(&starts, &ends, &slack, &holes, shipped()) > 0);
    }
}
