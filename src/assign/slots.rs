//! Where each buffer may go (the slots: memories, or the one capacity and "out") and what it
//! costs there; a complete choice of places with its offsets.

use crate::problem::{Assignment, Buffer, Problem};

/// Where a buffer can go: slots (the memories, or for the spill goal the one capacity and
/// "out"), each with a capacity (`None`: out, no layout) and a price.
pub(crate) struct Slots {
    /// Each slot's capacity (`None`: moved out, nothing laid out).
    pub(super) capacity: Vec<Option<u64>>,
    /// The assignment's memory of each slot (`None`: moved out).
    pub(super) memory: Vec<Option<usize>>,
    /// What a byte in each slot costs (`None`: the spill goal's "out", which costs the
    /// buffer's worth).
    pub(super) per_byte: Vec<Option<u128>>,
    /// Per buffer, the slots it may use, cheapest first; `None`: every slot it fits in, in
    /// `by_cost` order (kept implicit: a buffer of a problem with thousands of memories lists
    /// none).
    pub(super) listed: Vec<Option<Box<[usize]>>>,
    /// Every slot, cheapest per byte first (ties by index).
    pub(super) by_cost: Vec<usize>,
}

impl Slots {
    /// The spill goal: keep in `capacity` (slot 0) or move out (slot 1, costing the buffer's
    /// worth); a fixed buffer stays unless its place lies beyond the capacity.
    pub(crate) fn spill(problem: &Problem, capacity: u64) -> Slots {
        let listed = problem
            .buffers
            .iter()
            .map(|b| {
                let fits = b.offset.unwrap_or(0).saturating_add(b.size) <= capacity;
                let mut options = Vec::new();
                if fits {
                    options.push(0);
                }
                if b.offset.is_none() || !fits {
                    options.push(1);
                }
                Some(options.into_boxed_slice())
            })
            .collect();
        Slots {
            capacity: vec![Some(capacity), None],
            memory: vec![Some(0), None],
            per_byte: vec![Some(0), None],
            listed,
            by_cost: vec![0, 1],
        }
    }

    /// The problem's memories: each buffer in one it may use and fits in, at size x cost per
    /// byte.
    pub(crate) fn memories(problem: &Problem) -> Slots {
        let memories = &problem.memories;
        let mut by_cost: Vec<usize> = (0..memories.len()).collect();
        by_cost.sort_by_key(|&m| (memories[m].cost, m));
        let rank: Vec<usize> = {
            let mut rank = vec![0; memories.len()];
            for (r, &m) in by_cost.iter().enumerate() {
                rank[m] = r;
            }
            rank
        };
        let by_id: std::collections::HashMap<&str, usize> = memories
            .iter()
            .enumerate()
            .map(|(m, memory)| (memory.id.as_str(), m))
            .collect();
        let listed = problem
            .buffers
            .iter()
            .map(|b| {
                if b.memories.is_empty() {
                    return None;
                }
                let mut allowed: Vec<usize> = b
                    .memories
                    .iter()
                    .filter_map(|name| by_id.get(name.as_str()).copied())
                    .filter(|&m| {
                        b.offset.unwrap_or(0).saturating_add(b.size) <= memories[m].capacity
                    })
                    .collect();
                allowed.sort_by_key(|&m| rank[m]);
                allowed.dedup();
                Some(allowed.into_boxed_slice())
            })
            .collect();
        Slots {
            capacity: memories.iter().map(|m| Some(m.capacity)).collect(),
            memory: (0..memories.len()).map(Some).collect(),
            per_byte: memories.iter().map(|m| Some(m.cost as u128)).collect(),
            listed,
            by_cost,
        }
    }

    /// How many slots there are.
    pub(super) fn len(&self) -> usize {
        self.capacity.len()
    }

    /// What buffer `i` costs in slot `s`.
    pub(super) fn cost(&self, problem: &Problem, i: usize, s: usize) -> u128 {
        let b = &problem.buffers[i];
        match self.per_byte[s] {
            Some(per_byte) => b.size as u128 * per_byte,
            None => b.worth() as u128,
        }
    }

    /// Buffer `i`'s places `(cost, slot)`, cheapest first.
    pub(super) fn options<'s>(
        &'s self,
        problem: &'s Problem,
        i: usize,
    ) -> impl Iterator<Item = (u128, usize)> + 's {
        let b = &problem.buffers[i];
        let (listed, every): (&[usize], &[usize]) = match &self.listed[i] {
            Some(listed) => (listed, &[]),
            None => (&[], &self.by_cost),
        };
        let end = b.offset.unwrap_or(0).saturating_add(b.size);
        let fits = move |&s: &usize| self.capacity[s].is_none_or(|c| end <= c);
        listed
            .iter()
            .copied()
            .chain(every.iter().copied().filter(fits))
            .map(move |s| (self.cost(problem, i, s), s))
    }

    /// Buffer `i`'s cheapest place, if it has one.
    pub(super) fn cheapest(&self, problem: &Problem, i: usize) -> Option<(u128, usize)> {
        self.options(problem, i).next()
    }

    /// The bounded slots (those with a layout).
    pub(super) fn bounded(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.capacity
            .iter()
            .enumerate()
            .filter_map(|(s, c)| c.map(|c| (s, c)))
    }
}

/// A place for every buffer and its offsets (0 for a buffer moved out).
#[derive(Clone, Debug)]
pub(super) struct Placed {
    pub(super) slot: Vec<usize>,
    pub(super) offsets: Vec<u64>,
}

impl Placed {
    /// The total cost of the places.
    pub(super) fn cost(&self, problem: &Problem, slots: &Slots) -> u128 {
        self.slot
            .iter()
            .enumerate()
            .map(|(i, &s)| slots.cost(problem, i, s))
            .sum()
    }

    /// The assignment this is.
    pub(super) fn assignment(&self, slots: &Slots, proven_best: bool) -> Assignment {
        Assignment {
            memory: self.slot.iter().map(|&s| slots.memory[s]).collect(),
            proven_best,
        }
    }
}

/// Each buffer's time points `[first, end)` among the problem's distinct lowers and uppers, and
/// how many such points there are.
pub(super) fn spans(problem: &Problem) -> (Vec<(usize, usize)>, usize) {
    let mut times: Vec<u64> = problem
        .buffers
        .iter()
        .flat_map(|b| [b.lower, b.upper])
        .collect();
    times.sort_unstable();
    times.dedup();
    let at = |t: u64| times.partition_point(|&x| x < t);
    let spans = problem
        .buffers
        .iter()
        .map(|b| (at(b.lower), at(b.upper)))
        .collect();
    (spans, times.len())
}

/// Every buffer, fixed ones first, then by `key` largest first, then in input order.
pub(super) fn fixed_first_by<K: Ord>(problem: &Problem, key: impl Fn(&Buffer) -> K) -> Vec<usize> {
    let buffers = &problem.buffers;
    let mut order: Vec<usize> = (0..problem.len()).collect();
    order.sort_by_cached_key(|&i| {
        let b = &buffers[i];
        (b.offset.is_none(), std::cmp::Reverse(key(b)), i)
    });
    order
}
