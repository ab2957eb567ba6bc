//! Known holes as moves of the hole walk: the choices that reproduce the pieces removed from a
//! generated packing (what the hole-shape model is trained on), and how hard such holes are for
//! the lottery to draw.

use super::profile::{section_slack, steps, Step};
use super::walk::{log_softmax, numbered_draw, score, Move, MoveFeatures, Ranking, Walk};
use crate::search::instance::Instance;
use std::collections::{HashMap, VecDeque};

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
    (merged(&walked) == merged(holes)).then_some(choices)
}

/// `pieces` with the sizes of pieces over one span added up, sorted: two cuts with the same
/// merged pieces fill the profile alike.
fn merged(pieces: &[(u64, u64, u64)]) -> Vec<((u64, u64), u64)> {
    let mut by_span: HashMap<(u64, u64), u64> = HashMap::new();
    for &(lower, upper, size) in pieces {
        *by_span.entry((lower, upper)).or_default() += size;
    }
    let mut out: Vec<_> = by_span.into_iter().collect();
    out.sort_unstable();
    out
}

/// How far [`crate::training::hole_odds`] looks: the most likely cuts it ranks, the partial
/// walks it expands for each, and the seeded draws it tries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OddsBudget {
    /// How many of the most likely cuts to rank (0: no ranking).
    pub ranked: usize,
    /// The most partial walks expanded for each ranked cut.
    pub expansions: usize,
    /// How many seeded draws to try (0: none).
    pub draws: usize,
}

/// How hard known holes are to draw (see [`crate::training::hole_odds`]).
#[derive(Clone, Debug, PartialEq)]
pub struct HoleOdds {
    /// How many choices among two or more moves the walk of the holes makes.
    pub choices: usize,
    /// The natural log of the probability that one draw gives the holes.
    pub log_probability: f64,
    /// The holes' place (from 0) among the cuts in decreasing probability (`Ranking`), if
    /// among those it ranked.
    pub rank: Option<usize>,
    /// How many cuts it ranked.
    pub ranked: usize,
    /// The first of the seeded draws that gave the holes, if one did.
    pub first_draw: Option<usize>,
}

/// How hard `holes` are to draw on the slack profile of `instance` under `weights`: None when
/// a section is over capacity or no walk makes them; else their probability per draw, their
/// rank among the first `count` ranked cuts (at most `expansions` expanded for each), and the first of
/// `draws` seeded draws to give them.
pub(crate) fn odds(
    instance: &Instance,
    holes: &[(u64, u64, u64)],
    weights: &[f32],
    budget: OddsBudget,
) -> Option<HoleOdds> {
    let OddsBudget {
        ranked: count,
        expansions,
        draws,
    } = budget;
    let slack = section_slack(instance)?;
    let steps = &steps(&slack, &instance.section_starts, &instance.section_ends);
    let truth = truth_moves(steps, holes)?;
    let log_probability = truth
        .iter()
        .map(|choice| {
            let scores: Vec<f64> = choice.moves.iter().map(|x| score(x, weights)).collect();
            log_softmax(&scores)[choice.taken]
        })
        .sum();
    let wanted = merged(holes);
    let mut ranking = Ranking::new(steps.to_vec(), weights);
    let cuts: Vec<_> = (0..count)
        .map_while(|_| ranking.next(expansions).map(|(cut, _)| cut))
        .collect();
    let first_draw =
        (0..draws).find(|&d| merged(&numbered_draw(steps, weights, d as u64)) == wanted);
    Some(HoleOdds {
        choices: truth.len(),
        log_probability,
        rank: cuts.iter().position(|cut| merged(cut) == wanted),
        ranked: cuts.len(),
        first_draw,
    })
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
    use crate::search::slack::profile::covered as profile;

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
