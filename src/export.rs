//! Plans back into models: a solution written into a `.tflite` file as TensorFlow Lite Micro's
//! offline memory plan (the `OfflineMemoryAllocation` metadata), which its runtime then uses
//! instead of planning the arena itself.
//!
//! # The metadata
//!
//! TFLite Micro (`micro_allocation_info.cc`) looks for a `Model.metadata` entry named
//! `OfflineMemoryAllocation`; its buffer holds little-endian 32-bit integers: a format version
//! (1), the number of subgraphs, the number `n` of offsets that follow, then one offset per
//! tensor of every subgraph in order (subgraph 0's tensors first): a byte offset from the start
//! of the arena's non-persistent section, or `-1` for a tensor the runtime places itself. `n`
//! must equal the model's total tensor count.
//!
//! # What is planned
//!
//! The buffers `telamalloc import` makes from the model are exactly the tensors planned here:
//! activation tensors of the first subgraph. Everything else gets `-1`: constants (TFLite Micro
//! does not allocate them), variables (persistent, outside the planned section), tensors of other
//! subgraphs, and activations the importer leaves out (those it folds as constants, such as the
//! output of a `DEQUANTIZE` of weights, which TFLite Micro does compute into the arena, and
//! tensors of unknown size). The runtime places the `-1` tensors and its kernels' scratch buffers
//! around the planned ones.
//!
//! # Validation against the model
//!
//! A plan is checked against the model as TFLite Micro will allocate it, not against the
//! solution's own columns: the lifetimes are the importer's (operator `i`'s step is TFLite
//! Micro's allocation scope `i + 1`, so two tensors live together in one exactly when they do in
//! the other), the sizes are the tensors' byte lengths from their `shape` rounded up to
//! [`TFLM_ALIGNMENT`] (16, TFLite Micro's `MicroArenaBufferAlignment`), and every offset must be
//! a multiple of 16. A solution for a problem imported with `--alignment 16` or larger (the
//! default is 64) has sizes at least those, so a valid solution of it passes.
//!
//! # Writing the file
//!
//! FlatBuffer offsets only point forward, so the writer puts a new root `Model` table in front
//! of the unchanged original bytes: it keeps every field of the old table, and points `buffers`
//! and `metadata` at new vectors that hold the old entries plus the plan's buffer and metadata
//! entry (an old `OfflineMemoryAllocation` entry is dropped; its buffer stays, unreferenced).
//! The original moves by a multiple of 64 bytes, so its internal offsets (all relative) and
//! alignments hold. Models that keep buffer data outside the FlatBuffer (over 2 GB, located by
//! absolute `Buffer.offset`s) and `Model` tables with fields newer than the schema known here
//! (`signature_defs`, id 7) are refused rather than rewritten.
//!
//! # Example
//!
//! ```no_run
//! use telamalloc::export::PlanTarget;
//! use telamalloc::io::read_solution;
//!
//! let model = std::fs::read("model.tflite").unwrap();
//! let target = PlanTarget::read(&model, "model.tflite")?;
//! let solution = read_solution("solution.csv".as_ref(), target.problem())?;
//! let planned = target.write_plan(&model, &solution, "solution.csv")?;
//! std::fs::write("planned.tflite", &planned.bytes).unwrap();
//! # Ok::<(), telamalloc::InputError>(())
//! ```

use crate::error::InputError;
use crate::import::tflite::{check_identifier, element_bits, FlatBuffer, Table};
use crate::import::{fail, import_bytes, ImportOptions, ModelFormat};
use crate::problem::{align_up, Problem, Solution};
use crate::validate::validate;

/// The metadata name TFLite Micro reads an offline plan from.
pub(crate) const OFFLINE_PLAN_NAME: &str = "OfflineMemoryAllocation";

/// The offline plan format version written (the only one there is).
pub(crate) const OFFLINE_PLAN_VERSION: u32 = 1;

/// TFLite Micro's arena buffer alignment: sizes are rounded up to it and offsets must be
/// multiples of it.
pub const TFLM_ALIGNMENT: u64 = 16;

/// How far the original bytes move: a multiple of every alignment a FlatBuffer uses.
const SHIFT_ALIGNMENT: usize = 64;

/// `Model` fields of the TFLite schema, by id.
const MODEL_VERSION: usize = 0;
const MODEL_SUBGRAPHS: usize = 2;
const MODEL_BUFFERS: usize = 4;
const MODEL_METADATA: usize = 6;
/// The highest `Model` field id the writer knows (`signature_defs`).
const MODEL_LAST_FIELD: usize = 7;

/// `SubGraph` fields of the TFLite schema, by id: `tensors`, `inputs`, `outputs`, `operators`
/// and `name` are offsets; `debug_metadata_index` an `int32`.
const SUBGRAPH_OPERATORS: usize = 3;
const SUBGRAPH_LAST_OFFSET: usize = 4;
const SUBGRAPH_DEBUG_METADATA_INDEX: usize = 5;

/// An offline memory plan as stored in a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OfflinePlan {
    /// The format version (1).
    pub version: u32,
    /// The number of subgraphs it was written for.
    pub subgraphs: u32,
    /// One entry per tensor of every subgraph in order: an arena offset, or -1 (runtime-placed).
    pub offsets: Vec<i32>,
}

/// A model ready to take a plan: the problem its tensors make as TFLite Micro allocates them
/// (see the module docs), and which tensor each buffer is.
#[derive(Clone, Debug)]
pub struct PlanTarget {
    problem: Problem,
    tensors: Vec<usize>,
    tensor_count: usize,
    subgraphs: usize,
    file: String,
}

/// A model with a plan written in.
#[derive(Clone, Debug)]
pub struct PlannedModel {
    /// The new `.tflite` file.
    pub bytes: Vec<u8>,
    /// The plan written.
    pub plan: OfflinePlan,
    /// Tensors with an offset (the rest are -1).
    pub planned: usize,
    /// The planned section's size: the highest offset plus size.
    pub peak: u64,
    /// Whether an `OfflineMemoryAllocation` entry was already there (and was replaced).
    pub replaced: bool,
}

impl PlanTarget {
    /// Reads a `.tflite` model: its activation tensors as `telamalloc import` makes them, with
    /// TFLite Micro's sizes and alignment. `file` names the model in errors.
    pub fn read(model: &[u8], file: &str) -> Result<PlanTarget, InputError> {
        check_identifier(model, file)?;
        let imported = import_bytes(model, ModelFormat::Tflite, file, &ImportOptions::default())?;
        let fb = FlatBuffer { bytes: model, file };
        let root = fb.table(fb.indirect(0, "root table")?, "Model")?;
        let subgraphs = fb.vector_tables(root, 2, "Model.subgraphs")?;
        let tensor_count = count_tensors(&fb, root)?;
        let main_tensors = fb.vector_tables(subgraphs[0], 0, "subgraphs[0].tensors")?;
        let mut problem = imported.problem;
        for (buffer, &t) in problem.buffers.iter_mut().zip(&imported.tensors) {
            let bytes = tflm_bytes(&fb, main_tensors[t], t)?;
            buffer.size = align_up(bytes.max(1), TFLM_ALIGNMENT)
                .ok_or_else(|| fail(file, format!("tensor {t} ('{}') is too large", buffer.id)))?;
            buffer.alignment = TFLM_ALIGNMENT;
        }
        Ok(PlanTarget {
            problem,
            tensors: imported.tensors,
            tensor_count,
            subgraphs: subgraphs.len(),
            file: file.to_string(),
        })
    }

    /// The problem the plan must solve: one buffer per planned tensor, ids as `telamalloc
    /// import` names them, TFLite Micro's sizes, alignment 16.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// For each buffer of [`PlanTarget::problem`], its tensor's index in the first subgraph.
    pub fn tensors(&self) -> &[usize] {
        &self.tensors
    }

    /// The offline plan a solution makes: its offsets for the planned tensors, -1 for all other
    /// tensors of every subgraph. The solution is validated first; `solution_file` names it in
    /// errors.
    pub fn plan(
        &self,
        solution: &Solution,
        solution_file: &str,
    ) -> Result<OfflinePlan, InputError> {
        let report = validate(&self.problem, solution, None);
        if !report.is_valid() {
            return Err(fail(
                solution_file,
                format!(
                    "not a valid plan for {} as TFLite Micro allocates it (sizes rounded up to \
                     {TFLM_ALIGNMENT}, offsets multiples of {TFLM_ALIGNMENT}):\n{report}",
                    self.file
                ),
            ));
        }
        let mut offsets = vec![-1i32; self.tensor_count];
        for ((buffer, &offset), &t) in self
            .problem
            .buffers
            .iter()
            .zip(&solution.offsets)
            .zip(&self.tensors)
        {
            let fits = offset
                .checked_add(buffer.size)
                .is_some_and(|end| end <= i32::MAX as u64);
            if !fits {
                return Err(InputError::at_line(
                    solution_file,
                    None,
                    Some("offset"),
                    format!(
                        "buffer '{}' ends past 2^31 - 1 (offset {offset}, size {}): TFLite \
                         Micro stores offsets as int32",
                        buffer.id, buffer.size
                    ),
                ));
            }
            offsets[t] = offset as i32;
        }
        Ok(OfflinePlan {
            version: OFFLINE_PLAN_VERSION,
            subgraphs: self.subgraphs as u32,
            offsets,
        })
    }

    /// Validates `solution` and writes it into `model` (the bytes this target was read from).
    pub fn write_plan(
        &self,
        model: &[u8],
        solution: &Solution,
        solution_file: &str,
    ) -> Result<PlannedModel, InputError> {
        let plan = self.plan(solution, solution_file)?;
        let (bytes, replaced) = write_offline_plan(model, &self.file, &plan)?;
        Ok(PlannedModel {
            bytes,
            planned: self.problem.len(),
            peak: solution.peak(&self.problem),
            plan,
            replaced,
        })
    }
}

/// A tensor's byte length as TFLite Micro computes it: the product of `shape` times the element
/// size (4-bit types counted as a byte, which is never less than the runtime's length).
fn tflm_bytes(fb: &FlatBuffer<'_>, tensor: Table, t: usize) -> Result<u64, InputError> {
    let what = format!("subgraphs[0].tensors[{t}]");
    let shape = fb
        .vector_i32(tensor, 0, &format!("{what}.shape"))?
        .unwrap_or_default();
    let tensor_type = fb.scalar_u8(tensor, 1, 0, &format!("{what}.type"))?;
    let bits = element_bits(tensor_type)
        .ok_or_else(|| fb.corrupt(&what, "an element type without a fixed size"))?
        .max(8);
    let mut bytes = bits / 8;
    for &d in &shape {
        let d = u64::try_from(d).map_err(|_| {
            fail(
                fb.file,
                format!(
                    "{what} has a dynamic dimension ({d}) in its shape: TFLite Micro needs \
                     static shapes"
                ),
            )
        })?;
        bytes = bytes
            .checked_mul(d)
            .ok_or_else(|| fb.corrupt(&what, "its size overflows"))?;
    }
    Ok(bytes)
}

/// Reads the offline plan stored in a model, if it has one (the last entry of that name, as
/// TFLite Micro reads it).
pub fn read_offline_plan(model: &[u8], file: &str) -> Result<Option<OfflinePlan>, InputError> {
    check_identifier(model, file)?;
    let fb = FlatBuffer { bytes: model, file };
    let root = fb.table(fb.indirect(0, "root table")?, "Model")?;
    let buffers = fb.vector_tables(root, MODEL_BUFFERS, "Model.buffers")?;
    let mut found = None;
    for (k, &entry) in fb
        .vector_tables(root, MODEL_METADATA, "Model.metadata")?
        .iter()
        .enumerate()
    {
        let what = format!("Model.metadata[{k}]");
        if fb.string(entry, 0, &format!("{what}.name"))?.as_deref() == Some(OFFLINE_PLAN_NAME) {
            found = Some(fb.scalar_u32(entry, 1, 0, &format!("{what}.buffer"))? as usize);
        }
    }
    let Some(index) = found else {
        return Ok(None);
    };
    let what = format!("Model.buffers[{index}] (the offline plan)");
    let buffer = *buffers
        .get(index)
        .ok_or_else(|| fb.corrupt(&what, format!("the model has {} buffers", buffers.len())))?;
    let (start, len) = fb.vector(buffer, 0, 1, &what)?.unwrap_or((0, 0));
    let word = |k: usize| fb.u32(start + 4 * k, &what);
    if len < 12 {
        return Err(fb.corrupt(&what, format!("{len} bytes, fewer than its 3-word header")));
    }
    let n = word(2)? as usize;
    if len != 4 * (3 + n) {
        return Err(fb.corrupt(
            &what,
            format!("{len} bytes, but its header announces {n} offsets"),
        ));
    }
    Ok(Some(OfflinePlan {
        version: word(0)?,
        subgraphs: word(1)?,
        offsets: (0..n)
            .map(|k| word(3 + k).map(|v| v as i32))
            .collect::<Result<_, _>>()?,
    }))
}

/// Where a new offset slot points: at an object of the new prefix (by label, bound when the
/// object is written), or at a position of the original file.
#[derive(Clone, Copy)]
enum Target {
    New(Label),
    Old(usize),
}

/// Names an object of the prefix before it is written.
#[derive(Clone, Copy)]
struct Label(usize);

/// The bytes put in front of the original file, with the offsets still to patch.
#[derive(Default)]
struct Prefix {
    bytes: Vec<u8>,
    fixups: Vec<(usize, Target)>,
    labels: Vec<Option<usize>>,
}

/// A 4-byte field of a table written by [`Prefix::table`].
#[derive(Clone, Copy)]
enum Slot {
    Scalar(u32),
    Ref(Target),
}

impl Prefix {
    fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    fn bind(&mut self, label: Label) {
        self.labels[label.0] = Some(self.bytes.len());
    }

    /// Pads so that `ahead` bytes from now is a multiple of `alignment`.
    fn pad_before(&mut self, ahead: usize, alignment: usize) {
        while !(self.bytes.len() + ahead).is_multiple_of(alignment) {
            self.bytes.push(0);
        }
    }

    fn push_u16(&mut self, value: u16) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    fn push_u32(&mut self, value: u32) {
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// An offset slot pointing at `target` (patched by [`Prefix::finish`]).
    fn push_ref(&mut self, target: Target) {
        self.fixups.push((self.bytes.len(), target));
        self.push_u32(0);
    }

    /// A table whose fields are all 4 bytes wide (`None` = absent), 4-aligned, its vtable right
    /// before it.
    fn table(&mut self, label: Label, fields: &[Option<Slot>]) {
        let vtable_len = 4 + 2 * fields.len();
        self.pad_before(vtable_len, 4);
        let present = fields.iter().flatten().count();
        self.push_u16(vtable_len as u16);
        self.push_u16((4 + 4 * present) as u16);
        let mut next = 4u16;
        for field in fields {
            self.push_u16(if field.is_some() { next } else { 0 });
            if field.is_some() {
                next += 4;
            }
        }
        self.bind(label);
        self.push_u32(vtable_len as u32); // soffset: the vtable is right before
        for field in fields.iter().flatten() {
            match *field {
                Slot::Scalar(value) => self.push_u32(value),
                Slot::Ref(target) => self.push_ref(target),
            }
        }
    }

    /// A vector of offsets.
    fn vector_of_refs(&mut self, label: Label, targets: &[Target]) {
        self.pad_before(0, 4);
        self.bind(label);
        self.push_u32(targets.len() as u32);
        for &target in targets {
            self.push_ref(target);
        }
    }

    /// A byte vector whose first element is `alignment`-aligned, with a NUL after it (so it
    /// also serves as a string).
    fn bytes_vector(&mut self, label: Label, data: &[u8], alignment: usize) {
        self.pad_before(4, alignment);
        self.bind(label);
        self.push_u32(data.len() as u32);
        self.bytes.extend_from_slice(data);
        self.bytes.push(0);
    }

    /// Pads to [`SHIFT_ALIGNMENT`], patches every offset, and appends the original; returns the
    /// file and how far the original moved.
    fn finish(mut self, original: &[u8], file: &str) -> Result<(Vec<u8>, usize), InputError> {
        self.pad_before(0, SHIFT_ALIGNMENT);
        let shift = self.bytes.len();
        if shift + original.len() > i32::MAX as usize {
            return Err(fail(
                file,
                "the planned model would exceed the FlatBuffer limit of 2 GiB",
            ));
        }
        for &(slot, target) in &self.fixups {
            let target = match target {
                Target::New(label) => self.labels[label.0].expect("every label is bound"),
                Target::Old(p) => shift + p,
            };
            assert!(target > slot, "FlatBuffer offsets point forward");
            let offset = ((target - slot) as u32).to_le_bytes();
            self.bytes[slot..slot + 4].copy_from_slice(&offset);
        }
        self.bytes.extend_from_slice(original);
        Ok((self.bytes, shift))
    }
}

/// The plan's buffer contents: version, subgraphs, count, offsets.
fn plan_words(plan: &OfflinePlan) -> Vec<u8> {
    let header = [plan.version, plan.subgraphs, plan.offsets.len() as u32];
    header
        .iter()
        .map(|&w| w as i32)
        .chain(plan.offsets.iter().copied())
        .flat_map(i32::to_le_bytes)
        .collect()
}

/// Writes `plan` into `model` as its `OfflineMemoryAllocation` metadata (see the module docs);
/// returns the new file and whether an entry of that name was replaced. The plan's length is
/// checked against the model's tensor count.
pub fn write_offline_plan(
    model: &[u8],
    file: &str,
    plan: &OfflinePlan,
) -> Result<(Vec<u8>, bool), InputError> {
    check_identifier(model, file)?;
    let fb = FlatBuffer { bytes: model, file };
    let root = fb.table(fb.indirect(0, "root table")?, "Model")?;
    refuse_external_buffers(&fb, root)?;
    let tensor_count = count_tensors(&fb, root)?;
    if plan.offsets.len() != tensor_count {
        return Err(fail(
            file,
            format!(
                "the plan has {} offsets, but the model has {tensor_count} tensors",
                plan.offsets.len()
            ),
        ));
    }

    let mut fields = copy_model_fields(&fb, root)?;

    // The old buffers, then the plan's; the old metadata entries but any offline plan, then
    // the new one.
    let mut buffers: Vec<Target> = fb
        .vector_positions(root, MODEL_BUFFERS, "Model.buffers")?
        .into_iter()
        .map(Target::Old)
        .collect();
    if buffers.is_empty() {
        return Err(fail(
            file,
            "not a valid TFLite model: Model.buffers is empty (buffer 0 must be the empty \
             sentinel)",
        ));
    }
    let plan_buffer = buffers.len();
    let entries = fb.vector_tables(root, MODEL_METADATA, "Model.metadata")?;
    let mut metadata = Vec::new();
    let mut replaced = false;
    for (k, &entry) in entries.iter().enumerate() {
        let name = fb.string(entry, 0, &format!("Model.metadata[{k}].name"))?;
        if name.as_deref() == Some(OFFLINE_PLAN_NAME) {
            replaced = true;
        } else {
            metadata.push(Target::Old(entry.position));
        }
    }

    let mut prefix = Prefix::default();
    let [model_table, buffers_vector, metadata_vector, buffer_table, metadata_table, name, data] =
        [(); 7].map(|()| prefix.label());
    buffers.push(Target::New(buffer_table));
    metadata.push(Target::New(metadata_table));
    fields[MODEL_BUFFERS] = Some(Slot::Ref(Target::New(buffers_vector)));
    fields[MODEL_METADATA] = Some(Slot::Ref(Target::New(metadata_vector)));

    prefix.push_ref(Target::New(model_table)); // the root offset
    prefix.bytes.extend_from_slice(b"TFL3");
    prefix.table(model_table, &fields);
    prefix.vector_of_refs(buffers_vector, &buffers);
    prefix.vector_of_refs(metadata_vector, &metadata);
    prefix.table(buffer_table, &[Some(Slot::Ref(Target::New(data)))]);
    prefix.table(
        metadata_table,
        &[
            Some(Slot::Ref(Target::New(name))),
            Some(Slot::Scalar(plan_buffer as u32)),
        ],
    );
    prefix.bytes_vector(name, OFFLINE_PLAN_NAME.as_bytes(), 4);
    prefix.bytes_vector(data, &plan_words(plan), 16);

    let (bytes, _) = prefix.finish(model, file)?;
    Ok((bytes, replaced))
}

/// The old root's fields (at least up to `metadata`): scalars copied, offsets pointed at the
/// moved original. A field newer than the schema known here is refused.
fn copy_model_fields(fb: &FlatBuffer<'_>, root: Table) -> Result<Vec<Option<Slot>>, InputError> {
    let field_count = (root.vtable_len - 4) / 2;
    let mut fields: Vec<Option<Slot>> = vec![None; field_count.max(MODEL_METADATA + 1)];
    for (id, field) in fields.iter_mut().enumerate().take(field_count) {
        let what = format!("Model field {id}");
        let Some(position) = fb.field(root, id, &what)? else {
            continue;
        };
        if id > MODEL_LAST_FIELD {
            return Err(fail(
                fb.file,
                format!(
                    "the Model table has field {id}, unknown to this writer (a newer schema?): \
                     it cannot be copied safely"
                ),
            ));
        }
        *field = Some(if id == MODEL_VERSION {
            Slot::Scalar(fb.u32(position, &what)?)
        } else {
            Slot::Ref(Target::Old(fb.indirect(position, &what)?))
        });
    }
    Ok(fields)
}

/// Writes `model` with the main subgraph's operators in `order` (`order[k]` is the index in the
/// model's operator list of the operator to run `k`-th); everything else is unchanged. As for
/// plans (see the module docs), a new root `Model` table, `subgraphs` vector and main `SubGraph`
/// table go in front of the original bytes, and the new `operators` vector points at the
/// original operator tables. `order` must be a permutation of the operators; whether it runs
/// (each tensor produced before it is read) is the caller's business.
pub fn write_operator_order(
    model: &[u8],
    file: &str,
    order: &[usize],
) -> Result<Vec<u8>, InputError> {
    check_identifier(model, file)?;
    let fb = FlatBuffer { bytes: model, file };
    let root = fb.table(fb.indirect(0, "root table")?, "Model")?;
    refuse_external_buffers(&fb, root)?;
    let mut fields = copy_model_fields(&fb, root)?;
    let subgraphs = fb.vector_positions(root, MODEL_SUBGRAPHS, "Model.subgraphs")?;
    let Some(&main_position) = subgraphs.first() else {
        return Err(fail(file, "the TFLite model has no subgraph"));
    };
    let main = fb.table(main_position, "subgraphs[0]")?;
    let operators = fb.vector_positions(main, SUBGRAPH_OPERATORS, "subgraphs[0].operators")?;
    let mut seen = vec![false; operators.len()];
    let is_permutation = order.len() == operators.len()
        && order
            .iter()
            .all(|&k| k < seen.len() && !std::mem::replace(&mut seen[k], true));
    if !is_permutation {
        return Err(fail(
            file,
            format!(
                "the new operator order is not a permutation of the model's {} operators",
                operators.len()
            ),
        ));
    }
    let field_count = (main.vtable_len - 4) / 2;
    let mut subgraph_fields: Vec<Option<Slot>> =
        vec![None; field_count.max(SUBGRAPH_OPERATORS + 1)];
    for (id, field) in subgraph_fields.iter_mut().enumerate().take(field_count) {
        let what = format!("subgraphs[0] field {id}");
        let Some(position) = fb.field(main, id, &what)? else {
            continue;
        };
        *field = Some(match id {
            0..=SUBGRAPH_LAST_OFFSET => Slot::Ref(Target::Old(fb.indirect(position, &what)?)),
            SUBGRAPH_DEBUG_METADATA_INDEX => Slot::Scalar(fb.u32(position, &what)?),
            _ => {
                return Err(fail(
                    file,
                    format!(
                        "the main SubGraph table has field {id}, unknown to this writer (a \
                         newer schema?): it cannot be copied safely"
                    ),
                ))
            }
        });
    }

    let mut prefix = Prefix::default();
    let [model_table, subgraphs_vector, subgraph_table, operators_vector] =
        [(); 4].map(|()| prefix.label());
    fields[MODEL_SUBGRAPHS] = Some(Slot::Ref(Target::New(subgraphs_vector)));
    subgraph_fields[SUBGRAPH_OPERATORS] = Some(Slot::Ref(Target::New(operators_vector)));
    let mut subgraph_targets = vec![Target::New(subgraph_table)];
    subgraph_targets.extend(subgraphs[1..].iter().map(|&p| Target::Old(p)));
    let operator_targets: Vec<Target> = order.iter().map(|&k| Target::Old(operators[k])).collect();

    prefix.push_ref(Target::New(model_table)); // the root offset
    prefix.bytes.extend_from_slice(b"TFL3");
    prefix.table(model_table, &fields);
    prefix.vector_of_refs(subgraphs_vector, &subgraph_targets);
    prefix.table(subgraph_table, &subgraph_fields);
    prefix.vector_of_refs(operators_vector, &operator_targets);
    let (bytes, _) = prefix.finish(model, file)?;
    Ok(bytes)
}

/// The number of tensors over all subgraphs (what the plan has one entry for).
fn count_tensors(fb: &FlatBuffer<'_>, root: Table) -> Result<usize, InputError> {
    let mut count = 0usize;
    for (k, &subgraph) in fb
        .vector_tables(root, 2, "Model.subgraphs")?
        .iter()
        .enumerate()
    {
        let what = format!("subgraphs[{k}].tensors");
        count += fb.vector(subgraph, 0, 4, &what)?.map_or(0, |(_, len)| len);
    }
    Ok(count)
}

/// Models over 2 GB keep buffer data after the FlatBuffer, located by `Buffer.offset` from the
/// start of the file (values above 1); moving the original would break them. TFLite Micro does
/// not run such models either.
fn refuse_external_buffers(fb: &FlatBuffer<'_>, root: Table) -> Result<(), InputError> {
    for (k, &buffer) in fb
        .vector_tables(root, MODEL_BUFFERS, "Model.buffers")?
        .iter()
        .enumerate()
    {
        let what = format!("Model.buffers[{k}].offset");
        if fb.scalar_u64(buffer, 1, 0, &what)? > 1 {
            return Err(fail(
                fb.file,
                format!(
                    "{what}: the model keeps buffer data outside the FlatBuffer (a model over \
                     2 GB); writing a plan into such models is not supported"
                ),
            ));
        }
    }
    Ok(())
}
