//! Slack filling: a restriction of a nearly full problem that the search decides much faster.
//!
//! In a section whose buffers fill the capacity exactly, zero-slack reasoning forces its floor
//! to be covered at every step, and the search barely branches. A few bytes of slack switch that
//! off: the search must also choose where the holes go, and a perfect packing with one piece
//! removed can take a hundred times the nodes of the full one. Slack filling gives the holes a
//! shape: the slack of each section (capacity minus the sizes live in it) is cut into phantom
//! buffers and added to the problem, which then has no slack anywhere. The cut is a guess at
//! the holes' shapes ([`Shape`]): nested bands, level by level, as holes nested in time would
//! give; pieces matched by amount, as rectangular holes give (each closes the slack it opened);
//! first-in-first-out pieces, as holes that overlap in time would; and random cuts, a new one
//! for each run of a lottery member ([`Drawer`]), since a cut that matches the holes is decided
//! in about one node per buffer. The lottery draws each cut move by move with the learned
//! hole-shape model ([`super::hole_walk`], switch `learned-holes`) or, without it, by hand-made
//! rules: some draws matched by amount where they can be, some letting a hole end where another
//! starts (which the profile shows only as their difference).
//!
//! It is a restriction, not a reformulation: a layout of the filled problem, phantoms dropped,
//! is a layout of the problem, but the holes of every layout need not take the phantoms'
//! shapes, so a filled problem without a layout proves nothing. The portfolio therefore runs
//! each as one more member of its rounds (first in each, at one policy's share), whose
//! exhausted run only retires it (or, for the lottery, ends that draw).

use super::hole_walk::{self, sorted_cut, Cut};
use super::instance::Instance;
use super::policy::mix;
use super::slack_profile::{close_part, section_slack, steps, Step};
use crate::outcome::Deadline;
use crate::problem::{Buffer, Problem};
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// The most slack, as a share of the capacity over the time the sections cover, for which the
/// problem is filled: the problems it helps are nearly full (perfect packings with 1-4% of
/// their pieces removed have 0.5-6%; 8% rather than 5% decides two more of
/// validation-sample80 and one more of tight-validation), while on-chip scratchpads with room
/// to spare (30-60%) would be turned into a different, harder problem.
pub(crate) const MAX_SLACK_SHARE: f64 = 0.08;

/// How the slack profile is cut into phantoms. Each rise of the profile opens slack and each
/// fall closes some: the shapes differ in which open slack a fall closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The latest opened first: bands between levels, nested in time (a profile with `k` rises
    /// gives `k` phantoms).
    Nested,
    /// The earliest opened first: pieces that overlap in time, as two holes do when one starts
    /// before the other ends.
    Crossing,
    /// By amount: each fall closes the open slack of its own amount, as a rectangular hole
    /// closes what it opened (the latest such; failing that, the largest open slack within the
    /// fall, then the latest opened).
    Matching,
    /// The learned hole-shape model's most likely cut: at each step the move it scores highest.
    Likely,
    /// Drawn: each fall closes open slack chosen at random (seeded by the draw), a new shape for
    /// every run of its member ([`Drawer`]).
    Drawn,
}

impl Shape {
    /// The name of the filled problem's runs (in `--stats` and solve logs).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Shape::Nested => "slack-fill",
            Shape::Crossing => "slack-fill-fifo",
            Shape::Matching => "slack-fill-match",
            Shape::Likely => "slack-fill-likely",
            Shape::Drawn => "slack-fill-draw",
        }
    }
}

/// A filled problem for the portfolio: its instance, and how many of its first buffers are the
/// problem's (the phantoms follow them).
pub(crate) struct Filled {
    /// How its phantoms were cut.
    pub(crate) shape: Shape,
    /// The search instance of the filled problem, at the problem's capacity.
    pub(crate) instance: Instance,
    /// The problem's buffers: a layout's first `buffers` offsets are the problem's layout.
    pub(crate) buffers: usize,
}

/// The slack-filling members of a problem's portfolio: the filled problems of the fixed cuts
/// (nested, by amount, the learned model's most likely and next most likely, first in first
/// out), and the lottery's drawer.
pub(crate) struct Members<'p> {
    /// The nested cut's filled problem, then the by-amount cut's, the learned model's most
    /// likely cut's (with `likely_cut`), its next ranked cuts' (with `more_likely`) and the
    /// first-in-first-out cut's, each when it differs from the others.
    pub(crate) filled: Vec<Filled>,
    /// The lottery, when the slack can be cut in more than one way.
    pub(crate) drawer: Option<Drawer<'p>>,
}

impl Members<'_> {
    /// No members: the problem is not filled.
    pub(crate) fn none() -> Self {
        Members {
            filled: Vec::new(),
            drawer: None,
        }
    }
}

/// What slack filling does with the learned hole-shape model.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HoleSwitches<'m> {
    /// The model's weights: the lottery draws its cuts with them (None: the hand-made draws).
    pub(crate) model: Option<&'m [f32]>,
    /// With a model: its most likely cut is one more fixed member.
    pub(crate) likely_cut: bool,
    /// With a model: the lottery takes its cuts in decreasing probability
    /// ([`hole_walk::Ranking`]) rather than at random.
    pub(crate) ranked_draws: bool,
    /// With a model and `likely_cut`: its next [`MORE_LIKELY_CUTS`] ranked cuts (most likely
    /// first, the other fixed members' cuts skipped) are fixed members too.
    pub(crate) more_likely: bool,
}

/// The slack-filling members of `problem` (whose search instance is `instance`), if it
/// qualifies: no fixed buffers and no gaps (a phantom would have to avoid them), some slack,
/// and at most [`MAX_SLACK_SHARE`] of it. None otherwise. With the learned hole-shape model,
/// the lottery's cuts come from it as `holes` says. None either once `stop` has passed: it is
/// asked before each filled problem's instance is built, which takes about 25 ms at 3,840
/// buffers.
pub(crate) fn members<'p>(
    problem: &'p Problem,
    instance: &'p Instance,
    holes: HoleSwitches<'p>,
    stop: &Deadline<'_>,
) -> Members<'p> {
    let HoleSwitches {
        model: hole_model,
        likely_cut,
        ranked_draws,
        more_likely,
    } = holes;
    let Some(slack) = small_slack(problem, instance) else {
        return Members::none();
    };
    let (starts, ends) = (&instance.section_starts[..], &instance.section_ends[..]);
    let nested = nested(&slack, starts, ends);
    let crossing = crossing(&slack, starts, ends);
    let by_amount = by_amount(&slack, starts, ends);
    let likely = hole_model
        .filter(|_| likely_cut)
        .map(|weights| hole_walk::most_likely(&steps(&slack, starts, ends), weights));
    let nested_sorted = sorted_cut(&nested);
    let crossing_sorted = sorted_cut(&crossing);
    let capacity = instance.capacity;
    let build = |shape: Shape, phantoms: &[(u64, u64, u64)]| {
        (!stop.passed()).then(|| with_phantoms(problem, capacity, shape, phantoms))
    };
    let Some(first) = build(Shape::Nested, &nested) else {
        return Members::none();
    };
    let mut filled = vec![first];
    // Every cut a fixed member searches, sorted (the lottery skips them).
    let mut fixed_cuts = vec![nested_sorted.clone(), crossing_sorted.clone()];
    let by_amount_sorted = sorted_cut(&by_amount);
    if !fixed_cuts.contains(&by_amount_sorted) {
        let Some(matching) = build(Shape::Matching, &by_amount) else {
            return Members::none();
        };
        filled.push(matching);
        fixed_cuts.push(by_amount_sorted);
    }
    if let Some(likely) = likely {
        let likely_sorted = sorted_cut(&likely);
        if !fixed_cuts.contains(&likely_sorted) {
            fixed_cuts.push(likely_sorted);
            let Some(likely) = build(Shape::Likely, &likely) else {
                return Members::none();
            };
            filled.push(likely);
        }
    }
    // One ranking of the model's cuts: the next most likely members take its first, and the
    // lottery's ranked draws go on from them (its draw `k` is the ranking's `k`-th cut).
    let more_likely = more_likely && likely_cut;
    let mut ranked = hole_model
        .filter(|_| ranked_draws || more_likely)
        .map(|weights| RankedCuts {
            ranking: hole_walk::Ranking::new(steps(&slack, starts, ends), weights),
            cuts: Vec::new(),
        });
    if let Some(ranked) = ranked.as_mut().filter(|_| more_likely) {
        let mut added = 0;
        for draw in 0..MORE_LIKELY_TRIES {
            if added == MORE_LIKELY_CUTS {
                break;
            }
            let Some(cut) = ranked.cut(draw, stop) else {
                break; // out of time, or of expansions for this cut
            };
            let sorted = sorted_cut(cut);
            if fixed_cuts.contains(&sorted) {
                continue;
            }
            let Some(member) = build(Shape::Likely, cut) else {
                return Members::none();
            };
            fixed_cuts.push(sorted);
            filled.push(member);
            added += 1;
        }
    }
    if nested_sorted == crossing_sorted {
        // One cut only: first in, first out and every draw give the nested bands.
        return Members {
            filled,
            drawer: None,
        };
    }
    let Some(crossing) = build(Shape::Crossing, &crossing) else {
        return Members::none();
    };
    filled.push(crossing);
    Members {
        filled,
        drawer: Some(Drawer {
            problem,
            capacity,
            starts,
            ends,
            hole_model,
            fixed_cuts,
            ranked: ranked.filter(|_| ranked_draws).map(Mutex::new),
            slack,
        }),
    }
}

/// The model's cuts in decreasing probability, numbered as the lottery draws them: the
/// ranking, and the cut of each draw so far.
struct RankedCuts {
    ranking: hole_walk::Ranking,
    /// Each draw's cut, by draw number, up to [`MAX_RANKED_DRAWS`]: the ranking's next, or
    /// None where it found none within [`RANKING_EXPANSIONS`] (a random cut, made again when
    /// asked). A ranking that does not finish one draw's cut goes on at the next.
    cuts: Vec<Option<Cut>>,
}

impl RankedCuts {
    /// The ranked cut of draw number `draw`, ranking on as far as it (stopping once `stop`
    /// has passed); None past [`MAX_RANKED_DRAWS`], once stopped, or where the ranking found
    /// no cut within its expansions.
    fn cut(&mut self, draw: usize, stop: &Deadline<'_>) -> Option<&Cut> {
        while self.cuts.len() <= draw && self.cuts.len() < MAX_RANKED_DRAWS {
            if stop.passed() {
                break;
            }
            let cut = self.ranking.next(RANKING_EXPANSIONS).map(|(cut, _)| cut);
            self.cuts.push(cut);
        }
        self.cuts.get(draw)?.as_ref()
    }
}

/// The most draws that take ranked cuts; later ones are random (the ranked cuts are kept, so
/// this bounds their memory).
const MAX_RANKED_DRAWS: usize = 4096;

/// How many more of the hole model's ranked cuts are fixed members with `more_likely`: on
/// effort-validation at 10 s, 1, 3, 6 and 12 more gave 587, 588, 589 and 589 decided (585
/// without) and PAR2 0.959, 0.911, 0.881 and 0.928 s (1.042 s without).
pub(crate) const MORE_LIKELY_CUTS: usize = 3;

/// The most ranked cuts looked at for the [`MORE_LIKELY_CUTS`] members (those of the other
/// fixed members are skipped).
const MORE_LIKELY_TRIES: usize = 16;

/// The most partial walks the ranking expands for one draw's cut (about 10 µs each): on
/// effort-validation's slack packings the first 256 cuts are the same as with a million, and
/// take at most 14 ms in all.
const RANKING_EXPANSIONS: usize = 1024;

/// `problem` with `phantoms` added, as a [`Filled`] of `shape` at `capacity`.
fn with_phantoms(
    problem: &Problem,
    capacity: u64,
    shape: Shape,
    phantoms: &[(u64, u64, u64)],
) -> Filled {
    let mut filled = problem.clone();
    filled.buffers.extend(
        phantoms
            .iter()
            .enumerate()
            .map(|(k, &(lower, upper, size))| {
                Buffer::new(format!("slack-{k}"), lower, upper, size)
            }),
    );
    Filled {
        shape,
        instance: Instance::new(&filled, capacity),
        buffers: problem.buffers.len(),
    }
}

/// Draws filled problems of one problem, a new cut of its slack for each draw: the lottery
/// member of the portfolio. When a shape matches the holes, its filled problem is decided in
/// about one node per buffer; most do not, so each run draws again.
pub(crate) struct Drawer<'p> {
    problem: &'p Problem,
    capacity: u64,
    slack: Vec<u64>,
    starts: &'p [u64],
    ends: &'p [u64],
    /// The learned hole-shape model's weights, when its draws are on.
    hole_model: Option<&'p [f32]>,
    /// The cuts the fixed members search, each sorted: a draw that gives one of them repeats
    /// their work.
    fixed_cuts: Vec<Cut>,
    /// With `ranked_draws`: the model's cuts in decreasing probability, and the draws' cuts
    /// (locked by the one worker that draws).
    ranked: Option<Mutex<RankedCuts>>,
}

impl<'p> Drawer<'p> {
    /// The filled problem of draw number `draw` (see [`Drawer::cut`]).
    #[cfg(test)]
    pub(crate) fn draw(&self, draw: u64) -> Filled {
        self.fill(&self.cut(draw, &Deadline::none()))
    }

    /// The filled problem of a cut (`(lower, upper, size)` phantoms) of this drawer's slack.
    pub(crate) fn fill(&self, pieces: &[(u64, u64, u64)]) -> Filled {
        with_phantoms(self.problem, self.capacity, Shape::Drawn, pieces)
    }

    /// Whether a sorted cut is one the fixed members search.
    pub(crate) fn is_fixed(&self, sorted_cut: &[(u64, u64, u64)]) -> bool {
        self.fixed_cuts.iter().any(|cut| cut == sorted_cut)
    }

    /// The cut of draw number `draw`, its phantoms in drawing order (the same number gives the
    /// same cut).
    /// With ranked draws, the draws take the model's cuts in decreasing probability; a draw
    /// whose cut the ranking does not find within [`RANKING_EXPANSIONS`], or asked for once
    /// `stop` has passed, is a random one (so a cancelled search waits for at most one
    /// ranking step, about 10 ms).
    pub(crate) fn cut(&self, draw: u64, stop: &Deadline<'_>) -> Vec<(u64, u64, u64)> {
        let Some(ranked) = &self.ranked else {
            return self.random_cut(draw);
        };
        let mut ranked = ranked.lock().expect("a drawer's lock is never poisoned");
        let index = usize::try_from(draw).unwrap_or(usize::MAX);
        match ranked.cut(index, stop) {
            Some(cut) => cut.clone(),
            None => self.random_cut(draw),
        }
    }

    /// The random cut of draw number `draw`, made from numbers hashed from the draw (the same
    /// draw gives the same cut). With the learned hole-shape model, every draw is a walk whose
    /// moves it scores ([`hole_walk::numbered_draw`]). Without it, each fall of the slack
    /// profile closes open slack chosen at random: every third draw (number 2, 5, 8, ...) also
    /// lets holes end where others start ([`swapping`]); of the others, even draws choose among
    /// the open slacks of the fall's own amount when there are any (rectangular holes; two
    /// holes of one size opened at different times are what the by-amount cut can get wrong),
    /// odd draws among all.
    fn random_cut(&self, draw: u64) -> Vec<(u64, u64, u64)> {
        // A number below `n`, from a hash of the draw and how many came before it.
        let mut coins = 0u64;
        let mut coin = |n: u64| {
            coins += 1;
            mix(mix(draw) ^ coins) % n.max(1)
        };
        if let Some(weights) = self.hole_model {
            let steps = steps(&self.slack, self.starts, self.ends);
            hole_walk::numbered_draw(&steps, weights, draw)
        } else if draw % 3 == 2 {
            swapping(&self.slack, self.starts, self.ends, coin)
        } else {
            // Even draws close, where they can, open slack of the fall's own amount (a random
            // one of those); odd ones, and falls no open slack matches, any open slack.
            let by_amount = draw.is_multiple_of(2);
            matched(&self.slack, self.starts, self.ends, |open, amount| {
                let exact: Vec<usize> = (0..open.len())
                    .filter(|&i| by_amount && open[i].1 == amount)
                    .collect();
                if exact.is_empty() {
                    coin(open.len() as u64) as usize
                } else {
                    exact[coin(exact.len() as u64) as usize]
                }
            })
        }
    }
}

/// Each section's slack, if the problem qualifies for filling (see [`members`]).
fn small_slack(problem: &Problem, instance: &Instance) -> Option<Vec<u64>> {
    if problem.has_gaps() || instance.preset.iter().any(|&p| p) {
        return None;
    }
    let capacity = instance.capacity;
    let slack = section_slack(instance)?;
    let (mut area, mut covered) = (0.0, 0.0);
    for (s, &room) in slack.iter().enumerate() {
        let length = (instance.section_ends[s] - instance.section_starts[s]) as f64;
        area += room as f64 * length;
        covered += length;
    }
    if area == 0.0 || area > MAX_SLACK_SHARE * capacity as f64 * covered {
        return None;
    }
    Some(slack)
}

/// The nested cut of a slack profile: `slack[s]` over `[starts[s], ends[s])` (sections in time
/// order; a gap between two sections counts as no slack). Each fall closes the latest opened
/// slack first, so each phantom `(lower, upper, size)` is the band between two levels over a
/// maximal stretch where the slack reaches the upper level: a profile with `k` rises gives `k`
/// phantoms, and over every section the phantoms live there add up to its slack.
fn nested(slack: &[u64], starts: &[u64], ends: &[u64]) -> Vec<(u64, u64, u64)> {
    matched(slack, starts, ends, |open, _| open.len() - 1)
}

/// The first-in-first-out cut of a slack profile (arguments as for [`nested`]): each fall
/// closes the earliest opened slack first, so a rise and the fall that closes it make one
/// phantom, split where amounts differ. Over every section the phantoms add up to its slack.
fn crossing(slack: &[u64], starts: &[u64], ends: &[u64]) -> Vec<(u64, u64, u64)> {
    matched(slack, starts, ends, |_, _| 0)
}

/// The by-amount cut of a slack profile (arguments as for [`nested`]): each piece of a fall
/// closes the latest open slack of exactly its amount, as a rectangular hole closes what it
/// opened; failing that, the largest open slack within it (two holes ending together), then the
/// latest opened. Over every section the phantoms add up to its slack.
fn by_amount(slack: &[u64], starts: &[u64], ends: &[u64]) -> Vec<(u64, u64, u64)> {
    matched(slack, starts, ends, |open, amount| {
        let latest = |keep: &dyn Fn(u64) -> bool| (0..open.len()).rev().find(|&i| keep(open[i].1));
        latest(&|a| a == amount)
            .or_else(|| {
                let within = open.iter().map(|o| o.1).filter(|&a| a < amount).max()?;
                latest(&|a| a == within)
            })
            .unwrap_or(open.len() - 1)
    })
}

/// A drawn cut of a slack profile (arguments as for [`nested`]) in which a hole may also end
/// where another starts, which the profile shows only as their difference; `coin(n)` draws a
/// number below `n`. At a rise, open slack `a` is closed and `a + rise` opened instead when a
/// later fall closes exactly `a + rise` (always when no later fall closes the rise alone, else
/// on a coin flip). At a fall, open slack of the fall's amount is closed when there is some;
/// else a larger one whose rest a later fall closes, either partly (the rest stays open from
/// its start) or wholly with the rest reopened here (on a coin flip); else any.
fn swapping(
    slack: &[u64],
    starts: &[u64],
    ends: &[u64],
    mut coin: impl FnMut(u64) -> u64,
) -> Vec<(u64, u64, u64)> {
    let steps = steps(slack, starts, ends);
    // How many falls of each amount are still ahead (a step's own fall is taken out as it comes).
    let mut falls_ahead: HashMap<u64, usize> = HashMap::new();
    for &(_, step) in &steps {
        if let Step::Fall(fall) = step {
            *falls_ahead.entry(fall).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    // Open slack in the order it opened: (start time, amount).
    let mut open: VecDeque<(u64, u64)> = VecDeque::new();
    for (at, step) in steps {
        if let Step::Fall(fall) = step {
            if let Some(count) = falls_ahead.get_mut(&fall) {
                *count -= 1;
            }
        }
        let closes_later = |amount: u64| falls_ahead.get(&amount).is_some_and(|&n| n > 0);
        let mut fall = match step {
            Step::Rise(rise) => {
                let swaps: Vec<usize> = (0..open.len())
                    .filter(|&i| closes_later(open[i].1 + rise))
                    .collect();
                if !swaps.is_empty() && (!closes_later(rise) || coin(2) == 0) {
                    let i = swaps[coin(swaps.len() as u64) as usize];
                    let amount = open[i].1;
                    close_part(&mut open, i, (at, amount), &mut out);
                    open.push_back((at, amount + rise));
                } else {
                    open.push_back((at, rise));
                }
                continue;
            }
            Step::Fall(fall) => fall,
        };
        while fall > 0 && !open.is_empty() {
            let pick = |keep: &dyn Fn(u64) -> bool| -> Vec<usize> {
                (0..open.len()).filter(|&i| keep(open[i].1)).collect()
            };
            let exact = pick(&|a| a == fall);
            let larger = pick(&|a| a > fall && closes_later(a - fall));
            let i = if !exact.is_empty() {
                exact[coin(exact.len() as u64) as usize]
            } else if !larger.is_empty() {
                let i = larger[coin(larger.len() as u64) as usize];
                if coin(2) == 0 {
                    let amount = open[i].1;
                    close_part(&mut open, i, (at, amount), &mut out);
                    open.push_back((at, amount - fall));
                    break;
                }
                i
            } else {
                coin(open.len() as u64) as usize
            };
            fall -= close_part(&mut open, i, (at, fall), &mut out);
        }
    }
    out
}

/// Cuts a slack profile (arguments as for [`nested`]) by matching falls to open slack: at each
/// piece of a fall of `amount`, `pick(open, amount)` chooses which of the open slacks
/// (`(opened at, amount)`, earliest first) it closes.
/// Over every section the phantoms add up to its slack.
fn matched(
    slack: &[u64],
    starts: &[u64],
    ends: &[u64],
    mut pick: impl FnMut(&VecDeque<(u64, u64)>, u64) -> usize,
) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    // Open slack, earliest first: (start time, amount); the amounts add up to the level.
    let mut open: VecDeque<(u64, u64)> = VecDeque::new();
    for (at, step) in steps(slack, starts, ends) {
        match step {
            Step::Rise(rise) => open.push_back((at, rise)),
            Step::Fall(mut fall) => {
                while fall > 0 && !open.is_empty() {
                    let i = pick(&open, fall).min(open.len() - 1);
                    fall -= close_part(&mut open, i, (at, fall), &mut out);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{perfect, CutStyle, PerfectOptions};
    use crate::search::slack_profile::covered as profile;

    /// A perfect packing at capacity 2^20 (horizon 1000, alignment 1024) of `buffers` in
    /// `style`, `remove` pieces removed, from `seed`.
    fn packing(style: CutStyle, buffers: usize, remove: usize, seed: u64) -> Problem {
        let options = PerfectOptions {
            capacity: 1 << 20,
            horizon: 1000,
            buffers,
            style,
            remove,
            alignment: 1024,
            cuts: Default::default(),
        };
        perfect(&options, seed).0
    }

    #[test]
    fn the_levels_of_a_profile_become_bands() {
        // Slack 3, 5, 8, 3 over [0,5), [5,10), [10,12), [12,15), then a gap, then 2 over [20,25).
        let (starts, ends) = ([0, 5, 10, 12, 20], [5, 10, 12, 15, 25]);
        let slack = [3, 5, 8, 3, 2];
        let mut bands = nested(&slack, &starts, &ends);
        bands.sort();
        assert_eq!(
            bands,
            [(0, 15, 3), (5, 12, 2), (10, 12, 3), (20, 25, 2)],
            "one band per rise"
        );
        assert_eq!(profile(&bands, &starts), slack);
    }

    #[test]
    fn first_in_first_out_gives_holes_that_overlap_in_time() {
        // Two holes, 5 over [0,10) and 3 over [5,15): slack 5, 8, 3.
        let (starts, ends) = ([0, 5, 10], [5, 10, 15]);
        let slack = [5, 8, 3];
        let mut pieces = crossing(&slack, &starts, &ends);
        pieces.sort();
        assert_eq!(pieces, [(0, 10, 5), (5, 15, 3)]);
        assert_eq!(profile(&pieces, &starts), slack);
        // The nested bands of the same profile are three.
        assert_eq!(nested(&slack, &starts, &ends).len(), 3);
        // Nested holes, 5 over [0,15) and 3 over [5,10): split where the inner one ends.
        let slack = [5, 8, 5];
        let pieces = crossing(&slack, &starts, &ends);
        assert_eq!(profile(&pieces, &starts), slack);
    }

    #[test]
    fn closing_by_amount_recovers_rectangular_holes_the_other_cuts_miss() {
        // Three holes: 5 over [0,20), 3 over [5,10) and 4 over [8,15).
        let (starts, ends) = ([0, 5, 8, 10, 15], [5, 8, 10, 15, 20]);
        let slack = [5, 8, 12, 9, 5];
        let holes = vec![(0, 20, 5), (5, 10, 3), (8, 15, 4)];
        let mut pieces = by_amount(&slack, &starts, &ends);
        pieces.sort();
        assert_eq!(pieces, holes);
        // Latest first and earliest first both split a hole at the first fall.
        for other in [
            nested(&slack, &starts, &ends),
            crossing(&slack, &starts, &ends),
        ] {
            assert_eq!(profile(&other, &starts), slack);
            assert_ne!(other.len(), 3, "{other:?}");
        }
        // Two holes ending together, 5 over [0,6) and 3 over [2,6), beside 1 over [4,9): each
        // closes whole (the largest open slack within the fall first).
        let (starts, ends) = ([0, 2, 4, 6], [2, 4, 6, 9]);
        let slack = [5, 8, 9, 1];
        let mut pieces = by_amount(&slack, &starts, &ends);
        pieces.sort();
        assert_eq!(pieces, [(0, 6, 5), (2, 6, 3), (4, 9, 1)]);
        assert_eq!(nested(&slack, &starts, &ends).len(), 4);
    }

    #[test]
    fn a_swapping_draw_lets_a_hole_end_where_another_starts() {
        // 3 over [0,4), then 5 over [4,8): the profile rises by 2 at 4.
        let (starts, ends) = ([0, 4], [4, 8]);
        let slack = [3, 5];
        for seed in 0..8u64 {
            let mut n = 0;
            let mut pieces = swapping(&slack, &starts, &ends, |k| {
                n += 1;
                mix(seed ^ n) % k
            });
            pieces.sort();
            assert_eq!(pieces, [(0, 4, 3), (4, 8, 5)], "seed {seed}");
        }
        // The nested bands keep the first hole open to the end.
        let mut bands = nested(&slack, &starts, &ends);
        bands.sort();
        assert_eq!(bands, [(0, 8, 3), (4, 8, 2)]);
        // Any draw fills the profile exactly.
        let (starts, ends) = ([0, 2, 4, 6, 9], [2, 4, 6, 9, 12]);
        let slack = [4, 6, 3, 7, 2];
        for seed in 0..32u64 {
            let mut n = 0;
            let pieces = swapping(&slack, &starts, &ends, |k| {
                n += 1;
                mix(seed ^ n) % k
            });
            assert_eq!(profile(&pieces, &starts), slack, "seed {seed}");
            assert!(pieces
                .iter()
                .all(|&(lower, upper, size)| lower < upper && size > 0));
        }
    }

    #[test]
    fn every_draw_fills_the_whole_slack_and_a_draw_repeats() {
        let problem = packing(CutStyle::Mixed, 200, 8, 11);
        let instance = Instance::new(&problem, 1 << 20);
        let learned = crate::learned::HoleModel::built_in().weights.as_slice();
        for hole_model in [None, Some(learned)] {
            every_draw_fills(&problem, &instance, hole_model);
        }
    }

    fn every_draw_fills(problem: &Problem, instance: &Instance, hole_model: Option<&[f32]>) {
        let drawer = members(
            problem,
            instance,
            HoleSwitches {
                model: hole_model,
                ..Default::default()
            },
            &Deadline::none(),
        )
        .drawer
        .expect("slack cut more than one way");
        let phantoms = |filled: &Filled| -> Vec<(u64, u64, u64)> {
            let sizes = &filled.instance.sizes[filled.buffers..];
            let lifetimes = &filled.instance.lifetimes[filled.buffers..];
            sizes
                .iter()
                .zip(lifetimes)
                .map(|(&s, &l)| (s, l, 0))
                .collect()
        };
        let mut shapes = std::collections::HashSet::new();
        for draw in 0..8 {
            let filled = drawer.draw(draw);
            assert_eq!(filled.shape, Shape::Drawn);
            assert!(
                filled.instance.totals.iter().all(|&t| t == 1 << 20),
                "draw {draw}"
            );
            assert_eq!(
                phantoms(&filled),
                phantoms(&drawer.draw(draw)),
                "draw {draw} repeats"
            );
            shapes.insert(phantoms(&filled));
        }
        assert!(shapes.len() > 1, "the draws differ ({hole_model:?})");
    }

    /// A mixed packing with 8 pieces removed, the built-in hole-shape model, and its switches
    /// with the most likely cut and ranked draws but no more members.
    fn ranked_packing() -> (Problem, Instance, &'static [f32], HoleSwitches<'static>) {
        let problem = packing(CutStyle::Mixed, 200, 8, 11);
        let instance = Instance::new(&problem, 1 << 20);
        let learned = crate::learned::HoleModel::built_in().weights.as_slice();
        let holes = HoleSwitches {
            model: Some(learned),
            likely_cut: true,
            ranked_draws: true,
            more_likely: false,
        };
        (problem, instance, learned, holes)
    }

    #[test]
    fn ranked_draws_take_the_models_cuts_in_decreasing_probability() {
        let (problem, instance, learned, holes) = ranked_packing();
        let drawer = members(&problem, &instance, holes, &Deadline::none())
            .drawer
            .expect("slack cut more than one way");
        let steps = steps(&drawer.slack, drawer.starts, drawer.ends);
        let mut ranking = hole_walk::Ranking::new(steps.clone(), learned);
        let mut last = 0.0;
        // Asked out of order, each draw is still the ranking's cut of that number.
        let cuts: Vec<_> = [3, 0, 1, 2, 7, 4, 5, 6]
            .map(|d| (d, drawer.cut(d, &Deadline::none())))
            .into();
        for draw in 0..8 {
            let (cut, log_odds) = ranking
                .next(RANKING_EXPANSIONS)
                .expect("a ranked cut within the expansions");
            assert!(log_odds <= last, "draw {draw}: {log_odds} after {last}");
            last = log_odds;
            let drawn = cuts.iter().find(|c| c.0 == draw).expect("asked for");
            assert_eq!(drawn.1, cut, "draw {draw}");
            assert_eq!(
                drawer.cut(draw, &Deadline::none()),
                cut,
                "draw {draw} repeats"
            );
        }
        // Without ranking, draw number `d` is the model's seeded random draw `d`.
        let random = members(
            &problem,
            &instance,
            HoleSwitches {
                ranked_draws: false,
                ..holes
            },
            &Deadline::none(),
        )
        .drawer
        .expect("slack cut more than one way");
        for d in 0..8 {
            assert_eq!(
                random.cut(d, &Deadline::none()),
                hole_walk::numbered_draw(&steps, learned, d)
            );
        }
    }

    #[test]
    fn the_most_likely_cut_is_a_member_of_its_own_when_it_differs() {
        let learned = crate::learned::HoleModel::built_in().weights.as_slice();
        let mut with_likely = 0;
        for seed in 0..24 {
            let style = [
                CutStyle::Thin,
                CutStyle::NonGuillotine,
                CutStyle::Guillotine,
            ][seed as usize % 3];
            let problem = packing(style, 300, 12, seed);
            let instance = Instance::new(&problem, 1 << 20);
            let shapes = |switches| -> Vec<Shape> {
                let members = members(&problem, &instance, switches, &Deadline::none());
                for filled in &members.filled {
                    assert!(filled.instance.totals.iter().all(|&t| t == 1 << 20));
                }
                members.filled.iter().map(|f| f.shape).collect()
            };
            let on = shapes(HoleSwitches {
                model: Some(learned),
                likely_cut: true,
                ..Default::default()
            });
            assert!(!shapes(HoleSwitches {
                model: Some(learned),
                ..Default::default()
            })
            .contains(&Shape::Likely));
            assert!(!shapes(HoleSwitches {
                likely_cut: true,
                ..Default::default()
            })
            .contains(&Shape::Likely));
            assert!(on.iter().filter(|&&s| s == Shape::Likely).count() <= 1);
            with_likely += usize::from(on.contains(&Shape::Likely));
        }
        assert!(with_likely > 0, "a cut none of the fixed rules makes");
    }

    #[test]
    fn more_likely_members_are_the_models_next_ranked_cuts() {
        let (problem, instance, learned, holes) = ranked_packing();
        let fewer = members(&problem, &instance, holes, &Deadline::none()).filled;
        let more = members(
            &problem,
            &instance,
            HoleSwitches {
                more_likely: true,
                ..holes
            },
            &Deadline::none(),
        )
        .filled;
        // A member's cut: its phantoms' sizes and times, sorted (as the fixed cuts compare).
        let key = |f: &Filled| {
            let i = &f.instance;
            let mut phantoms: Vec<(u64, u64, u64)> = (f.buffers..i.sizes.len())
                .map(|b| {
                    let sections = &i.sections[b];
                    let (start, end) = (sections.start, sections.end - 1);
                    (i.section_starts[start], i.section_ends[end], i.sizes[b])
                })
                .collect();
            phantoms.sort_unstable();
            phantoms
        };
        // The same members, the crossing cut's last, with three more before it.
        assert_eq!(more.len(), fewer.len() + MORE_LIKELY_CUTS);
        let (crossing, others) = fewer.split_last().expect("members");
        assert_eq!(crossing.shape, Shape::Crossing);
        assert_eq!(key(more.last().expect("members")), key(crossing));
        for (a, b) in others.iter().zip(&more) {
            assert_eq!((a.shape, key(a)), (b.shape, key(b)));
        }
        // The three are the ranking's first cuts that no other member searches.
        let steps = steps(
            &small_slack(&problem, &instance).expect("a slack packing"),
            &instance.section_starts,
            &instance.section_ends,
        );
        let mut ranking = hole_walk::Ranking::new(steps, learned);
        let mut expected = Vec::new();
        while expected.len() < MORE_LIKELY_CUTS {
            let (cut, _) = ranking.next(RANKING_EXPANSIONS).expect("a ranked cut");
            let filled = with_phantoms(&problem, 1 << 20, Shape::Likely, &cut);
            if fewer.iter().all(|f| key(f) != key(&filled)) {
                expected.push(filled);
            }
        }
        for (k, (got, want)) in more[others.len()..].iter().zip(&expected).enumerate() {
            assert_eq!(got.shape, Shape::Likely, "member {k}");
            assert_eq!(key(got), key(want), "member {k}");
            assert!(got.instance.totals.iter().all(|&t| t == 1 << 20));
        }
        // None of it without the model or without the most likely cut.
        for switches in [
            HoleSwitches {
                model: None,
                ..holes
            },
            HoleSwitches {
                likely_cut: false,
                ..holes
            },
        ] {
            let with = members(
                &problem,
                &instance,
                HoleSwitches {
                    more_likely: true,
                    ..switches
                },
                &Deadline::none(),
            );
            let without = members(&problem, &instance, switches, &Deadline::none());
            assert_eq!(with.filled.len(), without.filled.len());
        }
    }

    #[test]
    fn no_slack_gives_no_phantoms() {
        assert!(nested(&[0, 0], &[0, 4], &[4, 9]).is_empty());
        assert!(crossing(&[0, 0], &[0, 4], &[4, 9]).is_empty());
    }

    #[test]
    fn a_perfect_packing_with_a_piece_removed_is_filled_back() {
        let problem = packing(CutStyle::Guillotine, 100, 1, 7);
        let instance = Instance::new(&problem, 1 << 20);
        let filled = members(
            &problem,
            &instance,
            HoleSwitches::default(),
            &Deadline::none(),
        )
        .filled;
        assert!(!filled.is_empty(), "a little slack");
        assert_eq!(filled[0].shape, Shape::Nested);
        for filled in &filled {
            assert_eq!(filled.buffers, problem.buffers.len());
            // No section of the filled problem has slack left.
            assert!(filled.instance.totals.iter().all(|&t| t == 1 << 20));
        }
        // A full packing has nothing to fill.
        let full = packing(CutStyle::Guillotine, 100, 0, 7);
        assert!(members(
            &full,
            &Instance::new(&full, 1 << 20),
            HoleSwitches::default(),
            &Deadline::none(),
        )
        .filled
        .is_empty());
        // Cancelled before the first filled instance is built: no members, so a solve that
        // must stop does not spend its time building them.
        let cancelled = std::sync::atomic::AtomicBool::new(true);
        let stop = Deadline::after(std::time::Instant::now(), None, Some(&cancelled));
        let none = members(&problem, &instance, HoleSwitches::default(), &stop);
        assert!(none.filled.is_empty() && none.drawer.is_none());
    }
}
