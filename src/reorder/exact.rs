//! The exact search: best-first over the sets of operators run, smallest peak first.
//!
//! A set's future depends only on the set (the resident bytes follow from it), so the cheapest
//! way to reach it is the only one worth expanding: the first time a set leaves the queue its
//! peak is the smallest (peaks only grow along a path, as in Dijkstra's algorithm with `max` for
//! `+`). Peaks below the graph's lower bound count as the bound: every order pays it anyway, and
//! the ties this makes let the dominance rule below fire more often.
//!
//! Dominance ([`OpGraph::dominant`]): an available operator that costs no more than the peak
//! already paid and frees at least the bytes it keeps runs next without branching.

use super::graph::{OpGraph, State};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

/// How the exact search ended.
pub(super) enum Result {
    /// An order below the upper bound, proven minimal.
    Found(Vec<usize>, u64),
    /// No order is below the upper bound: the bound is the minimum.
    NoBetter,
    /// The state or time limit came first.
    GaveUp {
        /// The time limit (rather than the state limit) stopped it.
        timed_out: bool,
    },
}

/// The outcome and the sets kept.
pub(super) struct Outcome {
    pub(super) result: Result,
    pub(super) states: u64,
}

/// A set reached: the smallest peak found to it and how.
struct Node {
    peak: u64,
    resident: u64,
    hash: u64,
    stepped: bool,
    count: u32,
    parent: u32,
    op: u32,
    closed: bool,
}

/// A queue entry: smallest peak first, then the most operators run (towards a complete order),
/// then the fewest resident bytes, then first pushed.
#[derive(PartialEq, Eq)]
struct Entry {
    peak: u64,
    count: u32,
    resident: u64,
    seq: u64,
    node: u32,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .peak
            .cmp(&self.peak)
            .then(self.count.cmp(&other.count))
            .then(other.resident.cmp(&self.resident))
            .then(other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A fast hasher for sets of operators (FxHash's multiply-rotate).
#[derive(Default)]
pub(super) struct SetHasher(u64);

impl Hasher for SetHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }
}

/// Hash maps keyed by sets of operators.
pub(super) type SetMap<V> = HashMap<Box<[u64]>, V, BuildHasherDefault<SetHasher>>;

/// Searches for an order with LOAD below `upper`; gives up past `deadline` or `max_states`.
pub(super) fn search(
    graph: &OpGraph,
    upper: u64,
    deadline: Option<Instant>,
    max_states: usize,
) -> Outcome {
    let window = Window {
        start: State::empty(graph),
        allowed: None,
        target: graph.n,
    };
    search_from(graph, window, upper, deadline, max_states)
}

/// Where a search starts and ends: from `start`, running only `allowed` operators (`None`:
/// all) until `target` operators have run in all.
pub(super) struct Window<'a> {
    pub(super) start: State,
    pub(super) allowed: Option<&'a [u64]>,
    pub(super) target: usize,
}

/// [`search`] from a window's start to its end: the order found is the window's operators
/// only, and its peak the largest of their steps' costs (at least the graph's lower bound).
pub(super) fn search_from(
    graph: &OpGraph,
    window: Window<'_>,
    upper: u64,
    deadline: Option<Instant>,
    max_states: usize,
) -> Outcome {
    let Window {
        start,
        allowed,
        target,
    } = window;
    let mut reached = Reached::default();
    let mut queue = BinaryHeap::new();
    let mut seq = 0u64;
    let first = reached.add(&start, graph.lower_bound, u32::MAX, u32::MAX, false);
    queue.push(reached.entry(first, seq));
    let mut pops = 0u64;
    let give_up = |timed_out: bool, reached: &Reached| Outcome {
        result: Result::GaveUp { timed_out },
        states: reached.nodes.len() as u64,
    };
    'pop: while let Some(entry) = queue.pop() {
        let id = entry.node as usize;
        if reached.nodes[id].closed || reached.nodes[id].peak != entry.peak {
            continue;
        }
        pops += 1;
        if pops.is_multiple_of(256) && deadline.is_some_and(|d| Instant::now() >= d) {
            return give_up(true, &reached);
        }
        reached.nodes[id].closed = true;
        let peak = entry.peak;
        let mut state = reached.state(id);
        let mut ready = graph.ready(&state.set, allowed);
        let mut current = id as u32;
        // Dominant choices: run them without branching.
        loop {
            if state.count == target {
                return Outcome {
                    result: Result::Found(path(&reached.nodes, current as usize), peak),
                    states: reached.nodes.len() as u64,
                };
            }
            let Some(v) = graph.dominant(&state, &ready, peak) else {
                break;
            };
            let next = graph.after(&state, v);
            current = match reached.index.get(&next.set) {
                Some(&other) if reached.nodes[other as usize].closed => continue 'pop,
                Some(&other) => {
                    // Reached before but not expanded: this path is at least as cheap.
                    reached.update(other, peak, current, v as u32);
                    reached.nodes[other as usize].closed = true;
                    other
                }
                None if reached.nodes.len() >= max_states => return give_up(false, &reached),
                None => reached.add(&next, peak, current, v as u32, true),
            };
            ready = graph.ready_after(&ready, v, &next, allowed);
            state = next;
        }
        // Branch on every ready operator.
        for &v in &ready {
            let v = v as usize;
            let cost = graph.step_cost(&state, v).max(peak);
            if cost >= upper {
                continue;
            }
            let next = graph.after(&state, v);
            if next.count < target && next.resident >= upper {
                continue;
            }
            let node = match reached.index.get(&next.set) {
                Some(&other) => {
                    let known = &reached.nodes[other as usize];
                    if known.closed || known.peak <= cost {
                        continue;
                    }
                    reached.update(other, cost, current, v as u32);
                    other
                }
                None if reached.nodes.len() >= max_states => return give_up(false, &reached),
                None => reached.add(&next, cost, current, v as u32, false),
            };
            seq += 1;
            queue.push(reached.entry(node, seq));
        }
    }
    Outcome {
        result: Result::NoBetter,
        states: reached.nodes.len() as u64,
    }
}

/// The sets reached so far: a node per set, and the set of each node.
#[derive(Default)]
struct Reached {
    nodes: Vec<Node>,
    index: SetMap<u32>,
    sets: Vec<Box<[u64]>>,
}

impl Reached {
    /// A new node for `state`, reached from `parent` by `op` with `peak` paid.
    fn add(&mut self, state: &State, peak: u64, parent: u32, op: u32, closed: bool) -> u32 {
        self.nodes.push(Node {
            peak,
            resident: state.resident,
            hash: state.hash,
            stepped: state.stepped,
            count: state.count as u32,
            parent,
            op,
            closed,
        });
        let id = (self.nodes.len() - 1) as u32;
        self.index.insert(state.set.clone(), id);
        self.sets.push(state.set.clone());
        id
    }

    /// A cheaper way to node `id`: from `parent` by `op` with `peak` paid.
    fn update(&mut self, id: u32, peak: u64, parent: u32, op: u32) {
        let node = &mut self.nodes[id as usize];
        node.peak = peak;
        node.parent = parent;
        node.op = op;
    }

    /// The state of node `id`.
    fn state(&self, id: usize) -> State {
        let node = &self.nodes[id];
        State {
            set: self.sets[id].clone(),
            resident: node.resident,
            count: node.count as usize,
            stepped: node.stepped,
            hash: node.hash,
        }
    }

    /// The queue entry of node `id`.
    fn entry(&self, id: u32, seq: u64) -> Entry {
        let node = &self.nodes[id as usize];
        Entry {
            peak: node.peak,
            count: node.count,
            resident: node.resident,
            seq,
            node: id,
        }
    }
}

/// The operators run on the way to `node`, first to last.
fn path(nodes: &[Node], mut node: usize) -> Vec<usize> {
    let mut order = Vec::new();
    while nodes[node].parent != u32::MAX {
        order.push(nodes[node].op as usize);
        node = nodes[node].parent as usize;
    }
    order.reverse();
    order
}
