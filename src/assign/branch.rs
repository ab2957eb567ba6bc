//! Branch and bound over assignments. Buffers choose in turn, largest first, each slot
//! cheapest first. A partial assignment is cut when its cost plus a bound on the rest reaches
//! the best known; when a slot's live total (LOAD) would pass its capacity; or when a slot holds
//! a group of buffers already shown not to fit. A complete assignment is fitted slot by slot,
//! each group of buffers overlapping in time on its own; a group that does not fit is
//! remembered as such. The fits' node budgets grow eightfold each time the tree is exhausted
//! with some fit undecided; exhausting it with every fit decided proves the best found optimal.

use super::run::{Fitted, Run};
use super::slots::{Placed, Slots};
use crate::problem::Problem;
use std::collections::HashMap;

/// The most buffers the branch and bound takes on (beyond, its depth-first walk changes only
/// the last buffers' places, and the search-fitted constructions do better in the time).
const MOST_BUFFERS: usize = 96;

/// The most entries of the live totals (bounded slots x time points) it keeps.
const MOST_TOTALS: usize = 1 << 22;

/// With at most this many buffers left to choose, the bound also looks at each time point.
const TIME_BOUND_BUFFERS: usize = 96;

/// The fits' first node budget per buffer fitted, and its floor.
const FIT_NODES: (u64, u64) = (20, 2_000);

/// Whether the branch and bound takes on this problem.
pub(super) fn applies(problem: &Problem, slots: &Slots) -> bool {
    let points = 2 * problem.len();
    problem.len() <= MOST_BUFFERS && slots.bounded().count().saturating_mul(points) <= MOST_TOTALS
}

/// What the branch and bound found.
pub(super) struct Outcome {
    /// The best assignment found cheaper than the one it started from.
    pub(super) best: Option<Placed>,
    /// Whether it exhausted its tree with every fit decided: no cheaper assignment fits.
    pub(super) exhausted: bool,
}

/// A set of buffers, one bit each.
type Bits = Box<[u64]>;

fn has(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

fn flip(bits: &mut [u64], i: usize) {
    bits[i / 64] ^= 1 << (i % 64);
}

/// Whether every buffer of `small` but `i` is in `large`.
fn within_but(small: &[u64], large: &[u64], i: usize) -> bool {
    small.iter().zip(large).enumerate().all(|(w, (s, l))| {
        let but = if w == i / 64 { !(1u64 << (i % 64)) } else { !0 };
        s & !l & but == 0
    })
}

/// A fit remembered: its answer, and the node budget it had when it gave up.
#[derive(Clone)]
enum Known {
    Fits(Vec<u64>),
    DoesNot,
    GaveUpAt(u64),
}

/// Searches assignments cheaper than `start` (or any, without one) until the limits of `run`.
pub(super) fn search(run: &Run<'_>, start: Option<Placed>) -> Outcome {
    let mut tree = Tree::new(run, start);
    let mut budget = FIT_NODES;
    loop {
        tree.undecided = false;
        tree.budget = budget;
        tree.dive(0);
        if tree.stopped {
            return tree.outcome(false);
        }
        if !tree.undecided {
            return tree.outcome(true);
        }
        budget = (budget.0.saturating_mul(8), budget.1.saturating_mul(8));
        if budget.1 > 1 << 40 {
            return tree.outcome(false);
        }
    }
}

struct Tree<'r, 'a> {
    run: &'r Run<'a>,
    /// The buffers in the order they choose.
    order: Vec<usize>,
    /// Each buffer's time points `[first, end)` in `points`.
    span: Vec<(usize, usize)>,
    /// The number of time points.
    points: usize,
    /// Each slot's live total at each time point (empty for a slot without a capacity).
    totals: Vec<Vec<u64>>,
    /// Each slot's buffers.
    members: Vec<Bits>,
    /// Each buffer's slot (`usize::MAX`: not chosen yet).
    slot: Vec<usize>,
    cost: u128,
    /// The cheapest place of each buffer summed over `order[d..]`, for each depth `d`.
    rest: Vec<u128>,
    best: Option<Placed>,
    best_cost: u128,
    improved: bool,
    /// Per slot, groups of buffers shown not to fit together.
    nogoods: Vec<Vec<Bits>>,
    known: HashMap<(usize, Bits), Known>,
    budget: (u64, u64),
    undecided: bool,
    stopped: bool,
    nodes: u64,
}

impl<'r, 'a> Tree<'r, 'a> {
    fn new(run: &'r Run<'a>, start: Option<Placed>) -> Tree<'r, 'a> {
        let (problem, slots) = (run.problem, run.slots);
        let (span, points) = super::slots::spans(problem);
        let order = super::slots::fixed_first_by(problem, |b| b.size);
        let mut rest = vec![0u128; problem.len() + 1];
        for d in (0..problem.len()).rev() {
            let cheapest = slots.cheapest(problem, order[d]).map_or(0, |o| o.0);
            rest[d] = rest[d + 1] + cheapest;
        }
        let words = problem.len().div_ceil(64);
        let best_cost = start.as_ref().map_or(u128::MAX, |p| p.cost(problem, slots));
        Tree {
            run,
            order,
            span,
            points,
            totals: (0..slots.len())
                .map(|s| match slots.capacity[s] {
                    Some(_) => vec![0; points],
                    None => Vec::new(),
                })
                .collect(),
            members: (0..slots.len()).map(|_| vec![0; words].into()).collect(),
            slot: vec![usize::MAX; problem.len()],
            cost: 0,
            rest,
            best: start,
            best_cost,
            improved: false,
            nogoods: vec![Vec::new(); slots.len()],
            known: HashMap::new(),
            budget: FIT_NODES,
            undecided: false,
            stopped: false,
            nodes: 0,
        }
    }

    fn outcome(self, exhausted: bool) -> Outcome {
        Outcome {
            best: if self.improved { self.best } else { None },
            exhausted,
        }
    }

    /// Chooses a place for `order[depth]` and below.
    fn dive(&mut self, depth: usize) {
        self.nodes += 1;
        self.run.spend(1);
        if self.nodes.is_multiple_of(64) && self.run.stopped()
            || self.run.nodes_left.get() == Some(0)
        {
            self.stopped = true;
        }
        if self.stopped {
            return;
        }
        if depth == self.order.len() {
            self.leaf();
            return;
        }
        match self.bound(depth) {
            Some(bound) if self.cost + bound < self.best_cost => {}
            _ => return,
        }
        let (problem, slots) = (self.run.problem, self.run.slots);
        let i = self.order[depth];
        let options: Vec<(u128, usize)> = slots.options(problem, i).collect();
        for (cost, s) in options {
            if self.cost + cost + self.rest[depth + 1] >= self.best_cost {
                break;
            }
            if !self.admits(i, s) {
                continue;
            }
            self.join(i, s, cost, true);
            self.dive(depth + 1);
            self.join(i, s, cost, false);
            if self.stopped {
                return;
            }
        }
    }

    /// Whether buffer `i` may join slot `s`: its live total stays within the capacity, and no
    /// group known not to fit would be complete.
    fn admits(&self, i: usize, s: usize) -> bool {
        let Some(capacity) = self.run.slots.capacity[s] else {
            return true;
        };
        let (first, end) = self.span[i];
        let size = self.run.problem.buffers[i].size;
        if self.totals[s][first..end]
            .iter()
            .any(|&t| t + size > capacity)
        {
            return false;
        }
        let members = &self.members[s];
        !self.nogoods[s]
            .iter()
            .any(|group| has(group, i) && within_but(group, members, i))
    }

    /// Puts buffer `i` in slot `s` (`add`), or takes it out.
    fn join(&mut self, i: usize, s: usize, cost: u128, add: bool) {
        let (first, end) = self.span[i];
        let size = self.run.problem.buffers[i].size;
        for t in self.totals[s].get_mut(first..end).unwrap_or(&mut []) {
            if add {
                *t += size;
            } else {
                *t -= size;
            }
        }
        flip(&mut self.members[s], i);
        if add {
            self.slot[i] = s;
            self.cost += cost;
        } else {
            self.slot[i] = usize::MAX;
            self.cost -= cost;
        }
    }

    /// A lower bound on what `order[depth..]` still costs: each buffer's cheapest place where
    /// its live total alone still fits, and, with few left, at each time point the cheapest
    /// (fractional) moves that bring every slot back within its capacity. `None` when some
    /// buffer has no place left.
    fn bound(&self, depth: usize) -> Option<u128> {
        let (problem, slots) = (self.run.problem, self.run.slots);
        let left = &self.order[depth..];
        let mut sum = 0u128;
        // Each buffer's cheapest feasible slot, and what the next one would cost more.
        let mut choice: Vec<(usize, usize, f64)> = Vec::new();
        let timed = left.len() <= TIME_BOUND_BUFFERS;
        for &i in left {
            let mut feasible = slots
                .options(problem, i)
                .filter(|&(_, s)| self.fits_alone(i, s));
            let (cost, s) = feasible.next()?;
            sum += cost;
            if timed && slots.capacity[s].is_some() {
                let extra = feasible
                    .next()
                    .map_or(f64::INFINITY, |o| (o.0 - cost) as f64);
                choice.push((i, s, extra));
            }
        }
        if timed && !choice.is_empty() {
            sum += self.time_bound(&choice)?;
        }
        Some(sum)
    }

    /// Whether buffer `i` fits in slot `s` by its live total alone.
    fn fits_alone(&self, i: usize, s: usize) -> bool {
        let Some(capacity) = self.run.slots.capacity[s] else {
            return true;
        };
        let (first, end) = self.span[i];
        let size = self.run.problem.buffers[i].size;
        self.totals[s][first..end]
            .iter()
            .all(|&t| t + size <= capacity)
    }

    /// The most, over time points, of the fractional cost of moving enough bytes out of each
    /// slot: `choice` holds each left buffer's cheapest feasible slot and the extra cost of its
    /// next place. `None` when some time point cannot be brought within the capacities.
    fn time_bound(&self, choice: &[(usize, usize, f64)]) -> Option<u128> {
        let (problem, slots) = (self.run.problem, self.run.slots);
        let mut most = 0f64;
        let mut live: Vec<(f64, u64, usize)> = Vec::new();
        for t in 0..self.points {
            live.clear();
            live.extend(
                choice
                    .iter()
                    .filter(|&&(i, _, _)| self.span[i].0 <= t && t < self.span[i].1)
                    .map(|&(i, s, extra)| (extra, problem.buffers[i].size, s)),
            );
            if live.is_empty() {
                continue;
            }
            live.sort_by(|a, b| (a.0 / a.1 as f64).total_cmp(&(b.0 / b.1 as f64)));
            let mut at_t = 0f64;
            for (s, capacity) in slots.bounded() {
                let wanted: u64 = live.iter().filter(|l| l.2 == s).map(|l| l.1).sum();
                let Some(mut excess) = (self.totals[s][t] + wanted).checked_sub(capacity) else {
                    continue;
                };
                for &(extra, size, _) in live.iter().filter(|l| l.2 == s) {
                    if excess == 0 {
                        break;
                    }
                    let moved = size.min(excess);
                    at_t += extra * moved as f64 / size as f64;
                    excess -= moved;
                }
                if excess > 0 || at_t.is_infinite() {
                    return None;
                }
            }
            most = most.max(at_t);
        }
        // Rounded down, and a little below, so that rounding never cuts the optimum.
        Some((most * (1.0 - 1e-9)).floor().max(0.0) as u128)
    }

    /// A complete assignment cheaper than the best: fits each slot, group by group.
    fn leaf(&mut self) {
        let (problem, slots) = (self.run.problem, self.run.slots);
        let mut offsets = vec![0u64; problem.len()];
        for (s, capacity) in slots.bounded() {
            let members: Vec<usize> = (0..problem.len()).filter(|&i| self.slot[i] == s).collect();
            for group in overlapping_groups(problem, &members) {
                match self.fit_group(s, capacity, &group) {
                    Known::Fits(found) => {
                        for (k, &i) in group.iter().enumerate() {
                            offsets[i] = found[k];
                        }
                    }
                    Known::DoesNot => {
                        let mut bits: Bits = vec![0; problem.len().div_ceil(64)].into();
                        group.iter().for_each(|&i| flip(&mut bits, i));
                        self.nogoods[s].push(bits);
                        return;
                    }
                    Known::GaveUpAt(_) => {
                        self.undecided = true;
                        if self.run.stopped() {
                            self.stopped = true;
                        }
                        return;
                    }
                }
            }
        }
        self.best = Some(Placed {
            slot: self.slot.clone(),
            offsets,
        });
        self.best_cost = self.cost;
        self.improved = true;
    }

    /// The fit of `group` in slot `s`, remembered; a fit that gave up is tried again once the
    /// budget has grown.
    fn fit_group(&mut self, s: usize, capacity: u64, group: &[usize]) -> Known {
        let mut bits: Bits = vec![0; self.run.problem.len().div_ceil(64)].into();
        group.iter().for_each(|&i| flip(&mut bits, i));
        let key = (s, bits);
        let budget = self.budget.1.max(self.budget.0 * group.len() as u64);
        match self.known.get(&key) {
            Some(Known::GaveUpAt(at)) if *at < budget => {}
            Some(known) => return known.clone(),
            None => {}
        }
        let known = match self.run.fit(group, capacity, Some(budget)) {
            Fitted::Fits(found) => Known::Fits(found),
            Fitted::DoesNot => Known::DoesNot,
            Fitted::Unknown => Known::GaveUpAt(budget),
        };
        self.known.insert(key, known.clone());
        known
    }
}

/// `members` split into groups that share no time step with each other (each fits on its own),
/// each in increasing index order.
fn overlapping_groups(problem: &Problem, members: &[usize]) -> Vec<Vec<usize>> {
    let buffers = &problem.buffers;
    let mut by_lower = members.to_vec();
    by_lower.sort_by_key(|&i| (buffers[i].lower, i));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut reach = 0u64;
    for i in by_lower {
        match groups.last_mut() {
            Some(group) if buffers[i].lower < reach => group.push(i),
            _ => groups.push(vec![i]),
        }
        reach = reach.max(buffers[i].upper);
        if groups.last().is_some_and(|g| g.len() == 1) {
            reach = buffers[i].upper;
        }
    }
    for group in &mut groups {
        group.sort_unstable();
    }
    groups
}
