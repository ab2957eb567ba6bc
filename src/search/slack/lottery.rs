//! The slack-filling lottery: a new cut of the slack for each draw, drawn by the learned
//! hole-shape model (ranked by probability, or at random) or by hand-made rules, and searched as
//! a filled problem.

use super::cuts::{matched, swapping};
use super::filled::{with_phantoms, Filled, Shape};
use super::profile::steps;
use super::walk::{self, sorted_cut, Cut};
use crate::outcome::Deadline;
use crate::problem::Problem;
use crate::search::policy::mix;
use std::collections::HashSet;
use std::sync::Mutex;

/// The model's cuts in decreasing probability, numbered as the lottery draws them: the
/// ranking, and the cut of each draw so far.
pub(super) struct RankedCuts {
    pub(super) ranking: walk::Ranking,
    /// Each draw's cut, by draw number, up to [`MAX_RANKED_DRAWS`]: the ranking's next, or
    /// None where it found none within [`RANKING_EXPANSIONS`] (a random cut, made again when
    /// asked). A ranking that does not finish one draw's cut goes on at the next.
    pub(super) cuts: Vec<Option<Cut>>,
}

impl RankedCuts {
    /// The ranked cut of draw number `draw`, ranking on as far as it (stopping once `stop`
    /// has passed); None past [`MAX_RANKED_DRAWS`], once stopped, or where the ranking found
    /// no cut within its expansions.
    pub(super) fn cut(&mut self, draw: usize, stop: &Deadline<'_>) -> Option<&Cut> {
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

/// The most partial walks the ranking expands for one draw's cut (past it, the draw's cut is a
/// random one).
pub(super) const RANKING_EXPANSIONS: usize = 1024;

/// Draws filled problems of one problem, a new cut of its slack for each draw: the lottery
/// member of the portfolio. When a shape matches the holes, its filled problem is decided in
/// about one node per buffer; most do not, so each run draws again.
pub(crate) struct Drawer<'p> {
    pub(super) problem: &'p Problem,
    pub(super) capacity: u64,
    pub(super) slack: Vec<u64>,
    pub(super) starts: &'p [u64],
    pub(super) ends: &'p [u64],
    /// The learned hole-shape model's weights, when its draws are on.
    pub(super) hole_model: Option<&'p [f32]>,
    /// The cuts the fixed members search, each sorted: a draw that gives one of them repeats
    /// their work.
    pub(super) fixed_cuts: Vec<Cut>,
    /// With `ranked_draws`: the model's cuts in decreasing probability, and the draws' cuts
    /// (locked by the one worker that draws).
    pub(super) ranked: Option<Mutex<RankedCuts>>,
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
    /// ranking step).
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
    /// moves it scores ([`walk::numbered_draw`]). Without it, each fall of the slack
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
            walk::numbered_draw(&steps, weights, draw)
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

/// The lottery member's draws so far: its drawer, how many cuts it drew, and (with
/// `distinct-draws`) the cuts it searched.
pub(crate) struct Lottery<'p> {
    /// Draws the cuts.
    pub(crate) drawer: &'p Drawer<'p>,
    /// How many cuts it has drawn: the next draw's number.
    pub(crate) draws: u64,
    /// With `distinct-draws`: the cuts searched so far, each sorted.
    pub(crate) drawn_cuts: HashSet<Cut>,
}

impl<'p> Lottery<'p> {
    /// A lottery that has drawn nothing yet.
    pub(crate) fn new(drawer: &'p Drawer<'p>) -> Lottery<'p> {
        Lottery {
            drawer,
            draws: 0,
            drawn_cuts: HashSet::new(),
        }
    }

    /// The filled problem of the next draw. With `distinct`, a cut that a fixed member or an
    /// earlier draw searched is drawn again, up to [`REDRAWS`] times (then the last is taken:
    /// the profile may have few cuts).
    pub(crate) fn next_filled(&mut self, distinct: bool, stop: &Deadline<'_>) -> Filled {
        let drawer = self.drawer;
        let mut cut = drawer.cut(self.draws, stop);
        self.draws += 1;
        if distinct {
            for _ in 0..REDRAWS {
                let sorted = sorted_cut(&cut);
                if !drawer.is_fixed(&sorted) && self.drawn_cuts.insert(sorted) {
                    break;
                }
                cut = drawer.cut(self.draws, stop);
                self.draws += 1;
            }
        }
        drawer.fill(&cut)
    }
}

/// The most cuts the lottery draws for one run before it takes a repeated one.
const REDRAWS: usize = 64;

/// The node budget of one lottery draw with `short` draws, on a problem of `buffers` free
/// buffers (`u64::MAX` without: one draw per run). A draw that matches the holes is often
/// decided in about one node per buffer, and most draws do not match, so a run spends its
/// budget on several short draws.
pub(crate) fn draw_budget(short: bool, buffers: usize) -> u64 {
    if short {
        (buffers as u64)
            .saturating_mul(DRAW_NODES_PER_BUFFER)
            .max(1)
    } else {
        u64::MAX
    }
}

/// The nodes per buffer of a short draw.
const DRAW_NODES_PER_BUFFER: u64 = 2;
