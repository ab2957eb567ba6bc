//! Several memories and the spill goal, on top of the single-capacity search: choose a place
//! for every buffer (a memory, or out of the one capacity), then fit each memory with the
//! search. Small problems enumerate every assignment, cheapest first, and the first whose
//! memories all fit is the answer (exact); large ones take the better of two assignments
//! (first-fit admission, and a LOAD-guided one fitted by the search and filled in), an answer at
//! any time.

use crate::analysis::load;
use crate::outcome::{Deadline, Infeasibility, Status};
use crate::placement::{Fit, Placer};
use crate::problem::{Assignment, Problem, Solution};
use crate::search::max_tree::MaxTree;
use std::collections::HashMap;

/// The most assignments the exact enumeration tries; more, and the heuristic answers.
pub const EXACT_ASSIGNMENTS: u64 = 1 << 16;

/// Where a buffer can go: slots (the memories, or for the spill goal the one capacity and "out"),
/// each with a capacity (`None`: out, no layout), and per buffer its options `(cost, slot)`,
/// cheapest first.
pub(super) struct Slots {
    capacity: Vec<Option<u64>>,
    options: Vec<Vec<(u128, usize)>>,
    /// The assignment's memory of each slot (`None`: moved out).
    memory: Vec<Option<usize>>,
}

impl Slots {
    /// The spill goal: keep in `capacity` (slot 0) or move out (slot 1, costing the buffer's
    /// worth); a fixed buffer stays.
    pub(super) fn spill(problem: &Problem, capacity: u64) -> Slots {
        let options = problem
            .buffers
            .iter()
            .map(|b| {
                let fits = b.offset.unwrap_or(0).saturating_add(b.size) <= capacity;
                let mut options = Vec::new();
                if fits {
                    options.push((0, 0));
                }
                if b.offset.is_none() || !fits {
                    options.push((b.worth() as u128, 1));
                }
                options
            })
            .collect();
        Slots {
            capacity: vec![Some(capacity), None],
            options,
            memory: vec![Some(0), None],
        }
    }

    /// The problem's memories: each buffer in one it may go to and fits, at size x cost per byte.
    pub(super) fn memories(problem: &Problem) -> Slots {
        let options = (0..problem.len())
            .map(|i| {
                let b = &problem.buffers[i];
                let mut options: Vec<(u128, usize)> = problem
                    .allowed_memories(i)
                    .into_iter()
                    .filter(|&m| {
                        b.offset.unwrap_or(0).saturating_add(b.size) <= problem.memories[m].capacity
                    })
                    .map(|m| (b.size as u128 * problem.memories[m].cost as u128, m))
                    .collect();
                options.sort_unstable();
                options
            })
            .collect();
        Slots {
            capacity: problem.memories.iter().map(|m| Some(m.capacity)).collect(),
            options,
            memory: (0..problem.memories.len()).map(Some).collect(),
        }
    }
}

/// A place for every buffer and its offsets.
struct Placed {
    slot: Vec<usize>,
    offsets: Vec<u64>,
    proven_best: bool,
}

impl Placed {
    fn cost(&self, slots: &Slots) -> u128 {
        self.slot
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                slots.options[i]
                    .iter()
                    .find(|o| o.1 == s)
                    .map_or(0, |o| o.0)
            })
            .sum()
    }
}

/// What fitting one memory's buffers gave.
#[derive(Clone)]
pub(super) enum Fitted {
    /// Their offsets, in the order given.
    Fits(Vec<u64>),
    /// Proven not to fit.
    DoesNot,
    /// A limit came first.
    Unknown,
}

/// Fits a problem in a capacity (its buffers, the capacity, a node limit): the single-capacity
/// search, run by the caller.
pub(super) type FitOne<'a> = dyn Fn(&Problem, u64, Option<u64>) -> Fitted + 'a;

/// The answer of [`solve`]: the status, and when solved the offsets and the assignment.
pub(super) struct Answer {
    pub(super) status: Status,
    pub(super) placed: Option<(Solution, Assignment)>,
}

/// Places every buffer of `problem` in one of its slots at the least total cost found, fitting
/// each memory with `fit` until `deadline`.
pub(super) fn solve(
    problem: &Problem,
    slots: &Slots,
    deadline: &Deadline<'_>,
    fit: &FitOne<'_>,
) -> Answer {
    let run = Run {
        problem,
        slots,
        deadline,
        fit_one: fit,
    };
    if slots.options.iter().any(Vec::is_empty) {
        return Answer {
            status: Status::Infeasible(Infeasibility::Exhausted),
            placed: None,
        };
    }
    let placed = match run.exact() {
        Some(Ok(placed)) => Some(placed),
        Some(Err(status)) => {
            return Answer {
                status,
                placed: None,
            }
        }
        None => run.heuristic(),
    };
    match placed {
        Some(placed) => Answer {
            status: Status::Solved,
            placed: Some((
                Solution {
                    offsets: placed.offsets,
                },
                Assignment {
                    memory: placed.slot.iter().map(|&s| slots.memory[s]).collect(),
                    proven_best: placed.proven_best,
                },
            )),
        },
        None => Answer {
            status: Status::LimitReached,
            placed: None,
        },
    }
}

struct Run<'a> {
    problem: &'a Problem,
    slots: &'a Slots,
    deadline: &'a Deadline<'a>,
    fit_one: &'a FitOne<'a>,
}

impl Run<'_> {
    /// The buffers `members` alone in a problem of `capacity` (their hints and memory lists
    /// dropped: a hint may lie outside this memory).
    fn subproblem(&self, members: &[usize], capacity: u64) -> Problem {
        let buffers = members
            .iter()
            .map(|&i| {
                let mut b = self.problem.buffers[i].clone();
                b.hint = None;
                b.memories.clear();
                b.benefit = None;
                b
            })
            .collect();
        Problem::new(buffers, Some(capacity))
    }

    /// Fits `members` in `capacity` with the search, under `nodes` and the time left.
    fn fit(&self, members: &[usize], capacity: u64, nodes: Option<u64>) -> Fitted {
        if members.is_empty() {
            return Fitted::Fits(Vec::new());
        }
        if self.deadline.passed() || self.deadline.cancelled() {
            return Fitted::Unknown;
        }
        let sub = self.subproblem(members, capacity);
        if load(&sub) > capacity {
            return Fitted::DoesNot;
        }
        (self.fit_one)(&sub, capacity, nodes)
    }

    /// Every assignment, cheapest first, until one fits: `None` when there are too many or the
    /// time ran out; `Err` when none fits.
    fn exact(&self) -> Option<Result<Placed, Status>> {
        let options = &self.slots.options;
        let mut count: u64 = 1;
        for o in options {
            count = count.saturating_mul(o.len() as u64);
            if count > EXACT_ASSIGNMENTS {
                return None;
            }
        }
        let mut all: Vec<(u128, Vec<u8>)> = Vec::with_capacity(count as usize);
        let mut choice = vec![0u8; options.len()];
        loop {
            let cost = choice
                .iter()
                .enumerate()
                .map(|(i, &c)| options[i][c as usize].0)
                .sum();
            all.push((cost, choice.clone()));
            // The next choice vector, as a mixed-radix counter.
            let mut i = 0;
            while i < choice.len() {
                choice[i] += 1;
                if (choice[i] as usize) < options[i].len() {
                    break;
                }
                choice[i] = 0;
                i += 1;
            }
            if i == choice.len() {
                break;
            }
        }
        all.sort();
        let mut cache: HashMap<(usize, Vec<usize>), Fitted> = HashMap::new();
        let proof = !self.problem.has_gaps();
        'next: for (_, choice) in &all {
            let slot: Vec<usize> = (0..options.len())
                .map(|i| options[i][choice[i] as usize].1)
                .collect();
            let mut offsets = vec![0u64; slot.len()];
            for (s, capacity) in self.slots.capacity.iter().enumerate() {
                let Some(capacity) = *capacity else { continue };
                let members: Vec<usize> = (0..slot.len()).filter(|&i| slot[i] == s).collect();
                let key = (s, members);
                let fitted = match cache.get(&key) {
                    Some(f) => f.clone(),
                    None => {
                        let f = self.fit(&key.1, capacity, None);
                        cache.insert(key.clone(), f.clone());
                        f
                    }
                };
                match fitted {
                    Fitted::Fits(found) => {
                        for (k, &i) in key.1.iter().enumerate() {
                            offsets[i] = found[k];
                        }
                    }
                    Fitted::DoesNot => continue 'next,
                    Fitted::Unknown => return None,
                }
            }
            return Some(Ok(Placed {
                slot,
                offsets,
                proven_best: proof,
            }));
        }
        Some(Err(if proof {
            Status::Infeasible(Infeasibility::Exhausted)
        } else {
            Status::LimitReached
        }))
    }

    /// The order in which buffers choose: fixed first, then by what a worse place would cost per
    /// byte (largest first), then larger first.
    fn order(&self) -> Vec<usize> {
        let regret = |i: usize| -> f64 {
            let o = &self.slots.options[i];
            if o.len() < 2 {
                // No other place: first.
                return f64::INFINITY;
            }
            (o[1].0 - o[0].0) as f64 / self.problem.buffers[i].size as f64
        };
        let mut order: Vec<usize> = (0..self.problem.len()).collect();
        let buffers = &self.problem.buffers;
        order.sort_by(|&a, &b| {
            let fixed = |i: usize| buffers[i].offset.is_none();
            fixed(a)
                .cmp(&fixed(b))
                .then(regret(b).total_cmp(&regret(a)))
                .then(buffers[b].size.cmp(&buffers[a].size))
                .then(a.cmp(&b))
        });
        order
    }

    /// The cheapest of several assignments, each complete and valid: admission (first fit and
    /// best fit in the choosing order, best fit largest first); the LOAD-guided assignment at
    /// five targets packed best fit (what does not fit goes to its next place); and, while time
    /// is left, the LOAD-guided assignment fitted by the search.
    fn heuristic(&self) -> Option<Placed> {
        let order = self.order();
        let buffers = &self.problem.buffers;
        // Largest first (fixed buffers first), as size-descending best fit packs.
        let mut by_size = order.clone();
        by_size.sort_by(|&a, &b| {
            let free = |i: usize| buffers[i].offset.is_none();
            free(a)
                .cmp(&free(b))
                .then(buffers[b].size.cmp(&buffers[a].size))
                .then(buffers[b].lifetime().cmp(&buffers[a].lifetime()))
                .then(a.cmp(&b))
        });
        // The first candidate comes whatever the time; each other only while time is left (at a
        // million buffers each takes seconds).
        let mut best = admission(self.problem, self.slots, &order, Fit::First);
        let mut consider = |candidate: &dyn Fn() -> Option<Placed>| {
            if self.deadline.passed() || self.deadline.cancelled() {
                return;
            }
            if let Some(c) = candidate() {
                if best
                    .as_ref()
                    .is_none_or(|b| c.cost(self.slots) < b.cost(self.slots))
                {
                    best = Some(c);
                }
            }
        };
        consider(&|| admission(self.problem, self.slots, &order, Fit::Best));
        consider(&|| admission(self.problem, self.slots, &by_size, Fit::Best));
        for shrink in [0, 1, 2, 4, 8] {
            consider(&|| self.packed(&order, &by_size, shrink));
        }
        consider(&|| self.guided(&order));
        best
    }

    /// Each buffer, in `order`, to its cheapest slot where the live total (LOAD) stays within
    /// `capacity x (1 - shrink / 64)`, else to the cheapest where it stays within the capacity;
    /// `None` when one fits nowhere.
    fn load_assign(&self, order: &[usize], shrink: &[u64]) -> Option<Vec<usize>> {
        let problem = self.problem;
        let slots = self.slots;
        let mut times: Vec<u64> = problem
            .buffers
            .iter()
            .flat_map(|b| [b.lower, b.upper])
            .collect();
        times.sort_unstable();
        times.dedup();
        let at = |t: u64| times.partition_point(|&x| x < t);
        let mut trees: Vec<MaxTree> = slots
            .capacity
            .iter()
            .map(|_| MaxTree::new(&vec![0; times.len().max(1)]))
            .collect();
        let mut slot = vec![usize::MAX; problem.len()];
        for &i in order {
            let b = &problem.buffers[i];
            let range = at(b.lower)..at(b.upper);
            let within = |s: usize, trees: &[MaxTree], target: &dyn Fn(u64) -> u64| {
                let live = trees[s].max(range.clone()).map_or(0, |m| m.0);
                slots.capacity[s].is_none_or(|c| live + b.size as i128 <= target(c) as i128)
            };
            let options = || slots.options[i].iter().map(|o| o.1);
            let chosen = options()
                .find(|&s| within(s, &trees, &|c| c - c / 64 * shrink[s]))
                .or_else(|| options().find(|&s| within(s, &trees, &|c| c)))?;
            trees[chosen].add(range, b.size as i128);
            slot[i] = chosen;
        }
        Some(slot)
    }

    /// The LOAD-guided assignment (target `capacity x (1 - shrink / 64)`) with each memory
    /// packed best fit, largest first (fast at any size); a buffer that ends above the capacity
    /// goes to its next place (first fit), and then buffers move into cheaper holes.
    fn packed(&self, order: &[usize], by_size: &[usize], shrink: u64) -> Option<Placed> {
        let problem = self.problem;
        let slots = self.slots;
        let slot = self.load_assign(order, &vec![shrink; slots.capacity.len()])?;
        let mut placers = placers_for(problem, slots);
        let mut at = vec![usize::MAX; problem.len()];
        let mut offsets = vec![0u64; problem.len()];
        for &i in by_size {
            if let Some(offset) = place_in(&mut placers, slots, (i, slot[i]), Fit::Best) {
                at[i] = slot[i];
                offsets[i] = offset;
            }
        }
        // What did not fit: its next places, first fit.
        let left: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&i| at[i] == usize::MAX)
            .collect();
        for i in left {
            let next = slots.options[i]
                .iter()
                .skip_while(|o| o.1 != slot[i])
                .skip(1);
            for &(_, s) in next {
                if let Some(offset) = place_in(&mut placers, slots, (i, s), Fit::First) {
                    at[i] = s;
                    offsets[i] = offset;
                    break;
                }
            }
            if at[i] == usize::MAX {
                return None;
            }
        }
        Some(self.fill_in(at, offsets, placers, order))
    }

    /// Fits the LOAD-guided assignment with the search (each memory under a node budget of
    /// twice its buffers plus 1000, at the full capacity ten times plus 10,000) at LOAD targets `capacity x (1 - shrink / 64)`: from
    /// `shrink` 8, doubled until the memories fit, then halved while they still fit and time is
    /// left (an answer at any time). Each fit is completed by moving buffers into cheaper
    /// holes; the cheapest is returned.
    fn guided(&self, order: &[usize]) -> Option<Placed> {
        let problem = self.problem;
        let slots = self.slots;
        let mut best: Option<Placed> = None;
        let mut shrink = 8u64;
        loop {
            let slot = self.load_assign(order, &vec![shrink; slots.capacity.len()])?;
            let mut offsets = vec![0u64; problem.len()];
            let mut all_fit = true;
            for (s, capacity) in slots.capacity.iter().enumerate() {
                let Some(capacity) = *capacity else { continue };
                let members: Vec<usize> = (0..problem.len()).filter(|&i| slot[i] == s).collect();
                // At the full capacity, where a near miss costs the most, a longer search.
                let nodes = match shrink {
                    0 => 10 * members.len() as u64 + 10_000,
                    _ => 2 * members.len() as u64 + 1000,
                };
                match self.fit(&members, capacity, Some(nodes)) {
                    Fitted::Fits(found) => {
                        for (k, &i) in members.iter().enumerate() {
                            offsets[i] = found[k];
                        }
                    }
                    _ => {
                        all_fit = false;
                        break;
                    }
                }
            }
            if self.deadline.passed() || self.deadline.cancelled() {
                return best;
            }
            if !all_fit {
                if best.is_some() || shrink == 64 {
                    return best;
                }
                shrink *= 2;
                continue;
            }
            let placers = slots
                .capacity
                .iter()
                .enumerate()
                .map(|(s, c)| {
                    c.map(|_| {
                        let mut placer = Placer::new(problem);
                        for i in (0..problem.len()).filter(|&i| slot[i] == s) {
                            placer.place(i, offsets[i]);
                        }
                        placer
                    })
                })
                .collect();
            let placed = self.fill_in(slot, offsets, placers, order);
            if best
                .as_ref()
                .is_none_or(|b| placed.cost(slots) < b.cost(slots))
            {
                best = Some(placed);
            }
            if shrink == 0 {
                return best;
            }
            shrink /= 2;
        }
    }

    /// Moves buffers into the holes of cheaper slots' layouts (first fit), cheapest first;
    /// `placers` hold each bounded slot's layout.
    fn fill_in(
        &self,
        mut slot: Vec<usize>,
        mut offsets: Vec<u64>,
        mut placers: Vec<Option<Placer<'_>>>,
        order: &[usize],
    ) -> Placed {
        let problem = self.problem;
        let slots = self.slots;
        for &i in order {
            let b = &problem.buffers[i];
            if b.offset.is_some() {
                continue;
            }
            for &(_, s) in &slots.options[i] {
                if s == slot[i] {
                    break;
                }
                let (Some(placer), Some(capacity)) = (placers[s].as_mut(), slots.capacity[s])
                else {
                    continue;
                };
                let offset = placer.position(i, Fit::First);
                if offset.saturating_add(b.size) <= capacity {
                    // The old place stays taken in its layout: still valid, only less room.
                    placer.place(i, offset);
                    slot[i] = s;
                    offsets[i] = offset;
                    break;
                }
            }
        }
        for (i, &s) in slot.iter().enumerate() {
            if slots.capacity[s].is_none() {
                offsets[i] = 0;
            }
        }
        Placed {
            slot,
            offsets,
            proven_best: false,
        }
    }
}

/// Admission: buffers in `order`, each at the offset `fit` chooses in its cheapest slot where
/// it fits; `None` when one fits nowhere.
fn admission(problem: &Problem, slots: &Slots, order: &[usize], fit: Fit) -> Option<Placed> {
    let mut placers = placers_for(problem, slots);
    let mut slot = vec![usize::MAX; problem.len()];
    let mut offsets = vec![0u64; problem.len()];
    for &i in order {
        for &(_, s) in &slots.options[i] {
            if let Some(offset) = place_in(&mut placers, slots, (i, s), fit) {
                slot[i] = s;
                offsets[i] = offset;
                break;
            }
        }
        if slot[i] == usize::MAX {
            return None;
        }
    }
    Some(Placed {
        slot,
        offsets,
        proven_best: false,
    })
}

/// An empty layout for each slot with a capacity (`None` for moving out).
fn placers_for<'p>(problem: &'p Problem, slots: &Slots) -> Vec<Option<Placer<'p>>> {
    slots
        .capacity
        .iter()
        .map(|c| c.map(|_| Placer::new(problem)))
        .collect()
}

/// Places buffer `i` in slot `s` at the offset `fit` chooses, if it fits there under the
/// capacity (a fixed buffer only where nothing placed meets it; in a slot without a capacity,
/// always, at 0): the offset, or `None`.
fn place_in(
    placers: &mut [Option<Placer<'_>>],
    slots: &Slots,
    (i, s): (usize, usize),
    fit: Fit,
) -> Option<u64> {
    let (Some(placer), Some(capacity)) = (placers[s].as_mut(), slots.capacity[s]) else {
        return Some(0);
    };
    let b = &placer.problem().buffers[i];
    let offset = placer.position(i, fit);
    let fits = offset.saturating_add(b.size) <= capacity
        && (b.offset.is_none() || clear_at(placer, i, offset, b.size));
    fits.then(|| {
        placer.place(i, offset);
        offset
    })
}

/// Whether `[offset, offset + size)` meets no placed neighbour of buffer `i`.
fn clear_at(placer: &mut Placer, i: usize, offset: u64, size: u64) -> bool {
    let end = offset.saturating_add(size);
    placer
        .neighbours(i)
        .iter()
        .all(|&(low, high)| high <= offset || end <= low)
}

/// The greedy admission a compiler does today: buffers in decreasing benefit (then size, then
/// input order), each kept at its lowest free offset if it fits under `capacity`, else moved
/// out. Fixed buffers are kept first. Returns the layout (0 for a buffer moved out) and where
/// each buffer is (`Some(0)` kept, `None` moved out).
pub fn greedy_admission(problem: &Problem, capacity: u64) -> (Solution, Assignment) {
    let slots = Slots::spill(problem, capacity);
    let buffers = &problem.buffers;
    let mut order: Vec<usize> = (0..problem.len()).collect();
    order.sort_by(|&a, &b| {
        let fixed = |i: usize| buffers[i].offset.is_none();
        fixed(a)
            .cmp(&fixed(b))
            .then(buffers[b].worth().cmp(&buffers[a].worth()))
            .then(buffers[b].size.cmp(&buffers[a].size))
            .then(a.cmp(&b))
    });
    let placed =
        admission(problem, &slots, &order, Fit::First).expect("moving out is always possible");
    let memory = placed.slot.iter().map(|&s| slots.memory[s]).collect();
    (
        Solution {
            offsets: placed.offsets,
        },
        Assignment {
            memory,
            proven_best: false,
        },
    )
}
