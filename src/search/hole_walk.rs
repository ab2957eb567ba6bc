//! Learned hole shapes: a cut of the slack profile made one choice at a time, each scored by a
//! linear model trained on the holes of generated packings (`models/hole_shapes.json`).
//!
//! The fixed cuts of [`super::slack_fill`] decide which open slack a fall closes by one rule
//! each; the swapping draws add a hole that ends where another starts, by coin flips. Here every
//! way a hole can end or start at a step is a move ([`Move`]), described by a few facts (is its
//! amount the fall's own, does the rest it leaves close exactly at a later fall, was the slack
//! opened with this amount, is it the latest opened; [`HOLE_FEATURES`]), and a draw picks each
//! move with probability proportional to `exp(weights · features)`. The weights are fitted (by
//! `telamalloc-train hole-shapes`, with burn) to the moves that reproduce the removed pieces of
//! the training split's slack packings ([`truth_moves`] gives those moves).
//!
//! Every move keeps the open slack equal to the profile's level, so every walk is a cut: over
//! each section its phantoms add up to the section's slack.

use super::instance::Instance;
use super::slack_profile::{section_slack, steps, Step};
use std::collections::{HashMap, VecDeque};

/// The names of a move's features, in the order of [`features`]'s output (the model file
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
struct OpenSlack {
    start: u64,
    amount: u64,
    opened: u64,
}

/// The state of a walk along the profile's steps.
struct Walk {
    /// Open slack, in the order it opened; the amounts add up to the profile's level.
    open: VecDeque<OpenSlack>,
    /// How many falls of each amount are still ahead (the current step's own taken out).
    falls_ahead: HashMap<u64, usize>,
    /// The phantoms closed so far: `(lower, upper, size)`.
    phantoms: Vec<(u64, u64, u64)>,
}

impl Walk {
    fn new(steps: &[(u64, Step)]) -> Walk {
        let mut falls_ahead: HashMap<u64, usize> = HashMap::new();
        for &(_, step) in steps {
            if let Step::Fall(fall) = step {
                *falls_ahead.entry(fall).or_default() += 1;
            }
        }
        Walk {
            open: VecDeque::new(),
            falls_ahead,
            phantoms: Vec::new(),
        }
    }

    fn closes_later(&self, amount: u64) -> bool {
        self.falls_ahead.get(&amount).is_some_and(|&n| n > 0)
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
    fn run(
        mut self,
        steps: &[(u64, Step)],
        mut choose: impl FnMut(&Walk, u64, &[Move], &[MoveFeatures]) -> Option<usize>,
    ) -> Option<Vec<(u64, u64, u64)>> {
        for &(at, step) in steps {
            let mut need = match step {
                Step::Rise(_) => 0,
                Step::Fall(fall) => {
                    if let Some(count) = self.falls_ahead.get_mut(&fall) {
                        *count -= 1;
                    }
                    fall
                }
            };
            loop {
                let moves = self.moves(step, need);
                if moves.is_empty() {
                    break;
                }
                let features: Vec<MoveFeatures> = moves
                    .iter()
                    .map(|&mv| self.features(mv, step, need))
                    .collect();
                let pick = choose(&self, at, &moves, &features)?;
                let mv = moves[pick];
                need = self.apply(at, step, need, mv);
                if !matches!(mv, Move::Whole(_)) || need == 0 {
                    break;
                }
            }
        }
        Some(self.phantoms)
    }
}

/// A drawn cut of the profile `steps`: each move is picked with probability proportional to
/// `exp(weights · features)`, `uniform()` giving the numbers in `[0, 1)` that pick.
pub(crate) fn draw(
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

/// The model's score of a move: its features' dot product with the weights.
fn score(features: &MoveFeatures, weights: &[f32]) -> f64 {
    features
        .iter()
        .zip(weights)
        .map(|(x, w)| f64::from(x * w))
        .sum()
}

/// The choices of the walk that reproduces `holes` on the slack profile of `instance` (see
/// [`truth_moves`]); None when a section is over capacity or no walk reproduces them.
pub(crate) fn truth_of(instance: &Instance, holes: &[(u64, u64, u64)]) -> Option<Vec<HoleChoice>> {
    let slack = section_slack(instance)?;
    let steps = steps(&slack, &instance.section_starts, &instance.section_ends);
    truth_moves(&steps, holes)
}

/// One choice of a walk that reproduces known holes: the features of every move there, and
/// which of them the holes took.
#[derive(Clone, Debug, PartialEq)]
pub struct HoleChoice {
    /// The features of each move open at that point.
    pub moves: Vec<MoveFeatures>,
    /// The index of the move the holes took.
    pub taken: usize,
}

/// The choices (among two or more moves) of the walk whose phantoms are the `holes`
/// (`(lower, upper, size)`, e.g. the pieces removed from a perfect packing), if some walk
/// reproduces them: at each step it closes the holes that end there (wholly, or the last one
/// partly, or the last one wholly with the starting holes' amount reopened) and opens the ones
/// that start. None when the holes cannot come from one walk (e.g. they start and end at one
/// step in ways no move makes, or they do not add up to the profile).
pub(crate) fn truth_moves(
    steps: &[(u64, Step)],
    holes: &[(u64, u64, u64)],
) -> Option<Vec<HoleChoice>> {
    let mut ending: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
    let mut starting: HashMap<u64, u64> = HashMap::new();
    for &(lower, upper, size) in holes {
        ending.entry(upper).or_default().push((lower, size));
        *starting.entry(lower).or_default() += size;
    }
    // The moves the holes make at the current step.
    let mut plan: VecDeque<Planned> = VecDeque::new();
    let mut planned_at = None;
    let mut choices = Vec::new();
    let walked = Walk::new(steps).run(steps, |walk, at, moves, features| {
        if planned_at != Some(at) {
            planned_at = Some(at);
            plan = plan_at(walk, ending.get(&at), starting.get(&at).copied())?;
        }
        let (make, start) = plan.pop_front()?;
        let wanted = match start {
            None => make(0),
            Some(start) => make(walk.open.iter().position(|s| s.start == start)?),
        };
        let taken = moves.iter().position(|&m| m == wanted)?;
        if moves.len() > 1 {
            choices.push(HoleChoice {
                moves: features.to_vec(),
                taken,
            });
        }
        Some(taken)
    })?;
    let merged = |pieces: &[(u64, u64, u64)]| {
        let mut by_span: HashMap<(u64, u64), u64> = HashMap::new();
        for &(lower, upper, size) in pieces {
            *by_span.entry((lower, upper)).or_default() += size;
        }
        let mut out: Vec<_> = by_span.into_iter().collect();
        out.sort_unstable();
        out
    };
    (merged(&walked) == merged(holes)).then_some(choices)
}

/// A move planned by known holes: how to make it from the index of the open slack it takes,
/// and that slack's start (None for [`Move::Open`], which takes none).
type Planned = (fn(usize) -> Move, Option<u64>);

/// The planned move `make` of the open slack that started at `start`.
fn takes(make: fn(usize) -> Move, start: u64) -> Planned {
    (make, Some(start))
}

/// The moves that close the holes `ending` at a step (`(start, size)`) and open `starting`
/// there, in the walk's order: whole closes in the order the slack opened, then the one that
/// closes partly or reopens.
fn plan_at(
    walk: &Walk,
    ending: Option<&Vec<(u64, u64)>>,
    starting: Option<u64>,
) -> Option<VecDeque<Planned>> {
    let mut closed: Vec<(u64, u64)> = Vec::new(); // (start, amount closed), in open order
    for &(start, size) in ending.map(|v| v.as_slice()).unwrap_or(&[]) {
        match closed.iter_mut().find(|c| c.0 == start) {
            Some(c) => c.1 += size,
            None => closed.push((start, size)),
        }
    }
    let position = |start: u64| walk.open.iter().position(|s| s.start == start);
    closed.sort_by_key(|c| position(c.0));
    let opened = starting.unwrap_or(0);
    let amount_of = |start: u64| position(start).map(|i| walk.open[i].amount);
    let (wholes, parts): (Vec<_>, Vec<_>) = closed
        .iter()
        .copied()
        .partition(|&(start, amount)| amount_of(start) == Some(amount));
    let total_closed: u64 = closed.iter().map(|c| c.1).sum();
    let mut plan: VecDeque<Planned> = VecDeque::new();
    if opened > total_closed {
        // A rise: at most one hole ends here, wholly, and a larger one starts (a swap).
        match (wholes.as_slice(), parts.is_empty()) {
            ([], true) => plan.push_back((|_| Move::Open, None)),
            ([(start, _)], true) => plan.push_back(takes(Move::Swap, *start)),
            _ => return None,
        }
        return Some(plan);
    }
    if opened == 0 {
        if parts.len() > 1 {
            return None;
        }
        plan.extend(wholes.iter().map(|&(start, _)| takes(Move::Whole, start)));
        plan.extend(parts.iter().map(|&(start, _)| takes(Move::Part, start)));
    } else {
        // A fall with holes starting: one closed wholly must leave them as its rest.
        if !parts.is_empty() {
            return None;
        }
        let last = wholes.iter().rev().find(|&&(_, amount)| amount > opened)?.0;
        plan.extend(
            wholes
                .iter()
                .filter(|w| w.0 != last)
                .map(|&(start, _)| takes(Move::Whole, start)),
        );
        plan.push_back(takes(Move::Reopen, last));
    }
    Some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{perfect, CutStyle, PerfectOptions};
    use crate::search::policy::mix;
    use crate::search::slack_profile::{covered as profile, section_slack, steps};

    /// Draw number `seed` with `weights`.
    fn drawn(steps: &[(u64, Step)], weights: &[f32], seed: u64) -> Vec<(u64, u64, u64)> {
        let mut n = 0;
        let mut pieces = draw(steps, weights, || {
            n += 1;
            (mix(seed ^ n) >> 11) as f64 / (1u64 << 53) as f64
        });
        pieces.sort_unstable();
        pieces
    }

    fn shipped() -> &'static [f32] {
        crate::learned::HoleModel::built_in().weights.as_slice()
    }

    #[test]
    fn every_drawn_cut_fills_the_profile_exactly() {
        let (starts, ends) = ([0, 2, 4, 6, 9, 11], [2, 4, 6, 9, 11, 12]);
        let slack = [4, 6, 3, 7, 2, 9];
        let steps = steps(&slack, &starts, &ends);
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

    #[test]
    fn the_moves_of_known_holes_replay_them() {
        let (mut reproduced, mut choices) = (0, 0);
        for seed in 0..12 {
            let options = |remove| PerfectOptions {
                capacity: 1 << 20,
                horizon: 1000,
                buffers: 150,
                style: CutStyle::Mixed,
                remove,
                alignment: 1024,
                cuts: Default::default(),
            };
            let (problem, _) = perfect(&options(6), seed);
            let (full, _) = perfect(&options(0), seed);
            let key = |b: &crate::Buffer| (b.lower, b.upper, b.size);
            let mut holes: Vec<_> = full.buffers.iter().map(key).collect();
            for b in &problem.buffers {
                let at = holes
                    .iter()
                    .position(|&h| h == key(b))
                    .expect("a piece of the packing");
                holes.swap_remove(at);
            }
            assert_eq!(holes.len(), 6);
            let instance = Instance::new(&problem, 1 << 20);
            let Some(truth) = truth_of(&instance, &holes) else {
                continue;
            };
            reproduced += 1;
            choices += truth.len();
            // Taking the recorded moves (and the only move where there is one) gives the holes.
            let slack = section_slack(&instance).expect("within the capacity");
            let steps = steps(&slack, &instance.section_starts, &instance.section_ends);
            let mut taken = truth.iter().map(|c| c.taken);
            let walked = Walk::new(&steps)
                .run(&steps, |_, _, moves, features| {
                    let pick = if moves.len() == 1 { 0 } else { taken.next()? };
                    assert!(features[pick][..5].iter().sum::<f32>() == 1.0, "one kind");
                    Some(pick)
                })
                .expect("the walk follows the moves");
            assert!(taken.next().is_none(), "every choice used");
            let mut walked_holes = walked.clone();
            walked_holes.sort_unstable();
            let mut sorted = holes.clone();
            sorted.sort_unstable();
            assert_eq!(
                profile(&walked_holes, &instance.section_starts),
                profile(&sorted, &instance.section_starts)
            );
        }
        assert!(
            reproduced >= 8,
            "most packings' holes come from a walk: {reproduced} of 12"
        );
        assert!(choices > 0);
    }

    #[test]
    fn holes_no_walk_makes_are_refused() {
        // Two holes start together and end at different times, while a third ends where the
        // later one ends and a new one starts: the fall there would need a part and a reopen.
        let (starts, ends) = ([0, 4, 8], [4, 8, 12]);
        let slack = [5, 9, 4];
        let steps = steps(&slack, &starts, &ends);
        // 5 over [0,8), 4 over [4,12): a rise of 4 at 4 and a fall of 5 at 8 (by amount).
        assert!(truth_moves(&steps, &[(0, 8, 5), (4, 12, 4)]).is_some());
        // Pieces that do not add up to the profile.
        assert!(truth_moves(&steps, &[(0, 8, 5), (4, 12, 3)]).is_none());
        assert!(truth_moves(&steps, &[(0, 12, 5)]).is_none());
    }
}
