//! A minimal FlatBuffer writer and a tiny TFLite model built with it, for the importer and
//! plan-export tests.

/// A FlatBuffer being written: tables with 4-byte slots, children placed after their parents.
pub struct FlatBuffer {
    pub bytes: Vec<u8>,
}

/// A field of a table being written.
pub enum Field {
    Absent,
    U8(u8),
    U32(u32),
    /// An offset to an object written later (patched with [`FlatBuffer::point`]).
    Ref,
}

impl FlatBuffer {
    /// Starts a file: the root offset (patched later) and the identifier.
    pub fn new(identifier: &[u8; 4]) -> FlatBuffer {
        let mut bytes = vec![0u8; 4];
        bytes.extend_from_slice(identifier);
        FlatBuffer { bytes }
    }

    pub fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }

    pub fn put_u32(&mut self, position: usize, value: u32) {
        self.bytes[position..position + 4].copy_from_slice(&value.to_le_bytes());
    }

    /// Makes the offset slot at `slot` point at `target`.
    pub fn point(&mut self, slot: usize, target: usize) {
        assert!(target > slot, "FlatBuffer offsets point forward");
        self.put_u32(slot, (target - slot) as u32);
    }

    /// Writes a vtable and its table; returns the table's position and each field's slot.
    pub fn table(&mut self, fields: &[Field]) -> (usize, Vec<usize>) {
        self.pad();
        let vtable = self.bytes.len();
        let vtable_len = 4 + 2 * fields.len();
        let table_len = 4 + 4 * fields.len();
        self.bytes
            .extend_from_slice(&(vtable_len as u16).to_le_bytes());
        self.bytes
            .extend_from_slice(&(table_len as u16).to_le_bytes());
        for (k, field) in fields.iter().enumerate() {
            let offset = match field {
                Field::Absent => 0u16,
                _ => (4 + 4 * k) as u16,
            };
            self.bytes.extend_from_slice(&offset.to_le_bytes());
        }
        self.pad();
        let table = self.bytes.len();
        self.bytes
            .extend_from_slice(&((table - vtable) as i32).to_le_bytes());
        let mut slots = Vec::new();
        for field in fields {
            slots.push(self.bytes.len());
            match field {
                Field::Absent | Field::Ref => self.bytes.extend_from_slice(&[0; 4]),
                Field::U8(v) => self.bytes.extend_from_slice(&[*v, 0, 0, 0]),
                Field::U32(v) => self.bytes.extend_from_slice(&v.to_le_bytes()),
            }
        }
        (table, slots)
    }

    pub fn vector_i32(&mut self, values: &[i32]) -> usize {
        self.pad();
        let position = self.bytes.len();
        self.bytes
            .extend_from_slice(&(values.len() as u32).to_le_bytes());
        for v in values {
            self.bytes.extend_from_slice(&v.to_le_bytes());
        }
        position
    }

    pub fn bytes_vector(&mut self, data: &[u8]) -> usize {
        self.pad();
        let position = self.bytes.len();
        self.bytes
            .extend_from_slice(&(data.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(data);
        self.bytes.push(0); // strings end in NUL; harmless for byte vectors
        position
    }

    /// `Model.buffers` at the model's slot `slot`: 0 the empty sentinel, 1 holding `bytes` zero
    /// bytes of weights, then `more` left for the caller to point; returns every buffer's slot.
    pub fn weight_buffers(&mut self, slot: usize, bytes: usize, more: usize) -> Vec<usize> {
        let (buffers, buffer_slots) = self.vector_of_refs(2 + more);
        self.point(slot, buffers);
        let (empty, _) = self.table(&[]);
        self.point(buffer_slots[0], empty);
        let (with_data, data_slots) = self.table(&[Field::Ref]);
        self.point(buffer_slots[1], with_data);
        let data = self.bytes_vector(&vec![0u8; bytes]);
        self.point(data_slots[0], data);
        buffer_slots
    }

    /// A vector of `n` offsets; returns its position and the slots to point.
    pub fn vector_of_refs(&mut self, n: usize) -> (usize, Vec<usize>) {
        self.pad();
        let position = self.bytes.len();
        self.bytes.extend_from_slice(&(n as u32).to_le_bytes());
        let slots = (0..n)
            .map(|_| {
                self.bytes.extend_from_slice(&[0; 4]);
                self.bytes.len() - 4
            })
            .collect();
        (position, slots)
    }
}

/// One tensor of the test model: name, shape, TensorType, buffer index.
pub struct TfTensor(&'static str, &'static [i32], u8, u32);

/// A tiny TFLite model:
///
/// ```text
/// op0 DEQUANTIZE(w16) -> w          (constant input: folded, takes no step)
/// op1 CONV_2D(input, w, -1) -> conv step 0
/// op2 RELU(conv) -> relu            step 1
/// op3 RESHAPE(relu) -> out          step 2, graph output
/// ```
pub fn tiny_tflite() -> Vec<u8> {
    tflite_model(&ModelOptions::default())
}

/// What [`tflite_model`] adds to the tiny model.
#[derive(Default)]
pub struct ModelOptions {
    /// `Model.metadata` entries: a name and the 4 bytes of a buffer of its own.
    pub metadata: Vec<(&'static str, [u8; 4])>,
    /// A second subgraph with this many tensors (and no operators).
    pub second_subgraph: usize,
    /// A `Model` field with id 8, beyond the schema the plan writer knows.
    pub unknown_field: bool,
}

/// The tiny model of [`tiny_tflite`], with what `options` adds.
pub fn tflite_model(options: &ModelOptions) -> Vec<u8> {
    let tensors = [
        TfTensor("input", &[1, 4, 4, 2], 0, 0),
        TfTensor("w16", &[2, 1, 1, 2], 1, 1),
        TfTensor("w", &[2, 1, 1, 2], 0, 0),
        TfTensor("conv", &[1, 4, 4, 2], 0, 0),
        TfTensor("relu", &[1, 4, 4, 2], 0, 0),
        TfTensor("out", &[1, 10], 0, 0),
    ];
    let operators: [(&[i32], &[i32]); 4] = [
        (&[1], &[2]),
        (&[0, 2, -1], &[3]),
        (&[3], &[4]),
        (&[4], &[5]),
    ];
    let mut fb = FlatBuffer::new(b"TFL3");
    // Model: version, operator_codes, subgraphs, description, buffers, metadata_buffer,
    // metadata, signature_defs, and a field of a future schema.
    let mut model_fields = vec![
        Field::U32(3),
        Field::Absent,
        Field::Ref,
        Field::Absent,
        Field::Ref,
    ];
    if !options.metadata.is_empty() || options.unknown_field {
        model_fields.extend([Field::Absent, Field::Ref]);
    }
    if options.unknown_field {
        model_fields.extend([Field::Absent, Field::U32(7)]);
    }
    let (model, model_slots) = fb.table(&model_fields);
    fb.point(0, model);
    let subgraph_count = 1 + usize::from(options.second_subgraph > 0);
    let (subgraphs, subgraph_slots) = fb.vector_of_refs(subgraph_count);
    fb.point(model_slots[2], subgraphs);
    // SubGraph: tensors, inputs, outputs, operators, name.
    let (subgraph, sg_slots) = fb.table(&[Field::Ref, Field::Ref, Field::Ref, Field::Ref]);
    fb.point(subgraph_slots[0], subgraph);
    let (tensor_vector, tensor_slots) = fb.vector_of_refs(tensors.len());
    fb.point(sg_slots[0], tensor_vector);
    for (tensor, &slot) in tensors.iter().zip(&tensor_slots) {
        // Tensor: shape, type, buffer, name.
        let (table, slots) = fb.table(&[
            Field::Ref,
            Field::U8(tensor.2),
            Field::U32(tensor.3),
            Field::Ref,
        ]);
        fb.point(slot, table);
        let shape = fb.vector_i32(tensor.1);
        fb.point(slots[0], shape);
        let name = fb.bytes_vector(tensor.0.as_bytes());
        fb.point(slots[3], name);
    }
    let inputs = fb.vector_i32(&[0]);
    fb.point(sg_slots[1], inputs);
    let outputs = fb.vector_i32(&[5]);
    fb.point(sg_slots[2], outputs);
    let (operator_vector, operator_slots) = fb.vector_of_refs(operators.len());
    fb.point(sg_slots[3], operator_vector);
    for ((ins, outs), &slot) in operators.iter().zip(&operator_slots) {
        // Operator: opcode_index, inputs, outputs.
        let (table, slots) = fb.table(&[Field::U32(0), Field::Ref, Field::Ref]);
        fb.point(slot, table);
        let i = fb.vector_i32(ins);
        fb.point(slots[1], i);
        let o = fb.vector_i32(outs);
        fb.point(slots[2], o);
    }
    if options.second_subgraph > 0 {
        // SubGraph: tensors only, each a 4-byte int32 scalar.
        let (subgraph, slots) = fb.table(&[Field::Ref]);
        fb.point(subgraph_slots[1], subgraph);
        let (tensor_vector, tensor_slots) = fb.vector_of_refs(options.second_subgraph);
        fb.point(slots[0], tensor_vector);
        for &slot in &tensor_slots {
            let (table, _) = fb.table(&[Field::Absent, Field::U8(2)]);
            fb.point(slot, table);
        }
    }
    // Buffers: 0 is the empty sentinel, 1 holds the float16 weights, then one per metadata
    // entry.
    let buffer_slots = fb.weight_buffers(model_slots[4], 8, options.metadata.len());
    for (k, (_, bytes)) in options.metadata.iter().enumerate() {
        let (table, slots) = fb.table(&[Field::Ref]);
        fb.point(buffer_slots[2 + k], table);
        let data = fb.bytes_vector(bytes);
        fb.point(slots[0], data);
    }
    if model_fields.len() > 6 {
        // Metadata: name, buffer.
        let (vector, slots) = fb.vector_of_refs(options.metadata.len());
        fb.point(model_slots[6], vector);
        for (k, (name, _)) in options.metadata.iter().enumerate() {
            let (table, fields) = fb.table(&[Field::Ref, Field::U32(2 + k as u32)]);
            fb.point(slots[k], table);
            let text = fb.bytes_vector(name.as_bytes());
            fb.point(fields[0], text);
        }
    }
    fb.bytes
}

/// One tensor of a test model: shape, TensorType, buffer (1 holds weight data).
pub struct ModelTensor {
    pub shape: Vec<i32>,
    pub buffer: u32,
}

/// A `.tflite` file: `tensors` (float32), `operators` as (builtin code, inputs, outputs), the
/// graph's inputs and outputs. Buffer 1 holds data: tensors using it are weights.
pub fn tflite(
    tensors: &[ModelTensor],
    operators: &[(i32, Vec<i32>, Vec<i32>)],
    inputs: &[i32],
    outputs: &[i32],
) -> Vec<u8> {
    let mut codes: Vec<i32> = operators.iter().map(|o| o.0).collect();
    codes.sort_unstable();
    codes.dedup();
    tflite_with_codes(tensors, operators, inputs, outputs, &codes)
}

/// [`tflite`] with this operator code table: an operator whose code it lacks gets the opcode
/// index one past its end.
pub fn tflite_with_codes(
    tensors: &[ModelTensor],
    operators: &[(i32, Vec<i32>, Vec<i32>)],
    inputs: &[i32],
    outputs: &[i32],
    codes: &[i32],
) -> Vec<u8> {
    let mut fb = FlatBuffer::new(b"TFL3");
    // Model: version, operator_codes, subgraphs, description, buffers.
    let (model, model_slots) = fb.table(&[
        Field::U32(3),
        Field::Ref,
        Field::Ref,
        Field::Absent,
        Field::Ref,
    ]);
    fb.point(0, model);
    let (code_vector, code_slots) = fb.vector_of_refs(codes.len());
    fb.point(model_slots[1], code_vector);
    for (&code, &slot) in codes.iter().zip(&code_slots) {
        // OperatorCode: deprecated_builtin_code, custom_code, version, builtin_code.
        let (table, _) = fb.table(&[
            Field::U8(code.min(127) as u8),
            Field::Absent,
            Field::U32(1),
            Field::U32(code as u32),
        ]);
        fb.point(slot, table);
    }
    let (subgraphs, subgraph_slots) = fb.vector_of_refs(1);
    fb.point(model_slots[2], subgraphs);
    let (subgraph, sg_slots) = fb.table(&[Field::Ref, Field::Ref, Field::Ref, Field::Ref]);
    fb.point(subgraph_slots[0], subgraph);
    let (tensor_vector, tensor_slots) = fb.vector_of_refs(tensors.len());
    fb.point(sg_slots[0], tensor_vector);
    for (k, (tensor, &slot)) in tensors.iter().zip(&tensor_slots).enumerate() {
        let (table, slots) = fb.table(&[
            Field::Ref,
            Field::U8(0),
            Field::U32(tensor.buffer),
            Field::Ref,
        ]);
        fb.point(slot, table);
        let shape = fb.vector_i32(&tensor.shape);
        fb.point(slots[0], shape);
        let name = fb.bytes_vector(format!("t{k}").as_bytes());
        fb.point(slots[3], name);
    }
    let i = fb.vector_i32(inputs);
    fb.point(sg_slots[1], i);
    let o = fb.vector_i32(outputs);
    fb.point(sg_slots[2], o);
    let (operator_vector, operator_slots) = fb.vector_of_refs(operators.len());
    fb.point(sg_slots[3], operator_vector);
    for ((code, ins, outs), &slot) in operators.iter().zip(&operator_slots) {
        let index = codes.iter().position(|c| c == code).unwrap_or(codes.len()) as u32;
        let (table, slots) = fb.table(&[Field::U32(index), Field::Ref, Field::Ref]);
        fb.point(slot, table);
        let i = fb.vector_i32(ins);
        fb.point(slots[1], i);
        let o = fb.vector_i32(outs);
        fb.point(slots[2], o);
    }
    fb.weight_buffers(model_slots[4], 16, 0);
    fb.bytes
}
