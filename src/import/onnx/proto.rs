//! The protobuf wire format, and the ONNX messages (`ModelProto` parts) the importer reads.

use super::super::budget::Budget;
use super::dtype::{element_bits, is_integer};
use std::collections::HashSet;

/// The most values kept for one tensor (shape computations need only a few).
const VALUE_LIMIT: u64 = 4096;
/// The deepest nesting of control-flow bodies followed.
const DEPTH_LIMIT: usize = 32;

/// One field's payload.
#[derive(Clone, Copy, Debug)]
pub(super) enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// Iterates over the fields of one message.
pub(super) struct Fields<'a> {
    bytes: &'a [u8],
    pub(super) position: usize,
}

impl<'a> Fields<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        Fields { bytes, position: 0 }
    }

    pub(super) fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.bytes.get(self.position) else {
                return Err(format!(
                    "the message ends inside a number at byte {}; is the file truncated?",
                    self.position
                ));
            };
            self.position += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(format!(
            "a number longer than 10 bytes ends at byte {}",
            self.position
        ))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], String> {
        let end = self
            .position
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| {
                format!(
                    "a field of {len} bytes at byte {} runs past the end of its message ({} bytes); \
                     is the file truncated?",
                    self.position,
                    self.bytes.len()
                )
            })?;
        let slice = &self.bytes[self.position..end];
        self.position = end;
        Ok(slice)
    }

    /// The next field number and payload, `None` at the end of the message.
    pub(super) fn next_field(&mut self) -> Result<Option<(u64, Wire<'a>)>, String> {
        if self.position >= self.bytes.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 {
            return Err(format!("field number 0 at byte {}", self.position));
        }
        let wire = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                let b = self.take(8)?;
                Wire::Fixed64(u64::from_le_bytes(b.try_into().expect("8 bytes")))
            }
            2 => {
                let len = self.varint()?;
                let len = usize::try_from(len).map_err(|_| format!("length {len} too large"))?;
                Wire::Bytes(self.take(len)?)
            }
            5 => {
                let b = self.take(4)?;
                Wire::Fixed32(u32::from_le_bytes(b.try_into().expect("4 bytes")))
            }
            other => {
                return Err(format!(
                    "unsupported wire type {other} (field {number}) at byte {}",
                    self.position
                ))
            }
        };
        Ok(Some((number, wire)))
    }
}

pub(super) fn as_bytes<'a>(wire: Wire<'a>, what: &str) -> Result<&'a [u8], String> {
    match wire {
        Wire::Bytes(b) => Ok(b),
        _ => Err(format!("{what}: expected a length-delimited field")),
    }
}

pub(super) fn as_string(wire: Wire<'_>, what: &str) -> Result<String, String> {
    Ok(String::from_utf8_lossy(as_bytes(wire, what)?).into_owned())
}

pub(super) fn as_varint(wire: Wire<'_>, what: &str) -> Result<u64, String> {
    match wire {
        Wire::Varint(v) => Ok(v),
        _ => Err(format!("{what}: expected a number")),
    }
}

/// Appends the varints of a repeated integer field (packed or not).
fn push_varints(wire: Wire<'_>, out: &mut Vec<i64>, what: &str) -> Result<(), String> {
    match wire {
        Wire::Varint(v) => out.push(v as i64),
        Wire::Bytes(b) => {
            let mut packed = Fields::new(b);
            while packed.position < b.len() {
                out.push(packed.varint()? as i64);
            }
        }
        _ => return Err(format!("{what}: expected integers")),
    }
    Ok(())
}

/// Appends the floats of a repeated `float` field (packed or not).
fn push_floats(wire: Wire<'_>, out: &mut Vec<f64>, what: &str) -> Result<(), String> {
    match wire {
        Wire::Fixed32(v) => out.push(f64::from(f32::from_bits(v))),
        Wire::Bytes(b) if b.len() % 4 == 0 => out.extend(
            b.chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4 bytes")))),
        ),
        _ => return Err(format!("{what}: expected floats")),
    }
    Ok(())
}

/// Appends the doubles of a repeated `double` field (packed or not).
fn push_doubles(wire: Wire<'_>, out: &mut Vec<f64>, what: &str) -> Result<(), String> {
    match wire {
        Wire::Fixed64(v) => out.push(f64::from_bits(v)),
        Wire::Bytes(b) if b.len() % 8 == 0 => out.extend(
            b.chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))),
        ),
        _ => return Err(format!("{what}: expected doubles")),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The messages read.

/// Known values of a small tensor.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Values {
    Ints(Vec<i64>),
    Floats(Vec<f64>),
}

impl Values {
    /// The number of values.
    pub(super) fn len(&self) -> usize {
        match self {
            Values::Ints(v) => v.len(),
            Values::Floats(v) => v.len(),
        }
    }

    pub(super) fn ints(&self) -> Option<Vec<i64>> {
        match self {
            Values::Ints(v) => Some(v.clone()),
            Values::Floats(_) => None,
        }
    }

    pub(super) fn floats(&self) -> Vec<f64> {
        match self {
            Values::Ints(v) => v.iter().map(|&x| x as f64).collect(),
            Values::Floats(v) => v.clone(),
        }
    }
}

/// `TensorProto`: what is needed of an initializer or an attribute's tensor.
#[derive(Clone, Debug, Default)]
pub(super) struct TensorProto {
    pub(super) name: String,
    pub(super) dims: Vec<i64>,
    pub(super) data_type: i32,
    pub(super) values: Option<Values>,
}

fn half_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let mantissa = f64::from(bits & 0x3ff);
    sign * match exponent {
        0 => mantissa * 2f64.powi(-24),
        31 => f64::INFINITY,
        e => (1.0 + mantissa / 1024.0) * 2f64.powi(e - 15),
    }
}

/// `raw_data` read as little-endian elements of ONNX data type `data_type`; `None` for a type
/// whose values are not read.
fn raw_values(data_type: i32, raw: &[u8]) -> Option<Values> {
    let width = element_bits(data_type).unwrap_or(0) / 8;
    let chunks = |w: usize| raw.chunks_exact(w);
    match (data_type, width) {
        (1, 4) => Some(Values::Floats(
            chunks(4)
                .map(|c| f64::from(f32::from_le_bytes(c.try_into().expect("4"))))
                .collect(),
        )),
        (11, 8) => Some(Values::Floats(
            chunks(8)
                .map(|c| f64::from_le_bytes(c.try_into().expect("8")))
                .collect(),
        )),
        (10, 2) => Some(Values::Floats(
            chunks(2)
                .map(|c| half_to_f64(u16::from_le_bytes([c[0], c[1]])))
                .collect(),
        )),
        (7 | 13, 8) => Some(Values::Ints(
            chunks(8)
                .map(|c| i64::from_le_bytes(c.try_into().expect("8")))
                .collect(),
        )),
        (6, 4) => Some(Values::Ints(
            chunks(4)
                .map(|c| i64::from(i32::from_le_bytes(c.try_into().expect("4"))))
                .collect(),
        )),
        (12, 4) => Some(Values::Ints(
            chunks(4)
                .map(|c| i64::from(u32::from_le_bytes(c.try_into().expect("4"))))
                .collect(),
        )),
        (3, 1) => Some(Values::Ints(
            raw.iter().map(|&b| i64::from(b as i8)).collect(),
        )),
        (2 | 9, 1) => Some(Values::Ints(raw.iter().map(|&b| i64::from(b)).collect())),
        _ => None,
    }
}

pub(super) fn parse_tensor(bytes: &[u8]) -> Result<TensorProto, String> {
    let mut tensor = TensorProto::default();
    let mut fields = Fields::new(bytes);
    let (mut raw, mut external) = (None, false);
    let (mut ints, mut floats) = (Vec::new(), Vec::new());
    let mut int_fields = false;
    let mut float_fields = false;
    let mut data_fields = Vec::new();
    while let Some((number, wire)) = fields.next_field()? {
        match number {
            1 => push_varints(wire, &mut tensor.dims, "TensorProto.dims")?,
            2 => tensor.data_type = as_varint(wire, "TensorProto.data_type")? as i32,
            8 => tensor.name = as_string(wire, "TensorProto.name")?,
            9 => raw = Some(as_bytes(wire, "TensorProto.raw_data")?),
            14 => external = as_varint(wire, "TensorProto.data_location")? == 1,
            4 | 5 | 7 | 10 | 11 => data_fields.push((number, wire)),
            _ => {}
        }
    }
    let count = tensor.dims.iter().try_fold(1u64, |acc, &d| {
        u64::try_from(d).ok().and_then(|d| acc.checked_mul(d))
    });
    if external || count.is_none_or(|c| c > VALUE_LIMIT) {
        return Ok(tensor);
    }
    for (number, wire) in data_fields {
        match number {
            5 | 7 | 11 => {
                int_fields = true;
                push_varints(wire, &mut ints, "TensorProto data")?;
            }
            4 => {
                float_fields = true;
                push_floats(wire, &mut floats, "TensorProto.float_data")?;
            }
            10 => {
                float_fields = true;
                push_doubles(wire, &mut floats, "TensorProto.double_data")?;
            }
            _ => {}
        }
    }
    let dt = tensor.data_type;
    tensor.values = if let Some(raw) = raw {
        raw_values(dt, raw)
    } else if int_fields && is_integer(dt) {
        Some(Values::Ints(ints))
    } else if float_fields {
        Some(Values::Floats(floats))
    } else if count == Some(0) {
        Some(Values::Ints(Vec::new()))
    } else {
        None
    };
    if let Some(v) = &tensor.values {
        let len = match v {
            Values::Ints(v) => v.len(),
            Values::Floats(v) => v.len(),
        };
        if Some(len as u64) != count {
            tensor.values = None;
        }
    }
    Ok(tensor)
}

/// `AttributeProto`: the scalar and list payloads, a tensor, and subgraphs.
#[derive(Clone, Debug, Default)]
pub(super) struct Attribute<'a> {
    pub(super) name: String,
    pub(super) f: Option<f64>,
    pub(super) i: Option<i64>,
    pub(super) s: Option<String>,
    pub(super) t: Option<TensorProto>,
    pub(super) floats: Vec<f64>,
    pub(super) ints: Vec<i64>,
    pub(super) graphs: Vec<&'a [u8]>,
}

fn parse_attribute(bytes: &[u8]) -> Result<Attribute<'_>, String> {
    let mut attribute = Attribute::default();
    let mut fields = Fields::new(bytes);
    while let Some((number, wire)) = fields.next_field()? {
        match number {
            1 => attribute.name = as_string(wire, "AttributeProto.name")?,
            2 => {
                let mut f = Vec::new();
                push_floats(wire, &mut f, "AttributeProto.f")?;
                attribute.f = f.first().copied();
            }
            3 => attribute.i = Some(as_varint(wire, "AttributeProto.i")? as i64),
            4 => attribute.s = Some(as_string(wire, "AttributeProto.s")?),
            5 => attribute.t = Some(parse_tensor(as_bytes(wire, "AttributeProto.t")?)?),
            6 | 11 => attribute.graphs.push(as_bytes(wire, "AttributeProto.g")?),
            7 => push_floats(wire, &mut attribute.floats, "AttributeProto.floats")?,
            8 => push_varints(wire, &mut attribute.ints, "AttributeProto.ints")?,
            _ => {}
        }
    }
    Ok(attribute)
}

/// `NodeProto`, with the outer-scope names its subgraphs read.
#[derive(Clone, Debug, Default)]
pub(super) struct Node<'a> {
    pub(super) name: String,
    pub(super) op_type: String,
    pub(super) domain: String,
    pub(super) inputs: Vec<String>,
    pub(super) outputs: Vec<String>,
    pub(super) attributes: Vec<Attribute<'a>>,
    /// Names read inside control-flow bodies and not defined there.
    pub(super) outer_reads: Vec<String>,
}

impl Node<'_> {
    pub(super) fn attribute(&self, name: &str) -> Option<&Attribute<'_>> {
        self.attributes.iter().find(|a| a.name == name)
    }

    pub(super) fn int(&self, name: &str, default: i64) -> i64 {
        self.attribute(name).and_then(|a| a.i).unwrap_or(default)
    }

    pub(super) fn ints(&self, name: &str) -> Option<Vec<i64>> {
        self.attribute(name).map(|a| a.ints.clone())
    }

    pub(super) fn floats(&self, name: &str) -> Option<Vec<f64>> {
        self.attribute(name).map(|a| a.floats.clone())
    }

    pub(super) fn string(&self, name: &str) -> Option<&str> {
        self.attribute(name).and_then(|a| a.s.as_deref())
    }

    /// `name (op_type)` or `#index (op_type)` for messages.
    pub(super) fn describe(&self, index: usize) -> String {
        if self.name.is_empty() {
            format!("node {index} ({})", self.op_type)
        } else {
            format!("node '{}' ({})", self.name, self.op_type)
        }
    }
}

fn parse_node<'a>(
    bytes: &'a [u8],
    depth: usize,
    budget: &mut Budget<'_>,
) -> Result<Node<'a>, String> {
    let mut node = Node::default();
    let mut fields = Fields::new(bytes);
    while let Some((number, wire)) = fields.next_field()? {
        match number {
            1 => node.inputs.push(as_string(wire, "NodeProto.input")?),
            2 => node.outputs.push(as_string(wire, "NodeProto.output")?),
            3 => node.name = as_string(wire, "NodeProto.name")?,
            4 => node.op_type = as_string(wire, "NodeProto.op_type")?,
            5 => node
                .attributes
                .push(parse_attribute(as_bytes(wire, "NodeProto.attribute")?)?),
            7 => node.domain = as_string(wire, "NodeProto.domain")?,
            _ => {}
        }
    }
    let mut reads = Vec::new();
    for attribute in &node.attributes {
        for body in &attribute.graphs {
            if depth >= DEPTH_LIMIT {
                return Err(format!(
                    "control-flow bodies nested deeper than {DEPTH_LIMIT}"
                ));
            }
            let body_reads = outer_reads(body, depth + 1, budget)?;
            // Names read deep inside are copied up once per level: pay for each copy.
            budget.charge_text(
                body_reads.len() as u64,
                "the names control-flow bodies read",
            )?;
            reads.extend(body_reads);
        }
    }
    reads.sort();
    reads.dedup();
    node.outer_reads = reads;
    Ok(node)
}

/// `ValueInfoProto`: a name, an element type and a shape whose dimensions may be unknown.
#[derive(Clone, Debug, Default)]
pub(super) struct ValueInfo {
    pub(super) name: String,
    pub(super) elem: Option<i32>,
    /// `None`: no shape; `Some(dims)` with `None` for a dynamic dimension.
    pub(super) dims: Option<Vec<Option<u64>>>,
}

fn parse_value_info(bytes: &[u8]) -> Result<ValueInfo, String> {
    let mut info = ValueInfo::default();
    let mut fields = Fields::new(bytes);
    while let Some((number, wire)) = fields.next_field()? {
        match number {
            1 => info.name = as_string(wire, "ValueInfoProto.name")?,
            2 => {
                let mut type_fields = Fields::new(as_bytes(wire, "TypeProto")?);
                while let Some((number, wire)) = type_fields.next_field()? {
                    if number != 1 {
                        continue; // sequences, maps, optionals: no tensor shape
                    }
                    let mut tensor_fields = Fields::new(as_bytes(wire, "TypeProto.tensor_type")?);
                    while let Some((number, wire)) = tensor_fields.next_field()? {
                        match number {
                            1 => info.elem = Some(as_varint(wire, "elem_type")? as i32),
                            2 => {
                                let mut dims = Vec::new();
                                let mut shape_fields =
                                    Fields::new(as_bytes(wire, "TensorShapeProto")?);
                                while let Some((number, wire)) = shape_fields.next_field()? {
                                    if number != 1 {
                                        continue;
                                    }
                                    let mut value = None;
                                    let mut dim_fields = Fields::new(as_bytes(wire, "dim")?);
                                    while let Some((number, wire)) = dim_fields.next_field()? {
                                        if number == 1 {
                                            let v = as_varint(wire, "dim_value")? as i64;
                                            value = (v > 0).then_some(v as u64);
                                        }
                                    }
                                    dims.push(value);
                                }
                                info.dims = Some(dims);
                            }
                            _ => {}
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(info)
}

/// `GraphProto`.
#[derive(Clone, Debug, Default)]
pub(super) struct GraphProto<'a> {
    pub(super) nodes: Vec<Node<'a>>,
    pub(super) initializers: Vec<TensorProto>,
    pub(super) sparse_initializers: Vec<String>,
    pub(super) inputs: Vec<ValueInfo>,
    pub(super) outputs: Vec<ValueInfo>,
    pub(super) value_info: Vec<ValueInfo>,
}

pub(super) fn parse_graph<'a>(
    bytes: &'a [u8],
    depth: usize,
    budget: &mut Budget<'_>,
) -> Result<GraphProto<'a>, String> {
    let mut graph = GraphProto::default();
    let mut fields = Fields::new(bytes);
    while let Some((number, wire)) = fields.next_field()? {
        match number {
            1 => graph.nodes.push(parse_node(
                as_bytes(wire, "GraphProto.node")?,
                depth,
                budget,
            )?),
            5 => graph
                .initializers
                .push(parse_tensor(as_bytes(wire, "GraphProto.initializer")?)?),
            15 => {
                // SparseTensorProto: values (1) is a TensorProto carrying the name.
                let mut sparse = Fields::new(as_bytes(wire, "GraphProto.sparse_initializer")?);
                while let Some((number, wire)) = sparse.next_field()? {
                    if number == 1 {
                        let values = parse_tensor(as_bytes(wire, "SparseTensorProto.values")?)?;
                        graph.sparse_initializers.push(values.name);
                    }
                }
            }
            11 => graph
                .inputs
                .push(parse_value_info(as_bytes(wire, "GraphProto.input")?)?),
            12 => graph
                .outputs
                .push(parse_value_info(as_bytes(wire, "GraphProto.output")?)?),
            13 => graph
                .value_info
                .push(parse_value_info(as_bytes(wire, "GraphProto.value_info")?)?),
            _ => {}
        }
    }
    Ok(graph)
}

/// The names a control-flow body reads from its enclosing scopes.
fn outer_reads(bytes: &[u8], depth: usize, budget: &mut Budget<'_>) -> Result<Vec<String>, String> {
    let body = parse_graph(bytes, depth, budget)?;
    let mut defined: HashSet<&str> = HashSet::new();
    defined.extend(body.inputs.iter().map(|i| i.name.as_str()));
    defined.extend(body.initializers.iter().map(|i| i.name.as_str()));
    defined.extend(body.sparse_initializers.iter().map(String::as_str));
    for node in &body.nodes {
        defined.extend(node.outputs.iter().map(String::as_str));
    }
    let mut reads = Vec::new();
    for node in &body.nodes {
        for name in node.inputs.iter().chain(&node.outer_reads) {
            if !name.is_empty() && !defined.contains(name.as_str()) {
                reads.push(name.clone());
            }
        }
    }
    for output in &body.outputs {
        if !defined.contains(output.name.as_str()) {
            reads.push(output.name.clone());
        }
    }
    Ok(reads)
}
