//! ONNX importer: a minimal protobuf decoder for the parts of `ModelProto` memory planning needs,
//! and shape inference for common operators.
//!
//! What is read, by field number of `onnx.proto`:
//!
//! - `ModelProto`: `graph` (7), `opset_import` (8: `domain` 1, `version` 2);
//! - `GraphProto`: `node` (1), `initializer` (5), `input` (11), `output` (12), `value_info` (13),
//!   `sparse_initializer` (15, names only);
//! - `NodeProto`: `input` (1), `output` (2), `name` (3), `op_type` (4), `attribute` (5),
//!   `domain` (7);
//! - `AttributeProto`: `name` (1), `f` (2), `i` (3), `s` (4), `t` (5), `g` (6), `floats` (7),
//!   `ints` (8), `graphs` (11);
//! - `TensorProto`: `dims` (1), `data_type` (2), `float_data` (4), `int32_data` (5),
//!   `int64_data` (7), `name` (8), `raw_data` (9), `double_data` (10), `uint64_data` (11),
//!   `data_location` (14);
//! - `ValueInfoProto.type.tensor_type`: `elem_type` (1), `shape.dim` (`dim_value` 1,
//!   `dim_param` 2).
//!
//! # Shapes
//!
//! ONNX files often declare shapes only for the graph inputs and outputs. Shapes are therefore
//! inferred operator by operator, in order, for the common operators (element-wise and
//! broadcasting arithmetic, convolutions and pooling, `Gemm`/`MatMul`, normalisations, the shape
//! operators `Reshape`, `Flatten`, `Transpose`, `Squeeze`, `Unsqueeze`, `Concat`, `Split`,
//! `Slice`, `Pad`, `Resize`, `Expand`, `Tile`, `Gather`, reductions, ...), carrying the values
//! of small integer tensors (`Shape` -> `Gather` -> `Concat` -> `Reshape` chains) so that shapes
//! computed at run time are known. Where inference gives no shape, the model's `value_info` is
//! used (dynamic dimensions set to the batch value); a tensor with neither is left out and
//! counted in a warning.
//!
//! Tensors read inside the bodies of control-flow operators (`If`, `Loop`, `Scan`) count as read
//! by the operator itself; the bodies' own tensors are not imported.

mod dtype;
mod infer;
mod proto;

use super::budget::{text_units, Budget};
use super::{fail, summarize_names, Graph, ImportOptions, Operator, Tensor};
use crate::error::InputError;
use infer::{infer, Info};
use proto::{as_bytes, as_string, as_varint, parse_graph, Fields, GraphProto, Node, ValueInfo};
use std::collections::{BinaryHeap, HashMap};

pub(crate) use dtype::element_bits;

/// Reads an ONNX model into a [`Graph`], inferring shapes where the file has none, paying
/// `budget` for what shape inference reads and computes.
pub(crate) fn read_graph(
    bytes: &[u8],
    file: &str,
    options: &ImportOptions,
    budget: &mut Budget<'_>,
) -> Result<Graph, InputError> {
    let corrupt = |detail: String| fail(file, format!("not a valid ONNX model: {detail}"));
    if bytes.is_empty() {
        return Err(corrupt("the file is empty".to_string()));
    }
    let mut graph_bytes = None;
    let mut opset = None;
    let mut fields = Fields::new(bytes);
    while let Some((number, wire)) = fields
        .next_field()
        .map_err(|e| corrupt(format!("ModelProto: {e}")))?
    {
        match number {
            7 => graph_bytes = Some(as_bytes(wire, "ModelProto.graph").map_err(corrupt)?),
            8 => {
                let mut domain = String::new();
                let mut version = 0;
                let mut opset_fields =
                    Fields::new(as_bytes(wire, "opset_import").map_err(corrupt)?);
                while let Some((number, wire)) = opset_fields
                    .next_field()
                    .map_err(|e| corrupt(format!("opset_import: {e}")))?
                {
                    match number {
                        1 => domain = as_string(wire, "domain").map_err(corrupt)?,
                        2 => version = as_varint(wire, "version").map_err(corrupt)? as i64,
                        _ => {}
                    }
                }
                if domain.is_empty() || domain == "ai.onnx" {
                    opset = Some(version);
                }
            }
            _ => {}
        }
    }
    let graph_bytes = graph_bytes.ok_or_else(|| corrupt("ModelProto has no graph".to_string()))?;
    let opset = opset.unwrap_or(1);
    let proto = parse_graph(graph_bytes, 0, budget).map_err(|e| {
        if budget.exhausted() {
            fail(file, e)
        } else {
            corrupt(format!("GraphProto: {e}"))
        }
    })?;
    build(proto, opset, file, options, budget)
}

/// Sorts nodes topologically, keeping the file order where it is already valid.
fn topological_order(proto: &GraphProto<'_>, file: &str) -> Result<Vec<usize>, InputError> {
    let mut producer: HashMap<&str, usize> = HashMap::new();
    for (k, node) in proto.nodes.iter().enumerate() {
        for output in node.outputs.iter().filter(|o| !o.is_empty()) {
            if let Some(previous) = producer.insert(output.as_str(), k) {
                return Err(fail(
                    file,
                    format!(
                        "tensor '{output}' is produced by both {} and {}",
                        proto.nodes[previous].describe(previous),
                        node.describe(k)
                    ),
                ));
            }
        }
    }
    let n = proto.nodes.len();
    let mut waiting = vec![0usize; n];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, node) in proto.nodes.iter().enumerate() {
        let mut deps: Vec<usize> = node
            .inputs
            .iter()
            .chain(&node.outer_reads)
            .filter_map(|name| producer.get(name.as_str()).copied())
            .collect();
        deps.sort_unstable();
        deps.dedup();
        waiting[k] = deps.len();
        for d in deps {
            dependents[d].push(k);
        }
    }
    let mut ready: BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&k| waiting[k] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(std::cmp::Reverse(k)) = ready.pop() {
        order.push(k);
        for &d in &dependents[k] {
            waiting[d] -= 1;
            if waiting[d] == 0 {
                ready.push(std::cmp::Reverse(d));
            }
        }
    }
    if order.len() != n {
        let stuck = (0..n).find(|&k| waiting[k] > 0).expect("a node is waiting");
        return Err(fail(
            file,
            format!(
                "the graph has a cycle through {}",
                proto.nodes[stuck].describe(stuck)
            ),
        ));
    }
    Ok(order)
}

/// Ops whose output is not a function of their inputs: never folded as constants.
fn nondeterministic(op: &str) -> bool {
    op.starts_with("Random") || op == "Multinomial" || op == "Bernoulli"
}

/// The tensors met so far, by name, with what is known of each (in the order first met).
#[derive(Default)]
struct Tensors {
    index: HashMap<String, usize>,
    infos: Vec<Info>,
    names: Vec<String>,
}

impl Tensors {
    /// The index of tensor `name`, added knowing nothing of it if new.
    fn add(&mut self, name: &str) -> usize {
        let (infos, names) = (&mut self.infos, &mut self.names);
        *self.index.entry(name.to_string()).or_insert_with(|| {
            infos.push(Info::default());
            names.push(name.to_string());
            infos.len() - 1
        })
    }

    /// The graph's tensors: sizes from the shapes and element types found.
    fn into_graph_tensors(self) -> Vec<Tensor> {
        self.infos
            .iter()
            .zip(self.names)
            .map(|(info, name)| {
                let bits = info.elem.and_then(element_bits);
                Tensor::sized(name, info.shape.as_deref(), bits, info.constant)
            })
            .collect()
    }
}

/// Where shapes did not come from inference, and the operators to warn about.
#[derive(Default)]
struct Fallbacks {
    /// The operators (not folded) with an output of no inferred shape.
    uninferred: Vec<String>,
    /// Shapes taken from `value_info`, and how many of them had dynamic dimensions.
    from_declared: usize,
    substituted: usize,
    /// Inferred shapes that differ from `value_info`.
    disagree: usize,
    /// Operators with bodies (`If`, `Loop`, `Scan`).
    control_flow: usize,
}

impl Fallbacks {
    /// One warning for each kind of fallback seen.
    fn warn(&self, batch: u64, warnings: &mut Vec<String>) {
        if !self.uninferred.is_empty() {
            warnings.push(format!(
                "no shape inference for {} operator(s): {}; their outputs' shapes come from the \
                 model's value_info where it has them",
                self.uninferred.len(),
                summarize_names(&self.uninferred)
            ));
        }
        if self.from_declared > 0 {
            warnings.push(format!(
                "{} tensor shape(s) taken from the model's value_info{}",
                self.from_declared,
                if self.substituted > 0 {
                    format!(
                        ", {} of them with dynamic dimensions set to the batch value {batch}",
                        self.substituted
                    )
                } else {
                    String::new()
                }
            ));
        }
        if self.disagree > 0 {
            warnings.push(format!(
                "{} inferred shape(s) differ from the model's value_info; the inferred ones are used",
                self.disagree
            ));
        }
        if self.control_flow > 0 {
            warnings.push(format!(
                "{} control-flow operator(s): the tensors inside their bodies are not imported",
                self.control_flow
            ));
        }
    }
}

/// The shapes and types the model declares (`value_info` and graph outputs), by tensor name,
/// and the batch value for their dynamic dimensions.
struct Declared<'a> {
    value_info: HashMap<&'a str, &'a ValueInfo>,
    batch: u64,
}

fn build(
    proto: GraphProto<'_>,
    opset: i64,
    file: &str,
    options: &ImportOptions,
    budget: &mut Budget<'_>,
) -> Result<Graph, InputError> {
    let mut tensors = Tensors::default();
    let mut warnings = Vec::new();
    add_initializers(&proto, &mut tensors, budget)?;
    let (graph_inputs, input_shapes) =
        add_graph_inputs(&proto, options, &mut tensors, &mut warnings, budget)?;
    let declared = Declared {
        value_info: proto
            .value_info
            .iter()
            .chain(&proto.outputs)
            .map(|v| (v.name.as_str(), v))
            .collect(),
        batch: options.batch,
    };

    let order = topological_order(&proto, file)?;
    let mut operators = Vec::with_capacity(order.len());
    let mut fallbacks = Fallbacks::default();
    for &k in &order {
        let node = &proto.nodes[k];
        let operator = add_node(
            node,
            k,
            opset,
            &declared,
            file,
            &mut tensors,
            &mut fallbacks,
            budget,
        )?;
        operators.push(operator);
    }

    let graph_outputs = graph_outputs(&proto, &tensors, file)?;
    fallbacks.warn(options.batch, &mut warnings);
    Ok(Graph {
        tensors: tensors.into_graph_tensors(),
        operators,
        inputs: graph_inputs,
        outputs: graph_outputs,
        input_shapes,
        warnings,
    })
}

/// Initializers: constants with their shapes (and small values).
fn add_initializers(
    proto: &GraphProto<'_>,
    tensors: &mut Tensors,
    budget: &mut Budget<'_>,
) -> Result<(), InputError> {
    for init in &proto.initializers {
        let units = text_units(init.name.len())
            + init.dims.len() as u64
            + init.values.as_ref().map_or(0, |v| v.len() as u64);
        budget.charge(units, "the initializers")?;
        let t = tensors.add(&init.name);
        tensors.infos[t] = Info {
            elem: Some(init.data_type),
            shape: init.dims.iter().map(|&d| u64::try_from(d).ok()).collect(),
            values: init.values.clone(),
            constant: true,
        };
    }
    for name in &proto.sparse_initializers {
        budget.charge(text_units(name.len()), "the initializers")?;
        let t = tensors.add(name);
        tensors.infos[t].constant = true;
    }
    Ok(())
}

/// The graph inputs' names and shapes.
type InputShapes = Vec<(String, Vec<u64>)>;

/// Graph inputs that are not initializers, with their shapes as given in the options or by the
/// model (dynamic dimensions set to the batch value): their indices and known shapes.
fn add_graph_inputs(
    proto: &GraphProto<'_>,
    options: &ImportOptions,
    tensors: &mut Tensors,
    warnings: &mut Vec<String>,
    budget: &mut Budget<'_>,
) -> Result<(Vec<usize>, InputShapes), InputError> {
    let mut graph_inputs = Vec::new();
    let mut input_shapes = Vec::new();
    let mut dynamic_inputs = 0usize;
    for input in &proto.inputs {
        let t = tensors.add(&input.name);
        budget.charge(text_units(input.name.len()), "the graph inputs")?;
        if tensors.infos[t].constant {
            continue; // an initializer listed as an input (IR version < 4 style): a weight
        }
        graph_inputs.push(t);
        let override_shape = options.input_shapes.iter().find(|(n, _)| *n == input.name);
        let dims = match (override_shape, &input.dims) {
            (Some((_, dims)), _) => Some(dims.clone()),
            (None, Some(dims)) => {
                if dims.iter().any(Option::is_none) {
                    dynamic_inputs += 1;
                }
                Some(dims.iter().map(|d| d.unwrap_or(options.batch)).collect())
            }
            (None, None) => None,
        };
        if let Some(dims) = &dims {
            // The shape is kept twice (the input's and the tensor's), each of its dimensions.
            budget.charge(2 * dims.len() as u64, "the graph inputs")?;
            input_shapes.push((input.name.clone(), dims.clone()));
        }
        tensors.infos[t].elem = input.elem;
        tensors.infos[t].shape = dims;
    }
    if dynamic_inputs > 0 {
        warnings.push(format!(
            "{dynamic_inputs} graph input(s) have dynamic dimensions, set to the batch value {} \
             (give --input-shape to choose them)",
            options.batch
        ));
    }
    Ok((graph_inputs, input_shapes))
}

/// Node `k`'s operator: reads its inputs, infers its outputs' shapes (or takes the declared
/// ones) and records them in `tensors`. Paid for before inference: what it reads, and for each
/// output past the first as much again (an output's shape is at most as long as what the node
/// reads); after it, every output's shape and values.
#[allow(clippy::too_many_arguments)]
fn add_node(
    node: &Node<'_>,
    k: usize,
    opset: i64,
    declared: &Declared<'_>,
    file: &str,
    tensors: &mut Tensors,
    fallbacks: &mut Fallbacks,
    budget: &mut Budget<'_>,
) -> Result<Operator, InputError> {
    if !node.outer_reads.is_empty() || node.attributes.iter().any(|a| !a.graphs.is_empty()) {
        fallbacks.control_flow += 1;
    }
    let (inputs, ins) = node_inputs(node, k, file, tensors, budget)?;
    let read: u64 = ins.iter().map(Info::units).sum::<u64>() + attribute_units(node);
    let extra_outputs = node.outputs.len().saturating_sub(1) as u64;
    budget.charge(extra_outputs.saturating_mul(read), "shape inference")?;
    let constant = node.op_type == "Constant"
        || (!inputs.is_empty()
            && !nondeterministic(&node.op_type)
            && inputs.iter().all(|&t| tensors.infos[t].constant));
    let inferred = infer(node, &ins, opset);
    let mut outputs = Vec::new();
    let mut any_unknown = false;
    for (o, name) in node.outputs.iter().enumerate() {
        if name.is_empty() {
            continue;
        }
        let t = tensors.add(name);
        outputs.push(t);
        let guess = inferred
            .as_ref()
            .and_then(|outs| outs.get(o))
            .cloned()
            .unwrap_or_default();
        let declared_info = declared.value_info.get(name.as_str());
        let declared_dims = declared_info.and_then(|d| d.dims.clone());
        let shape = output_shape(
            guess.shape.as_deref(),
            declared_dims,
            declared.batch,
            fallbacks,
        );
        if guess.shape.is_none() {
            any_unknown = true;
        }
        let values = if guess.shape.is_some() {
            guess.values
        } else {
            None
        };
        let info = Info {
            elem: guess.elem.or(declared_info.and_then(|d| d.elem)),
            shape,
            values,
            constant,
        };
        budget.charge(info.units() + text_units(name.len()), "shape inference")?;
        tensors.infos[t] = info;
    }
    if any_unknown && !constant {
        fallbacks.uninferred.push(node.op_type.clone());
    }
    Ok(Operator { inputs, outputs })
}

/// Node `k`'s input tensors (including those its bodies read from outside) and what is known
/// of each named input (nothing for an empty name).
fn node_inputs(
    node: &Node<'_>,
    k: usize,
    file: &str,
    tensors: &Tensors,
    budget: &mut Budget<'_>,
) -> Result<(Vec<usize>, Vec<Info>), InputError> {
    let mut inputs = Vec::new();
    let mut ins = Vec::with_capacity(node.inputs.len());
    budget.charge(1 + node.outer_reads.len() as u64, "the nodes' inputs")?;
    for name in &node.inputs {
        budget.charge(text_units(name.len()), "the nodes' inputs")?;
        if name.is_empty() {
            ins.push(Info::default());
            continue;
        }
        let Some(&t) = tensors.index.get(name.as_str()) else {
            return Err(fail(
                file,
                format!(
                    "{} reads '{name}', which no node, initializer or graph input defines",
                    node.describe(k)
                ),
            ));
        };
        inputs.push(t);
        // Each read copies what is known of the tensor: a node reading one big tensor
        // thousands of times pays for every copy.
        budget.charge(tensors.infos[t].units(), "the nodes' inputs")?;
        ins.push(tensors.infos[t].clone());
    }
    for name in &node.outer_reads {
        if let Some(&t) = tensors.index.get(name.as_str()) {
            inputs.push(t);
        }
    }
    Ok((inputs, ins))
}

/// The work units of a node's attributes: its lists and tensors' dimensions and values.
fn attribute_units(node: &Node<'_>) -> u64 {
    node.attributes
        .iter()
        .map(|a| {
            let tensor = a.t.as_ref().map_or(0, |t| {
                t.dims.len() + t.values.as_ref().map_or(0, |v| v.len())
            });
            1 + (a.ints.len() + a.floats.len() + tensor) as u64
        })
        .sum()
}

/// An output's shape: the inferred one, else the declared one (dynamic dimensions set to
/// `batch`), counting in `fallbacks` where the declared shape was used or disagrees.
fn output_shape(
    inferred: Option<&[u64]>,
    declared_dims: Option<Vec<Option<u64>>>,
    batch: u64,
    fallbacks: &mut Fallbacks,
) -> Option<Vec<u64>> {
    let declared_static: Option<Vec<u64>> = declared_dims
        .as_ref()
        .and_then(|d| d.iter().copied().collect());
    match (inferred, &declared_static, &declared_dims) {
        (Some(s), static_dims, _) => {
            if static_dims.as_ref().is_some_and(|d| d.as_slice() != s) {
                fallbacks.disagree += 1;
            }
            Some(s.to_vec())
        }
        (None, Some(s), _) => {
            fallbacks.from_declared += 1;
            Some(s.clone())
        }
        (None, None, Some(dims)) => {
            fallbacks.from_declared += 1;
            fallbacks.substituted += 1;
            Some(dims.iter().map(|d| d.unwrap_or(batch)).collect())
        }
        (None, None, None) => None,
    }
}

/// The graph outputs' tensors; each must be defined somewhere.
fn graph_outputs(
    proto: &GraphProto<'_>,
    tensors: &Tensors,
    file: &str,
) -> Result<Vec<usize>, InputError> {
    let mut graph_outputs = Vec::new();
    for output in &proto.outputs {
        let Some(&t) = tensors.index.get(output.name.as_str()) else {
            return Err(fail(
                file,
                format!(
                    "graph output '{}' is defined by no node, initializer or input",
                    output.name
                ),
            ));
        };
        graph_outputs.push(t);
    }
    Ok(graph_outputs)
}
