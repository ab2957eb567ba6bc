//! The operator graph and the cost of an order: tensors, dependencies, resident bytes, and
//! the sets of operators run.

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
    pub(super) n: usize,
    /// Words per set of operators.
    pub(super) words: usize,
    /// Each operator's direct predecessors (data and pinned order).
    pub(super) preds: Vec<Vec<u32>>,
    /// Each operator's direct successors.
    pub(super) successors: Vec<Vec<u32>>,
    /// A random key per operator: a set's hash is the XOR of its operators' keys.
    pub(super) keys: Vec<u64>,
    /// Bytes allocated while each operator runs (its outputs that are not graph inputs).
    pub(super) new_bytes: Vec<u64>,
    /// Bytes each operator reads (distinct tensors, graph inputs that are also outputs left out).
    pub(super) read_bytes: Vec<u64>,
    /// Of those, the bytes that stay after it (outputs read later or graph outputs).
    pub(super) kept_bytes: Vec<u64>,
    /// Each operator's freeable inputs: tensors of nonzero size that are not graph outputs.
    pub(super) freeable: Vec<Vec<u32>>,
    /// Each tensor's size in bytes (0 for constants).
    pub(super) sizes: Vec<u64>,
    /// Operators that take no time step.
    pub(super) folded: Vec<bool>,
    /// Each tensor's distinct readers.
    pub(super) readers: Vec<Vec<u32>>,
    /// Resident bytes before any operator runs.
    pub(super) initial_resident: u64,
    /// Bytes live at the first step (of an operator that is not folded) only: unread graph
    /// inputs that are not outputs.
    pub(super) first_step_extra: u64,
    /// A lower bound on the LOAD of every valid order.
    pub(super) lower_bound: u64,
    /// The operators in the given order, when that order is valid.
    pub(super) given_order_valid: bool,
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
    pub(super) fn available(&self, set: &[u64], v: usize) -> bool {
        self.preds[v].iter().all(|&p| contains(set, p as usize))
    }

    /// The bytes live while `v` runs after the operators of `state` (a folded operator takes no
    /// step, but costs no more than the next step).
    pub(super) fn step_cost(&self, state: &State, v: usize) -> u64 {
        let extra = if state.stepped || self.folded[v] {
            0
        } else {
            self.first_step_extra
        };
        state.resident + self.new_bytes[v] + extra
    }

    /// The resident bytes `v` frees when it runs after the operators of `set`: its inputs whose
    /// other readers have all run.
    pub(super) fn freed(&self, set: &[u64], v: usize) -> u64 {
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
    pub(super) fn ready(&self, set: &[u64], allowed: Option<&[u64]>) -> Vec<u32> {
        (0..self.n)
            .filter(|&v| allowed.is_none_or(|a| contains(a, v)))
            .filter(|&v| !contains(set, v) && self.available(set, v))
            .map(|v| v as u32)
            .collect()
    }

    /// The operators ready after `v` runs (`state` is after it, `ready` was before it), among
    /// `allowed`.
    pub(super) fn ready_after(
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
    pub(super) fn dominant(&self, state: &State, ready: &[u32], peak: u64) -> Option<usize> {
        ready.iter().map(|&v| v as usize).find(|&v| {
            self.step_cost(state, v) <= peak && self.kept_bytes[v] <= self.freed(&state.set, v)
        })
    }

    /// The state after `v` runs.
    pub(super) fn after(&self, state: &State, v: usize) -> State {
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
    pub(super) fn compute_lower_bound(
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
pub(super) struct Tensors {
    pub(super) is_input: Vec<bool>,
    pub(super) is_output: Vec<bool>,
    pub(super) producer: Vec<Option<u32>>,
    pub(super) readers: Vec<Vec<u32>>,
}

impl Tensors {
    /// Indexes `count` tensors; errors for an index out of range or a tensor produced twice.
    pub(super) fn index(
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
pub(super) fn dependencies(
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
pub(super) struct OperatorBytes {
    pub(super) new: Vec<u64>,
    pub(super) kept: Vec<u64>,
    pub(super) read: Vec<u64>,
    pub(super) freeable: Vec<Vec<u32>>,
}

impl OperatorBytes {
    pub(super) fn of(operations: &[Operation], sizes: &[u64], tensors: &Tensors) -> OperatorBytes {
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
pub(super) const MAX_OPERATORS_FOR_ANCESTRY: usize = 8192;

/// The operators run so far and the bytes that stay.
#[derive(Clone, Debug)]
pub(super) struct State {
    pub(super) set: Box<[u64]>,
    pub(super) resident: u64,
    pub(super) count: usize,
    /// Whether an operator that takes a step has run.
    pub(super) stepped: bool,
    /// The XOR of the operators' keys ([`OpGraph::keys`]).
    pub(super) hash: u64,
}

impl State {
    pub(super) fn empty(graph: &OpGraph) -> State {
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
pub(super) fn operator_keys(n: usize) -> Vec<u64> {
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

pub(super) fn contains(set: &[u64], v: usize) -> bool {
    set[v / 64] >> (v % 64) & 1 == 1
}

pub(super) fn insert(set: &mut [u64], v: usize) {
    set[v / 64] |= 1 << (v % 64);
}

/// A topological order of the operators (smallest index first among the ready ones), or `None`
/// when there is a cycle.
pub(super) fn topological_order(preds: &[Vec<u32>]) -> Option<Vec<usize>> {
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
