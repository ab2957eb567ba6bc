//! The importers against hostile files: small generators for the inputs that once made
//! `telamalloc import` run out of memory or time (every operator pointing at one table, one
//! node reading a big tensor thousands of times, thousands of tensors of one name, sizes whose
//! sum overflows 64 bits), and a fuzz harness over mutated real models and random bytes.
//!
//! Every input must give an error naming the file, or a problem that passes the problem rules,
//! never a panic, within the importer's work budget (`import::work_limit`: work units checked
//! by a counter, not wall time) and a memory bound checked by a counting allocator.
//!
//! `cargo test --test io import_fuzz` runs a fixed seed and a modest count; the long run is
//! `TELAMALLOC_FUZZ_CASES=100000 cargo test --release --test io import_fuzz -- --ignored`.

use crate::common;

use common::protobuf::{bytes_field, int_field, varint};
use common::tflite::{tiny_tflite, Field, FlatBuffer};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use telamalloc::import::{
    import_bytes, import_bytes_counted, work_limit, ImportOptions, ModelFormat,
};
use telamalloc::io::{check_problem, parse_csv_problem, write_csv_problem, BufferPlaces};

// ---------------------------------------------------------------------------------------------
// Memory: a counting allocator, per thread (tests run in parallel threads).

/// Bytes an import may hold at once, per byte of the model file: the bound the harness checks.
/// (Parsed protobuf messages take a few hundred bytes each, and a message can be two bytes.)
const MEMORY_PER_BYTE: usize = 512;
/// Bytes an import may hold whatever the file's size.
const MEMORY_BASE: usize = 64 << 20;
/// Past this, an allocation fails (the test aborts) rather than exhaust the machine.
const MEMORY_CEILING: isize = 4 << 30;

struct Counting;

thread_local! {
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn note(delta: isize) -> bool {
    CURRENT
        .try_with(|current| {
            let now = current.get() + delta;
            current.set(now);
            let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
            now <= MEMORY_CEILING
        })
        .unwrap_or(true)
}

// SAFETY: every call is passed to the system allocator unchanged; only sizes are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !note(layout.size() as isize) {
            note(-(layout.size() as isize));
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let delta = new_size as isize - layout.size() as isize;
        if !note(delta) {
            note(-delta);
            return std::ptr::null_mut();
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` and returns its result and the most bytes it held at once beyond what was held
/// before (on this thread).
fn peak_memory<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = CURRENT.with(Cell::get);
    PEAK.with(|p| p.set(start));
    let result = f();
    let peak = PEAK.with(Cell::get) - start;
    (result, peak.max(0) as usize)
}

// ---------------------------------------------------------------------------------------------
// The property every input must have.

/// What one import gave.
#[derive(Debug)]
struct Outcome {
    imported: bool,
    message: String,
    work: u64,
    memory: usize,
}

/// Imports `bytes`: an error naming the file, or a problem that passes the problem rules and
/// reads back from the CSV `import` writes; never a panic; work within `work_limit` and memory
/// within `MEMORY_PER_BYTE` per byte plus `MEMORY_BASE`.
fn check_import(bytes: &[u8], format: ModelFormat, options: &ImportOptions) -> Outcome {
    let name = format!("fuzz.{}", format.name());
    let (result, memory) = peak_memory(|| import_bytes_counted(bytes, format, &name, options));
    let memory_bound = MEMORY_BASE + MEMORY_PER_BYTE * bytes.len();
    assert!(
        memory <= memory_bound,
        "{name} ({} bytes): the import held {memory} bytes at once, over {memory_bound}",
        bytes.len()
    );
    let imported = match result {
        Err(e) => {
            assert!(e.to_string().starts_with(&name), "{e}");
            assert!(!e.message.is_empty(), "{e}");
            return Outcome {
                imported: false,
                message: e.message,
                work: 0,
                memory,
            };
        }
        Ok(imported) => imported,
    };
    let (imported, work) = imported;
    let limit = work_limit(bytes.len());
    assert!(
        work <= limit,
        "{name}: {work} work units, over the limit {limit}"
    );
    let problem = &imported.problem;
    // The rules `solve` applies when it reads the file: ids, lifetimes, sizes, and the sum of
    // all sizes within 64 bits.
    problem
        .check(None)
        .expect("an imported problem passes the rules");
    let csv = write_csv_problem(problem);
    check_problem(problem, &name, &BufferPlaces::None).expect("the file's rules");
    let back = parse_csv_problem(&csv, "imported.csv", None).expect("the CSV reads back");
    assert_eq!(&back, problem, "{name}: CSV round trip");
    for b in &problem.buffers {
        assert!(b.size.is_multiple_of(options.alignment), "{}", b.id);
        assert!(b.upper <= imported.steps, "{}", b.id);
    }
    assert_eq!(imported.tensors.len(), problem.len());
    Outcome {
        imported: true,
        message: String::new(),
        work,
        memory,
    }
}

// ---------------------------------------------------------------------------------------------
// ONNX messages, on the protobuf writer of tests/common.

/// `ValueInfoProto` of a tensor of element type `elem` with fixed dimensions.
fn value_info(name: &str, elem: i64, dims: &[i64]) -> Vec<u8> {
    let shape: Vec<u8> = dims
        .iter()
        .flat_map(|&d| bytes_field(1, &int_field(1, d)))
        .collect();
    let tensor_type = [int_field(1, elem), bytes_field(2, &shape)].concat();
    let type_proto = bytes_field(1, &tensor_type);
    [bytes_field(1, name.as_bytes()), bytes_field(2, &type_proto)].concat()
}

fn onnx_node(op: &str, inputs: &[&str], outputs: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for i in inputs {
        out.extend(bytes_field(1, i.as_bytes()));
    }
    for o in outputs {
        out.extend(bytes_field(2, o.as_bytes()));
    }
    out.extend(bytes_field(4, op.as_bytes()));
    out
}

/// A model (opset 13) around the graph's fields.
fn onnx_model(graph_fields: &[Vec<u8>]) -> Vec<u8> {
    let graph = graph_fields.concat();
    let opset = [bytes_field(1, b""), int_field(2, 13)].concat();
    [
        int_field(1, 7),
        bytes_field(7, &graph),
        bytes_field(8, &opset),
    ]
    .concat()
}

// ---------------------------------------------------------------------------------------------
// Hostile inputs.

/// A `.tflite` whose `operators` vector has `ops` entries that all point at one operator table
/// reading tensor 0 `reads` times: about `4 * (ops + reads)` bytes, `ops * reads` references.
pub fn tflite_shared_operator(ops: usize, reads: usize) -> Vec<u8> {
    let mut fb = FlatBuffer::new(b"TFL3");
    let (model, model_slots) = fb.table(&[Field::U32(3), Field::Absent, Field::Ref]);
    fb.point(0, model);
    let (subgraphs, subgraph_slots) = fb.vector_of_refs(1);
    fb.point(model_slots[2], subgraphs);
    let (subgraph, sg) = fb.table(&[Field::Ref, Field::Ref, Field::Ref, Field::Ref]);
    fb.point(subgraph_slots[0], subgraph);
    let (tensors, tensor_slots) = fb.vector_of_refs(2);
    fb.point(sg[0], tensors);
    for (k, &slot) in tensor_slots.iter().enumerate() {
        let (table, slots) = fb.table(&[Field::Ref, Field::U8(0), Field::U32(0), Field::Ref]);
        fb.point(slot, table);
        let shape = fb.vector_i32(&[1, 16]);
        fb.point(slots[0], shape);
        let name = fb.bytes_vector(format!("t{k}").as_bytes());
        fb.point(slots[3], name);
    }
    let inputs = fb.vector_i32(&[0]);
    fb.point(sg[1], inputs);
    let outputs = fb.vector_i32(&[1]);
    fb.point(sg[2], outputs);
    let (operators, op_slots) = fb.vector_of_refs(ops);
    fb.point(sg[3], operators);
    // Offsets point forward: every entry points at the one table written after them.
    let (op, slots) = fb.table(&[Field::U32(0), Field::Ref, Field::Ref]);
    let reads_vector = fb.vector_i32(&vec![0; reads]);
    fb.point(slots[1], reads_vector);
    let outs = fb.vector_i32(&[]);
    fb.point(slots[2], outs);
    for &slot in &op_slots {
        fb.point(slot, op);
    }
    fb.bytes
}

/// A `.tflite` with `n` tensors all named `t`, each produced by its own operator from the
/// previous one (a chain): `n` ids that collide.
pub fn tflite_one_name(n: usize) -> Vec<u8> {
    let mut fb = FlatBuffer::new(b"TFL3");
    let (model, model_slots) = fb.table(&[Field::U32(3), Field::Absent, Field::Ref]);
    fb.point(0, model);
    let (subgraphs, subgraph_slots) = fb.vector_of_refs(1);
    fb.point(model_slots[2], subgraphs);
    let (subgraph, sg) = fb.table(&[Field::Ref, Field::Ref, Field::Ref, Field::Ref]);
    fb.point(subgraph_slots[0], subgraph);
    let (tensors, tensor_slots) = fb.vector_of_refs(n);
    fb.point(sg[0], tensors);
    // One shared tensor table and name: FlatBuffers may share, and this keeps the file small.
    let (table, slots) = fb.table(&[Field::Ref, Field::U8(0), Field::U32(0), Field::Ref]);
    let shape = fb.vector_i32(&[1, 16]);
    fb.point(slots[0], shape);
    let name = fb.bytes_vector(b"t");
    fb.point(slots[3], name);
    let inputs = fb.vector_i32(&[0]);
    fb.point(sg[1], inputs);
    let outputs = fb.vector_i32(&[n as i32 - 1]);
    fb.point(sg[2], outputs);
    let (operators, op_slots) = fb.vector_of_refs(n - 1);
    fb.point(sg[3], operators);
    for (k, &slot) in op_slots.iter().enumerate() {
        let (op, slots) = fb.table(&[Field::U32(0), Field::Ref, Field::Ref]);
        fb.point(slot, op);
        let ins = fb.vector_i32(&[k as i32]);
        fb.point(slots[1], ins);
        let outs = fb.vector_i32(&[k as i32 + 1]);
        fb.point(slots[2], outs);
    }
    for &slot in &tensor_slots {
        fb.point(slot, table);
    }
    fb.bytes
}

/// An `.onnx` with one int64 initializer of `elements` values (raw data) and one `Concat`
/// reading it `reads` times.
pub fn onnx_concat_reads(elements: usize, reads: usize) -> Vec<u8> {
    let init = [
        int_field(1, elements as i64),
        int_field(2, 7),
        bytes_field(8, b"c"),
        bytes_field(9, &vec![1u8; 8 * elements.min(4096)]),
    ]
    .concat();
    let names = vec!["c"; reads];
    let mut concat = onnx_node("Concat", &names, &["y"]);
    let axis = [bytes_field(1, b"axis"), int_field(3, 0), int_field(20, 2)].concat();
    concat.extend(bytes_field(5, &axis));
    onnx_model(&[
        bytes_field(1, &onnx_node("Relu", &["x"], &["r"])),
        bytes_field(1, &concat),
        bytes_field(5, &init),
        bytes_field(11, &value_info("x", 1, &[1, 4])),
        bytes_field(12, &value_info("r", 1, &[1, 4])),
    ])
}

/// An `.onnx` whose input has rank `rank` and one `Sum` reads it `reads` times.
pub fn onnx_wide_sum(rank: usize, reads: usize) -> Vec<u8> {
    let names = vec!["x"; reads];
    onnx_model(&[
        bytes_field(1, &onnx_node("Sum", &names, &["y"])),
        bytes_field(11, &value_info("x", 1, &vec![1; rank])),
        bytes_field(12, &value_info("y", 1, &[])),
    ])
}

/// An `.onnx` chain of `n` `Identity` nodes over an input of rank `rank`.
pub fn onnx_identity_chain(rank: usize, n: usize) -> Vec<u8> {
    let mut fields = vec![bytes_field(11, &value_info("x", 1, &vec![1; rank]))];
    let names: Vec<String> = (0..=n).map(|k| format!("{k:x}")).collect();
    for k in 0..n {
        let input = if k == 0 { "x" } else { names[k].as_str() };
        fields.push(bytes_field(
            1,
            &onnx_node("Identity", &[input], &[names[k + 1].as_str()]),
        ));
    }
    fields.push(bytes_field(12, &value_info(&names[n], 1, &[])));
    onnx_model(&fields)
}

/// An `.onnx` with `inputs` graph inputs and one `Sum` reading the last one `reads` times.
pub fn onnx_many_inputs(inputs: usize, reads: usize) -> Vec<u8> {
    let names: Vec<String> = (0..inputs).map(|k| format!("{k:x}")).collect();
    let last = names[inputs - 1].clone();
    let mut fields: Vec<Vec<u8>> = names
        .iter()
        .map(|n| bytes_field(11, &value_info(n, 1, &[1])))
        .collect();
    fields.push(bytes_field(
        1,
        &onnx_node("Sum", &vec![last.as_str(); reads], &["y"]),
    ));
    fields.push(bytes_field(12, &value_info("y", 1, &[])));
    onnx_model(&fields)
}

/// A tiny `.onnx` (about 300 bytes): a chain of 17 `Relu` over an input of 2^28 x 2^30 floats,
/// 18 tensors of 2^60 bytes each: every size fits 64 bits, their sum does not.
pub fn onnx_sizes_overflow() -> Vec<u8> {
    let names: Vec<String> = (0..=17).map(|k| format!("{k:x}")).collect();
    let mut fields: Vec<Vec<u8>> = (0..17)
        .map(|k| bytes_field(1, &onnx_node("Relu", &[&names[k]], &[&names[k + 1]])))
        .collect();
    fields.push(bytes_field(11, &value_info("0", 1, &[1 << 28, 1 << 30])));
    fields.push(bytes_field(12, &value_info(&names[17], 1, &[])));
    onnx_model(&fields)
}

/// Writes every hostile input to `$TELAMALLOC_HOSTILE_DIR`, to time the binary on them.
#[test]
#[ignore = "writes files for measurements: TELAMALLOC_HOSTILE_DIR=DIR"]
fn write_hostile_inputs() {
    let dir = std::env::var("TELAMALLOC_HOSTILE_DIR").expect("TELAMALLOC_HOSTILE_DIR");
    let dir = std::path::Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    for (name, bytes) in [
        (
            "shared_operator.tflite",
            tflite_shared_operator(30_000, 30_000),
        ),
        ("one_name.tflite", tflite_one_name(30_000)),
        ("concat_20000.onnx", onnx_concat_reads(20_000, 20_000)),
        ("concat_4096.onnx", onnx_concat_reads(4096, 20_000)),
        ("wide_sum.onnx", onnx_wide_sum(10_000, 20_000)),
        ("identity_chain.onnx", onnx_identity_chain(10_000, 10_000)),
        ("many_inputs.onnx", onnx_many_inputs(20_000, 20_000)),
        ("tiny.tflite", tiny_tflite()),
        ("sizes_overflow.onnx", onnx_sizes_overflow()),
    ] {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// The reported hostile inputs, at their reported sizes.

fn import(bytes: &[u8], format: ModelFormat) -> Outcome {
    check_import(bytes, format, &ImportOptions::default())
}

#[test]
fn every_operator_pointing_at_one_table_is_refused_within_the_budget() {
    // 240 KB: 30,000 operators x 30,000 reads of tensor 0 (900 million references).
    let bytes = tflite_shared_operator(30_000, 30_000);
    assert!(bytes.len() < 250_000, "{}", bytes.len());
    let outcome = import(&bytes, ModelFormat::Tflite);
    assert!(!outcome.imported);
    assert!(
        outcome
            .message
            .contains("needs more work than its size allows"),
        "{outcome:?}"
    );
    // A few operators sharing one table is legal FlatBuffers and imports.
    let outcome = import(&tflite_shared_operator(10, 10), ModelFormat::Tflite);
    assert!(outcome.imported, "{outcome:?}");
}

#[test]
fn one_node_reading_a_big_tensor_thousands_of_times_is_bounded() {
    // 93 KB: a Concat reading a 20,000-element initializer 20,000 times (values unknown: more
    // than inference keeps) imports; one of 4,096 known values is refused, the copies being
    // more work than the file pays for.
    let outcome = import(&onnx_concat_reads(20_000, 20_000), ModelFormat::Onnx);
    assert!(outcome.imported, "{outcome:?}");
    for bytes in [
        onnx_concat_reads(4096, 20_000),
        onnx_wide_sum(10_000, 20_000),
    ] {
        let outcome = import(&bytes, ModelFormat::Onnx);
        assert!(!outcome.imported);
        assert!(outcome.message.contains("needs more work"), "{outcome:?}");
    }
    let outcome = import(&onnx_identity_chain(10_000, 10_000), ModelFormat::Onnx);
    assert!(outcome.message.contains("needs more work"), "{outcome:?}");
    // The same shapes at a sensible rank import.
    let outcome = import(&onnx_identity_chain(4, 10_000), ModelFormat::Onnx);
    assert!(outcome.imported, "{outcome:?}");
}

#[test]
fn many_tensors_of_one_name_and_many_inputs_import_in_linear_work() {
    let outcome = import(&tflite_one_name(30_000), ModelFormat::Tflite);
    assert!(outcome.imported, "{outcome:?}");
    let outcome = import(&onnx_many_inputs(20_000, 20_000), ModelFormat::Onnx);
    assert!(outcome.imported, "{outcome:?}");
}

#[test]
fn sizes_whose_sum_overflows_are_an_error() {
    let bytes = onnx_sizes_overflow();
    assert!(bytes.len() < 400, "{}", bytes.len());
    let outcome = import(&bytes, ModelFormat::Onnx);
    assert!(!outcome.imported);
    assert!(outcome.message.contains("overflows 64 bits"), "{outcome:?}");
    // A single tensor past 2^64 bytes is named.
    let huge = onnx_model(&[
        bytes_field(1, &onnx_node("Relu", &["x"], &["y"])),
        bytes_field(11, &value_info("x", 1, &[1 << 40, 1 << 40])),
        bytes_field(12, &value_info("y", 1, &[])),
    ]);
    let outcome = import(&huge, ModelFormat::Onnx);
    assert!(
        outcome
            .message
            .contains("tensor 'x' is larger than 2^64 bytes"),
        "{outcome:?}"
    );
    // An alignment past 2^32 is refused before any work.
    for alignment in [1u64 << 33, 1 << 63] {
        let options = ImportOptions {
            alignment,
            ..ImportOptions::default()
        };
        let err = import_bytes(&tiny_tflite(), ModelFormat::Tflite, "m.tflite", &options)
            .expect_err("too large an alignment");
        assert!(err.message.contains("larger than 2^32"), "{err}");
    }
}

// ---------------------------------------------------------------------------------------------
// The fuzz harness.

/// The seeds: small real models (`tests/data`, see its README) and hand-built ones.
fn seeds() -> Vec<(&'static str, ModelFormat, Vec<u8>)> {
    vec![
        (
            "sine_float.tflite",
            ModelFormat::Tflite,
            include_bytes!("../data/sine_float.tflite").to_vec(),
        ),
        (
            "light_bvlc_alexnet.onnx",
            ModelFormat::Onnx,
            include_bytes!("../data/light_bvlc_alexnet.onnx").to_vec(),
        ),
        (
            "light_squeezenet.onnx",
            ModelFormat::Onnx,
            include_bytes!("../data/light_squeezenet.onnx").to_vec(),
        ),
        ("tiny.tflite", ModelFormat::Tflite, tiny_tflite()),
        (
            "shared.tflite",
            ModelFormat::Tflite,
            tflite_shared_operator(8, 8),
        ),
        ("concat.onnx", ModelFormat::Onnx, onnx_concat_reads(16, 8)),
    ]
}

/// One change to a file.
#[derive(Clone, Debug)]
enum Mutation {
    /// Flip bit `bit` of the byte at `at` (positions are taken modulo the length).
    Flip { at: usize, bit: u8 },
    /// Overwrite one byte.
    Byte { at: usize, value: u8 },
    /// Overwrite four bytes (a FlatBuffer offset, a length) with a chosen word.
    Word { at: usize, value: u32 },
    /// Cut the file at `len`.
    Truncate { len: usize },
    /// Copy `len` bytes from `from` over `to` (the same file: tables and offsets reused).
    Splice { from: usize, to: usize, len: usize },
    /// Insert bytes.
    Insert { at: usize, bytes: Vec<u8> },
    /// Delete `len` bytes.
    Delete { at: usize, len: usize },
}

fn word() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        Just(1),
        Just(u32::MAX),
        Just(i32::MAX as u32),
        Just(0x8000_0000),
        0u32..256,
        any::<u32>(),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        3 => (any::<usize>(), any::<u8>()).prop_map(|(at, value)| Mutation::Byte { at, value }),
        3 => (any::<usize>(), word()).prop_map(|(at, value)| Mutation::Word { at, value }),
        1 => any::<usize>().prop_map(|len| Mutation::Truncate { len }),
        2 => (any::<usize>(), any::<usize>(), 1usize..256)
            .prop_map(|(from, to, len)| Mutation::Splice { from, to, len }),
        1 => (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(at, bytes)| Mutation::Insert { at, bytes }),
        1 => (any::<usize>(), 1usize..64).prop_map(|(at, len)| Mutation::Delete { at, len }),
    ]
}

fn apply(bytes: &mut Vec<u8>, mutation: &Mutation) {
    let n = bytes.len();
    if n == 0 {
        return;
    }
    match *mutation {
        Mutation::Flip { at, bit } => bytes[at % n] ^= 1 << bit,
        Mutation::Byte { at, value } => bytes[at % n] = value,
        Mutation::Word { at, value } => {
            // FlatBuffer fields are 4-byte aligned: mostly hit whole words.
            let at = (at % n) & !3;
            for (k, b) in value.to_le_bytes().into_iter().enumerate() {
                if let Some(slot) = bytes.get_mut(at + k) {
                    *slot = b;
                }
            }
        }
        Mutation::Truncate { len } => bytes.truncate(len % n),
        Mutation::Splice { from, to, len } => {
            let (from, to) = (from % n, to % n);
            let len = len.min(n - from).min(n - to);
            bytes.copy_within(from..from + len, to);
        }
        Mutation::Insert {
            at,
            bytes: ref inserted,
        } => {
            let at = at % (n + 1);
            bytes.splice(at..at, inserted.iter().copied());
        }
        Mutation::Delete { at, len } => {
            let at = at % n;
            bytes.drain(at..(at + len).min(n));
        }
    }
}

/// Totals of one fuzz run, printed at its end.
#[derive(Default)]
struct Tally {
    tried: u64,
    imported: u64,
    most_work_per_byte: f64,
    most_memory: usize,
}

impl Tally {
    fn add(&mut self, outcome: &Outcome, len: usize) {
        self.tried += 1;
        self.imported += outcome.imported as u64;
        self.most_work_per_byte = self
            .most_work_per_byte
            .max(outcome.work as f64 / len.max(1) as f64);
        self.most_memory = self.most_memory.max(outcome.memory);
    }

    fn report(&self, what: &str) {
        eprintln!(
            "{what}: {} inputs tried, {} imported, {} errors; most work {:.2} units per byte; \
             most memory held {} KB",
            self.tried,
            self.imported,
            self.tried - self.imported,
            self.most_work_per_byte,
            self.most_memory / 1024
        );
    }
}

/// A runner with a fixed seed (the same inputs every run) and no regression files.
fn runner(cases: u32, seed: u8) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(
        config,
        TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]),
    )
}

/// Mutated seeds: every input an error or a well-formed problem, within the bounds.
fn fuzz_mutations(cases: u32, seed: u8) -> Tally {
    let seeds = seeds();
    let tally = std::cell::RefCell::new(Tally::default());
    let strategy = (
        0..seeds.len(),
        prop::collection::vec(mutation(), 1..6),
        any::<bool>(),
    );
    runner(cases, seed)
        .run(&strategy, |(k, mutations, second_alignment)| {
            let (_, format, original) = &seeds[k];
            let mut bytes = original.clone();
            for m in &mutations {
                apply(&mut bytes, m);
            }
            let options = ImportOptions {
                alignment: if second_alignment { 16 } else { 64 },
                ..ImportOptions::default()
            };
            let outcome = check_import(&bytes, *format, &options);
            tally.borrow_mut().add(&outcome, bytes.len());
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    tally.into_inner()
}

/// Random bytes, bare or behind a valid header of either format.
fn fuzz_random_bytes(cases: u32, seed: u8) -> Tally {
    let tally = std::cell::RefCell::new(Tally::default());
    let strategy = (
        prop::collection::vec(any::<u8>(), 0..2048),
        any::<bool>(),
        0u8..3,
    );
    runner(cases, seed)
        .run(&strategy, |(body, tflite, header)| {
            let format = if tflite {
                ModelFormat::Tflite
            } else {
                ModelFormat::Onnx
            };
            let mut bytes = match (format, header) {
                (_, 0) => Vec::new(),
                (ModelFormat::Tflite, _) => b"\x0c\0\0\0TFL3".to_vec(),
                // ir_version 7, then a graph (field 7) as long as the rest.
                (ModelFormat::Onnx, _) => {
                    let mut h = vec![0x08, 0x07, 0x3a];
                    varint(body.len() as u64, &mut h);
                    h
                }
            };
            bytes.extend(&body);
            let outcome = check_import(&bytes, format, &ImportOptions::default());
            tally.borrow_mut().add(&outcome, bytes.len());
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    tally.into_inner()
}

/// The number of cases of the long run: `TELAMALLOC_FUZZ_CASES`, default 100,000.
fn long_cases() -> u32 {
    std::env::var("TELAMALLOC_FUZZ_CASES")
        .ok()
        .map(|v| v.parse().expect("TELAMALLOC_FUZZ_CASES is a number"))
        .unwrap_or(100_000)
}

#[test]
fn fuzz_mutated_real_models() {
    let tally = fuzz_mutations(10_000, 1);
    tally.report("mutated models");
    assert_eq!(tally.tried, 10_000);
    assert!(tally.imported > 500, "only {} imported", tally.imported);
}

#[test]
fn fuzz_random_byte_strings() {
    let tally = fuzz_random_bytes(10_000, 2);
    tally.report("random bytes");
    assert_eq!(tally.tried, 10_000);
}

#[test]
#[ignore = "long: cargo test --release --test io import_fuzz -- --ignored (TELAMALLOC_FUZZ_CASES=N)"]
fn fuzz_long() {
    let cases = long_cases();
    let seed = std::env::var("TELAMALLOC_FUZZ_SEED")
        .ok()
        .map_or(3, |v| v.parse().expect("TELAMALLOC_FUZZ_SEED is 0-255"));
    let mutated = fuzz_mutations(cases, seed);
    mutated.report("mutated models (long)");
    let random = fuzz_random_bytes(cases, seed.wrapping_add(1));
    random.report("random bytes (long)");
}

/// The real models of `datasets/models` (see `tests/io/import.rs`): each within the work budget,
/// and how much of it they use. `TELAMALLOC_MODEL_DIR=DIR cargo test --release --test
/// io import_fuzz -- --ignored real_models`.
#[test]
#[ignore = "needs the real model files: TELAMALLOC_MODEL_DIR=DIR"]
fn real_models_use_a_fraction_of_the_budget() {
    let dir = std::env::var("TELAMALLOC_MODEL_DIR").expect("TELAMALLOC_MODEL_DIR");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("the model folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| ModelFormat::from_path(p).is_some())
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no models in {dir}");
    for path in paths {
        let bytes = std::fs::read(&path).expect("readable");
        let format = ModelFormat::from_path(&path).expect("a model");
        // The corpus's input shapes (datasets/tools/build_models.sh).
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let input_shapes = match name.as_str() {
            "ppocr_v4_det" => vec![("x".to_string(), vec![1, 3, 736, 736])],
            "ppocr_v4_rec" => vec![("x".to_string(), vec![1, 3, 48, 320])],
            "ppocr_mobile_v2_cls" => vec![("x".to_string(), vec![1, 3, 48, 192])],
            _ => Vec::new(),
        };
        let options = ImportOptions {
            input_shapes,
            ..ImportOptions::default()
        };
        let outcome = check_import(&bytes, format, &options);
        assert!(outcome.imported, "{name}: {}", outcome.message);
        eprintln!(
            "{name}: {} bytes, {} work units ({:.3} per byte), {} KB held ({:.2} per byte)",
            bytes.len(),
            outcome.work,
            outcome.work as f64 / bytes.len() as f64,
            outcome.memory / 1024,
            outcome.memory as f64 / bytes.len() as f64
        );
    }
}
