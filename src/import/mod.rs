//! Importers: turn a compiled model (`.tflite` or `.onnx`) into a memory-planning [`Problem`].
//!
//! Only the **activation tensors** become buffers: graph inputs and the tensors operators
//! produce at run time. Weights and other constants are left out (a runtime keeps them in their
//! own read-only area): in TFLite, tensors whose buffer holds data and tensors that no operator
//! produces and that are not graph inputs; in ONNX, initializers, `Constant` outputs and the
//! outputs of operators whose inputs are all constant (they are folded when the model is loaded).
//!
//! # Lifetimes
//!
//! Time steps are operator indices in execution order (the order of the file, which both formats
//! require to be topological; an ONNX graph that is not sorted is sorted first, stably), counting
//! only the operators that run per inference: an operator whose inputs are all constant computes
//! a constant (folded at load time, like TFLite's `DEQUANTIZE` of float16 weights) and takes no
//! step. Lifetimes
//! are half-open `[lower, upper)` with an inclusive last use recorded as `upper = last_use + 1`,
//! as production planners do:
//!
//! - a graph input is live from step 0; a tensor produced by operator `i` from step `i`;
//! - it stays live up to and including the last operator that reads it: `upper = last + 1`;
//!   a tensor nobody reads still occupies memory while its producer runs: `upper = lower + 1`;
//! - a graph output stays live to the end: `upper = number of operators`.
//!
//! So an operator's inputs and outputs are live together at its step, as they must be.
//!
//! # Sizes
//!
//! `size` = the product of the dimensions times the element size in bytes (4-bit types round the
//! total up to whole bytes), rounded up to [`ImportOptions::alignment`]. Every buffer keeps
//! alignment 1: the rounding already keeps consecutive buffers aligned the way arena planners do.
//! Dynamic dimensions (`-1` in TFLite, `dim_param` or a missing value in ONNX) take
//! [`ImportOptions::batch`], unless [`ImportOptions::input_shapes`] gives a graph input's shape.
//!
//! # Limits
//!
//! Every read is bounds-checked, and an import's work is paid for in work units (see
//! [`work_limit`]): at most [`WORK_PER_BYTE`] per byte of the file plus [`WORK_BASE`], with
//! memory following the units, so that no file makes an import take time or memory out of
//! proportion to its size ([`import_bytes_counted`] says how much was spent). Sizes are checked
//! arithmetic: a tensor past 2^64 bytes, or sizes whose sum overflows 64 bits, is an error, and
//! [`ImportOptions::alignment`] is at most [`MAX_ALIGNMENT`]. Every failure is an
//! [`InputError`] naming the file.
//!
//! # Example
//!
//! ```no_run
//! use telamalloc::import::{import_model, ImportOptions};
//!
//! let imported = import_model("model.tflite".as_ref(), &ImportOptions::default())?;
//! println!("{} buffers over {} steps", imported.problem.len(), imported.steps);
//! for warning in &imported.warnings {
//!     eprintln!("warning: {warning}");
//! }
//! # Ok::<(), telamalloc::InputError>(())
//! ```

mod budget;
pub mod onnx;
pub mod reorder;
pub mod tflite;

pub use budget::{work_limit, WORK_BASE, WORK_PER_BYTE};

use crate::error::InputError;
use crate::problem::{align_up, Buffer, Problem};
use budget::Budget;
use std::collections::{BTreeMap, HashSet};
use std::path::Path;

/// How to turn tensors into buffers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportOptions {
    /// Every size is rounded up to a multiple of this power of two (default 64).
    pub alignment: u64,
    /// The value given to dynamic or unknown dimensions (default 1).
    pub batch: u64,
    /// Shapes for named graph inputs, replacing the model's own (and its dynamic dimensions).
    /// ONNX shapes are inferred from them; a TFLite file stores every tensor's shape, so there
    /// only the input itself changes.
    pub input_shapes: Vec<(String, Vec<u64>)>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            alignment: 64,
            batch: 1,
            input_shapes: Vec::new(),
        }
    }
}

/// The model file formats the importers read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelFormat {
    /// TensorFlow Lite FlatBuffer (`.tflite`, file identifier `TFL3`).
    Tflite,
    /// ONNX protobuf (`.onnx`).
    Onnx,
}

impl ModelFormat {
    /// The format named by a file's extension (`.tflite`, `.onnx`), if any.
    pub fn from_path(path: &Path) -> Option<ModelFormat> {
        let extension = path.extension()?.to_str()?;
        if extension.eq_ignore_ascii_case("tflite") {
            Some(ModelFormat::Tflite)
        } else if extension.eq_ignore_ascii_case("onnx") {
            Some(ModelFormat::Onnx)
        } else {
            None
        }
    }

    /// Guesses the format from the first bytes: `TFL3` at bytes 4..8 is TFLite; an ONNX model
    /// starts with its `ir_version` field (tag byte `0x08`).
    pub fn sniff(bytes: &[u8]) -> Option<ModelFormat> {
        if bytes.len() >= 8 && &bytes[4..8] == b"TFL3" {
            Some(ModelFormat::Tflite)
        } else if bytes.first() == Some(&0x08) {
            Some(ModelFormat::Onnx)
        } else {
            None
        }
    }

    /// The format's usual name.
    pub fn name(self) -> &'static str {
        match self {
            ModelFormat::Tflite => "tflite",
            ModelFormat::Onnx => "onnx",
        }
    }
}

/// A model turned into a problem, with what had to be approximated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Imported {
    /// The format the model was read as.
    pub format: ModelFormat,
    /// One buffer per activation tensor with a known size; no capacity.
    pub problem: Problem,
    /// For each buffer, in buffer order, the index of its tensor in the model's main graph: in
    /// TFLite, the index in the first subgraph's `tensors` (what an offline memory plan is
    /// keyed by, see [`crate::export`]); in ONNX, the order in which the graph first names it.
    pub tensors: Vec<usize>,
    /// The number of time steps: the model's operator count.
    pub steps: u64,
    /// The shapes used for the graph inputs (after dynamic dimensions were filled in), in the
    /// model's input order; an input of unknown shape is left out.
    pub input_shapes: Vec<(String, Vec<u64>)>,
    /// What was left out or approximated, one sentence each (empty when nothing was).
    pub warnings: Vec<String>,
}

/// The largest `--alignment` accepted: 2^32 bytes (4 GiB). Larger ones round every size up to
/// a multiple of more than a scratchpad holds, and at 2^63 two buffers' sizes overflow 64 bits.
pub const MAX_ALIGNMENT: u64 = 1 << 32;

/// Reads a model file and imports it; the format comes from the extension, else from the
/// content. Every failure is an [`InputError`] naming the file.
pub fn import_model(path: &Path, options: &ImportOptions) -> Result<Imported, InputError> {
    let (name, bytes, format) = read_model(path)?;
    import_bytes(&bytes, format, &name, options)
}

/// A model file's name (for errors), bytes and format (from the extension, else the content).
pub(crate) fn read_model(path: &Path) -> Result<(String, Vec<u8>, ModelFormat), InputError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::at_line(&name, None, None, format!("cannot read file: {e}")))?;
    let format = ModelFormat::from_path(path)
        .or_else(|| ModelFormat::sniff(&bytes))
        .ok_or_else(|| {
            InputError::at_line(
                &name,
                None,
                None,
                "unknown model format: expected a .tflite or .onnx file",
            )
        })?;
    Ok((name, bytes, format))
}

/// Imports a model held in memory; `file` names it in errors and warnings.
pub fn import_bytes(
    bytes: &[u8],
    format: ModelFormat,
    file: &str,
    options: &ImportOptions,
) -> Result<Imported, InputError> {
    import_bytes_counted(bytes, format, file, options).map(|(imported, _)| imported)
}

/// [`import_bytes`], and the work units the import spent: at most [`work_limit`] of the
/// file's size (an import that would spend more is an error).
pub fn import_bytes_counted(
    bytes: &[u8],
    format: ModelFormat,
    file: &str,
    options: &ImportOptions,
) -> Result<(Imported, u64), InputError> {
    if !options.alignment.is_power_of_two() {
        return Err(fail(
            file,
            format!("alignment {} is not a power of two", options.alignment),
        ));
    }
    if options.alignment > MAX_ALIGNMENT {
        return Err(fail(
            file,
            format!(
                "alignment {} is larger than 2^32 = {MAX_ALIGNMENT}, the most import accepts",
                options.alignment
            ),
        ));
    }
    if options.batch == 0 {
        return Err(fail(file, "batch must be at least 1"));
    }
    if let Some((name, _)) = options
        .input_shapes
        .iter()
        .find(|(_, dims)| dims.contains(&0))
    {
        return Err(fail(
            file,
            format!("input shape for '{name}' has a zero dimension"),
        ));
    }
    let mut budget = Budget::new(file, bytes.len());
    let graph = match format {
        ModelFormat::Tflite => tflite::read_graph(bytes, file, options, &mut budget)?,
        ModelFormat::Onnx => onnx::read_graph(bytes, file, options, &mut budget)?,
    };
    for (name, _) in &options.input_shapes {
        if !graph.input_shapes.iter().any(|(input, _)| input == name) {
            let known: Vec<&str> = graph.input_shapes.iter().map(|(n, _)| n.as_str()).collect();
            return Err(fail(
                file,
                format!(
                    "--input-shape names '{name}', which is not a graph input (inputs: {})",
                    known.join(", ")
                ),
            ));
        }
    }
    Ok((plan(graph, format, file, options)?, budget.used()))
}

/// An error about the whole file (no line or field).
pub(crate) fn fail(file: &str, message: impl Into<String>) -> InputError {
    InputError::at_line(file, None, None, message)
}

/// A dataflow graph reduced to what memory planning needs; built by each format's reader.
#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    /// Every tensor the operators or the graph mention.
    pub tensors: Vec<Tensor>,
    /// Operators in execution (topological) order.
    pub operators: Vec<Operator>,
    /// Graph inputs (tensor indices).
    pub inputs: Vec<usize>,
    /// Graph outputs (tensor indices).
    pub outputs: Vec<usize>,
    /// The shape of every graph input of known shape, as used.
    pub input_shapes: Vec<(String, Vec<u64>)>,
    /// Warnings from the reader (unknown shapes, dynamic dimensions, ...).
    pub warnings: Vec<String>,
}

/// One tensor of a [`Graph`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Tensor {
    /// The model's name for it.
    pub name: String,
    /// Size in bytes before alignment, when known.
    pub bytes: Option<u64>,
    /// A weight or other constant: never a buffer.
    pub constant: bool,
    /// Its element type has a fixed size but its byte count overflows 64 bits: an error if it
    /// is an activation.
    pub too_large: bool,
}

impl Tensor {
    /// A tensor of `dims` elements of `bits` bits each (`None`: a type of no fixed size).
    pub(crate) fn sized(
        name: String,
        dims: Option<&[u64]>,
        bits: Option<u64>,
        constant: bool,
    ) -> Tensor {
        let bytes = dims
            .zip(bits)
            .and_then(|(dims, bits)| tensor_bytes(dims, bits));
        Tensor {
            name,
            bytes,
            constant,
            too_large: dims.is_some() && bits.is_some() && bytes.is_none(),
        }
    }
}

/// One operator of a [`Graph`]: the tensors it reads and writes. An operator whose outputs are
/// all constant is folded: it takes no time step.
#[derive(Clone, Debug, Default)]
pub(crate) struct Operator {
    /// Tensors read (including outer-scope tensors read by control-flow bodies).
    pub inputs: Vec<usize>,
    /// Tensors written.
    pub outputs: Vec<usize>,
}

/// The number of bytes of a tensor of `dims` whose elements take `bits` bits each (rounded up to
/// whole bytes), `None` when it does not fit 64 bits.
pub(crate) fn tensor_bytes(dims: &[u64], bits: u64) -> Option<u64> {
    let elements = dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))?;
    u64::try_from((u128::from(elements) * u128::from(bits)).div_ceil(8)).ok()
}

/// Formats a shape as `1x3x224x224` (`scalar` for rank 0).
pub fn format_shape(dims: &[u64]) -> String {
    if dims.is_empty() {
        return "scalar".to_string();
    }
    dims.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

/// Parses `1x3x224x224` (also `1,3,224,224`) into dimensions; `scalar` or empty is rank 0.
pub fn parse_shape(text: &str) -> Result<Vec<u64>, String> {
    let text = text.trim();
    if text.is_empty() || text == "scalar" {
        return Ok(Vec::new());
    }
    text.split(['x', 'X', ','])
        .map(|d| {
            d.trim()
                .parse::<u64>()
                .ok()
                .filter(|&d| d > 0)
                .ok_or_else(|| format!("'{d}' is not a positive dimension in shape '{text}'"))
        })
        .collect()
}

/// Turns tensor names into ids that are unique and safe in the CSV format: characters other than
/// ASCII letters, digits and `_ . / : - + ( ) [ ]` become `_`, an empty name becomes
/// `tensor<index>`, and a repeated id gets `~2`, `~3`, ... appended.
fn unique_ids(names: &[(usize, &str)]) -> Vec<String> {
    let mut taken: HashSet<String> = HashSet::new();
    let mut next_suffix: std::collections::HashMap<String, usize> = Default::default();
    let mut ids = Vec::with_capacity(names.len());
    for &(index, name) in names {
        let mut base: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "_./:-+()[]".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            base = format!("tensor{index}");
        }
        // Sanitised names hold no `~`, so `base~k` can only clash with the ids made for earlier
        // tensors of the same base: count per base instead of retrying from 2 (which made many
        // tensors of one name quadratic).
        let mut id = base.clone();
        if taken.contains(&id) {
            let k = next_suffix.entry(base.clone()).or_insert(2);
            loop {
                id = format!("{base}~{k}");
                *k += 1;
                if !taken.contains(&id) {
                    break;
                }
            }
        }
        taken.insert(id.clone());
        ids.push(id);
    }
    ids
}

/// Computes every activation tensor's lifetime and size (the conventions of the module docs).
fn plan(
    graph: Graph,
    format: ModelFormat,
    file: &str,
    options: &ImportOptions,
) -> Result<Imported, InputError> {
    // Operators that only compute constants run once at load time: they take no step.
    let schedule: Vec<&Operator> = graph
        .operators
        .iter()
        .filter(|op| {
            op.outputs.is_empty() || !op.outputs.iter().all(|&t| graph.tensors[t].constant)
        })
        .collect();
    let operators = schedule.len();
    if operators == 0 {
        return Err(fail(
            file,
            "the model has no operators (after constant folding)",
        ));
    }
    let steps = Steps::of(&graph, &schedule, file)?;
    let Activations {
        chosen,
        unknown,
        empty,
    } = activations(&graph, &steps, operators, file, options)?;
    let mut warnings = graph.warnings;
    if unknown > 0 {
        warnings.push(format!(
            "{unknown} activation tensor(s) of unknown size left out (unknown shape or element type)"
        ));
    }
    if empty > 0 {
        warnings.push(format!(
            "{empty} activation tensor(s) with no elements left out"
        ));
    }
    if chosen.is_empty() {
        return Err(fail(
            file,
            "the model has no activation tensor of known size",
        ));
    }
    let names: Vec<(usize, &str)> = chosen
        .iter()
        .map(|&(t, ..)| (t, graph.tensors[t].name.as_str()))
        .collect();
    let ids = unique_ids(&names);
    let buffers = chosen
        .iter()
        .zip(ids)
        .map(|(&(_, lower, upper, size), id)| Buffer::new(id, lower, upper, size))
        .collect();
    let problem = Problem::new(buffers, None);
    // Sizes that each fit but add up past 64 bits (huge shapes, or a huge alignment) would
    // make a file no allocator can read: say so here rather than write it.
    problem
        .check(None)
        .map_err(|why| fail(file, format!("the imported problem is unusable: {why}")))?;
    Ok(Imported {
        format,
        problem,
        tensors: chosen.iter().map(|&(t, ..)| t).collect(),
        steps: operators as u64,
        input_shapes: graph.input_shapes,
        warnings,
    })
}

/// Where each tensor lives in the schedule: the graph's inputs and outputs, the step producing
/// it and the last step reading it.
struct Steps {
    is_input: Vec<bool>,
    is_output: Vec<bool>,
    producer: Vec<Option<usize>>,
    last_use: Vec<Option<usize>>,
}

impl Steps {
    /// The steps of `schedule`'s tensors; an error names an operator that reads a tensor
    /// before another produces it (the order is not topological), or a tensor produced twice.
    fn of(graph: &Graph, schedule: &[&Operator], file: &str) -> Result<Steps, InputError> {
        let count = graph.tensors.len();
        let (is_input, is_output) = (flags(&graph.inputs, count), flags(&graph.outputs, count));
        // The first operator producing each tensor, to name it when a reader comes first.
        let mut first_producer: Vec<Option<usize>> = vec![None; count];
        for (step, op) in schedule.iter().enumerate() {
            for &t in &op.outputs {
                first_producer[t].get_or_insert(step);
            }
        }
        let mut producer: Vec<Option<usize>> = vec![None; count];
        let mut last_use: Vec<Option<usize>> = vec![None; count];
        for (step, op) in schedule.iter().enumerate() {
            for &t in &op.inputs {
                if !graph.tensors[t].constant && producer[t].is_none() && !is_input[t] {
                    // Read before (or without) being produced: the order is not topological.
                    if let Some(later) = first_producer[t] {
                        return Err(fail(
                            file,
                            format!(
                                "operator {step} reads tensor '{}' before operator {later} produces it",
                                graph.tensors[t].name,
                            ),
                        ));
                    }
                }
                last_use[t] = Some(last_use[t].map_or(step, |l: usize| l.max(step)));
            }
            for &t in &op.outputs {
                if let Some(first) = producer[t] {
                    return Err(fail(
                        file,
                        format!(
                            "tensor '{}' is produced by operators {first} and {step}",
                            graph.tensors[t].name
                        ),
                    ));
                }
                producer[t] = Some(step);
            }
        }
        Ok(Steps {
            is_input,
            is_output,
            producer,
            last_use,
        })
    }
}

/// The live activation tensors of a schedule, and those left out.
struct Activations {
    /// The tensors that become buffers: (tensor, lower, upper, size).
    chosen: Vec<(usize, u64, u64, u64)>,
    /// Live tensors left out for an unknown size.
    unknown: usize,
    /// Live tensors left out for having no elements.
    empty: usize,
}

/// The activation tensors of a schedule of `operators` steps, each with its lifetime and its
/// size aligned.
fn activations(
    graph: &Graph,
    steps: &Steps,
    operators: usize,
    file: &str,
    options: &ImportOptions,
) -> Result<Activations, InputError> {
    let mut chosen: Vec<(usize, u64, u64, u64)> = Vec::new();
    let (mut unknown, mut empty) = (0usize, 0usize);
    for (t, tensor) in graph.tensors.iter().enumerate() {
        let live = !tensor.constant && (steps.producer[t].is_some() || steps.is_input[t]);
        if !live {
            continue;
        }
        if tensor.too_large {
            return Err(fail(
                file,
                format!(
                    "tensor '{}' is larger than 2^64 bytes: its shape's element count times its \
                     element size overflows 64 bits",
                    tensor.name
                ),
            ));
        }
        let bytes = match tensor.bytes {
            None => {
                unknown += 1;
                continue;
            }
            Some(0) => {
                empty += 1;
                continue;
            }
            Some(bytes) => bytes,
        };
        let size = align_up(bytes, options.alignment)
            .ok_or_else(|| fail(file, format!("tensor '{}' is too large", tensor.name)))?;
        let lower = if steps.is_input[t] {
            0
        } else {
            steps.producer[t].unwrap_or(0)
        };
        let upper = if steps.is_output[t] {
            operators
        } else {
            steps.last_use[t].map_or(lower, |l| l.max(lower)) + 1
        };
        chosen.push((t, lower as u64, upper.max(lower + 1) as u64, size));
    }
    Ok(Activations {
        chosen,
        unknown,
        empty,
    })
}

/// Which of `count` tensors `indices` lists: a table, so that a lookup is one step.
fn flags(indices: &[usize], count: usize) -> Vec<bool> {
    let mut flags = vec![false; count];
    for &t in indices {
        flags[t] = true;
    }
    flags
}

/// Counts names (e.g. operator types) for a warning: `Foo (3), Bar (1)`, most frequent first.
pub(crate) fn summarize_names(names: &[String]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for name in names {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    let mut list: Vec<(&str, usize)> = counts.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    list.iter()
        .map(|(name, n)| format!("{name} ({n})"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(name: &str, bytes: u64, constant: bool) -> Tensor {
        Tensor {
            name: name.to_string(),
            bytes: Some(bytes),
            constant,
            too_large: false,
        }
    }

    #[test]
    fn lifetimes_follow_the_convention() {
        // in -> op0 -> a -> op1 -> b (output); w is a weight read by op0; dead is never read.
        let graph = Graph {
            tensors: vec![
                tensor("in", 10, false),
                tensor("w", 1000, true),
                tensor("a", 100, false),
                tensor("b", 64, false),
                tensor("dead", 1, false),
            ],
            operators: vec![
                Operator {
                    inputs: vec![0, 1],
                    outputs: vec![2, 4],
                },
                Operator {
                    inputs: vec![2],
                    outputs: vec![3],
                },
            ],
            inputs: vec![0],
            outputs: vec![3],
            ..Graph::default()
        };
        let imported = plan(graph, ModelFormat::Onnx, "m", &ImportOptions::default()).unwrap();
        let got: Vec<(&str, u64, u64, u64)> = imported
            .problem
            .buffers
            .iter()
            .map(|b| (b.id.as_str(), b.lower, b.upper, b.size))
            .collect();
        assert_eq!(
            got,
            vec![
                ("in", 0, 1, 64),
                ("a", 0, 2, 128),
                ("b", 1, 2, 64),
                ("dead", 0, 1, 64)
            ]
        );
        assert_eq!(imported.steps, 2);
    }

    #[test]
    fn many_tensors_of_one_name_get_numbered_ids() {
        let mut names: Vec<(usize, &str)> = (0..30_000).map(|i| (i, "t")).collect();
        names.push((30_000, "t~2")); // Sanitised to `t_2`: no clash with the numbered ones.
        let ids = unique_ids(&names);
        assert_eq!(ids[0], "t");
        assert_eq!(ids[1], "t~2");
        assert_eq!(ids[29_999], "t~30000");
        assert_eq!(ids[30_000], "t_2");
        let distinct: HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }

    #[test]
    fn ids_are_unique_and_csv_safe() {
        let ids = unique_ids(&[(0, "a,b"), (1, "a_b"), (2, ""), (3, "#x y"), (4, "a_b")]);
        assert_eq!(ids, vec!["a_b", "a_b~2", "tensor2", "_x_y", "a_b~3"]);
    }

    #[test]
    fn shapes_round_trip() {
        assert_eq!(parse_shape("1x3x224x224").unwrap(), vec![1, 3, 224, 224]);
        assert_eq!(format_shape(&[1, 3, 224, 224]), "1x3x224x224");
        assert!(parse_shape("1x0").is_err());
        assert!(parse_shape("ax2").is_err());
        assert_eq!(tensor_bytes(&[3, 5], 4), Some(8));
        assert_eq!(tensor_bytes(&[u64::MAX, 2], 8), None);
        // 2^61 floats are 2^63 bytes: the bit count overflows 64 bits, the byte count does not.
        assert_eq!(tensor_bytes(&[1 << 61], 32), Some(1 << 63));
        assert_eq!(tensor_bytes(&[1 << 62], 32), None);
    }

    #[test]
    fn sniffing() {
        assert_eq!(
            ModelFormat::sniff(b"\x1c\0\0\0TFL3...."),
            Some(ModelFormat::Tflite)
        );
        assert_eq!(ModelFormat::sniff(b"\x08\x07"), Some(ModelFormat::Onnx));
        assert_eq!(ModelFormat::sniff(b"garbage"), None);
    }
}
