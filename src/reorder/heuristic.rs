//! The anytime searches for large graphs.
//!
//! - [`beam`]: step by step, keep the `width` best distinct sets of operators run by the peak
//!   paid so far (below the lower bound counted as the bound), then by the bytes that stay
//!   resident. Dominant operators ([`OpGraph::dominant`]) run without branching. Width 1 is the
//!   greedy order. A step's successors are scored before any is built (the score needs only the
//!   step's cost, the bytes it frees and the set's hash), so only the `width` kept are built.
//! - [`improve`]: windows of the best order around its most expensive steps, each reordered by
//!   the exact search with everything before and after fixed, while that lowers the peak or the
//!   number of steps at it.

use super::exact::{search_from, Result as Exact, Window};
use super::graph::{insert, OpGraph, State};
use std::collections::HashMap;
use std::time::Instant;

/// A set of the beam and how it was reached.
struct Candidate {
    state: State,
    /// The operators that can run next.
    ready: Vec<u32>,
    peak: u64,
    /// The history entry of the last operator recorded.
    history: u32,
    /// Operators run since, not yet recorded (recorded when the set is kept).
    pending: Vec<u32>,
}

/// A successor scored but not built: its parent in the level, the operator, its score.
#[derive(Clone, Copy)]
struct Scored {
    parent: u32,
    op: u32,
    peak: u64,
    resident: u64,
    order: u32,
}

/// The best order a beam of `width` finds and its LOAD; `None` past `deadline`.
pub(super) fn beam(
    graph: &OpGraph,
    width: usize,
    deadline: Option<Instant>,
) -> Option<(Vec<usize>, u64)> {
    let width = width.max(1);
    // (parent entry, operator) for every step kept, to rebuild the order.
    let mut history: Vec<(u32, u32)> = vec![(u32::MAX, u32::MAX)];
    let start = State::empty(graph);
    let ready = graph.ready(&start.set, None);
    let mut first = Candidate {
        state: start,
        ready,
        peak: graph.lower_bound,
        history: 0,
        pending: Vec::new(),
    };
    run_dominant(graph, &mut first);
    record(&mut first, &mut history);
    let mut finished: Option<(u64, u32)> = None;
    let mut level = vec![first];
    while !level.is_empty() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return None;
        }
        let scored = successors(graph, &level, &mut finished);
        level = next_level(graph, &level, scored, width, &mut history);
    }
    let (_, entry) = finished?;
    let order = rebuilt(&history, entry, graph.n);
    let load = graph.order_load(&order).ok()?;
    Some((order, load))
}

/// Every successor of the level's candidates that can still beat `finished` (which a complete
/// candidate updates), the best one per set of operators run, sorted best first.
fn successors(
    graph: &OpGraph,
    level: &[Candidate],
    finished: &mut Option<(u64, u32)>,
) -> Vec<Scored> {
    let mut best_of: HashMap<u64, usize> = HashMap::new();
    let mut scored: Vec<Scored> = Vec::new();
    for (parent, candidate) in level.iter().enumerate() {
        if candidate.state.count == graph.n {
            if finished.is_none_or(|(peak, _)| candidate.peak < peak) {
                *finished = Some((candidate.peak, candidate.history));
            }
            continue;
        }
        for &v in &candidate.ready {
            let v = v as usize;
            let peak = graph.step_cost(&candidate.state, v).max(candidate.peak);
            if finished.is_some_and(|(best, _)| peak >= best) {
                continue;
            }
            let resident = candidate.state.resident + graph.kept_bytes[v]
                - graph.freed(&candidate.state.set, v);
            let entry = Scored {
                parent: parent as u32,
                op: v as u32,
                peak,
                resident,
                order: scored.len() as u32,
            };
            match best_of.entry(candidate.state.hash ^ graph.keys[v]) {
                std::collections::hash_map::Entry::Occupied(slot) => {
                    let old = &mut scored[*slot.get()];
                    if (peak, resident) < (old.peak, old.resident) {
                        *old = Scored {
                            order: old.order,
                            ..entry
                        };
                    }
                }
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(scored.len());
                    scored.push(entry);
                }
            }
        }
    }
    scored.sort_by_key(|e| (e.peak, e.resident, e.order));
    scored
}

/// The best `width` of `scored` built into candidates (each recorded in `history`), dropping
/// those the dominant steps make equal to one built.
fn next_level(
    graph: &OpGraph,
    level: &[Candidate],
    scored: Vec<Scored>,
    width: usize,
    history: &mut Vec<(u32, u32)>,
) -> Vec<Candidate> {
    let mut next: Vec<Candidate> = Vec::with_capacity(width.min(scored.len()));
    let mut built: HashMap<u64, ()> = HashMap::new();
    for e in scored {
        if next.len() == width {
            break;
        }
        let parent = &level[e.parent as usize];
        let v = e.op as usize;
        let state = graph.after(&parent.state, v);
        let ready = graph.ready_after(&parent.ready, v, &state, None);
        let mut child = Candidate {
            state,
            ready,
            peak: e.peak,
            history: parent.history,
            pending: vec![e.op],
        };
        run_dominant(graph, &mut child);
        if built.insert(child.state.hash, ()).is_some() {
            continue;
        }
        record(&mut child, history);
        next.push(child);
    }
    next
}

/// The order that ends at `history`'s `entry`, first operator first.
fn rebuilt(history: &[(u32, u32)], mut entry: u32, operators: usize) -> Vec<usize> {
    let mut order = Vec::with_capacity(operators);
    while history[entry as usize].0 != u32::MAX {
        order.push(history[entry as usize].1 as usize);
        entry = history[entry as usize].0;
    }
    order.reverse();
    order
}

/// Runs dominant operators on `candidate` while there are any.
fn run_dominant(graph: &OpGraph, candidate: &mut Candidate) {
    while let Some(v) = graph.dominant(&candidate.state, &candidate.ready, candidate.peak) {
        let state = graph.after(&candidate.state, v);
        candidate.ready = graph.ready_after(&candidate.ready, v, &state, None);
        candidate.state = state;
        candidate.pending.push(v as u32);
    }
}

/// Records the candidate's pending operators in the history.
fn record(candidate: &mut Candidate, history: &mut Vec<(u32, u32)>) {
    for v in candidate.pending.drain(..) {
        history.push((candidate.history, v));
        candidate.history = (history.len() - 1) as u32;
    }
}

/// Window sizes tried around a most expensive step, and the states each may use.
const WINDOWS: [(usize, usize); 3] = [(16, 20_000), (32, 100_000), (64, 300_000)];

/// Improves `order` (of LOAD `load`) in place by windows (see the module docs) until no window
/// helps, the lower bound is reached, or `deadline` passes; returns the new LOAD.
pub(super) fn improve(
    graph: &OpGraph,
    order: &mut [usize],
    mut load: u64,
    deadline: Option<Instant>,
) -> u64 {
    let n = graph.n;
    'improve: loop {
        if load <= graph.lower_bound || deadline.is_some_and(|d| Instant::now() >= d) {
            return load;
        }
        let costs = graph.step_costs(order).expect("a valid order");
        let peaks: Vec<usize> = (0..n).filter(|&k| costs[k] == load).collect();
        for (size, max_states) in WINDOWS {
            for &at in &peaks {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return load;
                }
                let first = at.saturating_sub(size / 2).min(n.saturating_sub(size));
                let end = (first + size).min(n);
                let mut start = State::empty(graph);
                for &v in &order[..first] {
                    start = graph.after(&start, v);
                }
                let mut allowed = vec![0u64; graph.words];
                for &v in &order[first..end] {
                    insert(&mut allowed, v);
                }
                let window = Window {
                    start,
                    allowed: Some(&allowed),
                    target: end,
                };
                let outcome = search_from(graph, window, load, deadline, max_states);
                if let Exact::Found(inside, _) = outcome.result {
                    order[first..end].copy_from_slice(&inside);
                    load = graph.order_load(order).expect("a valid order");
                    continue 'improve;
                }
            }
        }
        return load;
    }
}
