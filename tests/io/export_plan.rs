//! Plans written back into `.tflite` models (`telamalloc::export`, `telamalloc export-plan`):
//! round trips through our own reader, -1 for every tensor that is not planned, replacing an
//! old plan, and errors (never a file) for plans that do not fit the model.

use crate::common;

use common::tflite::{tflite_model, tiny_tflite, ModelOptions};
use common::{telamalloc_output, Scratch};
use std::process::Command;
use telamalloc::export::{read_offline_plan, write_offline_plan, OfflinePlan, PlanTarget};
use telamalloc::import::{import_bytes, ImportOptions, ModelFormat};
use telamalloc::{Goal, Solution, Solver, Status};

/// The tiny model's tensors: 0 input, 1 w16 (weights), 2 w (folded DEQUANTIZE output),
/// 3 conv, 4 relu, 5 out. Its buffers, in import order: input, conv, relu, out.
const PLANNED: [usize; 4] = [0, 3, 4, 5];

fn solve(target: &PlanTarget) -> Solution {
    let result = Solver::new()
        .solve(target.problem(), Goal::Minimize)
        .expect("a well-formed problem");
    assert_eq!(result.status, Status::Solved);
    result.solution.expect("solved")
}

#[test]
fn the_target_is_the_imported_problem_with_tflite_micro_sizes() {
    let model = tiny_tflite();
    let target = PlanTarget::read(&model, "tiny.tflite").unwrap();
    let imported = import_bytes(
        &model,
        ModelFormat::Tflite,
        "tiny.tflite",
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(target.tensors(), PLANNED);
    assert_eq!(imported.tensors, PLANNED);
    let got: Vec<(&str, u64, u64, u64, u64)> = target
        .problem()
        .buffers
        .iter()
        .map(|b| (b.id.as_str(), b.lower, b.upper, b.size, b.alignment))
        .collect();
    // float32 1x4x4x2 = 128 bytes, 1x10 = 40 rounded up to 48; lifetimes as imported.
    assert_eq!(
        got,
        vec![
            ("input", 0, 1, 128, 16),
            ("conv", 0, 2, 128, 16),
            ("relu", 1, 3, 128, 16),
            ("out", 2, 3, 48, 16),
        ]
    );
    for (t, b) in target
        .problem()
        .buffers
        .iter()
        .zip(&imported.problem.buffers)
    {
        assert_eq!((&t.id, t.lower, t.upper), (&b.id, b.lower, b.upper));
    }
}

#[test]
fn a_plan_round_trips_with_minus_one_for_unplanned_tensors() {
    let model = tflite_model(&ModelOptions {
        metadata: vec![("min_runtime_version", *b"1.5\0")],
        second_subgraph: 3,
        ..ModelOptions::default()
    });
    assert_eq!(read_offline_plan(&model, "m.tflite").unwrap(), None);
    let target = PlanTarget::read(&model, "m.tflite").unwrap();
    let solution = solve(&target);
    let planned = target.write_plan(&model, &solution, "s.csv").unwrap();
    assert!(!planned.replaced);
    assert_eq!(planned.planned, 4);
    assert_eq!(planned.peak, solution.peak(target.problem()));

    // Every tensor of both subgraphs has an entry: offsets for the four planned ones.
    let mut expected = vec![-1i32; 6 + 3];
    for (&t, &offset) in PLANNED.iter().zip(&solution.offsets) {
        expected[t] = offset as i32;
    }
    let plan = OfflinePlan {
        version: 1,
        subgraphs: 2,
        offsets: expected,
    };
    assert_eq!(planned.plan, plan);
    assert_eq!(
        read_offline_plan(&planned.bytes, "p.tflite").unwrap(),
        Some(plan)
    );

    // The planned model reads back as the same model: same problem, same target.
    let options = ImportOptions::default();
    assert_eq!(
        import_bytes(&planned.bytes, ModelFormat::Tflite, "p", &options).unwrap(),
        import_bytes(&model, ModelFormat::Tflite, "p", &options).unwrap()
    );
    let again = PlanTarget::read(&planned.bytes, "p.tflite").unwrap();
    assert_eq!(again.problem(), target.problem());
    // The original follows the new header unchanged, moved by a multiple of 64 bytes.
    let shift = planned.bytes.len() - model.len();
    assert_eq!(shift % 64, 0);
    assert_eq!(&planned.bytes[shift..], &model[..]);
    assert_eq!(&planned.bytes[4..8], b"TFL3");
}

#[test]
fn a_new_plan_replaces_the_old_one() {
    let model = tflite_model(&ModelOptions {
        metadata: vec![("min_runtime_version", *b"1.5\0")],
        ..ModelOptions::default()
    });
    let target = PlanTarget::read(&model, "m.tflite").unwrap();
    let first = target.write_plan(&model, &solve(&target), "s.csv").unwrap();
    // A second, different valid plan (all live together, so stacked) into the planned model.
    let stacked = Solution {
        offsets: vec![0, 128, 256, 384],
    };
    let target = PlanTarget::read(&first.bytes, "p.tflite").unwrap();
    let second = target
        .write_plan(&first.bytes, &stacked, "stacked.csv")
        .unwrap();
    assert!(second.replaced);
    let plan = read_offline_plan(&second.bytes, "q.tflite")
        .unwrap()
        .unwrap();
    assert_eq!(plan.offsets, vec![0, -1, -1, 128, 256, 384]);
    assert_eq!(second.peak, 432);
}

#[test]
fn invalid_plans_are_refused() {
    let model = tiny_tflite();
    let target = PlanTarget::read(&model, "tiny.tflite").unwrap();
    let refuse = |offsets: Vec<u64>| {
        target
            .write_plan(&model, &Solution { offsets }, "bad.csv")
            .unwrap_err()
            .to_string()
    };
    // input and conv live together at step 0: they may not share addresses.
    let overlap = refuse(vec![0, 64, 256, 0]);
    assert!(overlap.contains("bad.csv"), "{overlap}");
    assert!(
        overlap.contains("not a valid plan for tiny.tflite"),
        "{overlap}"
    );
    // Offsets must be multiples of 16 (TFLite Micro's alignment).
    let misaligned = refuse(vec![0, 136, 264, 8]);
    assert!(
        misaligned.contains("breaks its alignment 16"),
        "{misaligned}"
    );
    // Offsets are int32 in the file.
    let far = refuse(vec![0, 1 << 31, 128, 256]);
    assert!(far.contains("2^31"), "{far}");
    // A solution for a different number of buffers.
    let short = refuse(vec![0, 128]);
    assert!(short.contains("2 offsets for 4 buffers"), "{short}");
}

#[test]
fn models_the_writer_cannot_copy_are_refused() {
    let plan = OfflinePlan {
        version: 1,
        subgraphs: 1,
        offsets: vec![-1; 6],
    };
    let future = tflite_model(&ModelOptions {
        unknown_field: true,
        ..ModelOptions::default()
    });
    let error = write_offline_plan(&future, "future.tflite", &plan)
        .unwrap_err()
        .to_string();
    assert!(error.contains("field 8"), "{error}");
    let error = write_offline_plan(
        &tiny_tflite(),
        "tiny.tflite",
        &OfflinePlan {
            offsets: vec![-1; 5],
            ..plan.clone()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("5 offsets, but the model has 6 tensors"),
        "{error}"
    );
    let error = PlanTarget::read(b"not a model at all", "x.tflite")
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("x.tflite") && error.contains("TFL3"),
        "{error}"
    );
}

#[test]
fn corrupt_models_give_errors_not_panics() {
    let model = tiny_tflite();
    let plan = OfflinePlan {
        version: 1,
        subgraphs: 1,
        offsets: vec![-1; 6],
    };
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for len in 0..model.len() {
        let _ = PlanTarget::read(&model[..len], "cut.tflite");
        let _ = write_offline_plan(&model[..len], "cut.tflite", &plan);
        let _ = read_offline_plan(&model[..len], "cut.tflite");
    }
    for _ in 0..2000 {
        let mut bytes = model.clone();
        let at = (next() as usize) % bytes.len();
        bytes[at] ^= 1 << (next() % 8);
        let _ = PlanTarget::read(&bytes, "flipped.tflite");
        let _ = write_offline_plan(&bytes, "flipped.tflite", &plan);
        let _ = read_offline_plan(&bytes, "flipped.tflite");
    }
}

#[test]
fn the_binary_imports_solves_and_exports() {
    let scratch = Scratch::new();
    let model = scratch.path("tiny.tflite");
    std::fs::write(&model, tiny_tflite()).unwrap();
    let problem = scratch.path("tiny.csv");
    let solution = scratch.path("tiny.solution.csv");
    let planned = scratch.path("planned.tflite");
    let run = |args: &[&std::ffi::OsStr]| {
        let out = telamalloc_output(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    run(&[
        "import".as_ref(),
        model.as_os_str(),
        "-o".as_ref(),
        problem.as_os_str(),
    ]);
    run(&[
        "solve".as_ref(),
        problem.as_os_str(),
        "--minimize".as_ref(),
        "-o".as_ref(),
        solution.as_os_str(),
    ]);
    let out = run(&[
        "export-plan".as_ref(),
        model.as_os_str(),
        solution.as_os_str(),
        "-o".as_ref(),
        planned.as_os_str(),
    ]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("an offline plan for 4 of 6 tensors"),
        "{said}"
    );
    let bytes = std::fs::read(&planned).unwrap();
    let plan = read_offline_plan(&bytes, "planned.tflite")
        .unwrap()
        .unwrap();
    assert_eq!(plan.offsets.iter().filter(|&&o| o == -1).count(), 2);

    // A solution that overlaps two live buffers: exit 2, the file and the reason, no output.
    let bad = scratch.file(
        "bad.csv",
        "id,lower,upper,size,offset\ninput,0,1,128,0\nconv,0,2,128,0\nrelu,1,3,128,128\nout,2,3,64,0\n",
    );
    let refused = scratch.path("refused.tflite");
    let out = telamalloc_output(&[
        "export-plan".as_ref(),
        model.as_os_str(),
        bad.as_os_str(),
        "-o".as_ref(),
        refused.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("bad.csv") && said.contains("not a valid plan"),
        "{said}"
    );
    assert!(!refused.exists());

    // A solution naming a buffer the model does not have: the line and field.
    let other = scratch.file("other.csv", "id,offset\ninput,0\nnope,128\n");
    let out = telamalloc_output(&[
        "export-plan".as_ref(),
        model.as_os_str(),
        other.as_os_str(),
        "-o".as_ref(),
        refused.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("other.csv: line 3: field 'id'"), "{said}");
    assert!(!refused.exists());
}

/// The Python that runs the TFLite Micro checks, when it can import `tflite_micro` and numpy;
/// `None` (after saying the test skipped) when not.
fn python_with_tflite_micro() -> Option<String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let present = Command::new(&python)
        .args(["-c", "import tflite_micro, numpy"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !present {
        eprintln!(
            "skipped: {python} cannot import tflite_micro (pip install tflite-micro to run \
             this test)"
        );
        return None;
    }
    Some(python)
}

/// Runs a script of `datasets/tools` with `args`; its standard output, after checking it
/// succeeded.
fn run_tool(python: &str, script: &str, args: &[&std::ffi::OsStr]) -> String {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets/tools")
        .join(script);
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .env("TELAMALLOC", env!("CARGO_BIN_EXE_telamalloc"))
        .output()
        .expect("python runs");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    said
}

/// TFLite Micro itself runs a planned model (the `tflite-micro` package's host interpreter):
/// `datasets/tools/tflm_check.py` on the package's own `sine_float.tflite` must find the
/// outputs identical with and without the plan, and the plan read. Skips, saying so, when
/// Python or the package is absent.
#[test]
fn tflite_micro_runs_a_planned_model() {
    let Some(python) = python_with_tflite_micro() else {
        return;
    };
    let said = run_tool(
        &python,
        "tflm_check.py",
        &["--timeout".as_ref(), "5".as_ref()],
    );
    assert!(said.contains("sine_float: outputs identical"), "{said}");
    assert!(said.contains("plan read by the runtime: yes"), "{said}");
}

/// TFLite Micro runs a reordered, planned model (`telamalloc plan`) with the original's outputs
/// in a smaller arena: `datasets/tools/branchy_models.py` writes a branching model whose file
/// lists its operators breadth first, `tflm_check.py --reorder` runs both. Skips like the test
/// above.
#[test]
fn tflite_micro_runs_a_reordered_model_in_a_smaller_arena() {
    let Some(python) = python_with_tflite_micro() else {
        return;
    };
    let scratch = Scratch::new();
    run_tool(&python, "branchy_models.py", &[scratch.dir().as_os_str()]);
    let model = scratch.path("inception.tflite");
    let said = run_tool(
        &python,
        "tflm_check.py",
        &[
            "--reorder".as_ref(),
            "--timeout".as_ref(),
            "5".as_ref(),
            model.as_os_str(),
        ],
    );
    let line = said
        .lines()
        .find(|l| l.starts_with("inception reordered:"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(line.contains("outputs identical"), "{line}");
    assert!(
        line.contains("LOAD 139264 -> 53248 (proven minimal"),
        "{line}"
    );
    assert!(line.contains("plan read by the runtime: yes"), "{line}");
    // "smallest arena: TFLM's planner A, with the plan B, reordered with the plan C"
    let number_after = |label: &str| -> u64 {
        let rest = &line[line.find(label).unwrap_or_else(|| panic!("{line}")) + label.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().unwrap_or_else(|_| panic!("{line}"))
    };
    let tflm = number_after("smallest arena: TFLM's planner ");
    let reordered = number_after("reordered with the plan ");
    assert!(reordered < tflm, "{line}");
}
