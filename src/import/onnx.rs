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

use super::{fail, summarize_names, tensor_bytes, Graph, ImportOptions, Operator, Tensor};
use crate::error::InputError;
use infer::{infer, Info};
use proto::{as_bytes, as_string, as_varint, parse_graph, Fields, GraphProto, ValueInfo};
use std::collections::{BinaryHeap, HashMap};

pub use dtype::element_bits;

/// Reads an ONNX model into a [`Graph`], inferring shapes where the file has none.
pub(crate) fn read_graph(
    bytes: &[u8],
    file: &str,
    options: &ImportOptions,
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
    let proto = parse_graph(graph_bytes, 0).map_err(|e| corrupt(format!("GraphProto: {e}")))?;
    build(proto, opset, file, options)
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

fn build(
    proto: GraphProto<'_>,
    opset: i64,
    file: &str,
    options: &ImportOptions,
) -> Result<Graph, InputError> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut infos: Vec<Info> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut add =
        |name: &str, index: &mut HashMap<String, usize>, infos: &mut Vec<Info>| -> usize {
            *index.entry(name.to_string()).or_insert_with(|| {
                infos.push(Info::default());
                names.push(name.to_string());
                infos.len() - 1
            })
        };

    let mut warnings = Vec::new();
    // Initializers: constants with their shapes (and small values).
    for init in &proto.initializers {
        let t = add(&init.name, &mut index, &mut infos);
        infos[t] = Info {
            elem: Some(init.data_type),
            shape: init.dims.iter().map(|&d| u64::try_from(d).ok()).collect(),
            values: init.values.clone(),
            constant: true,
        };
    }
    for name in &proto.sparse_initializers {
        let t = add(name, &mut index, &mut infos);
        infos[t].constant = true;
    }
    // Graph inputs that are not initializers.
    let mut graph_inputs = Vec::new();
    let mut input_shapes = Vec::new();
    let mut dynamic_inputs = 0usize;
    for input in &proto.inputs {
        let t = add(&input.name, &mut index, &mut infos);
        if infos[t].constant {
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
            input_shapes.push((input.name.clone(), dims.clone()));
        }
        infos[t].elem = input.elem;
        infos[t].shape = dims;
    }
    if dynamic_inputs > 0 {
        warnings.push(format!(
            "{dynamic_inputs} graph input(s) have dynamic dimensions, set to the batch value {} \
             (give --input-shape to choose them)",
            options.batch
        ));
    }
    let declared: HashMap<&str, &ValueInfo> = proto
        .value_info
        .iter()
        .chain(&proto.outputs)
        .map(|v| (v.name.as_str(), v))
        .collect();

    let order = topological_order(&proto, file)?;
    let mut operators = Vec::with_capacity(order.len());
    let mut uninferred: Vec<String> = Vec::new();
    let (mut from_declared, mut substituted, mut disagree) = (0usize, 0usize, 0usize);
    let mut control_flow = 0usize;
    for &k in &order {
        let node = &proto.nodes[k];
        if !node.outer_reads.is_empty() || node.attributes.iter().any(|a| !a.graphs.is_empty()) {
            control_flow += 1;
        }
        let mut inputs = Vec::new();
        let mut ins = Vec::with_capacity(node.inputs.len());
        for name in &node.inputs {
            if name.is_empty() {
                ins.push(Info::default());
                continue;
            }
            let Some(&t) = index.get(name.as_str()) else {
                return Err(fail(
                    file,
                    format!(
                        "{} reads '{name}', which no node, initializer or graph input defines",
                        node.describe(k)
                    ),
                ));
            };
            inputs.push(t);
            ins.push(infos[t].clone());
        }
        for name in &node.outer_reads {
            if let Some(&t) = index.get(name.as_str()) {
                inputs.push(t);
            }
        }
        let constant = node.op_type == "Constant"
            || (!inputs.is_empty()
                && !nondeterministic(&node.op_type)
                && inputs.iter().all(|&t| infos[t].constant));
        let inferred = infer(node, &ins, opset);
        let mut outputs = Vec::new();
        let mut any_unknown = false;
        for (o, name) in node.outputs.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            let t = add(name, &mut index, &mut infos);
            outputs.push(t);
            let guess = inferred
                .as_ref()
                .and_then(|outs| outs.get(o))
                .cloned()
                .unwrap_or_default();
            let declared = declared.get(name.as_str());
            let declared_dims = declared.and_then(|d| d.dims.clone());
            let declared_static: Option<Vec<u64>> = declared_dims
                .as_ref()
                .and_then(|d| d.iter().copied().collect());
            let shape = match (&guess.shape, &declared_static, &declared_dims) {
                (Some(s), static_dims, _) => {
                    if static_dims.as_ref().is_some_and(|d| d != s) {
                        disagree += 1;
                    }
                    Some(s.clone())
                }
                (None, Some(s), _) => {
                    from_declared += 1;
                    Some(s.clone())
                }
                (None, None, Some(dims)) => {
                    from_declared += 1;
                    substituted += 1;
                    Some(dims.iter().map(|d| d.unwrap_or(options.batch)).collect())
                }
                (None, None, None) => None,
            };
            if guess.shape.is_none() {
                any_unknown = true;
            }
            let values = if guess.shape.is_some() {
                guess.values
            } else {
                None
            };
            infos[t] = Info {
                elem: guess.elem.or(declared.and_then(|d| d.elem)),
                shape,
                values,
                constant,
            };
        }
        if any_unknown && !constant {
            uninferred.push(node.op_type.clone());
        }
        operators.push(Operator { inputs, outputs });
    }

    // Graph outputs must be defined somewhere.
    let mut graph_outputs = Vec::new();
    for output in &proto.outputs {
        let Some(&t) = index.get(output.name.as_str()) else {
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
    if !uninferred.is_empty() {
        warnings.push(format!(
            "no shape inference for {} operator(s): {}; their outputs' shapes come from the \
             model's value_info where it has them",
            uninferred.len(),
            summarize_names(&uninferred)
        ));
    }
    if from_declared > 0 {
        warnings.push(format!(
            "{from_declared} tensor shape(s) taken from the model's value_info{}",
            if substituted > 0 {
                format!(
                    ", {substituted} of them with dynamic dimensions set to the batch value {}",
                    options.batch
                )
            } else {
                String::new()
            }
        ));
    }
    if disagree > 0 {
        warnings.push(format!(
            "{disagree} inferred shape(s) differ from the model's value_info; the inferred ones are used"
        ));
    }
    if control_flow > 0 {
        warnings.push(format!(
            "{control_flow} control-flow operator(s): the tensors inside their bodies are not imported"
        ));
    }

    let tensors = infos
        .iter()
        .zip(names)
        .map(|(info, name)| Tensor {
            name,
            bytes: match (&info.shape, info.elem.and_then(element_bits)) {
                (Some(shape), Some(bits)) => tensor_bytes(shape, bits),
                _ => None,
            },
            constant: info.constant,
        })
        .collect();
    Ok(Graph {
        tensors,
        operators,
        inputs: graph_inputs,
        outputs: graph_outputs,
        input_shapes,
        warnings,
    })
}
