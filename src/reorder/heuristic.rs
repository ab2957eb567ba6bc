//! Beam search over the sets of operators run: step by step, keep the `width` best distinct
//! sets by the peak paid so far (below the lower bound counted as the bound), then by the bytes
//! that stay resident. Dominant operators ([`OpGraph::dominant`]) run without branching. Width 1
//! is the greedy order.

use super::exact::SetMap;
use super::{OpGraph, State};
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
    /// When it was made (ties keep the first).
    order: usize,
}

/// The best order a beam of `width` finds and its LOAD; `None` past `deadline`.
pub(super) fn beam(
    graph: &OpGraph,
    width: usize,
    deadline: Option<Instant>,
) -> Option<(Vec<usize>, u64)> {
    let n = graph.n;
    // (parent entry, operator) for every step kept, to rebuild the order.
    let mut history: Vec<(u32, u32)> = vec![(u32::MAX, u32::MAX)];
    let start = State::empty(graph);
    let ready = graph.ready(&start.set);
    let mut first = Candidate {
        state: start,
        ready,
        peak: graph.lower_bound,
        history: 0,
        pending: Vec::new(),
        order: 0,
    };
    run_dominant(graph, &mut first);
    record(&mut first, &mut history);
    let mut finished: Option<(u64, u32)> = None;
    let mut level = vec![first];
    while !level.is_empty() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return None;
        }
        let mut found: SetMap<usize> = SetMap::default();
        let mut next: Vec<Candidate> = Vec::new();
        for candidate in &level {
            if candidate.state.count == n {
                if finished.is_none_or(|(peak, _)| candidate.peak < peak) {
                    finished = Some((candidate.peak, candidate.history));
                }
                continue;
            }
            for &v in &candidate.ready {
                let v = v as usize;
                let peak = graph.step_cost(&candidate.state, v).max(candidate.peak);
                if finished.is_some_and(|(best, _)| peak >= best) {
                    continue;
                }
                let state = graph.after(&candidate.state, v);
                let ready = graph.ready_after(&candidate.ready, v, &state);
                let mut child = Candidate {
                    state,
                    ready,
                    peak,
                    history: candidate.history,
                    pending: vec![v as u32],
                    order: next.len(),
                };
                run_dominant(graph, &mut child);
                match found.get(&child.state.set) {
                    Some(&k) => {
                        let old = &next[k];
                        if (child.peak, child.state.resident) < (old.peak, old.state.resident) {
                            child.order = old.order;
                            next[k] = child;
                        }
                    }
                    None => {
                        found.insert(child.state.set.clone(), next.len());
                        next.push(child);
                    }
                }
            }
        }
        next.sort_by_key(|c| (c.peak, c.state.resident, c.order));
        next.truncate(width.max(1));
        for candidate in &mut next {
            record(candidate, &mut history);
        }
        level = next;
    }
    let (_, mut entry) = finished?;
    let mut order = Vec::with_capacity(n);
    while history[entry as usize].0 != u32::MAX {
        order.push(history[entry as usize].1 as usize);
        entry = history[entry as usize].0;
    }
    order.reverse();
    let load = graph.order_load(&order).ok()?;
    Some((order, load))
}

/// Runs dominant operators on `candidate` while there are any.
fn run_dominant(graph: &OpGraph, candidate: &mut Candidate) {
    while let Some(v) = graph.dominant(&candidate.state, &candidate.ready, candidate.peak) {
        let state = graph.after(&candidate.state, v);
        candidate.ready = graph.ready_after(&candidate.ready, v, &state);
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
