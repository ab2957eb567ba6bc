//! The slack-filling members of a problem: which problems qualify, the fixed cuts' filled
//! problems, and the lottery's drawer.

use super::cuts::{by_amount, crossing, nested};
use super::filled::{with_phantoms, Filled, Shape};
use super::lottery::{Drawer, RankedCuts};
use super::profile::{section_slack, steps};
use super::walk::{self, sorted_cut, Cut};
use crate::outcome::Deadline;
use crate::problem::Problem;
use crate::search::instance::Instance;
use crate::search::options::SearchOptions;
use std::sync::Mutex;

/// The most slack, as a share of the capacity over the time the sections cover, for which the
/// problem is filled: filling helps nearly full problems, while one with room to spare would be
/// turned into a different, harder problem.
pub(crate) const MAX_SLACK_SHARE: f64 = 0.08;

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

/// How slack filling runs: the learned hole-shape model and the switches of its fixed
/// members and its lottery, read once from the search options.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SlackFill<'m> {
    /// The model's weights: the lottery draws its cuts with them (None: the hand-made draws).
    pub(crate) model: Option<&'m [f32]>,
    /// With a model: its most likely cut is one more fixed member.
    pub(crate) likely_cut: bool,
    /// With a model and `likely_cut`: its next [`MORE_LIKELY_CUTS`] ranked cuts (most likely
    /// first, the other fixed members' cuts skipped) are fixed members too.
    pub(crate) more_likely: bool,
    /// With a model: the lottery takes its cuts in decreasing probability
    /// ([`walk::Ranking`]) rather than at random.
    pub(crate) ranked_draws: bool,
    /// A lottery run makes several short draws (see [`super::lottery::draw_budget`]) rather
    /// than one at the run's whole budget.
    pub(crate) short_draws: bool,
    /// The lottery draws again a cut that a fixed member or an earlier draw searched.
    pub(crate) distinct_draws: bool,
    /// The lottery runs twice in every round (else once, as each fixed member does).
    pub(crate) double_lottery: bool,
}

impl<'m> SlackFill<'m> {
    /// The slack-filling switches of `options`, with the hole-shape model's weights `model`.
    pub(crate) fn new(options: &SearchOptions, model: Option<&'m [f32]>) -> SlackFill<'m> {
        SlackFill {
            model,
            likely_cut: options.likely_cut,
            more_likely: options.more_likely,
            ranked_draws: options.ranked_draws,
            short_draws: options.short_draws,
            distinct_draws: options.distinct_draws,
            double_lottery: options.double_lottery,
        }
    }
}

/// The slack-filling members of `problem` (whose search instance is `instance`), if it
/// qualifies: no fixed buffers and no gaps (a phantom would have to avoid them), some slack,
/// and at most [`MAX_SLACK_SHARE`] of it. None otherwise. With the learned hole-shape model,
/// the lottery's cuts come from it as `fill` says. None either once `stop` has passed: it is
/// asked before each filled problem's instance is built.
pub(crate) fn members<'p>(
    problem: &'p Problem,
    instance: &'p Instance,
    fill: SlackFill<'p>,
    stop: &Deadline<'_>,
) -> Members<'p> {
    let Some(slack) = small_slack(problem, instance) else {
        return Members::none();
    };
    let (starts, ends) = (&instance.section_starts[..], &instance.section_ends[..]);
    let nested = nested(&slack, starts, ends);
    let crossing = crossing(&slack, starts, ends);
    let mut fixed = FixedMembers {
        problem,
        capacity: instance.capacity,
        stop,
        filled: Vec::new(),
        cuts: Vec::new(),
    };
    // The nested cut always; the crossing cut's member comes last, but the others skip it.
    fixed.cuts = vec![sorted_cut(&nested), sorted_cut(&crossing)];
    let mut ranked = None;
    let added = fixed.build(Shape::Nested, &nested).and_then(|()| {
        fixed.add(Shape::Matching, &by_amount(&slack, starts, ends))?;
        let likely = fill.model.filter(|_| fill.likely_cut);
        if let Some(weights) = likely {
            let cut = walk::most_likely(&steps(&slack, starts, ends), weights);
            fixed.add(Shape::Likely, &cut)?;
        }
        // One ranking of the model's cuts: the next most likely members take its first, and
        // the lottery's ranked draws go on from them (its draw `k` is the ranking's `k`-th cut).
        let more_likely = fill.more_likely && fill.likely_cut;
        ranked = fill
            .model
            .filter(|_| fill.ranked_draws || more_likely)
            .map(|weights| RankedCuts {
                ranking: walk::Ranking::new(steps(&slack, starts, ends), weights),
                cuts: Vec::new(),
            });
        match ranked.as_mut().filter(|_| more_likely) {
            Some(ranked) => fixed.add_more_likely(ranked),
            None => Some(()),
        }
    });
    if added.is_none() {
        return Members::none();
    }
    if fixed.cuts[0] == fixed.cuts[1] {
        // One cut only: first in, first out and every draw give the nested bands.
        return Members {
            filled: fixed.filled,
            drawer: None,
        };
    }
    if fixed.build(Shape::Crossing, &crossing).is_none() {
        return Members::none();
    }
    Members {
        filled: fixed.filled,
        drawer: Some(Drawer {
            problem,
            capacity: instance.capacity,
            starts,
            ends,
            hole_model: fill.model,
            fixed_cuts: fixed.cuts,
            ranked: ranked.filter(|_| fill.ranked_draws).map(Mutex::new),
            slack,
        }),
    }
}

/// The fixed members made so far: their filled problems, and every cut they search, sorted
/// (the lottery skips those).
struct FixedMembers<'a> {
    problem: &'a Problem,
    capacity: u64,
    /// Asked before each filled problem's instance is built.
    stop: &'a Deadline<'a>,
    filled: Vec<Filled>,
    cuts: Vec<Cut>,
}

impl FixedMembers<'_> {
    /// Builds the member of `cut` in `shape` (its cut is registered by the caller); None once
    /// the stop has passed.
    fn build(&mut self, shape: Shape, cut: &[(u64, u64, u64)]) -> Option<()> {
        if self.stop.passed() {
            return None;
        }
        let member = with_phantoms(self.problem, self.capacity, shape, cut);
        self.filled.push(member);
        Some(())
    }

    /// Adds the member of `cut` in `shape` unless a member searches that cut already; None
    /// once the stop has passed.
    fn add(&mut self, shape: Shape, cut: &[(u64, u64, u64)]) -> Option<()> {
        let sorted = sorted_cut(cut);
        if self.cuts.contains(&sorted) {
            return Some(());
        }
        self.cuts.push(sorted);
        self.build(shape, cut)
    }

    /// Adds the next [`MORE_LIKELY_CUTS`] cuts of `ranked` that no member searches (looking at
    /// most at [`MORE_LIKELY_TRIES`]); None once the stop has passed.
    fn add_more_likely(&mut self, ranked: &mut RankedCuts) -> Option<()> {
        let mut added = 0;
        for draw in 0..MORE_LIKELY_TRIES {
            if added == MORE_LIKELY_CUTS {
                break;
            }
            let Some(cut) = ranked.cut(draw, self.stop) else {
                break; // out of time, or of expansions for this cut
            };
            let sorted = sorted_cut(cut);
            if self.cuts.contains(&sorted) {
                continue;
            }
            self.cuts.push(sorted);
            self.build(Shape::Likely, cut)?;
            added += 1;
        }
        Some(())
    }
}

/// How many more of the hole model's ranked cuts are fixed members with `more_likely`.
pub(crate) const MORE_LIKELY_CUTS: usize = 3;

/// The most ranked cuts looked at for the [`MORE_LIKELY_CUTS`] members (those of the other
/// fixed members are skipped).
const MORE_LIKELY_TRIES: usize = 16;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{perfect, CutStyle, PerfectOptions};
    use crate::search::slack::lottery::RANKING_EXPANSIONS;

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
            SlackFill {
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
    fn ranked_packing() -> (Problem, Instance, &'static [f32], SlackFill<'static>) {
        let problem = packing(CutStyle::Mixed, 200, 8, 11);
        let instance = Instance::new(&problem, 1 << 20);
        let learned = crate::learned::HoleModel::built_in().weights.as_slice();
        let holes = SlackFill {
            model: Some(learned),
            likely_cut: true,
            ranked_draws: true,
            more_likely: false,
            ..SlackFill::default()
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
        let mut ranking = walk::Ranking::new(steps.clone(), learned);
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
            SlackFill {
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
                walk::numbered_draw(&steps, learned, d)
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
            let on = shapes(SlackFill {
                model: Some(learned),
                likely_cut: true,
                ..Default::default()
            });
            assert!(!shapes(SlackFill {
                model: Some(learned),
                ..Default::default()
            })
            .contains(&Shape::Likely));
            assert!(!shapes(SlackFill {
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
            SlackFill {
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
        let mut ranking = walk::Ranking::new(steps, learned);
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
            SlackFill {
                model: None,
                ..holes
            },
            SlackFill {
                likely_cut: false,
                ..holes
            },
        ] {
            let with = members(
                &problem,
                &instance,
                SlackFill {
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
    fn a_perfect_packing_with_a_piece_removed_is_filled_back() {
        let problem = packing(CutStyle::Guillotine, 100, 1, 7);
        let instance = Instance::new(&problem, 1 << 20);
        let filled = members(&problem, &instance, SlackFill::default(), &Deadline::none()).filled;
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
            SlackFill::default(),
            &Deadline::none(),
        )
        .filled
        .is_empty());
        // Cancelled before the first filled instance is built: no members, so a solve that
        // must stop does not spend its time building them.
        let cancelled = std::sync::atomic::AtomicBool::new(true);
        let stop = Deadline::after(std::time::Instant::now(), None, Some(&cancelled));
        let none = members(&problem, &instance, SlackFill::default(), &stop);
        assert!(none.filled.is_empty() && none.drawer.is_none());
    }
}
