//! Reordering a model's operators for a smaller LOAD (the search is [`crate::reorder`]), and
//! the model with its new order.
//!
//! Every operator of the file takes part, folded ones included (an operator whose inputs are all
//! constant: it produces constants, costs nothing and takes no step, but its readers must come
//! after it). After the search each folded operator that is free to move (not pinned) goes right
//! before its first reader, so that a runtime that does compute it per inference (TFLite Micro's
//! `DEQUANTIZE` of weights) keeps its output for as short a time as the order allows.
//!
//! TFLite operators with side effects keep their relative order (see
//! `tflite::side_effect_operators`: custom operators, calls, control flow, variables, random
//! numbers); ONNX nodes are treated as free of side effects.
//!
//! The reordered problem is imported from the reordered graph with the importer's own
//! conventions, and its LOAD is checked against the model's: if it is not smaller (or the
//! search found nothing better), the model keeps its own order.

use super::budget::Budget;
use super::{fail, onnx, plan, tflite, Graph, ImportOptions, Imported, ModelFormat};
use crate::analysis::Timeline;
use crate::error::InputError;
use crate::problem::align_up;
use crate::reorder::{reorder, OpGraph, Operation, ReorderOptions, Reordering};
use std::path::Path;

/// A model with its operators reordered.
#[derive(Clone, Debug)]
pub struct ReorderedModel {
    /// The problem in the model's own order.
    pub original: Imported,
    /// The problem in the new order (the same buffers, new lifetimes).
    pub reordered: Imported,
    /// The model's operators in the new order: indices in the file's operator list (the main
    /// subgraph's `operators` in TFLite, the graph's nodes in ONNX, after a stable topological
    /// sort of an unsorted graph).
    pub order: Vec<usize>,
    /// Whether the order differs from the model's.
    pub changed: bool,
    /// What the search did (its LOAD counts the importer's conventions, before the
    /// alignment-independent check against the re-imported problem).
    pub search: Reordering,
    /// For TFLite, the model file with its operators in the new order (the original bytes when
    /// the order did not change); `None` for ONNX.
    pub model: Option<Vec<u8>>,
    /// Wall-clock time of the whole reordering: reading, search, import in the new order.
    pub elapsed: std::time::Duration,
}

/// Reads a model file and reorders it; the format comes from the extension, else the content.
pub fn reorder_model(
    path: &Path,
    options: &ImportOptions,
    limits: &ReorderOptions,
) -> Result<ReorderedModel, InputError> {
    let (name, bytes, format) = super::read_model(path)?;
    reorder_bytes(&bytes, format, &name, options, limits)
}

/// Reorders a model held in memory; `file` names it in errors.
pub fn reorder_bytes(
    bytes: &[u8],
    format: ModelFormat,
    file: &str,
    options: &ImportOptions,
    limits: &ReorderOptions,
) -> Result<ReorderedModel, InputError> {
    let started = std::time::Instant::now();
    // The import first: its checks and errors, and the problem in the model's order.
    let original = super::import_bytes(bytes, format, file, options)?;
    let mut budget = Budget::new(file, bytes.len());
    let graph = match format {
        ModelFormat::Tflite => tflite::read_graph(bytes, file, options, &mut budget)?,
        ModelFormat::Onnx => onnx::read_graph(bytes, file, options, &mut budget)?,
    };
    let pinned = match format {
        ModelFormat::Tflite => tflite::side_effect_operators(bytes, file)?,
        ModelFormat::Onnx => vec![false; graph.operators.len()],
    };
    if pinned.len() != graph.operators.len() {
        return Err(fail(file, "the operator list changed between two reads"));
    }
    let op_graph = op_graph(&graph, &pinned, options.alignment, file)?;
    // The time limit covers reading the model too.
    let limits = ReorderOptions {
        timeout: limits.timeout.map(|t| t.saturating_sub(started.elapsed())),
        ..limits.clone()
    };
    let search = reorder(&op_graph, &limits);
    let mut order = search.order.clone();
    place_folded_operators(&graph, &pinned, &mut order);
    if op_graph.order_load(&order).ok() != Some(search.load) {
        // Moving folded operators never raises the LOAD; if it did, keep the search's order.
        order = search.order.clone();
    }

    let identity: Vec<usize> = (0..graph.operators.len()).collect();
    let original_load = Timeline::new(&original.problem).load();
    let mut reordered = imported_in_order(&graph, &order, format, file, options)?;
    if Timeline::new(&reordered.problem).load() >= original_load {
        order = identity.clone();
        reordered = original.clone();
    }
    let changed = order != identity;
    let model = match format {
        ModelFormat::Tflite if changed => {
            Some(crate::export::write_operator_order(bytes, file, &order)?)
        }
        ModelFormat::Tflite => Some(bytes.to_vec()),
        ModelFormat::Onnx => None,
    };
    Ok(ReorderedModel {
        original,
        reordered,
        order,
        changed,
        search,
        model,
        elapsed: started.elapsed(),
    })
}

/// The search's graph: every operator of the file; tensor sizes as the importer counts them
/// (aligned), 0 for constants and tensors of unknown size.
fn op_graph(
    graph: &Graph,
    pinned: &[bool],
    alignment: u64,
    file: &str,
) -> Result<OpGraph, InputError> {
    let mut sizes = Vec::with_capacity(graph.tensors.len());
    for tensor in &graph.tensors {
        let size = match tensor.bytes {
            Some(bytes) if !tensor.constant && bytes > 0 => align_up(bytes, alignment)
                .ok_or_else(|| fail(file, format!("tensor '{}' is too large", tensor.name)))?,
            _ => 0,
        };
        sizes.push(size);
    }
    let operations: Vec<Operation> = graph
        .operators
        .iter()
        .zip(pinned)
        .enumerate()
        .map(|(k, (op, &pinned))| Operation {
            inputs: op.inputs.clone(),
            outputs: op.outputs.clone(),
            pinned,
            folded: folded(graph, k),
        })
        .collect();
    OpGraph::new(sizes, &operations, &graph.inputs, &graph.outputs)
        .map_err(|e| fail(file, format!("cannot reorder the operators: {e}")))
}

/// Whether operator `op` is folded (all its outputs constant; the importer gives it no step).
fn folded(graph: &Graph, op: usize) -> bool {
    let outputs = &graph.operators[op].outputs;
    !outputs.is_empty() && outputs.iter().all(|&t| graph.tensors[t].constant)
}

/// Moves every folded, unpinned operator of `order` right before its first reader (after the
/// folded operators that feed it); those nobody reads go last.
fn place_folded_operators(graph: &Graph, pinned: &[bool], order: &mut Vec<usize>) {
    let count = graph.operators.len();
    let movable: Vec<bool> = (0..count)
        .map(|op| folded(graph, op) && !pinned[op])
        .collect();
    if !movable.iter().any(|&m| m) {
        return;
    }
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); graph.tensors.len()];
    for (op, operator) in graph.operators.iter().enumerate() {
        for &t in &operator.inputs {
            readers[t].push(op);
        }
    }
    let fixed: Vec<usize> = order.iter().copied().filter(|&op| !movable[op]).collect();
    let mut position = vec![usize::MAX; count];
    for (k, &op) in fixed.iter().enumerate() {
        position[op] = k;
    }
    // Each movable operator's anchor: the position among the fixed operators of its first
    // reader, directly or through other movable operators (resolved readers first: a folded
    // operator's readers come after it in every valid order, so the search's order, reversed,
    // has them resolved).
    let mut anchor = vec![fixed.len(); count];
    for &op in order.iter().rev() {
        if !movable[op] {
            continue;
        }
        let mut first = fixed.len();
        for &t in &graph.operators[op].outputs {
            for &r in &readers[t] {
                first = first.min(if movable[r] { anchor[r] } else { position[r] });
            }
        }
        anchor[op] = first;
    }
    let mut placed = Vec::with_capacity(count);
    let mut moving: Vec<usize> = order.iter().copied().filter(|&op| movable[op]).collect();
    // Stable by anchor: producers of other folded operators' inputs stay before them.
    moving.sort_by_key(|&op| anchor[op]);
    let mut next = 0;
    for (k, &op) in fixed.iter().enumerate() {
        while next < moving.len() && anchor[moving[next]] == k {
            placed.push(moving[next]);
            next += 1;
        }
        placed.push(op);
    }
    placed.extend_from_slice(&moving[next..]);
    *order = placed;
}

/// The problem of `graph` with its operators run in `order`.
fn imported_in_order(
    graph: &Graph,
    order: &[usize],
    format: ModelFormat,
    file: &str,
    options: &ImportOptions,
) -> Result<Imported, InputError> {
    let mut reordered = graph.clone();
    reordered.operators = order.iter().map(|&k| graph.operators[k].clone()).collect();
    plan(reordered, format, file, options)
}
