//! Operator reordering (`telamalloc::reorder`, `telamalloc::import::reorder`, `telamalloc
//! import --reorder`, `telamalloc plan`): the exact search against brute force over every
//! topological order of small random graphs, the cost model against the importer's lifetimes,
//! reordered `.tflite` files read back, and errors (never panics) for bad graphs and files.

use crate::common;

use common::tflite::{tflite, ModelTensor};
use common::{telamalloc_output, Scratch};
use std::collections::HashSet;
use std::time::Duration;
use telamalloc::analysis::Timeline;
use telamalloc::export::{read_offline_plan, write_operator_order, PlanTarget};
use telamalloc::import::reorder::reorder_bytes;
use telamalloc::import::{import_bytes, ImportOptions, ModelFormat};
use telamalloc::reorder::{reorder, OpGraph, Operation, ReorderOptions};
use telamalloc::{Goal, Solver, Status};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A graph as plain lists: tensor sizes (0 = constant), operators, graph inputs and outputs.
#[derive(Clone, Debug)]
struct Dag {
    sizes: Vec<u64>,
    operations: Vec<Operation>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
}

impl Dag {
    fn graph(&self) -> OpGraph {
        OpGraph::new(
            self.sizes.clone(),
            &self.operations,
            &self.inputs,
            &self.outputs,
        )
        .expect("a valid graph")
    }
}

/// A random graph of `ops` operators in a valid order: graph inputs, a few constants, operators
/// reading 1 to 3 earlier tensors (sometimes one twice, sometimes a constant) and writing 1 or 2,
/// some outputs never read, some pinned.
fn random_dag(rng: &mut Rng, ops: usize) -> Dag {
    let mut sizes = Vec::new();
    let mut available = Vec::new();
    let inputs: Vec<usize> = (0..1 + rng.below(2) as usize)
        .map(|_| {
            sizes.push(16 * (1 + rng.below(8)));
            sizes.len() - 1
        })
        .collect();
    available.extend(&inputs);
    let constants: Vec<usize> = (0..2)
        .map(|_| {
            sizes.push(0);
            sizes.len() - 1
        })
        .collect();
    let mut operations = Vec::new();
    for _ in 0..ops {
        let mut reads = Vec::new();
        for _ in 0..1 + rng.below(3) {
            reads.push(available[rng.below(available.len() as u64) as usize]);
        }
        if rng.below(4) == 0 {
            reads.push(reads[0]);
        }
        if rng.below(5) == 0 {
            reads.push(constants[0]);
        }
        let writes: Vec<usize> = (0..1 + rng.below(2) as usize)
            .map(|_| {
                sizes.push(16 * (1 + rng.below(10)));
                sizes.len() - 1
            })
            .collect();
        available.extend(&writes);
        operations.push(Operation {
            inputs: reads,
            outputs: writes,
            pinned: rng.below(6) == 0,
            folded: false,
        });
    }
    let produced: Vec<usize> = operations.iter().flat_map(|o| o.outputs.clone()).collect();
    let mut outputs = vec![*produced.last().expect("at least one operator")];
    if rng.below(3) == 0 {
        outputs.push(produced[rng.below(produced.len() as u64) as usize]);
    }
    if rng.below(8) == 0 {
        outputs.push(inputs[0]);
    }
    Dag {
        sizes,
        operations,
        inputs,
        outputs,
    }
}

/// The LOAD of `order` by the importer's conventions, computed independently of the library:
/// lifetimes `[lower, upper)` per tensor, then the largest sum over the steps.
fn naive_load(dag: &Dag, order: &[usize]) -> u64 {
    let n = order.len();
    let mut step = vec![0; n];
    for (k, &op) in order.iter().enumerate() {
        step[op] = k;
    }
    let mut live = vec![0u64; n];
    for (t, &size) in dag.sizes.iter().enumerate() {
        let producer = dag.operations.iter().position(|o| o.outputs.contains(&t));
        let is_input = dag.inputs.contains(&t);
        if size == 0 || (producer.is_none() && !is_input) {
            continue;
        }
        let lower = if is_input { 0 } else { step[producer.unwrap()] };
        let last_read = (0..dag.operations.len())
            .filter(|&o| dag.operations[o].inputs.contains(&t))
            .map(|o| step[o])
            .max();
        let upper = if dag.outputs.contains(&t) {
            n
        } else {
            last_read.map_or(lower, |l| l.max(lower)) + 1
        };
        for slot in &mut live[lower..upper.max(lower + 1)] {
            *slot += size;
        }
    }
    live.into_iter().max().unwrap_or(0)
}

/// Whether `order` runs every operator once, after the producers of what it reads, with the
/// pinned operators in their original order.
fn valid_order(dag: &Dag, order: &[usize]) -> bool {
    let mut done = vec![false; dag.operations.len()];
    let mut last_pinned = None;
    for &op in order {
        if op >= done.len() || done[op] {
            return false;
        }
        let ready = dag.operations[op].inputs.iter().all(|&t| {
            dag.operations
                .iter()
                .position(|o| o.outputs.contains(&t))
                .is_none_or(|p| done[p])
        });
        if !ready {
            return false;
        }
        if dag.operations[op].pinned {
            if last_pinned.is_some_and(|p| p > op) {
                return false;
            }
            last_pinned = Some(op);
        }
        done[op] = true;
    }
    order.len() == done.len()
}

/// The smallest LOAD over every valid order, by enumerating them all.
fn brute_force(dag: &Dag) -> u64 {
    let n = dag.operations.len();
    let mut best = u64::MAX;
    let mut order = Vec::with_capacity(n);
    let mut used = vec![false; n];
    fn extend(dag: &Dag, order: &mut Vec<usize>, used: &mut Vec<bool>, best: &mut u64) {
        if order.len() == used.len() {
            *best = (*best).min(naive_load(dag, order));
            return;
        }
        for op in 0..used.len() {
            if used[op] {
                continue;
            }
            order.push(op);
            if valid_prefix(dag, order) {
                used[op] = true;
                extend(dag, order, used, best);
                used[op] = false;
            }
            order.pop();
        }
    }
    extend(dag, &mut order, &mut used, &mut best);
    best
}

/// [`valid_order`] for a prefix.
fn valid_prefix(dag: &Dag, prefix: &[usize]) -> bool {
    let done: HashSet<usize> = prefix[..prefix.len() - 1].iter().copied().collect();
    let op = *prefix.last().unwrap();
    let ready = dag.operations[op].inputs.iter().all(|&t| {
        dag.operations
            .iter()
            .position(|o| o.outputs.contains(&t))
            .is_none_or(|p| done.contains(&p))
    });
    let pinned_ok = !dag.operations[op].pinned
        || (0..op).all(|p| !dag.operations[p].pinned || done.contains(&p));
    ready && pinned_ok
}

fn no_clock(max_beam_width: usize) -> ReorderOptions {
    ReorderOptions {
        timeout: None,
        max_beam_width,
        ..ReorderOptions::default()
    }
}

#[test]
fn the_search_is_exact_against_brute_force_on_small_random_graphs() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut improved = 0;
    for case in 0..600 {
        let ops = 1 + (case % 8);
        let dag = random_dag(&mut rng, ops);
        let graph = dag.graph();
        let identity: Vec<usize> = (0..ops).collect();
        let given = naive_load(&dag, &identity);
        assert_eq!(graph.order_load(&identity).unwrap(), given, "{dag:?}");
        let best = brute_force(&dag);
        assert!(graph.lower_bound() <= best, "{dag:?}");
        // The whole search, and the exact search alone (no beams).
        for width in [1024, 0] {
            let found = reorder(&graph, &no_clock(width));
            assert!(found.optimal, "case {case}: {dag:?}");
            assert_eq!(found.load, best, "case {case}, width {width}: {dag:?}");
            assert_eq!(found.lower_bound, best);
            assert_eq!(found.original_load, Some(given));
            assert!(valid_order(&dag, &found.order), "{:?} {dag:?}", found.order);
            assert_eq!(naive_load(&dag, &found.order), best, "{dag:?}");
            if best == given {
                assert_eq!(found.order, identity, "a tie keeps the given order");
            }
        }
        // With no room for the exact search over the whole graph and no beams, the windows
        // (here one window covers the graph) still find the best order.
        let windows_only = ReorderOptions {
            timeout: None,
            max_states: 1,
            max_beam_width: 0,
        };
        let found = reorder(&graph, &windows_only);
        assert_eq!(found.load, best, "case {case}: {dag:?}");
        assert!(valid_order(&dag, &found.order));
        assert!(found.lower_bound <= best && (!found.optimal || found.lower_bound == best));
        improved += usize::from(best < given);
    }
    // The generator makes graphs where order matters.
    assert!(
        improved > 100,
        "only {improved} of 600 graphs had a better order"
    );
}

#[test]
fn a_branching_graph_runs_one_branch_at_a_time() {
    // x -> a1 -> a2, x -> b1 -> b2, (a2, b2) -> out; the model runs a1, b1 (both big) first.
    let dag = Dag {
        sizes: vec![16, 100, 100, 10, 10, 16],
        operations: vec![
            op(&[0], &[1]),
            op(&[0], &[2]),
            op(&[1], &[3]),
            op(&[2], &[4]),
            op(&[3, 4], &[5]),
        ],
        inputs: vec![0],
        outputs: vec![5],
    };
    let found = reorder(&dag.graph(), &no_clock(1024));
    assert_eq!(found.original_load, Some(216));
    assert_eq!(found.load, 126);
    assert!(found.optimal);
    assert_eq!(found.order, vec![0, 2, 1, 3, 4]);
}

#[test]
fn pinned_operators_keep_their_order() {
    // The same graph with the two big operators pinned: they may not swap, and nothing is
    // better than the model's order.
    let mut operations = vec![
        op(&[0], &[1]),
        op(&[0], &[2]),
        op(&[1], &[3]),
        op(&[2], &[4]),
        op(&[3, 4], &[5]),
    ];
    operations[0].pinned = true;
    operations[1].pinned = true;
    operations[2].pinned = true;
    let dag = Dag {
        sizes: vec![16, 100, 100, 10, 10, 16],
        operations,
        inputs: vec![0],
        outputs: vec![5],
    };
    let found = reorder(&dag.graph(), &no_clock(1024));
    assert_eq!(found.load, 216);
    assert_eq!(found.order, vec![0, 1, 2, 3, 4]);
    assert!(found.optimal);
}

fn op(inputs: &[usize], outputs: &[usize]) -> Operation {
    Operation {
        inputs: inputs.to_vec(),
        outputs: outputs.to_vec(),
        ..Operation::default()
    }
}

#[test]
fn bad_graphs_are_errors() {
    let cycle = OpGraph::new(vec![8, 8], &[op(&[1], &[0]), op(&[0], &[1])], &[], &[1]);
    assert!(cycle.unwrap_err().0.contains("cycle"));
    let itself = OpGraph::new(vec![8], &[op(&[0], &[0])], &[], &[0]);
    assert!(itself.unwrap_err().0.contains("cycle"));
    let twice = OpGraph::new(vec![8, 8], &[op(&[0], &[1]), op(&[0], &[1])], &[0], &[1]);
    assert!(twice
        .unwrap_err()
        .0
        .contains("produced by operators 0 and 1"));
    let range = OpGraph::new(vec![8], &[op(&[3], &[0])], &[], &[0]);
    assert!(range.unwrap_err().0.contains("tensor 3"));
    // A graph whose given order is not valid still gets an order.
    let backwards =
        OpGraph::new(vec![8, 8, 8], &[op(&[1], &[2]), op(&[0], &[1])], &[0], &[2]).unwrap();
    let found = reorder(&backwards, &no_clock(1024));
    assert_eq!(found.original_load, None);
    assert_eq!(found.order, vec![1, 0]);
    assert!(backwards.order_load(&[0, 1]).is_err());
    assert!(backwards.order_load(&[1]).is_err());
}

/// `blocks` inception-like blocks in a row: 4 branches of 3 operators each between a split and
/// a join, with sizes that make the order matter; `1 + 14 * blocks` operators.
fn inception(blocks: usize) -> Dag {
    let mut rng = Rng(0xb10c_5eed);
    let mut sizes = vec![256];
    let mut operations = vec![];
    let mut current = 0;
    let fresh = |sizes: &mut Vec<u64>, size: u64| {
        sizes.push(size);
        sizes.len() - 1
    };
    let stem = fresh(&mut sizes, 256);
    operations.push(op(&[current], &[stem]));
    current = stem;
    for _ in 0..blocks {
        let split = fresh(&mut sizes, 512);
        operations.push(op(&[current], &[split]));
        let mut ends = vec![];
        for _ in 0..4 {
            let mut t = split;
            for _ in 0..3 {
                let next = fresh(&mut sizes, 64 * (1 + rng.below(16)));
                operations.push(op(&[t], &[next]));
                t = next;
            }
            ends.push(t);
        }
        let join = fresh(&mut sizes, 256);
        operations.push(op(&ends, &[join]));
        current = join;
    }
    Dag {
        sizes,
        operations,
        inputs: vec![0],
        outputs: vec![current],
    }
}

/// A random network-like graph: each operator reads one or two of the last `window` tensors
/// made (a chain with skips and branches, as in residual and inception networks), sizes from 64
/// bytes to 64 KiB.
fn network_dag(rng: &mut Rng, ops: usize, window: usize) -> Dag {
    let mut sizes = vec![1024];
    let mut operations = Vec::new();
    for _ in 0..ops {
        let recent = sizes.len().min(window);
        let mut reads = vec![sizes.len() - 1 - rng.below(recent as u64) as usize];
        if rng.below(3) == 0 {
            reads.push(sizes.len() - 1 - rng.below(recent as u64) as usize);
        }
        sizes.push(64 << rng.below(11));
        operations.push(op(&reads, &[sizes.len() - 1]));
    }
    Dag {
        outputs: vec![sizes.len() - 1],
        sizes,
        operations,
        inputs: vec![0],
    }
}

#[test]
fn sixty_operators_are_solved_exactly() {
    let mut graphs = vec![inception(4)]; // 57 operators
    let mut rng = Rng(0x60_0960);
    for window in [3, 4, 6] {
        for _ in 0..10 {
            graphs.push(network_dag(&mut rng, 60, window));
        }
    }
    let mut improved = 0;
    for dag in &graphs {
        let graph = dag.graph();
        let found = reorder(
            &graph,
            &ReorderOptions {
                timeout: Some(Duration::from_secs(20)),
                ..ReorderOptions::default()
            },
        );
        assert!(found.optimal, "{found:?}");
        let given = found.original_load.unwrap();
        assert!(found.load <= given);
        assert!(valid_order(dag, &found.order));
        assert_eq!(naive_load(dag, &found.order), found.load);
        improved += usize::from(found.load < given);
        eprintln!(
            "{} operators: LOAD {given} -> {} (bound {}), {} states, {:?}",
            graph.len(),
            found.load,
            graph.lower_bound(),
            found.states,
            found.elapsed
        );
    }
    assert!(improved >= 10, "only {improved} graphs improved");
}

const ADD: i32 = 0;
const CONV_2D: i32 = 3;
const DEQUANTIZE: i32 = 6;
const CUSTOM: i32 = 32;

/// The branching model as a `.tflite`: a float16 weight dequantized first (folded), two big
/// branches, a join.
///
/// ```text
/// op0 DEQUANTIZE(w16) -> w
/// op1 CONV_2D(x, w) -> a1 (1x64x64x4)     op2 CONV_2D(x, w) -> b1 (1x64x64x4)
/// op3 CONV_2D(a1, w) -> a2 (1x4x4x4)      op4 CONV_2D(b1, w) -> b2 (1x4x4x4)
/// op5 ADD(a2, b2) -> out
/// ```
fn branching_model() -> Vec<u8> {
    branching_model_with([CONV_2D; 4])
}

/// [`branching_model`] with these builtin codes for op1 to op4.
fn branching_model_with(codes: [i32; 4]) -> Vec<u8> {
    let t = |shape: &[i32], buffer| ModelTensor {
        shape: shape.to_vec(),
        buffer,
    };
    let tensors = [
        t(&[1, 8, 8, 4], 0),   // 0 x
        t(&[4, 1, 1, 4], 1),   // 1 w16 (data)
        t(&[4, 1, 1, 4], 0),   // 2 w
        t(&[1, 64, 64, 4], 0), // 3 a1
        t(&[1, 64, 64, 4], 0), // 4 b1
        t(&[1, 4, 4, 4], 0),   // 5 a2
        t(&[1, 4, 4, 4], 0),   // 6 b2
        t(&[1, 4, 4, 4], 0),   // 7 out
    ];
    let operators = [
        (DEQUANTIZE, vec![1], vec![2]),
        (codes[0], vec![0, 2, -1], vec![3]),
        (codes[1], vec![0, 2, -1], vec![4]),
        (codes[2], vec![3, 2, -1], vec![5]),
        (codes[3], vec![4, 2, -1], vec![6]),
        (ADD, vec![5, 6], vec![7]),
    ];
    tflite(&tensors, &operators, &[0], &[7])
}

#[test]
fn a_reordered_tflite_model_reads_back_in_its_new_order() {
    let model = branching_model();
    let options = ImportOptions::default();
    let limits = no_clock(1024);
    let done = reorder_bytes(&model, ModelFormat::Tflite, "b.tflite", &options, &limits).unwrap();
    let before = Timeline::new(&done.original.problem).load();
    let after = Timeline::new(&done.reordered.problem).load();
    // x 1024, a1 and b1 65536 each, the small ones 256: x, a1 and b1 at op2 before.
    assert_eq!(before, 1024 + 65536 * 2);
    assert_eq!(after, 1024 + 65536 + 256);
    assert!(done.changed && done.search.optimal);
    assert_eq!(done.search.original_load, Some(before));
    assert_eq!(done.search.load, after);
    // The folded DEQUANTIZE stays right before its first reader.
    assert_eq!(done.order, vec![0, 1, 3, 2, 4, 5]);
    let bytes = done.model.as_ref().unwrap();
    let again = import_bytes(bytes, ModelFormat::Tflite, "r.tflite", &options).unwrap();
    assert_eq!(again.problem, done.reordered.problem);
    assert_eq!(again.tensors, done.original.tensors);

    // A plan for the new order, written into the reordered model, reads back.
    let target = PlanTarget::read(bytes, "r.tflite").unwrap();
    let result = Solver::new()
        .solve(target.problem(), Goal::Minimize)
        .unwrap();
    assert_eq!(result.status, Status::Solved);
    let solution = result.solution.unwrap();
    let planned = target.write_plan(bytes, &solution, "s.csv").unwrap();
    assert!(planned.peak < before);
    let plan = read_offline_plan(&planned.bytes, "p.tflite")
        .unwrap()
        .unwrap();
    assert_eq!(plan.offsets.len(), 8);
    let planned_again =
        import_bytes(&planned.bytes, ModelFormat::Tflite, "p.tflite", &options).unwrap();
    assert_eq!(planned_again.problem, done.reordered.problem);

    // Not a permutation: refused, naming the file.
    for order in [
        vec![0, 1, 2],
        vec![0, 1, 2, 3, 4, 4],
        vec![0, 1, 2, 3, 4, 9],
    ] {
        let error = write_operator_order(&model, "b.tflite", &order)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("b.tflite") && error.contains("permutation"),
            "{error}"
        );
    }
}

#[test]
fn custom_operators_keep_their_order_and_a_model_without_a_better_order_keeps_its_own() {
    let options = ImportOptions::default();
    let limits = no_clock(1024);
    // One custom operator (op2) alone constrains nothing: a1's branch still runs first.
    let one = branching_model_with([CONV_2D, CUSTOM, CONV_2D, CONV_2D]);
    let done = reorder_bytes(&one, ModelFormat::Tflite, "c.tflite", &options, &limits).unwrap();
    assert!(done.changed);
    assert_eq!(done.order, vec![0, 1, 3, 2, 4, 5]);
    // All four convolutions custom: they keep their order, and so the model keeps its own.
    let model = branching_model_with([CUSTOM; 4]);
    let kept = reorder_bytes(&model, ModelFormat::Tflite, "c.tflite", &options, &limits).unwrap();
    assert!(!kept.changed);
    assert!(kept.search.optimal);
    assert_eq!(kept.order, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(kept.model.as_deref(), Some(&model[..]));
    assert_eq!(kept.reordered, kept.original);
}

/// A random DAG as a `.tflite` model: tensor `k` of the DAG has shape `[size / 4]` (float32);
/// constants get weight data; a DEQUANTIZE of a weight feeds some operators.
fn dag_model(dag: &Dag) -> Vec<u8> {
    let mut tensors: Vec<ModelTensor> = dag
        .sizes
        .iter()
        .map(|&size| ModelTensor {
            shape: vec![(size / 4).max(1) as i32],
            buffer: u32::from(size == 0),
        })
        .collect();
    // One folded operator: DEQUANTIZE(constant 0) -> a new constant tensor, read by operator 0.
    let folded = tensors.len() as i32;
    tensors.push(ModelTensor {
        shape: vec![4],
        buffer: 0,
    });
    let mut operators = vec![(DEQUANTIZE, vec![2], vec![folded])];
    for (k, o) in dag.operations.iter().enumerate() {
        let mut inputs: Vec<i32> = o.inputs.iter().map(|&t| t as i32).collect();
        if k == 0 {
            inputs.push(folded);
        }
        let code = if o.pinned { CUSTOM } else { CONV_2D };
        operators.push((code, inputs, o.outputs.iter().map(|&t| t as i32).collect()));
    }
    let inputs: Vec<i32> = dag.inputs.iter().map(|&t| t as i32).collect();
    let outputs: Vec<i32> = dag.outputs.iter().map(|&t| t as i32).collect();
    tflite(&tensors, &operators, &inputs, &outputs)
}

#[test]
fn the_cost_model_matches_the_importer_on_random_models() {
    let mut rng = Rng(0xdead_beef_0042);
    let options = ImportOptions {
        alignment: 16,
        ..ImportOptions::default()
    };
    for case in 0..150 {
        let dag = random_dag(&mut rng, 1 + case % 9);
        // The sizes as the importer sees them: float32 of size/4 elements, aligned to 16.
        let model = dag_model(&dag);
        let done = reorder_bytes(
            &model,
            ModelFormat::Tflite,
            "m.tflite",
            &options,
            &no_clock(1024),
        )
        .unwrap();
        let before = Timeline::new(&done.original.problem).load();
        let after = Timeline::new(&done.reordered.problem).load();
        assert_eq!(
            done.search.original_load,
            Some(before),
            "case {case}: {dag:?}"
        );
        assert!(after <= before);
        assert!(done.search.optimal);
        if done.changed {
            assert_eq!(done.search.load, after, "case {case}: {dag:?}");
            assert!(after < before);
            let again = import_bytes(
                done.model.as_ref().unwrap(),
                ModelFormat::Tflite,
                "r.tflite",
                &options,
            )
            .unwrap();
            assert_eq!(again.problem, done.reordered.problem);
        } else {
            assert_eq!(done.search.load, before, "case {case}: {dag:?}");
        }
        // The folded operator (file operator 0) comes right before operator 0 of the DAG.
        let at = done.order.iter().position(|&o| o == 0).unwrap();
        assert_eq!(done.order[at + 1], 1, "case {case}: {:?}", done.order);
    }
}

#[test]
fn corrupt_models_give_errors_naming_the_file() {
    let model = branching_model();
    let options = ImportOptions::default();
    let limits = no_clock(64);
    let mut rng = Rng(0x0bad_f00d);
    for len in 0..model.len() {
        if let Err(e) = reorder_bytes(
            &model[..len],
            ModelFormat::Tflite,
            "cut.tflite",
            &options,
            &limits,
        ) {
            assert!(e.to_string().contains("cut.tflite"), "{e}");
        }
    }
    for _ in 0..3000 {
        let mut bytes = model.clone();
        let at = rng.below(bytes.len() as u64) as usize;
        bytes[at] ^= 1 << rng.below(8);
        if let Err(e) = reorder_bytes(
            &bytes,
            ModelFormat::Tflite,
            "flip.tflite",
            &options,
            &limits,
        ) {
            assert!(e.to_string().contains("flip.tflite"), "{e}");
        }
        let _ = write_operator_order(&bytes, "flip.tflite", &[0, 1, 2, 3, 4, 5]);
    }
}

#[test]
fn the_binary_reorders_and_plans() {
    let scratch = Scratch::new();
    let model = scratch.path("b.tflite");
    std::fs::write(&model, branching_model()).unwrap();
    let problem = scratch.path("b.csv");
    let reordered = scratch.path("r.tflite");
    let out = telamalloc_output(&[
        "import".as_ref(),
        model.as_os_str(),
        "--reorder".as_ref(),
        "--timeout".as_ref(),
        "5".as_ref(),
        "--reordered-model".as_ref(),
        reordered.as_os_str(),
        "-o".as_ref(),
        problem.as_os_str(),
    ]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("LOAD 132096 -> 66816"), "{said}");
    assert!(said.contains("proven minimal"), "{said}");
    assert!(said.contains("LOAD 66816;"), "{said}");
    let bytes = std::fs::read(&reordered).unwrap();
    let again = import_bytes(&bytes, ModelFormat::Tflite, "r", &ImportOptions::default()).unwrap();
    assert_eq!(Timeline::new(&again.problem).load(), 66816);

    let planned = scratch.path("p.tflite");
    let solution = scratch.path("p.csv");
    let out = telamalloc_output(&[
        "plan".as_ref(),
        model.as_os_str(),
        "-o".as_ref(),
        planned.as_os_str(),
        "--solution".as_ref(),
        solution.as_os_str(),
        "--timeout".as_ref(),
        "5".as_ref(),
    ]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    // TFLite Micro's sizes (16-byte alignment): the same here.
    assert!(said.contains("LOAD 132096 -> 66816"), "{said}");
    assert!(said.contains("planned section 66816 bytes"), "{said}");
    let plan = read_offline_plan(&std::fs::read(&planned).unwrap(), "p")
        .unwrap()
        .unwrap();
    assert_eq!(plan.offsets.iter().filter(|&&o| o >= 0).count(), 6);
    assert!(solution.exists());

    // Bad input: exit 2, the file named, nothing written.
    let junk = scratch.file("junk.tflite", "not a model at all");
    let nothing = scratch.path("nothing.tflite");
    for command in ["import", "plan"] {
        let mut args: Vec<&std::ffi::OsStr> = vec![command.as_ref(), junk.as_os_str()];
        if command == "import" {
            args.push("--reorder".as_ref());
        }
        args.extend(["-o".as_ref(), nothing.as_os_str()]);
        let out = telamalloc_output(&args);
        assert_eq!(out.status.code(), Some(2));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("junk.tflite"), "{said}");
        assert!(!nothing.exists());
    }
    let out = telamalloc_output(&[
        "import".as_ref(),
        model.as_os_str(),
        "--reorder".as_ref(),
        "--timeout".as_ref(),
        "-1".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn large_graphs_honour_the_time_limit() {
    let mut rng = Rng(0x1a_26e5);
    let dag = network_dag(&mut rng, 20_000, 5);
    let started = std::time::Instant::now();
    let graph = dag.graph();
    let built = started.elapsed();
    let timeout = Duration::from_millis(500);
    let found = reorder(
        &graph,
        &ReorderOptions {
            timeout: Some(timeout),
            ..ReorderOptions::default()
        },
    );
    eprintln!(
        "20000 operators: graph built in {built:?}; LOAD {} -> {} (bound {}) in {:?}",
        found.original_load.unwrap(),
        found.load,
        found.lower_bound,
        found.elapsed
    );
    assert!(
        found.elapsed < timeout + Duration::from_millis(400),
        "{:?}",
        found.elapsed
    );
    assert!(found.optimal || found.timed_out);
    assert!(found.load <= found.original_load.unwrap());
    assert_eq!(graph.order_load(&found.order).unwrap(), found.load);
}
