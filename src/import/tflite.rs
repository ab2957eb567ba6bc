//! TensorFlow Lite importer: a minimal, bounds-checked FlatBuffer reader for the tables memory
//! planning needs.
//!
//! What is read, by field id of the TFLite schema (`tensorflow/lite/schema/schema.fbs`):
//!
//! - `Model`: `subgraphs` (2), `buffers` (4);
//! - `SubGraph`: `tensors` (0), `inputs` (1), `outputs` (2), `operators` (3);
//! - `Tensor`: `shape` (0), `type` (1), `buffer` (2), `name` (3), `shape_signature` (7);
//! - `Operator`: `inputs` (1), `outputs` (2) (index -1 marks an absent optional input);
//! - `Buffer`: `data` (0), and `size` (2) for models whose data lies outside the FlatBuffer.
//!
//! Only the first subgraph (the main graph) is imported; the bodies of control-flow operators
//! (`WHILE`, `IF`, `CALL_ONCE`) live in other subgraphs and are not. A tensor is constant when
//! its buffer holds data, or when no operator produces it and it is not a graph input (variables
//! such as LSTM state fall here: they persist outside the activation arena), and so are the
//! outputs of operators whose inputs are all constant (`DEQUANTIZE` of float16 weights, `DENSIFY`
//! of sparse ones: TFLite computes them once and keeps them). A tensor without a
//! shape is a scalar; a dimension that is -1 in `shape_signature` (or not positive in `shape`)
//! is dynamic and takes the batch value.

use super::budget::{text_units, Budget};
use super::{fail, Graph, ImportOptions, Operator, Tensor};
use crate::error::InputError;

/// Bits per element of a TFLite `TensorType`, `None` for types without a fixed size
/// (`STRING`, `RESOURCE`, `VARIANT`) or unknown codes.
pub(crate) fn element_bits(tensor_type: u8) -> Option<u64> {
    Some(match tensor_type {
        0 => 32,   // FLOAT32
        1 => 16,   // FLOAT16
        2 => 32,   // INT32
        3 => 8,    // UINT8
        4 => 64,   // INT64
        6 => 8,    // BOOL
        7 => 16,   // INT16
        8 => 64,   // COMPLEX64
        9 => 8,    // INT8
        10 => 64,  // FLOAT64
        11 => 128, // COMPLEX128
        12 => 64,  // UINT64
        15 => 32,  // UINT32
        16 => 16,  // UINT16
        17 => 4,   // INT4
        18 => 16,  // BFLOAT16
        _ => return None,
    })
}

/// A table: its position and its vtable's position and length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Table {
    pub(crate) position: usize,
    pub(crate) vtable: usize,
    pub(crate) vtable_len: usize,
}

/// A bounds-checked view of a FlatBuffer; every read names what it was reading on failure.
pub(crate) struct FlatBuffer<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) file: &'a str,
}

impl<'a> FlatBuffer<'a> {
    pub(crate) fn corrupt(&self, what: &str, detail: impl std::fmt::Display) -> InputError {
        fail(
            self.file,
            format!("not a valid TFLite model: {what}: {detail}"),
        )
    }

    pub(crate) fn slice(
        &self,
        position: usize,
        len: usize,
        what: &str,
    ) -> Result<&'a [u8], InputError> {
        position
            .checked_add(len)
            .and_then(|end| self.bytes.get(position..end))
            .ok_or_else(|| {
                self.corrupt(
                    what,
                    format!(
                        "{len} byte(s) at offset {position} lie outside the file ({} bytes); \
                         is it truncated?",
                        self.bytes.len()
                    ),
                )
            })
    }

    pub(crate) fn u16(&self, position: usize, what: &str) -> Result<u16, InputError> {
        let b = self.slice(position, 2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    pub(crate) fn u32(&self, position: usize, what: &str) -> Result<u32, InputError> {
        let b = self.slice(position, 4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn u64(&self, position: usize, what: &str) -> Result<u64, InputError> {
        let b = self.slice(position, 8, what)?;
        let mut word = [0u8; 8];
        word.copy_from_slice(b);
        Ok(u64::from_le_bytes(word))
    }

    /// Follows the unsigned offset stored at `position`.
    pub(crate) fn indirect(&self, position: usize, what: &str) -> Result<usize, InputError> {
        let offset = self.u32(position, what)? as usize;
        position
            .checked_add(offset)
            .filter(|&p| p < self.bytes.len())
            .ok_or_else(|| {
                self.corrupt(
                    what,
                    format!("offset {offset} at byte {position} points outside the file"),
                )
            })
    }

    pub(crate) fn table(&self, position: usize, what: &str) -> Result<Table, InputError> {
        let back = self.u32(position, what)? as i32 as i64;
        let vtable = position as i64 - back;
        if vtable < 0 || vtable as usize >= self.bytes.len() {
            return Err(self.corrupt(
                what,
                format!("vtable of the table at byte {position} lies outside the file"),
            ));
        }
        let vtable = vtable as usize;
        let vtable_len = self.u16(vtable, what)? as usize;
        if vtable_len < 4 || !vtable_len.is_multiple_of(2) {
            return Err(self.corrupt(
                what,
                format!("bad vtable length {vtable_len} at byte {vtable}"),
            ));
        }
        self.slice(vtable, vtable_len, what)?;
        Ok(Table {
            position,
            vtable,
            vtable_len,
        })
    }

    /// The position of field `id` of `table`, `None` when the field is absent.
    pub(crate) fn field(
        &self,
        table: Table,
        id: usize,
        what: &str,
    ) -> Result<Option<usize>, InputError> {
        let slot = 4 + 2 * id;
        if slot + 2 > table.vtable_len {
            return Ok(None);
        }
        let offset = self.u16(table.vtable + slot, what)? as usize;
        Ok((offset != 0).then_some(table.position + offset))
    }

    pub(crate) fn scalar_u8(
        &self,
        table: Table,
        id: usize,
        default: u8,
        what: &str,
    ) -> Result<u8, InputError> {
        match self.field(table, id, what)? {
            Some(p) => Ok(self.slice(p, 1, what)?[0]),
            None => Ok(default),
        }
    }

    pub(crate) fn scalar_u32(
        &self,
        table: Table,
        id: usize,
        default: u32,
        what: &str,
    ) -> Result<u32, InputError> {
        match self.field(table, id, what)? {
            Some(p) => self.u32(p, what),
            None => Ok(default),
        }
    }

    pub(crate) fn scalar_u64(
        &self,
        table: Table,
        id: usize,
        default: u64,
        what: &str,
    ) -> Result<u64, InputError> {
        match self.field(table, id, what)? {
            Some(p) => self.u64(p, what),
            None => Ok(default),
        }
    }

    /// A vector field: the position of its first element and its length (elements of
    /// `element_size` bytes, all inside the file). `None` when the field is absent.
    pub(crate) fn vector(
        &self,
        table: Table,
        id: usize,
        element_size: usize,
        what: &str,
    ) -> Result<Option<(usize, usize)>, InputError> {
        let Some(p) = self.field(table, id, what)? else {
            return Ok(None);
        };
        let start = self.indirect(p, what)?;
        let len = self.u32(start, what)? as usize;
        let bytes = len
            .checked_mul(element_size)
            .ok_or_else(|| self.corrupt(what, "vector length overflows"))?;
        self.slice(start + 4, bytes, what)?;
        Ok(Some((start + 4, len)))
    }

    pub(crate) fn vector_i32(
        &self,
        table: Table,
        id: usize,
        what: &str,
    ) -> Result<Option<Vec<i32>>, InputError> {
        let Some((start, len)) = self.vector(table, id, 4, what)? else {
            return Ok(None);
        };
        (0..len)
            .map(|k| self.u32(start + 4 * k, what).map(|v| v as i32))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// The positions of the tables a vector-of-tables field points at (empty when absent).
    pub(crate) fn vector_positions(
        &self,
        table: Table,
        id: usize,
        what: &str,
    ) -> Result<Vec<usize>, InputError> {
        let Some((start, len)) = self.vector(table, id, 4, what)? else {
            return Ok(Vec::new());
        };
        (0..len)
            .map(|k| self.indirect(start + 4 * k, &format!("{what}[{k}]")))
            .collect()
    }

    /// The tables a vector-of-tables field points at (empty when absent).
    pub(crate) fn vector_tables(
        &self,
        table: Table,
        id: usize,
        what: &str,
    ) -> Result<Vec<Table>, InputError> {
        self.vector_positions(table, id, what)?
            .into_iter()
            .enumerate()
            .map(|(k, position)| self.table(position, &format!("{what}[{k}]")))
            .collect()
    }

    pub(crate) fn string(
        &self,
        table: Table,
        id: usize,
        what: &str,
    ) -> Result<Option<String>, InputError> {
        let Some((start, len)) = self.vector(table, id, 1, what)? else {
            return Ok(None);
        };
        Ok(Some(
            String::from_utf8_lossy(self.slice(start, len, what)?).into_owned(),
        ))
    }
}

/// Reads the main subgraph of a TFLite model into a [`Graph`], paying `budget` for every
/// table, index, dimension and name read (a FlatBuffer may point many times at one table).
pub(crate) fn read_graph(
    bytes: &[u8],
    file: &str,
    options: &ImportOptions,
    budget: &mut Budget<'_>,
) -> Result<Graph, InputError> {
    check_identifier(bytes, file)?;
    let fb = FlatBuffer { bytes, file };
    let model_position = fb.indirect(0, "root table")?;
    let model = fb.table(model_position, "Model")?;
    let has_data = buffers_with_data(&fb, model, budget)?;
    let mut warnings = Vec::new();
    let main = main_subgraph(&fb, model, &mut warnings, budget)?;

    let tensor_tables = tables(&fb, main, 0, "subgraphs[0].tensors", budget)?;
    let count = tensor_tables.len();
    let inputs = read_indices(&fb, main, 1, "subgraphs[0].inputs", count, budget)?;
    let outputs = read_indices(&fb, main, 2, "subgraphs[0].outputs", count, budget)?;
    let mut is_input = vec![false; count];
    for &t in &inputs {
        is_input[t] = true;
    }
    let (operators, produced) = read_operators(&fb, main, count, budget)?;
    let mut constant = stored_constants(&fb, &tensor_tables, &has_data, &produced, &is_input)?;
    fold_constants(&operators, &mut constant, &mut warnings);
    let (tensors, input_shapes) = read_tensors(
        &fb,
        &tensor_tables,
        &inputs,
        &constant,
        options,
        &mut warnings,
        budget,
    )?;
    Ok(Graph {
        tensors,
        operators,
        inputs,
        outputs,
        input_shapes,
        warnings,
    })
}

/// Checks the file is long enough and has the `TFL3` identifier.
pub(crate) fn check_identifier(bytes: &[u8], file: &str) -> Result<(), InputError> {
    if bytes.len() < 8 {
        return Err(fail(
            file,
            format!(
                "not a valid TFLite model: the file has only {} bytes",
                bytes.len()
            ),
        ));
    }
    if &bytes[4..8] != b"TFL3" {
        return Err(fail(
            file,
            "not a TFLite model: the FlatBuffer file identifier 'TFL3' is missing at bytes 4..8",
        ));
    }
    Ok(())
}

/// The tables a vector-of-tables field points at, paid for before they are read.
fn tables(
    fb: &FlatBuffer<'_>,
    table: Table,
    id: usize,
    what: &str,
    budget: &mut Budget<'_>,
) -> Result<Vec<Table>, InputError> {
    if let Some((_, len)) = fb.vector(table, id, 4, what)? {
        budget.charge(len as u64, what)?;
    }
    fb.vector_tables(table, id, what)
}

/// An `int32` vector field (empty when absent), paid for before it is read.
fn ints(
    fb: &FlatBuffer<'_>,
    table: Table,
    id: usize,
    what: &str,
    budget: &mut Budget<'_>,
) -> Result<Option<Vec<i32>>, InputError> {
    if let Some((_, len)) = fb.vector(table, id, 4, what)? {
        budget.charge(1 + len as u64, what)?;
    }
    fb.vector_i32(table, id, what)
}

/// Which of the model's buffers hold data (inline or outside the FlatBuffer).
fn buffers_with_data(
    fb: &FlatBuffer<'_>,
    model: Table,
    budget: &mut Budget<'_>,
) -> Result<Vec<bool>, InputError> {
    let buffer_tables = tables(fb, model, 4, "Model.buffers", budget)?;
    let mut has_data = Vec::with_capacity(buffer_tables.len());
    for (k, &buffer) in buffer_tables.iter().enumerate() {
        let what = format!("Model.buffers[{k}]");
        let inline = fb.vector(buffer, 0, 1, &what)?.map_or(0, |(_, len)| len);
        let outside = fb.scalar_u64(buffer, 2, 0, &what)?;
        has_data.push(inline > 0 || outside > 0);
    }
    Ok(has_data)
}

/// The first (main) subgraph, with a warning when there are others.
fn main_subgraph(
    fb: &FlatBuffer<'_>,
    model: Table,
    warnings: &mut Vec<String>,
    budget: &mut Budget<'_>,
) -> Result<Table, InputError> {
    let subgraphs = tables(fb, model, 2, "Model.subgraphs", budget)?;
    let Some(&main) = subgraphs.first() else {
        return Err(fail(fb.file, "the TFLite model has no subgraph"));
    };
    if subgraphs.len() > 1 {
        warnings.push(format!(
            "the model has {} subgraphs: only the first (main) one is imported; control-flow \
             bodies in the others are not",
            subgraphs.len()
        ));
    }
    Ok(main)
}

/// A vector of tensor indices, each checked against the `count` tensors of the subgraph; `-1`
/// (an optional input left out) is skipped.
fn read_indices(
    fb: &FlatBuffer<'_>,
    table: Table,
    id: usize,
    what: &str,
    count: usize,
    budget: &mut Budget<'_>,
) -> Result<Vec<usize>, InputError> {
    let raw = ints(fb, table, id, what, budget)?.unwrap_or_default();
    let mut indices = Vec::with_capacity(raw.len());
    for index in raw {
        match index {
            -1 => {}
            i if i >= 0 && (i as usize) < count => indices.push(i as usize),
            i => return Err(fail(fb.file, format!("not a valid TFLite model: {what} names tensor {i}, but the subgraph has {count} tensors"))),
        }
    }
    Ok(indices)
}

/// The main subgraph's operators, and which of its `count` tensors some operator produces.
fn read_operators(
    fb: &FlatBuffer<'_>,
    main: Table,
    count: usize,
    budget: &mut Budget<'_>,
) -> Result<(Vec<Operator>, Vec<bool>), InputError> {
    let operator_tables = tables(fb, main, 3, "subgraphs[0].operators", budget)?;
    let mut operators = Vec::with_capacity(operator_tables.len());
    let mut produced = vec![false; count];
    for (k, &op) in operator_tables.iter().enumerate() {
        let what = format!("subgraphs[0].operators[{k}]");
        let operator = Operator {
            inputs: read_indices(fb, op, 1, &format!("{what}.inputs"), count, budget)?,
            outputs: read_indices(fb, op, 2, &format!("{what}.outputs"), count, budget)?,
        };
        for &t in &operator.outputs {
            produced[t] = true;
        }
        operators.push(operator);
    }
    Ok((operators, produced))
}

/// Tensors with data, and tensors nobody produces that are not graph inputs, are constant.
fn stored_constants(
    fb: &FlatBuffer<'_>,
    tensor_tables: &[Table],
    has_data: &[bool],
    produced: &[bool],
    is_input: &[bool],
) -> Result<Vec<bool>, InputError> {
    let mut constant = vec![false; tensor_tables.len()];
    for (t, &table) in tensor_tables.iter().enumerate() {
        let buffer =
            fb.scalar_u32(table, 2, 0, &format!("subgraphs[0].tensors[{t}].buffer"))? as usize;
        if buffer != 0 && buffer >= has_data.len() {
            return Err(fail(fb.file, format!("not a valid TFLite model: tensor {t} uses buffer {buffer}, but the model has {} buffers", has_data.len())));
        }
        constant[t] = (buffer != 0 && has_data[buffer]) || (!produced[t] && !is_input[t]);
    }
    Ok(constant)
}

/// The outputs of operators whose inputs are all constant are constant too (folded at load
/// time), in operator order.
fn fold_constants(operators: &[Operator], constant: &mut [bool], warnings: &mut Vec<String>) {
    let mut folded = 0usize;
    for op in operators {
        if !op.inputs.is_empty() && op.inputs.iter().all(|&t| constant[t]) && !op.outputs.is_empty()
        {
            folded += 1;
            for &t in &op.outputs {
                constant[t] = true;
            }
        }
    }
    if folded > 0 {
        warnings.push(format!(
            "{folded} operator(s) with only constant inputs (such as DEQUANTIZE or DENSIFY of \
             weights) are folded: their outputs count as constants"
        ));
    }
}

/// The graph inputs' names and shapes, in the subgraph's input order.
type InputShapes = Vec<(String, Vec<u64>)>;

/// Every tensor of the main subgraph with its size, and the graph inputs' shapes in the
/// subgraph's input order.
fn read_tensors(
    fb: &FlatBuffer<'_>,
    tensor_tables: &[Table],
    inputs: &[usize],
    constant: &[bool],
    options: &ImportOptions,
    warnings: &mut Vec<String>,
    budget: &mut Budget<'_>,
) -> Result<(Vec<Tensor>, InputShapes), InputError> {
    let mut tensors = Vec::with_capacity(tensor_tables.len());
    // The shape of each graph input, by tensor index.
    let mut input_dims: Vec<Option<(String, Vec<u64>)>> = vec![None; tensor_tables.len()];
    for &t in inputs {
        input_dims[t] = Some(Default::default());
    }
    let (mut dynamic, mut untyped) = (0usize, 0usize);
    for (t, &table) in tensor_tables.iter().enumerate() {
        let what = format!("subgraphs[0].tensors[{t}]");
        let name_what = format!("{what}.name");
        if let Some((_, len)) = fb.vector(table, 3, 1, &name_what)? {
            budget.charge(text_units(len), &name_what)?;
        }
        let name = fb.string(table, 3, &name_what)?.unwrap_or_default();
        let is_input = input_dims[t].is_some();
        let constant = constant[t];
        let tensor_type = fb.scalar_u8(table, 1, 0, &format!("{what}.type"))?;
        let override_shape = options
            .input_shapes
            .iter()
            .find(|(n, _)| is_input && *n == name);
        let (dims, is_dynamic) =
            tensor_dims(fb, table, &what, override_shape, options.batch, budget)?;
        let live = !constant;
        if live && is_dynamic {
            dynamic += 1;
        }
        let bits = element_bits(tensor_type);
        if live && bits.is_none() {
            untyped += 1;
        }
        if is_input && !constant {
            input_dims[t] = Some((name.clone(), dims.clone()));
        }
        tensors.push(Tensor::sized(name, Some(&dims), bits, constant));
    }
    if dynamic > 0 {
        warnings.push(format!(
            "{dynamic} activation tensor(s) have dynamic dimensions, set to the batch value {}",
            options.batch
        ));
    }
    if untyped > 0 {
        warnings.push(format!(
            "{untyped} activation tensor(s) have an element type without a fixed size (string, resource, variant)"
        ));
    }
    // Graph input shapes in the subgraph's input order (each once, and not the constants).
    let input_shapes = inputs
        .iter()
        .filter_map(|&t| {
            let input = input_dims[t].take();
            input.filter(|_| !constant[t])
        })
        .collect();
    Ok((tensors, input_shapes))
}

/// A tensor's dimensions: the given shape for an overridden graph input, else the file's, with
/// dynamic dimensions (in `shape_signature`, or not positive) set to `batch`; and whether any was
/// dynamic.
fn tensor_dims(
    fb: &FlatBuffer<'_>,
    table: Table,
    what: &str,
    override_shape: Option<&(String, Vec<u64>)>,
    batch: u64,
    budget: &mut Budget<'_>,
) -> Result<(Vec<u64>, bool), InputError> {
    let shape = ints(fb, table, 0, &format!("{what}.shape"), budget)?.unwrap_or_default();
    let signature = ints(fb, table, 7, &format!("{what}.shape_signature"), budget)?;
    if let Some((_, dims)) = override_shape {
        budget.charge(dims.len() as u64, what)?;
    }
    let mut is_dynamic = false;
    let dims: Vec<u64> = match override_shape {
        Some((_, dims)) => dims.clone(),
        None => shape
            .iter()
            .enumerate()
            .map(|(k, &d)| {
                let signed = signature
                    .as_ref()
                    .filter(|s| s.len() == shape.len())
                    .map_or(d, |s| s[k]);
                if signed > 0 && d > 0 {
                    d as u64
                } else {
                    is_dynamic = true;
                    batch
                }
            })
            .collect(),
    };
    Ok((dims, is_dynamic))
}

/// TFLite builtin operators with effects beyond their output tensors (state, calls into other
/// subgraphs, random numbers, custom code): a reordering keeps their relative order.
const SIDE_EFFECT_CODES: [i32; 14] = [
    31,  // CALL
    32,  // CUSTOM
    118, // IF
    119, // WHILE
    129, // CALL_ONCE
    142, // VAR_HANDLE
    143, // READ_VARIABLE
    144, // ASSIGN_VARIABLE
    146, // RANDOM_STANDARD_NORMAL
    148, // RANDOM_UNIFORM
    149, // MULTINOMIAL
    173, // STABLEHLO_CUSTOM_CALL
    200, // STABLEHLO_WHILE
    204, // STABLEHLO_RNG_BIT_GENERATOR
];

/// For each operator of the main subgraph, whether it may have side effects: its builtin code
/// is one of [`SIDE_EFFECT_CODES`] (or its operator code cannot be read), or it reads or writes
/// a variable tensor (`is_variable`, or a tensor with no data that is neither produced nor a
/// graph input: state kept between inferences).
pub(crate) fn side_effect_operators(bytes: &[u8], file: &str) -> Result<Vec<bool>, InputError> {
    check_identifier(bytes, file)?;
    let fb = FlatBuffer { bytes, file };
    let model = fb.table(fb.indirect(0, "root table")?, "Model")?;
    let codes: Vec<Option<i32>> = fb
        .vector_tables(model, 1, "Model.operator_codes")?
        .into_iter()
        .enumerate()
        .map(|(k, code)| {
            let what = format!("Model.operator_codes[{k}]");
            let deprecated = fb.scalar_u8(code, 0, 0, &what)? as i8 as i32;
            let builtin = fb.scalar_u32(code, 3, 0, &what)? as i32;
            Ok(Some(deprecated.max(builtin)))
        })
        .collect::<Result<_, InputError>>()?;
    let subgraphs = fb.vector_tables(model, 2, "Model.subgraphs")?;
    let Some(&main) = subgraphs.first() else {
        return Err(fail(file, "the TFLite model has no subgraph"));
    };
    let tensors = fb.vector_tables(main, 0, "subgraphs[0].tensors")?;
    let buffers = fb.vector_tables(model, 4, "Model.buffers")?;
    let mut is_input = vec![false; tensors.len()];
    for t in fb
        .vector_i32(main, 1, "subgraphs[0].inputs")?
        .unwrap_or_default()
    {
        if let Some(flag) = usize::try_from(t).ok().and_then(|t| is_input.get_mut(t)) {
            *flag = true;
        }
    }
    let operators = fb.vector_tables(main, 3, "subgraphs[0].operators")?;
    let mut produced = vec![false; tensors.len()];
    let mut lists = Vec::with_capacity(operators.len());
    for (k, &op) in operators.iter().enumerate() {
        let what = format!("subgraphs[0].operators[{k}]");
        let ins = fb
            .vector_i32(op, 1, &format!("{what}.inputs"))?
            .unwrap_or_default();
        let outs = fb
            .vector_i32(op, 2, &format!("{what}.outputs"))?
            .unwrap_or_default();
        for &t in &outs {
            if let Some(p) = usize::try_from(t).ok().and_then(|t| produced.get_mut(t)) {
                *p = true;
            }
        }
        let field = format!("{what}.opcode_index");
        let index = fb.scalar_u32(op, 0, 0, &field)? as usize;
        // An operator of unknown kind may have any effect: no order can be proven safe.
        let code = codes.get(index).copied().ok_or_else(|| {
            InputError::at_line(
                file,
                None,
                Some(&field),
                format!(
                    "opcode index {index} is past the operator code table ({} codes): the \
                     operator's kind is unknown, so it may have side effects and the operators \
                     cannot be reordered",
                    codes.len()
                ),
            )
        })?;
        lists.push((code, ins, outs));
    }
    let mut variable = vec![false; tensors.len()];
    for (t, &tensor) in tensors.iter().enumerate() {
        let what = format!("subgraphs[0].tensors[{t}]");
        let flagged = fb.scalar_u8(tensor, 5, 0, &format!("{what}.is_variable"))? != 0;
        let buffer = fb.scalar_u32(tensor, 2, 0, &format!("{what}.buffer"))? as usize;
        let has_data = match buffers.get(buffer) {
            Some(&b) if buffer != 0 => {
                fb.vector(b, 0, 1, &format!("Model.buffers[{buffer}]"))?
                    .is_some_and(|(_, len)| len > 0)
                    || fb.scalar_u64(b, 2, 0, &format!("Model.buffers[{buffer}].size"))? > 0
            }
            _ => false,
        };
        variable[t] = flagged || (!has_data && !produced[t] && !is_input[t]);
    }
    Ok(lists
        .into_iter()
        .map(|(code, ins, outs)| {
            let touches_state = ins.iter().chain(&outs).any(|&t| {
                usize::try_from(t)
                    .ok()
                    .and_then(|t| variable.get(t).copied())
                    .unwrap_or(false)
            });
            touches_state || code.is_none_or(|c| SIDE_EFFECT_CODES.contains(&c))
        })
        .collect())
}
