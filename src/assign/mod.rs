//! Several memories and the spill goal, on top of the single-capacity fit: choose a place for
//! every buffer (a memory, or out of the one capacity), then fit each memory. Fast constructions
//! (greedy admission first, whatever the time) give a first answer; a branch and bound over
//! assignments then improves it while time is left, and proves it best when it exhausts its
//! tree with every fit decided.

mod branch;
mod construct;
mod profile;
mod run;
mod slots;

pub use construct::greedy_admission;

pub(crate) use run::{FitOne, Fitted};
pub(crate) use slots::Slots;

use crate::outcome::{Deadline, Infeasibility, Status};
use crate::problem::{Assignment, Problem, Solution};
use run::Run;
use std::cell::Cell;

/// The answer of [`solve`].
pub(crate) struct Answer {
    /// How it ended.
    pub(crate) status: Status,
    /// When solved, the offsets and the assignment.
    pub(crate) placed: Option<(Solution, Assignment)>,
    /// Greedy admission's assignment, for the spill goal (computed whatever the time).
    pub(crate) greedy: Option<Assignment>,
}

/// Places every buffer of `problem` in one of its slots at the least total cost found, fitting
/// each memory with `fit` until `deadline` or `nodes` (a total over the fits and the branch
/// and bound) run out.
pub(crate) fn solve(
    problem: &Problem,
    slots: &Slots,
    (deadline, nodes): (&Deadline<'_>, Option<u64>),
    fit: &FitOne<'_>,
) -> Answer {
    let spill = slots.per_byte.iter().any(Option::is_none);
    let greedy = spill
        .then(|| construct::greedy_placed(problem, slots))
        .flatten();
    let greedy_assignment = greedy.as_ref().map(|g| g.assignment(slots, false));
    if (0..problem.len()).any(|i| slots.cheapest(problem, i).is_none()) {
        return Answer {
            status: Status::Infeasible(Infeasibility::Exhausted),
            placed: None,
            greedy: greedy_assignment,
        };
    }
    let run = Run {
        problem,
        slots,
        deadline,
        fit_one: fit,
        nodes_left: Cell::new(nodes),
    };
    let mut best = construct::candidates(&run, greedy);
    let mut proven = false;
    let mut exhausted_none = false;
    if branch::applies(problem, slots) && !run.stopped() {
        let outcome = branch::search(&run, best.clone());
        if outcome.exhausted {
            // Every better assignment was shown not to fit; without gaps those are proofs.
            proven = !problem.has_gaps();
            exhausted_none = outcome.best.is_none() && proven;
        }
        if outcome.best.is_some() {
            best = outcome.best;
        }
    }
    if !exhausted_none && (best.is_none() || !branch::applies(problem, slots)) {
        best = construct::guided_rounds(&run, best);
    }
    let status = match (&best, exhausted_none) {
        (Some(_), _) => Status::Solved,
        (None, true) => Status::Infeasible(Infeasibility::Exhausted),
        (None, false) => Status::LimitReached,
    };
    Answer {
        status,
        placed: best.map(|placed| {
            let assignment = placed.assignment(slots, proven);
            let mut offsets = placed.offsets;
            for (i, &s) in placed.slot.iter().enumerate() {
                if slots.capacity[s].is_none() {
                    offsets[i] = 0;
                }
            }
            (Solution { offsets }, assignment)
        }),
        greedy: greedy_assignment,
    }
}
