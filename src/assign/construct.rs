//! Fast complete assignments, each valid: greedy admission (what a compiler does today), first
//! and best fit admission in other orders, live totals (LOAD) packed best fit memory by memory,
//! and the LOAD-guided assignment fitted by the search. Each returns `None` when some buffer
//! found no place.

use super::profile::Profile;
use super::run::{Fitted, Run};
use super::slots::{fixed_first_by, Placed, Slots};
use crate::placement::{Fit, Placer};
use crate::problem::{Assignment, Problem, Solution};

/// Above this many bounded slots, constructions that keep a layout of the whole problem per
/// slot (admission, moving buffers into cheaper holes) are skipped: their memory grows as
/// buffers x slots.
const MANY_SLOTS: usize = 64;

/// The order greedy admission keeps buffers in: fixed first, then decreasing benefit, then
/// decreasing size, then input order.
fn greedy_order(problem: &Problem) -> Vec<usize> {
    fixed_first_by(problem, |b| (b.worth(), b.size))
}

/// Greedy admission on `slots`: buffers in [`greedy_order`], each at its lowest free offset in
/// its cheapest slot where it fits. For the spill goal it always succeeds (moving out is always
/// possible); with memories, the buffers that found no place are left in their cheapest slot
/// and the result is `None`.
pub(super) fn greedy_placed(problem: &Problem, slots: &Slots) -> Option<Placed> {
    admission(problem, slots, &greedy_order(problem), Fit::First, &|| {
        false
    })
}

/// The greedy admission a compiler does today: buffers in decreasing benefit (then size, then
/// input order), each kept at its lowest free offset if it fits under `capacity`, else moved
/// out. Fixed buffers are kept first. Returns the layout (0 for a buffer moved out) and where
/// each buffer is (`Some(0)` kept, `None` moved out).
pub fn greedy_admission(problem: &Problem, capacity: u64) -> (Solution, Assignment) {
    let slots = Slots::spill(problem, capacity);
    let mut placed = greedy_placed(problem, &slots).expect("moving out is always possible");
    for (i, &s) in placed.slot.iter().enumerate() {
        if slots.capacity[s].is_none() {
            placed.offsets[i] = 0;
        }
    }
    let assignment = placed.assignment(&slots, false);
    (
        Solution {
            offsets: placed.offsets,
        },
        assignment,
    )
}

/// The cheapest of the constructions, `first` among them: admission (first and best fit in the
/// choosing order, best fit largest first), the LOAD-guided assignment at five targets packed
/// best fit, and the LOAD-guided assignment fitted by the search. After `first`, each starts
/// only while time is left (at a million buffers each takes seconds).
pub(super) fn candidates(run: &Run<'_>, first: Option<Placed>) -> Option<Placed> {
    let (problem, slots) = (run.problem, run.slots);
    if run.stopped() {
        return first;
    }
    let order = choosing_order(problem, slots);
    let by_size = largest_first(problem);
    let few_slots = slots.bounded().count() <= MANY_SLOTS;
    let mut best = first;
    let mut consider = |candidate: &dyn Fn() -> Option<Placed>| {
        if run.stopped() {
            return;
        }
        if let Some(c) = candidate() {
            if best
                .as_ref()
                .is_none_or(|b| c.cost(problem, slots) < b.cost(problem, slots))
            {
                best = Some(c);
            }
        }
    };
    if few_slots {
        let stop = || run.stopped();
        consider(&|| admission(problem, slots, &order, Fit::First, &stop));
        consider(&|| admission(problem, slots, &order, Fit::Best, &stop));
        consider(&|| admission(problem, slots, &by_size, Fit::Best, &stop));
    }
    for shrink in [0, 1, 2, 4, 8] {
        consider(&|| packed(run, (&order, &by_size), shrink));
    }
    if !super::branch::applies(problem, slots) {
        consider(&|| guided(run, &order, 1));
    }
    best
}

/// The LOAD-guided assignment fitted by the search with node budgets growing fourfold a round
/// while time is left: until one fits when `best` is `None`, else for three rounds; the
/// cheapest of them and `best`.
pub(super) fn guided_rounds(run: &Run<'_>, mut best: Option<Placed>) -> Option<Placed> {
    let (problem, slots) = (run.problem, run.slots);
    let order = choosing_order(problem, slots);
    let mut scale = 4u64;
    let mut rounds = 0;
    while !run.stopped() && (best.is_none() || rounds < 3) {
        if let Some(found) = guided(run, &order, scale) {
            if best
                .as_ref()
                .is_none_or(|b| found.cost(problem, slots) < b.cost(problem, slots))
            {
                best = Some(found);
            }
        }
        scale = scale.saturating_mul(4);
        rounds += 1;
    }
    best
}

/// The order in which buffers choose: fixed first, then by what a worse place would cost per
/// byte (largest first), then larger first.
fn choosing_order(problem: &Problem, slots: &Slots) -> Vec<usize> {
    let regret: Vec<f64> = (0..problem.len())
        .map(|i| {
            let mut options = slots.options(problem, i);
            match (options.next(), options.next()) {
                (Some(first), Some(second)) => {
                    (second.0 - first.0) as f64 / problem.buffers[i].size.max(1) as f64
                }
                // No other place: first.
                _ => f64::INFINITY,
            }
        })
        .collect();
    let buffers = &problem.buffers;
    let mut order: Vec<usize> = (0..problem.len()).collect();
    order.sort_by(|&a, &b| {
        let free = |i: usize| buffers[i].offset.is_none();
        free(a)
            .cmp(&free(b))
            .then(regret[b].total_cmp(&regret[a]))
            .then(buffers[b].size.cmp(&buffers[a].size))
            .then(a.cmp(&b))
    });
    order
}

/// Every buffer largest first (fixed buffers first, then longer first), as size-descending best
/// fit packs.
fn largest_first(problem: &Problem) -> Vec<usize> {
    fixed_first_by(problem, |b| (b.size, b.lifetime()))
}

/// Each bounded slot's layout of the whole problem, made when first used.
struct Layouts<'p> {
    problem: &'p Problem,
    placers: Vec<Option<Placer<'p>>>,
}

impl<'p> Layouts<'p> {
    fn new(problem: &'p Problem, slots: &Slots) -> Layouts<'p> {
        Layouts {
            problem,
            placers: (0..slots.len()).map(|_| None).collect(),
        }
    }

    fn of(&mut self, s: usize) -> &mut Placer<'p> {
        let problem = self.problem;
        self.placers[s].get_or_insert_with(|| Placer::new(problem))
    }

    /// Places buffer `i` in slot `s` at the offset `fit` chooses, if it fits there under the
    /// capacity (a fixed buffer only where nothing placed meets it; in a slot without a
    /// capacity, always, at 0): the offset, or `None`.
    fn place(&mut self, slots: &Slots, (i, s): (usize, usize), fit: Fit) -> Option<u64> {
        let Some(capacity) = slots.capacity[s] else {
            return Some(0);
        };
        let placer = self.of(s);
        let offset = placer.position(i, fit);
        let size = placer.problem().buffers[i].size;
        let fixed = placer.problem().buffers[i].offset.is_some();
        let fits = offset.saturating_add(size) <= capacity
            && (!fixed || clear_at(placer, i, offset, size));
        fits.then(|| {
            placer.place(i, offset);
            offset
        })
    }
}

/// Whether `[offset, offset + size)` meets no placed neighbour of buffer `i`.
fn clear_at(placer: &mut Placer, i: usize, offset: u64, size: u64) -> bool {
    let end = offset.saturating_add(size);
    placer
        .neighbours(i)
        .iter()
        .all(|&(low, high)| high <= offset || end <= low)
}

/// Admission: buffers in `order`, each at the offset `fit` chooses in its cheapest slot where
/// it fits; `None` when one fits nowhere, or once `stop` says so (asked every 1024 buffers).
fn admission(
    problem: &Problem,
    slots: &Slots,
    order: &[usize],
    fit: Fit,
    stop: &dyn Fn() -> bool,
) -> Option<Placed> {
    let mut layouts = Layouts::new(problem, slots);
    let mut slot = vec![usize::MAX; problem.len()];
    let mut offsets = vec![0u64; problem.len()];
    for (k, &i) in order.iter().enumerate() {
        if k % 1024 == 1023 && stop() {
            return None;
        }
        for (_, s) in slots.options(problem, i) {
            if let Some(offset) = layouts.place(slots, (i, s), fit) {
                slot[i] = s;
                offsets[i] = offset;
                break;
            }
        }
        if slot[i] == usize::MAX {
            return None;
        }
    }
    Some(Placed { slot, offsets })
}

/// Each buffer, in `order`, to its cheapest slot where the live total (LOAD) stays within
/// `capacity x (1 - shrink / 64)`, else to the cheapest where it stays within the capacity;
/// `None` when one fits nowhere.
fn load_assign(run: &Run<'_>, order: &[usize], shrink: u64) -> Option<Vec<usize>> {
    let (problem, slots) = (run.problem, run.slots);
    let (spans, points) = super::slots::spans(problem);
    let mut profiles: Vec<Option<Profile>> = (0..slots.len()).map(|_| None).collect();
    let mut slot = vec![usize::MAX; problem.len()];
    for (k, &i) in order.iter().enumerate() {
        if k % 1024 == 1023 && run.stopped() {
            return None;
        }
        let b = &problem.buffers[i];
        let range = spans[i].0..spans[i].1;
        let mut within = |s: usize, target: &dyn Fn(u64) -> u64| {
            let Some(capacity) = slots.capacity[s] else {
                return true;
            };
            let profile = profiles[s].get_or_insert_with(|| Profile::new(points));
            profile.max(range.clone()) + b.size <= target(capacity)
        };
        let chosen = slots
            .options(problem, i)
            .map(|o| o.1)
            .find(|&s| within(s, &|c| c - c / 64 * shrink))
            .or_else(|| {
                slots
                    .options(problem, i)
                    .map(|o| o.1)
                    .find(|&s| within(s, &|c| c))
            })?;
        if let Some(profile) = profiles[chosen].as_mut() {
            profile.add(range, b.size);
        }
        slot[i] = chosen;
    }
    Some(slot)
}

/// The LOAD-guided assignment (target `capacity x (1 - shrink / 64)`) packed best fit,
/// largest first, one slot at a time (cheapest per byte first, each in a layout of its own
/// buffers only); a buffer that ends above the capacity goes on to its next place; with few
/// slots, buffers then move into cheaper holes.
fn packed(run: &Run<'_>, (order, by_size): (&[usize], &[usize]), shrink: u64) -> Option<Placed> {
    let (problem, slots) = (run.problem, run.slots);
    let mut slot = load_assign(run, order, shrink)?;
    let mut rank = vec![0usize; problem.len()];
    for (r, &i) in by_size.iter().enumerate() {
        rank[i] = r;
    }
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); slots.len()];
    for (i, &s) in slot.iter().enumerate() {
        members[s].push(i);
    }
    let mut offsets = vec![0u64; problem.len()];
    for &s in &slots.by_cost {
        let Some(capacity) = slots.capacity[s] else {
            continue;
        };
        let mut group = std::mem::take(&mut members[s]);
        group.sort_by_key(|&i| rank[i]);
        let sub = run.subproblem(&group, capacity);
        let mut placer = Placer::new(&sub);
        for (k, &i) in group.iter().enumerate() {
            if k % 1024 == 1023 && run.stopped() {
                return None;
            }
            let offset = placer.position(k, Fit::Best);
            let size = sub.buffers[k].size;
            let fixed = sub.buffers[k].offset.is_some();
            if offset.saturating_add(size) <= capacity
                && (!fixed || clear_at(&mut placer, k, offset, size))
            {
                placer.place(k, offset);
                offsets[i] = offset;
                continue;
            }
            // Its next place (a later slot: places are cheapest first, as slots are here).
            let next = slots
                .options(problem, i)
                .map(|o| o.1)
                .skip_while(|&t| t != s)
                .nth(1)?;
            slot[i] = next;
            members[next].push(i);
        }
    }
    if members
        .iter()
        .enumerate()
        .any(|(s, m)| slots.capacity[s].is_some() && !m.is_empty())
    {
        return None;
    }
    Some(fill_in(problem, slots, Placed { slot, offsets }, order))
}

/// Fits the LOAD-guided assignment with the search (each memory under a node budget of
/// `scale` x (twice its buffers plus 1000), at the full capacity ten times that) at LOAD
/// targets `capacity x (1 - shrink / 64)`: from `shrink` 8, doubled until the memories fit,
/// then halved while they still fit and time is left. Each fit is completed by moving buffers
/// into cheaper holes; the cheapest is returned.
fn guided(run: &Run<'_>, order: &[usize], scale: u64) -> Option<Placed> {
    let (problem, slots) = (run.problem, run.slots);
    let mut best: Option<Placed> = None;
    let mut shrink = 8u64;
    loop {
        let slot = load_assign(run, order, shrink)?;
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); slots.len()];
        for (i, &s) in slot.iter().enumerate() {
            members[s].push(i);
        }
        let mut offsets = vec![0u64; problem.len()];
        let mut all_fit = true;
        for (s, capacity) in slots.bounded() {
            let group = &members[s];
            let base = 2 * group.len() as u64 + 1000;
            let nodes = scale.saturating_mul(if shrink == 0 { 10 * base } else { base });
            match run.fit(group, capacity, Some(nodes)) {
                Fitted::Fits(found) => {
                    for (k, &i) in group.iter().enumerate() {
                        offsets[i] = found[k];
                    }
                }
                _ => {
                    all_fit = false;
                    break;
                }
            }
        }
        if run.stopped() {
            return best;
        }
        if !all_fit {
            if best.is_some() || shrink == 64 {
                return best;
            }
            shrink *= 2;
            continue;
        }
        let placed = fill_in(problem, slots, Placed { slot, offsets }, order);
        if best
            .as_ref()
            .is_none_or(|b| placed.cost(problem, slots) < b.cost(problem, slots))
        {
            best = Some(placed);
        }
        if shrink == 0 {
            return best;
        }
        shrink /= 2;
    }
}

/// With few slots: moves buffers, in `order`, into the holes of cheaper slots' layouts (first
/// fit), cheapest first. With many, `placed` as it is.
fn fill_in(problem: &Problem, slots: &Slots, mut placed: Placed, order: &[usize]) -> Placed {
    if slots.bounded().count() > MANY_SLOTS {
        return placed;
    }
    let mut layouts = Layouts::new(problem, slots);
    for (i, &s) in placed.slot.iter().enumerate() {
        if slots.capacity[s].is_some() {
            layouts.of(s).place(i, placed.offsets[i]);
        }
    }
    for &i in order {
        let b = &problem.buffers[i];
        if b.offset.is_some() {
            continue;
        }
        let here = placed.slot[i];
        for (_, s) in slots.options(problem, i) {
            if s == here {
                break;
            }
            let Some(capacity) = slots.capacity[s] else {
                continue;
            };
            let placer = layouts.of(s);
            let offset = placer.position(i, Fit::First);
            if offset.saturating_add(b.size) <= capacity {
                // The old place stays taken in its layout: still valid, only less room.
                placer.place(i, offset);
                placed.slot[i] = s;
                placed.offsets[i] = offset;
                break;
            }
        }
    }
    placed
}
