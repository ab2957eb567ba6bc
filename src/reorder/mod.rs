//! Operator reordering: the execution order of a model's operators with the smallest LOAD.
//!
//! LOAD, the peak over time of the bytes of the buffers live at once, is a floor no offset
//! assignment can beat, and it depends on the order the operators run in. [`reorder`] searches
//! the topological orders of an [`OpGraph`] for one with the smallest LOAD.
//!
//! # The cost of an order
//!
//! The lifetimes are those of [`crate::import`]: with `S` the operators run before operator `v`,
//! the bytes live while `v` runs are
//!
//! - every graph input that is a graph output or has a reader outside `S` (the graph inputs
//!   nobody reads and that are not outputs only at the first step);
//! - (an operator marked [`Operation::folded`] computes constants at load time and takes no
//!   step; it only orders its readers after it);
//! - every tensor an operator of `S` produced that is a graph output or has a reader outside
//!   `S` (`v` included);
//! - every tensor `v` produces.
//!
//! So the bytes that stay after `v` (the *resident* bytes) depend only on the set of operators
//! run, not on their order, and the LOAD of an order is the largest of its steps' costs.
//!
//! # What the runtime needs
//!
//! An order is valid when every operator comes after the producers of the tensors it reads, and
//! the operators marked [`Operation::pinned`] (side effects: state, calls, custom code) keep
//! their relative order. Graph inputs are there from the start and graph outputs stay to the
//! end in every order; tensors without a producer (weights, constants) cost nothing.
//!
//! # The search
//!
//! Exact for small graphs, anytime for large ones, with a time limit and a state limit:
//!
//! 1. The model's own order is the first candidate, and `max(over operators v, the bytes that
//!    must be live while v runs in every order)` a lower bound; an order at the bound is proven
//!    minimal.
//! 2. Beam searches over the sets of operators run (width 1 is the greedy order: the cheapest
//!    step, then the fewest resident bytes), widths 1, 4, 16.
//! 3. An exact best-first search over the same sets, memoised (an order's future depends only on
//!    the set run, so each set is expanded once, with the smallest peak that reaches it),
//!    pruned by the best order known, with a dominance rule: an available operator that frees
//!    at least what it keeps and costs no more than the peak already paid runs next without
//!    branching. When it ends, the answer is proven minimal.
//! 4. If it runs out of states or time first: windows of the best order around its most
//!    expensive steps, each reordered exactly with the rest fixed, while that helps; then wider
//!    beams (64, 128, ... up to [`ReorderOptions::max_beam_width`]), each new best order
//!    improved by windows in turn, until the limit.
//!
//! Everything is deterministic except where the clock cuts a phase short; without a time limit
//! ([`ReorderOptions::timeout`] `None`) the result depends only on the graph and the options.
//! The order returned is never worse than the model's own order.

mod exact;
mod heuristic;

use std::time::{Duration, Instant};

/// One operator: the tensors it reads and writes, by index into [`OpGraph`]'s tensors.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Operation {
    /// Tensors read (a tensor read twice counts once).
    pub inputs: Vec<usize>,
    /// Tensors written.
    pub outputs: Vec<usize>,
    /// Has side effects: pinned operators keep their relative order.
    pub pinned: bool,
    /// Computes constants once, at load time (the importer's folded operators): it takes no
    /// time step, but its readers still come after it.
    pub folded: bool,
}

/// Why an [`OpGraph`] cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphError(
    /// What is wrong, in words.
    pub String,
);

impl std::fmt::Display for GraphError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GraphError {}

/// A dataflow graph of operators over sized tensors, checked and indexed for the search.
#[derive(Clone, Debug)]
pub struct OpGraph {
    /// Operator count.
    n: usize,
    /// Words per set of operators.
    words: usize,
    /// Each operator's direct predecessors (data and pinned order).
    preds: Vec<Vec<u32>>,
    /// Each operator's direct successors.
    successors: Vec<Vec<u32>>,
    /// A random key per operator: a set's hash is the XOR of its operators' keys.
    keys: Vec<u64>,
    /// Bytes allocated while each operator runs (its outputs that are not graph inputs).
    new_bytes: Vec<u64>,
    /// Bytes each operator reads (distinct tensors, graph inputs that are also outputs left out).
    read_bytes: Vec<u64>,
    /// Of those, the bytes that stay after it (outputs read later or graph outputs).
    kept_bytes: Vec<u64>,
    /// Each operator's freeable inputs: tensors of nonzero size that are not graph outputs.
    freeable: Vec<Vec<u32>>,
    /// Each tensor's size in bytes (0 for constants).
    sizes: Vec<u64>,
    /// Operators that take no time step.
    folded: Vec<bool>,
    /// Each tensor's distinct readers.
    readers: Vec<Vec<u32>>,
    /// Resident bytes before any operator runs.
    initial_resident: u64,
    /// Bytes live at the first step (of an operator that is not folded) only: unread graph
    /// inputs that are not outputs.
    first_step_extra: u64,
    /// A lower bound on the LOAD of every valid order.
    lower_bound: u64,
    /// The operators in the given order, when that order is valid.
    given_order_valid: bool,
}

impl OpGraph {
    /// Checks and indexes a graph: `sizes[t]` is tensor `t`'s size in bytes (0 for constants
    /// and weights), `operations` in the model's order, `inputs` and `outputs` the graph's
    /// tensors. Errors: a tensor index out of range, a tensor produced twice, a cycle.
    pub fn new(
        sizes: Vec<u64>,
        operations: &[Operation],
        inputs: &[usize],
        outputs: &[usize],
    ) -> Result<OpGraph, GraphError> {
        let count = sizes.len();
        let n = operations.len();
        if n > u32::MAX as usize / 2 {
            return Err(GraphError(format!("{n} operators are too many")));
        }
        let tensors = Tensors::index(count, operations, inputs, outputs)?;
        let preds = dependencies(operations, &tensors.producer)?;
        let topological = topological_order(&preds).ok_or_else(|| {
            GraphError("the operators' dependencies form a cycle: no order can run them".into())
        })?;
        let given_order_valid = preds
            .iter()
            .enumerate()
            .all(|(v, ps)| ps.iter().all(|&p| (p as usize) < v));

        let words = n.div_ceil(64).max(1);
        let mut successors: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (v, ps) in preds.iter().enumerate() {
            for &p in ps {
                successors[p as usize].push(v as u32);
            }
        }
        let bytes = OperatorBytes::of(operations, &sizes, &tensors);
        let mut initial_resident = 0u64;
        let mut first_step_extra = 0u64;
        let mut seen = vec![false; count];
        for &t in inputs {
            if std::mem::replace(&mut seen[t], true) {
                continue;
            }
            if tensors.is_output[t] || !tensors.readers[t].is_empty() {
                initial_resident += sizes[t];
            } else {
                first_step_extra += sizes[t];
            }
        }
        let mut graph = OpGraph {
            n,
            words,
            preds: Vec::new(),
            successors,
            keys: operator_keys(n),
            new_bytes: bytes.new,
            read_bytes: bytes.read,
            kept_bytes: bytes.kept,
            freeable: bytes.freeable,
            sizes,
            folded: operations.iter().map(|op| op.folded).collect(),
            readers: Vec::new(),
            initial_resident,
            first_step_extra,
            lower_bound: 0,
            given_order_valid,
        };
        graph.readers = tensors.readers.clone();
        graph.lower_bound = graph.compute_lower_bound(&preds, &topological, &tensors);
        graph.preds = preds;
        Ok(graph)
    }

    /// The number of operators.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no operators.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// A lower bound on the LOAD of every valid order: for each operator, the bytes that are
    /// live while it runs whatever the order (what it reads and writes, what its ancestors
    /// produced for its descendants, the graph outputs its ancestors produced).
    pub fn lower_bound(&self) -> u64 {
        self.lower_bound
    }

    /// The LOAD of `order` (operator indices), or why it is not a valid order.
    pub fn order_load(&self, order: &[usize]) -> Result<u64, GraphError> {
        Ok(self
            .step_costs(order)?
            .into_iter()
            .max()
            .unwrap_or(self.initial_resident + self.first_step_extra))
    }

    /// The bytes live at each step of `order`, or why it is not a valid order (not a
    /// permutation of the operators, or an operator before one it depends on).
    pub fn step_costs(&self, order: &[usize]) -> Result<Vec<u64>, GraphError> {
        if order.len() != self.n {
            return Err(GraphError(format!(
                "the order has {} operators, the graph {}",
                order.len(),
                self.n
            )));
        }
        let mut state = State::empty(self);
        let mut costs = Vec::with_capacity(self.n);
        for (k, &v) in order.iter().enumerate() {
            if v >= self.n || contains(&state.set, v) {
                return Err(GraphError(format!(
                    "step {k}: operator {v} is out of range or repeated"
                )));
            }
            if !self.available(&state.set, v) {
                return Err(GraphError(format!(
                    "step {k}: operator {v} runs before an operator it depends on"
                )));
            }
            costs.push(self.step_cost(&state, v));
            state = self.after(&state, v);
        }
        Ok(costs)
    }

    /// Whether every predecessor of `v` is in `set`.
    fn available(&self, set: &[u64], v: usize) -> bool {
        self.preds[v].iter().all(|&p| contains(set, p as usize))
    }

    /// The bytes live while `v` runs after the operators of `state` (a folded operator takes no
    /// step, but costs no more than the next step).
    fn step_cost(&self, state: &State, v: usize) -> u64 {
        let extra = if state.stepped || self.folded[v] {
            0
        } else {
            self.first_step_extra
        };
        state.resident + self.new_bytes[v] + extra
    }

    /// The resident bytes `v` frees when it runs after the operators of `set`: its inputs whose
    /// other readers have all run.
    fn freed(&self, set: &[u64], v: usize) -> u64 {
        self.freeable[v]
            .iter()
            .filter(|&&t| {
                self.readers[t as usize]
                    .iter()
                    .all(|&r| r as usize == v || contains(set, r as usize))
            })
            .map(|&t| self.sizes[t as usize])
            .sum()
    }

    /// The operators that can run after those of `set` (in index order), among `allowed`
    /// (`None`: all).
    fn ready(&self, set: &[u64], allowed: Option<&[u64]>) -> Vec<u32> {
        (0..self.n)
            .filter(|&v| allowed.is_none_or(|a| contains(a, v)))
            .filter(|&v| !contains(set, v) && self.available(set, v))
            .map(|v| v as u32)
            .collect()
    }

    /// The operators ready after `v` runs (`state` is after it, `ready` was before it), among
    /// `allowed`.
    fn ready_after(
        &self,
        ready: &[u32],
        v: usize,
        state: &State,
        allowed: Option<&[u64]>,
    ) -> Vec<u32> {
        let mut next: Vec<u32> = ready.iter().copied().filter(|&u| u as usize != v).collect();
        let before = next.len();
        for &s in &self.successors[v] {
            let s_index = s as usize;
            if allowed.is_none_or(|a| contains(a, s_index)) && self.available(&state.set, s_index) {
                next.push(s);
            }
        }
        if next.len() > before {
            next.sort_unstable();
        }
        next
    }

    /// A ready operator worth running next without trying the others (the first by index):
    /// it costs no more than `peak` and frees at least the bytes it keeps. Moving it to the
    /// front of any continuation lowers or keeps every later step's cost (the resident bytes
    /// change by `kept - freed <= 0` whatever runs in between), and its own step costs at most
    /// `peak`, so some best continuation starts with it.
    fn dominant(&self, state: &State, ready: &[u32], peak: u64) -> Option<usize> {
        ready.iter().map(|&v| v as usize).find(|&v| {
            self.step_cost(state, v) <= peak && self.kept_bytes[v] <= self.freed(&state.set, v)
        })
    }

    /// The state after `v` runs.
    fn after(&self, state: &State, v: usize) -> State {
        let mut set = state.set.clone();
        insert(&mut set, v);
        State {
            resident: state.resident + self.kept_bytes[v] - self.freed(&state.set, v),
            set,
            count: state.count + 1,
            stepped: state.stepped || !self.folded[v],
            hash: state.hash ^ self.keys[v],
        }
    }

    /// The bound [`OpGraph::lower_bound`] describes.
    fn compute_lower_bound(
        &self,
        preds: &[Vec<u32>],
        topological: &[usize],
        tensors: &Tensors,
    ) -> u64 {
        let Tensors {
            is_input,
            is_output,
            producer,
            ..
        } = tensors;
        let n = self.n;
        let words = self.words;
        let mut bound = self.initial_resident + self.first_step_extra;
        if n > MAX_OPERATORS_FOR_ANCESTRY {
            // Ancestry takes n^2 bits: only what each operator reads and writes, and the graph
            // inputs that are also outputs.
            let always: u64 = (0..self.sizes.len())
                .filter(|&t| is_input[t] && is_output[t])
                .map(|t| self.sizes[t])
                .sum();
            for v in 0..n {
                let reads: u64 = self.read_bytes[v];
                bound = bound.max(always + reads + self.new_bytes[v]);
            }
            return bound;
        }
        // Ancestors in topological order, descendants in reverse.
        let mut ancestors = vec![vec![0u64; words]; n];
        for &v in topological {
            let mut set = vec![0u64; words];
            for &p in &preds[v] {
                let p = p as usize;
                insert(&mut set, p);
                for (w, a) in set.iter_mut().zip(&ancestors[p]) {
                    *w |= a;
                }
            }
            ancestors[v] = set;
        }
        let mut descendants = vec![vec![0u64; words]; n];
        for &v in topological.iter().rev() {
            let mut set = vec![0u64; words];
            for &s in &self.successors[v] {
                let s = s as usize;
                insert(&mut set, s);
                for (x, d) in set.iter_mut().zip(&descendants[s]) {
                    *x |= d;
                }
            }
            descendants[v] = set;
        }
        for v in 0..n {
            let later = |r: u32| r as usize == v || contains(&descendants[v], r as usize);
            let mut live = 0u64;
            for (t, &size) in self.sizes.iter().enumerate() {
                if size == 0 {
                    continue;
                }
                let needed = is_output[t] || self.readers[t].iter().any(|&r| later(r));
                let there = if is_input[t] {
                    true
                } else {
                    match producer[t] {
                        Some(p) if p as usize == v => {
                            live += size;
                            continue;
                        }
                        Some(p) => contains(&ancestors[v], p as usize),
                        None => false,
                    }
                };
                if there && needed {
                    live += size;
                }
            }
            bound = bound.max(live);
        }
        bound
    }
}

/// What the tensors are: graph inputs, graph outputs, each one's producer and distinct readers.
struct Tensors {
    is_input: Vec<bool>,
    is_output: Vec<bool>,
    producer: Vec<Option<u32>>,
    readers: Vec<Vec<u32>>,
}

impl Tensors {
    /// Indexes `count` tensors; errors for an index out of range or a tensor produced twice.
    fn index(
        count: usize,
        operations: &[Operation],
        inputs: &[usize],
        outputs: &[usize],
    ) -> Result<Tensors, GraphError> {
        let check = |t: usize, what: &str| {
            if t < count {
                Ok(())
            } else {
                Err(GraphError(format!(
                    "{what} names tensor {t}, but there are {count} tensors"
                )))
            }
        };
        let mut is_input = vec![false; count];
        for &t in inputs {
            check(t, "the graph's inputs")?;
            is_input[t] = true;
        }
        let mut is_output = vec![false; count];
        for &t in outputs {
            check(t, "the graph's outputs")?;
            is_output[t] = true;
        }
        let mut producer: Vec<Option<u32>> = vec![None; count];
        let mut readers: Vec<Vec<u32>> = vec![Vec::new(); count];
        for (v, op) in operations.iter().enumerate() {
            for &t in &op.outputs {
                check(t, &format!("operator {v}'s outputs"))?;
                if let Some(p) = producer[t] {
                    if p as usize != v {
                        return Err(GraphError(format!(
                            "tensor {t} is produced by operators {p} and {v}"
                        )));
                    }
                }
                producer[t] = Some(v as u32);
            }
            for &t in &op.inputs {
                check(t, &format!("operator {v}'s inputs"))?;
                if readers[t].last() != Some(&(v as u32)) {
                    readers[t].push(v as u32);
                }
            }
        }
        Ok(Tensors {
            is_input,
            is_output,
            producer,
            readers,
        })
    }
}

/// Each operator's direct predecessors: the producers of what it reads, and the previous pinned
/// operator. An operator reading its own output is an error.
fn dependencies(
    operations: &[Operation],
    producer: &[Option<u32>],
) -> Result<Vec<Vec<u32>>, GraphError> {
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); operations.len()];
    let mut previous_pinned: Option<u32> = None;
    for (v, op) in operations.iter().enumerate() {
        for &t in &op.inputs {
            if let Some(p) = producer[t] {
                if p as usize == v {
                    return Err(GraphError(format!(
                        "operator {v} reads tensor {t}, which it produces itself (a cycle)"
                    )));
                }
                preds[v].push(p);
            }
        }
        if op.pinned {
            if let Some(p) = previous_pinned {
                preds[v].push(p);
            }
            previous_pinned = Some(v as u32);
        }
        preds[v].sort_unstable();
        preds[v].dedup();
    }
    Ok(preds)
}

/// Per operator: the bytes it allocates, keeps and reads, and the inputs it may free.
struct OperatorBytes {
    new: Vec<u64>,
    kept: Vec<u64>,
    read: Vec<u64>,
    freeable: Vec<Vec<u32>>,
}

impl OperatorBytes {
    fn of(operations: &[Operation], sizes: &[u64], tensors: &Tensors) -> OperatorBytes {
        let Tensors {
            is_input,
            is_output,
            producer,
            readers,
        } = tensors;
        let n = operations.len();
        let mut bytes = OperatorBytes {
            new: vec![0; n],
            kept: vec![0; n],
            read: vec![0; n],
            freeable: vec![Vec::new(); n],
        };
        for (v, op) in operations.iter().enumerate() {
            let mut outs = op.outputs.clone();
            outs.sort_unstable();
            outs.dedup();
            for t in outs.into_iter().filter(|&t| !is_input[t]) {
                bytes.new[v] += sizes[t];
                if is_output[t] || !readers[t].is_empty() {
                    bytes.kept[v] += sizes[t];
                }
            }
            let mut ins = op.inputs.clone();
            ins.sort_unstable();
            ins.dedup();
            ins.retain(|&t| is_input[t] || producer[t].is_some());
            bytes.read[v] = ins
                .iter()
                .filter(|&&t| !(is_input[t] && is_output[t]))
                .map(|&t| sizes[t])
                .sum();
            bytes.freeable[v] = ins
                .into_iter()
                .filter(|&t| sizes[t] > 0 && !is_output[t])
                .map(|t| t as u32)
                .collect();
        }
        bytes
    }
}

/// Graphs of more operators get a weaker lower bound: the stronger one needs each operator's
/// ancestors and descendants, `n^2` bits (8 MiB at this size).
const MAX_OPERATORS_FOR_ANCESTRY: usize = 8192;

/// The operators run so far and the bytes that stay.
#[derive(Clone, Debug)]
struct State {
    set: Box<[u64]>,
    resident: u64,
    count: usize,
    /// Whether an operator that takes a step has run.
    stepped: bool,
    /// The XOR of the operators' keys ([`OpGraph::keys`]).
    hash: u64,
}

impl State {
    fn empty(graph: &OpGraph) -> State {
        State {
            set: vec![0u64; graph.words].into_boxed_slice(),
            resident: graph.initial_resident,
            count: 0,
            stepped: false,
            hash: 0,
        }
    }
}

/// A fixed pseudo-random key per operator (splitmix64 from a constant seed).
fn operator_keys(n: usize) -> Vec<u64> {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn contains(set: &[u64], v: usize) -> bool {
    set[v / 64] >> (v % 64) & 1 == 1
}

fn insert(set: &mut [u64], v: usize) {
    set[v / 64] |= 1 << (v % 64);
}

/// A topological order of the operators (smallest index first among the ready ones), or `None`
/// when there is a cycle.
fn topological_order(preds: &[Vec<u32>]) -> Option<Vec<usize>> {
    let n = preds.len();
    let mut waiting: Vec<usize> = preds.iter().map(Vec::len).collect();
    let mut succs: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (v, ps) in preds.iter().enumerate() {
        for &p in ps {
            succs[p as usize].push(v as u32);
        }
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&v| waiting[v] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(v)) = ready.pop() {
        order.push(v);
        for &s in &succs[v] {
            waiting[s as usize] -= 1;
            if waiting[s as usize] == 0 {
                ready.push(std::cmp::Reverse(s as usize));
            }
        }
    }
    (order.len() == n).then_some(order)
}

/// Limits of [`reorder`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReorderOptions {
    /// Wall-clock limit for the whole search (`None`: none; the state limit still applies).
    pub timeout: Option<Duration>,
    /// The most sets of operators the exact search keeps (each costs about `n / 8 + 64` bytes
    /// for `n` operators).
    pub max_states: usize,
    /// The widest beam tried (0: no beam search when the given order is valid, which leaves
    /// the exact search to improve on it alone).
    pub max_beam_width: usize,
}

impl Default for ReorderOptions {
    fn default() -> Self {
        ReorderOptions {
            timeout: Some(Duration::from_secs(10)),
            max_states: 2_000_000,
            max_beam_width: 1024,
        }
    }
}

/// What [`reorder`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reordering {
    /// The operators in the order found.
    pub order: Vec<usize>,
    /// Its LOAD.
    pub load: u64,
    /// The LOAD of the given order (`None` when it is not valid: a reader before its producer,
    /// or pinned operators out of order).
    pub original_load: Option<u64>,
    /// A lower bound on every order's LOAD (equal to `load` when proven minimal).
    pub lower_bound: u64,
    /// Whether `load` is proven minimal.
    pub optimal: bool,
    /// Sets of operators the exact search kept.
    pub states: u64,
    /// Whether the time limit cut the search short.
    pub timed_out: bool,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

/// Searches the valid orders of `graph` for one with the smallest LOAD (see the module docs).
/// Never returns an order worse than the given one when that one is valid; among orders of equal
/// LOAD, the given one is kept.
pub fn reorder(graph: &OpGraph, options: &ReorderOptions) -> Reordering {
    let started = Instant::now();
    let deadline = options.timeout.map(|t| started + t);
    let identity: Vec<usize> = (0..graph.n).collect();
    let original_load = graph.given_order_valid.then(|| {
        graph
            .order_load(&identity)
            .expect("the given order is valid")
    });
    let mut best: Option<(Vec<usize>, u64)> = original_load.map(|load| (identity, load));
    let lower = graph.lower_bound;
    let mut states = 0u64;
    let mut timed_out = false;
    let mut proven = false;
    let done = |best: &Option<(Vec<usize>, u64)>| best.as_ref().is_some_and(|b| b.1 <= lower);
    let consider = |best: &mut Option<(Vec<usize>, u64)>, found: Option<(Vec<usize>, u64)>| {
        if let Some((order, load)) = found {
            if best.as_ref().is_none_or(|b| load < b.1) {
                *best = Some((order, load));
            }
        }
    };
    let expired = |deadline: Option<Instant>| deadline.is_some_and(|d| Instant::now() >= d);

    for width in [1usize, 4, 16] {
        if done(&best) || (best.is_some() && (expired(deadline) || width > options.max_beam_width))
        {
            break;
        }
        // Until some order is known, no clock: a graph always gets an order.
        let limit = if best.is_some() { deadline } else { None };
        let found = heuristic::beam(graph, width, limit);
        consider(&mut best, found);
    }
    if done(&best) {
        proven = true;
    } else if !expired(deadline) {
        // The exact search gets half of what is left, so that wider beams can follow.
        let exact_deadline = deadline.map(|d| {
            let now = Instant::now();
            now + d.saturating_duration_since(now) / 2
        });
        let upper = best.as_ref().map_or(u64::MAX, |b| b.1);
        let budget = options.max_states / (1 + graph.words / 2);
        let outcome = exact::search(graph, upper, exact_deadline, budget);
        states = outcome.states;
        match outcome.result {
            exact::Result::Found(order, load) => {
                consider(&mut best, Some((order, load)));
                proven = true;
            }
            exact::Result::NoBetter => proven = best.is_some(),
            exact::Result::GaveUp { timed_out: t } => timed_out |= t,
        }
    } else {
        timed_out = true;
    }
    // Not proven: improve the best order by windows, then wider beams, each improved in turn.
    let mut width = 64usize;
    let mut polish = !proven && !done(&best);
    while !proven && !done(&best) {
        if best.is_some() && expired(deadline) {
            timed_out = true;
            break;
        }
        if polish {
            // On a copy: a window may change the order without lowering the LOAD.
            if let Some((order, load)) = best.as_ref() {
                let mut order = order.clone();
                let load = heuristic::improve(graph, &mut order, *load, deadline);
                consider(&mut best, Some((order, load)));
            }
            polish = false;
            continue;
        }
        if width > options.max_beam_width {
            break;
        }
        let before = best.as_ref().map(|b| b.1);
        let found = heuristic::beam(graph, width, deadline);
        consider(&mut best, found);
        polish = best.as_ref().map(|b| b.1) != before;
        width *= 2;
    }
    if expired(deadline) && !proven && !done(&best) {
        timed_out = true;
    }
    if done(&best) {
        proven = true;
    }
    let (order, load) = best.expect("a graph without a cycle has an order");
    Reordering {
        order,
        load,
        original_load,
        lower_bound: if proven { load } else { lower },
        optimal: proven,
        states,
        timed_out,
        elapsed: started.elapsed(),
    }
}
