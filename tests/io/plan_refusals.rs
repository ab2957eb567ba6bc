//! Models `import --reorder` and `plan` must refuse before they claim anything: an operator of
//! unknown kind (its opcode index past the operator code table), which may have side effects
//! and so cannot be moved, and a shape TFLite Micro cannot plan.

use crate::common;

use common::tflite::{tflite, tflite_with_codes, ModelTensor};
use common::{telamalloc_output, Scratch};

const ADD: i32 = 0;
const CONV_2D: i32 = 3;

/// Two branches joined by an ADD: `x -> a (big) -> c`, `x -> b (big) -> d`, `c + d -> out`,
/// listed breadth first, so running one branch at a time lowers LOAD. `shape_of_a` is the big
/// tensors' shape; operator 1's code is `second` (a code the table may lack).
fn two_branches(shape_of_a: &[i32], second: i32, table: Option<&[i32]>) -> Vec<u8> {
    let t = |shape: &[i32]| ModelTensor {
        shape: shape.to_vec(),
        buffer: 0,
    };
    let tensors = [
        t(&[1, 8, 8, 4]),   // 0 x
        t(shape_of_a),      // 1 a
        t(&[1, 64, 64, 4]), // 2 b
        t(&[1, 4, 4, 4]),   // 3 c
        t(&[1, 4, 4, 4]),   // 4 d
        t(&[1, 4, 4, 4]),   // 5 out
    ];
    let operators = [
        (CONV_2D, vec![0], vec![1]),
        (second, vec![0], vec![2]),
        (CONV_2D, vec![1], vec![3]),
        (CONV_2D, vec![2], vec![4]),
        (ADD, vec![3, 4], vec![5]),
    ];
    match table {
        Some(codes) => tflite_with_codes(&tensors, &operators, &[0], &[5], codes),
        None => tflite(&tensors, &operators, &[0], &[5]),
    }
}

/// Runs the binary; its exit code and standard error.
fn run(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let out = telamalloc_output(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_operator_of_unknown_kind_is_refused_not_moved() {
    let scratch = Scratch::new();
    // The same model with a whole table reorders (the check below is not vacuous).
    let good = scratch.path("good.tflite");
    std::fs::write(&good, two_branches(&[1, 64, 64, 4], CONV_2D, None)).unwrap();
    let problem = scratch.path("p.csv");
    let (code, said) = run(&[
        "import".as_ref(),
        good.as_os_str(),
        "--reorder".as_ref(),
        "-o".as_ref(),
        problem.as_os_str(),
    ]);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.lines().any(|l| l.starts_with("reordered ")), "{said}");
    // Operator 1's opcode index points one past a table that holds only ADD and CONV_2D.
    let bad = scratch.path("unknown-op.tflite");
    std::fs::write(
        &bad,
        two_branches(&[1, 64, 64, 4], 99, Some(&[ADD, CONV_2D])),
    )
    .unwrap();
    let planned = scratch.path("planned.tflite");
    for args in [
        vec!["import".as_ref(), bad.as_os_str(), "--reorder".as_ref()],
        vec![
            "plan".as_ref(),
            bad.as_os_str(),
            "-o".as_ref(),
            planned.as_os_str(),
        ],
    ] {
        let (code, said) = run(&args);
        assert_eq!(code, Some(2), "{said}");
        assert!(
            said.contains("unknown-op.tflite")
                && said.contains("field 'subgraphs[0].operators[1].opcode_index'")
                && said.contains("opcode index 2 is past the operator code table (2 codes)"),
            "{said}"
        );
        assert!(!said.lines().any(|l| l.starts_with("reordered ")), "{said}");
        assert!(!said.contains("panicked"), "{said}");
    }
    assert!(!planned.exists());
}

#[test]
fn plan_refuses_a_dynamic_dimension_before_saying_it_reordered() {
    let scratch = Scratch::new();
    let model = scratch.path("dynamic.tflite");
    std::fs::write(&model, two_branches(&[1, -3, 64, 4], CONV_2D, None)).unwrap();
    let planned = scratch.path("planned.tflite");
    let (code, said) = run(&[
        "plan".as_ref(),
        model.as_os_str(),
        "-o".as_ref(),
        planned.as_os_str(),
    ]);
    assert_eq!(code, Some(2), "{said}");
    assert!(
        said.contains("dynamic.tflite") && said.contains("dynamic dimension (-3)"),
        "{said}"
    );
    assert!(!said.lines().any(|l| l.starts_with("reordered ")), "{said}");
    assert!(!planned.exists());
}
