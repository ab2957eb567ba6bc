//! The `telamalloc` binary: exit codes (0 solved, 1 not solved or invalid, 2 bad input), errors
//! that name the line and field, and output that the library reads back and validates.

use crate::common;

use common::{telamalloc, Scratch};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use telamalloc::io::{parse_csv_solution, parse_json_solution, read_problem};
use telamalloc::validate;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets")
        .join("examples")
        .join(name)
}

/// Runs `solve` on a file holding `text` and checks the bad-input answer: exit code 2, an error
/// naming the file and every one of `names`, and nothing on standard output.
fn assert_rejected(file_name: &str, text: &str, extra: &[&str], names: &[&str]) {
    let scratch = Scratch::new();
    let path = scratch.file(file_name, text);
    let mut args: Vec<&OsStr> = vec![OsStr::new("solve"), path.as_os_str()];
    args.extend(extra.iter().map(OsStr::new));
    let run = telamalloc(&args);
    let context = format!("{file_name} {text:?} {extra:?}");
    assert_eq!(run.code, 2, "{context}: exit code; stderr: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{context}: stdout {:?}", run.stdout);
    assert!(
        run.stderr.contains(&path.display().to_string()),
        "{context}: {}",
        run.stderr
    );
    for name in names {
        assert!(
            run.stderr.contains(name),
            "{context}: stderr should name {name:?}: {}",
            run.stderr
        );
    }
    assert!(
        !run.stderr.contains("panicked"),
        "{context}: {}",
        run.stderr
    );
}

const HEADER: &str = "id,lower,upper,size";
const FULL_HEADER: &str = "id,lower,upper,size,alignment,offset";

#[test]
fn bad_csv_input_exits_2_naming_line_and_field() {
    let cap = ["--capacity", "64"];
    let cases: Vec<(String, &[&str], usize, &str, &str)> = vec![
        (
            "id,lower,size\na,0,4\n".to_string(),
            &cap,
            1,
            "upper",
            "missing column",
        ),
        (
            format!("{HEADER},colour\na,0,2,4,red\n"),
            &cap,
            1,
            "colour",
            "unknown column",
        ),
        (
            format!("{HEADER}\na,0,2,4\nb,0,x,4\n"),
            &cap,
            3,
            "upper",
            "not an integer",
        ),
        (
            format!("{HEADER}\na,0,2,4\nb,0,2,-4\n"),
            &cap,
            3,
            "size",
            "negative",
        ),
        (
            format!("{HEADER}\na,0,2,4\nb,99999999999999999999,2,4\n"),
            &cap,
            3,
            "lower",
            "too large",
        ),
        (
            format!("{HEADER}\na,0,2,4\nb,2,2,4\n"),
            &cap,
            3,
            "upper",
            "less than",
        ),
        (
            format!("{HEADER}\na,0,2,4\nb,0,2,0\n"),
            &cap,
            3,
            "size",
            "greater than 0",
        ),
        (
            format!("{FULL_HEADER}\na,0,2,4,1,\nb,0,2,4,0,\n"),
            &cap,
            3,
            "alignment",
            "power of two",
        ),
        (
            format!("{FULL_HEADER}\na,0,2,4,1,\nb,0,2,4,12,\n"),
            &cap,
            3,
            "alignment",
            "power of two",
        ),
        (
            format!("{HEADER}\na,0,2,4\na,3,5,4\n"),
            &cap,
            3,
            "id",
            "duplicate",
        ),
        (
            format!("{FULL_HEADER}\na,0,2,4,1,\nb,0,2,4,8,4\n"),
            &cap,
            3,
            "offset",
            "multiple",
        ),
        (
            format!("{FULL_HEADER}\na,0,2,4,1,\nb,0,2,4,1,14\n"),
            &["--capacity", "16"],
            3,
            "offset",
            "exceeds the capacity",
        ),
        (
            format!("{HEADER}\na,0,2,4\nb,0,2,17\n"),
            &["--capacity", "16"],
            3,
            "size",
            "larger than the capacity",
        ),
        (
            format!("{HEADER}\na,0,2,{0}\nb,4,5,{0}\n", 1u64 << 63),
            &["--minimize"],
            3,
            "size",
            "overflows",
        ),
    ];
    for (text, extra, line, field, words) in cases {
        let line = format!("line {line}");
        let field = format!("field '{field}'");
        assert_rejected("p.csv", &text, extra, &[&line, &field, words]);
    }
}

#[test]
fn short_row_and_empty_file_exit_2_naming_the_line() {
    assert_rejected(
        "p.csv",
        "id,lower,upper,size\na,0,2,4\nb,0,2\n",
        &["--capacity", "64"],
        &["line 3", "expected 4 fields, found 3"],
    );
    // No header at all names no line (it used to say line 1 even after comment lines).
    for empty in ["", "# only a comment\n\n"] {
        assert_rejected(
            "p.csv",
            empty,
            &["--capacity", "64"],
            &["empty", "no header line"],
        );
        let scratch = Scratch::new();
        let path = scratch.file("p.csv", empty);
        let run = telamalloc([OsStr::new("solve"), path.as_os_str()]);
        assert!(!run.stderr.contains("line 1"), "{}", run.stderr);
    }
}

/// An id with white space at an end (`"a "` beside `"a"`, a tab, a no-break space) would be
/// written unquoted into a CSV solution and read back trimmed, as another buffer's id or none:
/// it is rejected when the problem is read, naming the buffer and field, before any output.
#[test]
fn json_ids_with_white_space_at_an_end_are_rejected_before_any_output() {
    for id in ["a ", " b", "b\\t", "\\u00a0b"] {
        let text = format!(
            "{{\"capacity\": 8, \"buffers\": [\n{{\"id\": \"a\", \"lower\": 0, \"upper\": 2, \"size\": 4}},\n{{\"id\": \"{id}\", \"lower\": 0, \"upper\": 2, \"size\": 4}}]}}"
        );
        assert_rejected(
            "p.json",
            &text,
            &["--algo", "tflite"],
            &["buffers[1]", "field 'id'", "white space"],
        );
    }
}

#[test]
fn bad_json_input_exits_2_naming_element_or_line() {
    let good = r#"{"id": "a", "lower": 0, "upper": 2, "size": 4}"#;
    let with = |second: &str| format!("{{\"buffers\": [\n{good},\n{second}\n]}}\n");
    assert_rejected(
        "p.json",
        &with(r#"{"id": "b", "lower": 4, "upper": 3, "size": 4}"#),
        &["--minimize"],
        &["buffers[1]", "field 'upper'", "less than"],
    );
    assert_rejected(
        "p.json",
        &with(r#"{"id": "b", "lower": 0, "upper": 3, "size": 4, "alignment": 6}"#),
        &["--minimize"],
        &["buffers[1]", "field 'alignment'", "power of two"],
    );
    assert_rejected(
        "p.json",
        &with(r#"{"id": "b", "lower": 0, "upper": 3, "size": 4, "colour": 6}"#),
        &["--minimize"],
        &["line 3", "unknown field", "colour"],
    );
    assert_rejected(
        "p.json",
        &with(r#"{"id": "b", "lower": 0 "upper": 3, "size": 4}"#),
        &["--minimize"],
        &["line 3", "malformed JSON"],
    );
    assert_rejected(
        "p.json",
        &with(r#"{"id": "b", "lower": 0, "upper": 3, "size": -4}"#),
        &["--minimize"],
        &["line 3", "-4"],
    );
    assert_rejected(
        "p.json",
        &format!("{{\"capacity\": 0, \"buffers\": [{good}]}}"),
        &[],
        &["field 'capacity'", "greater than 0"],
    );
}

#[test]
fn capacity_from_the_file_name_error_names_the_line() {
    assert_rejected(
        "p.16.csv",
        "id,lower,upper,size\na,0,2,4\nb,0,2,17\n",
        &[],
        &["line 3", "field 'size'"],
    );
}

#[test]
fn a_cap_suffix_in_the_file_name_gives_the_capacity() {
    let scratch = Scratch::new();
    let text = "id,lower,upper,size\na,0,2,4\nb,0,2,8\n";
    for (name, capacity) in [("rand_1.cap12.csv", 12), ("rand_1.CAP16.csv", 16)] {
        let path = scratch.file(name, text);
        let problem = read_problem(&path, None).expect("reads");
        assert_eq!(problem.capacity, Some(capacity), "{name}");
        let run = telamalloc([OsStr::new("solve"), path.as_os_str()]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    }
    // Too small a capacity from the name is not solved (exit 1), not ignored.
    let path = scratch.file("rand_1.cap11.csv", text);
    assert_eq!(telamalloc([OsStr::new("solve"), path.as_os_str()]).code, 1);
    // A last part that is no capacity is named in the error.
    let path = scratch.file("rand_1.capacity294.csv", text);
    let run = telamalloc([OsStr::new("solve"), path.as_os_str()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("'capacity294' is not a capacity"),
        "{}",
        run.stderr
    );
    assert_rejected(
        "p.cap0.csv",
        text,
        &[],
        &["field 'capacity'", "greater than 0"],
    );
}

#[test]
fn usage_errors_exit_2() {
    let tiny = example("tiny.12.csv");
    for args in [
        vec!["solve", tiny.to_str().unwrap(), "--capacity", "0"],
        vec![
            "solve",
            tiny.to_str().unwrap(),
            "--algo",
            "no-such-algorithm",
        ],
        vec!["solve", "/no/such/file.12.csv"],
        vec!["solve", tiny.to_str().unwrap(), "--cpsat-share", "-1"],
        vec!["solve", tiny.to_str().unwrap(), "--cpsat-share", "NaN"],
        vec!["eval", tiny.to_str().unwrap(), "--algo", "tflite"],
        vec!["frobnicate"],
        vec!["solve"],
    ] {
        let run = telamalloc(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        assert!(!run.stderr.is_empty(), "{args:?}");
    }
    // No capacity anywhere.
    let scratch = Scratch::new();
    let path = scratch.file("nocap.csv", "id,lower,upper,size\na,0,2,4\n");
    let run = telamalloc([OsStr::new("solve"), path.as_os_str()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no capacity"), "{}", run.stderr);
    // --help is not an error.
    assert_eq!(telamalloc(["--help"]).code, 0);
}

#[test]
fn solve_prints_a_valid_csv_solution() {
    let path = example("tiny.12.csv");
    let problem = read_problem(&path, None).unwrap();
    let mut algorithms = vec![None];
    algorithms.extend(
        telamalloc::baselines::Baseline::ALL
            .iter()
            .map(|b| Some(b.name())),
    );
    for algorithm in algorithms {
        let mut args = vec!["solve".to_string(), path.display().to_string()];
        if let Some(name) = algorithm {
            args.extend(["--algo".to_string(), name.to_string()]);
        }
        let run = telamalloc(&args);
        assert_eq!(run.code, 0, "{algorithm:?}: {}", run.stderr);
        assert!(
            run.stdout.starts_with("id,lower,upper,size,offset\n"),
            "{algorithm:?}: {}",
            run.stdout
        );
        let solution = parse_csv_solution(&run.stdout, "stdout", &problem).unwrap();
        let report = validate(&problem, &solution, Some(12));
        assert!(report.is_valid(), "{algorithm:?}: {report}");
        assert!(run.stderr.contains("solved"), "{}", run.stderr);
        assert!(run.stderr.contains("LOAD 12"), "{}", run.stderr);
    }
}

#[test]
fn solve_writes_json_and_files() {
    let path = example("aligned-fixed.48.csv");
    let problem = read_problem(&path, None).unwrap();
    let run = telamalloc([
        OsStr::new("solve"),
        path.as_os_str(),
        OsStr::new("--json"),
        OsStr::new("--algo"),
        OsStr::new("tflite"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let solution = parse_json_solution(&run.stdout, "stdout", &problem).unwrap();
    assert!(validate(&problem, &solution, Some(48)).is_valid());
    assert_eq!(solution.offsets[0], 0, "the fixed buffer stays");

    let scratch = Scratch::new();
    for name in ["out.csv", "out.json"] {
        let out = scratch.path(name);
        let run = telamalloc([
            OsStr::new("solve"),
            path.as_os_str(),
            OsStr::new("-o"),
            out.as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        let solution = telamalloc::io::read_solution(&out, &problem).unwrap();
        assert!(validate(&problem, &solution, Some(48)).is_valid(), "{name}");
    }
}

#[test]
fn solve_below_load_is_infeasible() {
    let path = example("tiny.12.csv");
    for algorithm in ["search", "tflite", "xla"] {
        let run = telamalloc([
            OsStr::new("solve"),
            path.as_os_str(),
            OsStr::new("--capacity"),
            OsStr::new("11"),
            OsStr::new("--algo"),
            OsStr::new(algorithm),
        ]);
        assert_eq!(run.code, 1, "{algorithm}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{algorithm}: {}", run.stdout);
        assert!(
            run.stderr.contains("infeasible"),
            "{algorithm}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("LOAD 12"),
            "{algorithm}: {}",
            run.stderr
        );
    }
}

#[test]
fn solve_heuristic_above_capacity_is_not_solved() {
    let path = example("best-fit-trap.8.csv");
    let run = telamalloc([
        OsStr::new("solve"),
        path.as_os_str(),
        OsStr::new("--algo"),
        OsStr::new("tflite"),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.contains("needs 11 bytes"), "{}", run.stderr);
    assert!(!run.stderr.contains("infeasible"), "{}", run.stderr);
}

#[test]
fn validate_command() {
    let path = example("tiny.12.csv");
    let scratch = Scratch::new();
    let good = scratch.file("good.csv", "id,offset\nb1,0\nb2,0\nb3,4\nb4,0\nb5,8\n");
    let run = telamalloc([OsStr::new("validate"), path.as_os_str(), good.as_os_str()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("valid: 5 buffers, peak 12, capacity 12"),
        "{}",
        run.stdout
    );

    // b3 moved onto b1 (both live over 0..3).
    let bad = scratch.file("bad.csv", "id,offset\nb1,0\nb2,0\nb3,2\nb4,0\nb5,8\n");
    let run = telamalloc([OsStr::new("validate"), path.as_os_str(), bad.as_os_str()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("invalid"), "{}", run.stdout);
    assert!(run.stdout.contains("'b1' and 'b3'"), "{}", run.stdout);

    // Within 12 bytes, but not within a smaller capacity.
    let run = telamalloc([
        OsStr::new("validate"),
        path.as_os_str(),
        good.as_os_str(),
        OsStr::new("--capacity"),
        OsStr::new("11"),
    ]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("'b5'"), "{}", run.stdout);

    // A solution file that is itself bad input.
    let broken = scratch.file("broken.csv", "id,offset\nb1,0\nb9,4\n");
    let run = telamalloc([OsStr::new("validate"), path.as_os_str(), broken.as_os_str()]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("line 3"), "{}", run.stderr);
    assert!(run.stderr.contains("field 'id'"), "{}", run.stderr);
}

#[test]
fn stats_prints_load() {
    let path = example("tiny.12.csv");
    let run = telamalloc([OsStr::new("stats"), path.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut lines = run.stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let row: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(header.len(), row.len(), "{}", run.stdout);
    let column = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(column("problem"), "tiny.12.csv");
    assert_eq!(column("LOAD"), "12");
    assert_eq!(column("buffers"), "5");
    assert_eq!(column("capacity"), "12");
    assert_eq!(column("sections"), "3");

    let run = telamalloc([OsStr::new("stats"), OsStr::new("--json"), path.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let stats: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(stats["load"], 12);
    assert_eq!(stats["horizon"], 21);
    assert_eq!(stats["partitions"], 1);

    let scratch = Scratch::new();
    let bad = scratch.file("bad.csv", "id,lower,upper,size\na,0,2,4\nb,0,2,0\n");
    let run = telamalloc([OsStr::new("stats"), bad.as_os_str()]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("line 3") && run.stderr.contains("field 'size'"),
        "{}",
        run.stderr
    );
}

#[test]
fn conflicting_fixed_offsets_are_bad_input() {
    // p and q are both fixed and collide: the input breaks the model's rules, so the contract's
    // answer is 2 (bad input), whatever the algorithm, before any work.
    let scratch = Scratch::new();
    let path = scratch.file(
        "fixed.32.csv",
        "id,lower,upper,size,offset\np,0,4,8,0\nq,2,6,8,4\nr,0,6,4,\n",
    );
    for algorithm in ["search", "tflite"] {
        let run = telamalloc([
            OsStr::new("solve"),
            path.as_os_str(),
            OsStr::new("--algo"),
            OsStr::new(algorithm),
        ]);
        assert_eq!(run.code, 2, "{algorithm}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{algorithm}: {}", run.stdout);
        let expected = format!(
            "error: {}: line 3: field 'offset': fixed buffer 'q' shares addresses with fixed buffer 'p'",
            path.display()
        );
        assert!(
            run.stderr.contains(&expected),
            "{algorithm}: {}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("panicked"),
            "{algorithm}: {}",
            run.stderr
        );
    }
}

#[test]
fn eval_compares_policies_and_writes_its_runs() {
    let scratch = Scratch::new();
    let out = scratch.path("eval");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/examples");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/policy.json");
    let policies = format!("fixed,portfolio,{}", model.display());
    let run = telamalloc([
        OsStr::new("eval"),
        examples.as_os_str(),
        OsStr::new("--policies"),
        OsStr::new(&policies),
        OsStr::new("--nodes"),
        OsStr::new("100000"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Every example is decided (one is proven infeasible) by every policy.
    assert!(run.stdout.contains("| fixed | 5/5 |"), "{}", run.stdout);
    assert!(run.stdout.contains("| portfolio | 5/5 |"), "{}", run.stdout);
    // The paired table compares each later policy with the first on the 5 problems.
    assert!(
        run.stdout.contains("| portfolio | fixed | 5 |"),
        "{}",
        run.stdout
    );
    let runs: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("eval.json")).unwrap()).unwrap();
    let runs = runs.as_array().expect("a list of runs");
    assert_eq!(runs.len(), 15);
    assert!(runs
        .iter()
        .all(|r| r["buffers"].as_u64().is_some_and(|b| b > 0) && r["nodes"].as_u64().is_some()));
    assert!(out.join("eval.svg").exists() && out.join("eval.md").exists());
    let bad = telamalloc([
        OsStr::new("eval"),
        examples.as_os_str(),
        OsStr::new("--policies"),
        OsStr::new("fixed,nonsense"),
    ]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("nonsense"), "{}", bad.stderr);
}

/// `eval --seed` reaches the diversified orders: on hard problem B, `TWA~` needs other node
/// counts under seeds 0 and 1 (both decide it), and the same seed gives the same runs. Slack
/// filling is off: it decides B in its first run, the same under every seed.
#[test]
fn eval_seeds_the_diversified_orders() {
    let b = Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/challenging/B.1048576.csv");
    let scratch = Scratch::new();
    let nodes = |seed: &str, out: &str| {
        let out = scratch.path(out);
        let run = telamalloc([
            OsStr::new("eval"),
            b.as_os_str(),
            OsStr::new("--policies"),
            OsStr::new("TWA~"),
            OsStr::new("--nodes"),
            OsStr::new("400000"),
            OsStr::new("--no"),
            OsStr::new("slack-fill"),
            OsStr::new("--threads"),
            OsStr::new("1"),
            OsStr::new("--seed"),
            OsStr::new(seed),
            OsStr::new("--out"),
            out.as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let runs: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("eval.json")).unwrap()).unwrap();
        assert_eq!(runs[0]["status"], "solved", "seed {seed}");
        runs[0]["nodes"].as_u64().expect("nodes")
    };
    let first = nodes("0", "a");
    assert_eq!(first, nodes("0", "b"), "the same seed, other runs");
    assert_ne!(first, nodes("1", "c"), "the seed changed nothing");
}

/// A model file given as the policy that is missing or not a model stops every command that
/// would search with it: exit 2, a message naming the file, and nothing on standard output.
#[test]
fn a_policy_model_file_that_cannot_be_used_is_an_error() {
    let tiny = example("tiny.12.csv");
    let tiny = tiny.to_str().expect("UTF-8 path");
    let scratch = Scratch::new();
    let bad = scratch.path("bad.json");
    std::fs::write(&bad, "{\"format\": 1}").unwrap();
    let bad = bad.to_str().expect("UTF-8 path");
    let missing = scratch.path("missing.json");
    let missing = missing.to_str().expect("UTF-8 path");
    for model in [bad, missing] {
        let policies = format!("fixed,{model}");
        let commands: [&[&str]; 4] = [
            &["solve", tiny, "--policy", model],
            &["solve", tiny, "--minimize", "--policy", model],
            &["bench", tiny, "--algo", "search", "--policy", model],
            &["eval", tiny, "--policies", &policies],
        ];
        for args in commands {
            let run = telamalloc(args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(run.stderr.contains(model), "{args:?}: {}", run.stderr);
            assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        }
    }
}

/// A time limit that is neither 0 (none) nor a positive number of at most 10^9 seconds is a
/// usage error (exit 2, a message naming the flag and, when too large, the maximum), never a
/// panic, in every command that takes one; 10^9 seconds itself is accepted. From about 9.3e18 seconds the deadline used
/// to overflow the clock and panic (exit 101).
#[test]
fn timeouts_that_do_not_fit_are_rejected() {
    let tiny = example("tiny.12.csv");
    let tiny = tiny.to_str().expect("UTF-8 path");
    let scratch = Scratch::new();
    let out = scratch.path("out");
    let out = out.to_str().expect("UTF-8 path");
    let commands: [&[&str]; 6] = [
        &["solve", tiny],
        &["solve", tiny, "--minimize"],
        &["solve", tiny, "--algo", "tflite"],
        &["bench", tiny, "--algo", "search,xla"],
        &["eval", tiny],
        &["collect", tiny, "--out", out],
    ];
    let bad = [
        ("1e30", "is too large (at most 1000000000 seconds"),
        ("9.3e18", "is too large (at most 1000000000 seconds"),
        ("1000000001", "is too large (at most 1000000000 seconds"),
        (
            "NaN",
            "must be 0 (no time limit) or a positive, finite number of seconds, not NaN",
        ),
        (
            "inf",
            "must be 0 (no time limit) or a positive, finite number of seconds, not inf",
        ),
        (
            "-inf",
            "must be 0 (no time limit) or a positive, finite number of seconds, not -inf",
        ),
        (
            "-1",
            "must be 0 (no time limit) or a positive, finite number of seconds, not -1",
        ),
    ];
    for command in commands {
        for (value, why) in bad {
            let mut args = command.to_vec();
            let flag = format!("--timeout={value}");
            args.push(&flag);
            let run = telamalloc(&args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(
                run.stderr.contains("--timeout ") && run.stderr.contains(why),
                "{args:?}: {}",
                run.stderr
            );
            assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
        }
        let mut args = command.to_vec();
        args.push("--timeout=1e9");
        let run = telamalloc(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    let run = telamalloc(["solve", tiny, "--timeout", "1e9"]);
    assert!(
        run.stderr.contains("solved by search: peak 12"),
        "{}",
        run.stderr
    );
}

/// `--timeout 0` is no time limit: a fit runs until it decides in every command that takes
/// the flag (exit 0 on a small problem). Minimise, spill and memories improve until a limit,
/// so there it needs `--nodes` (a usage error without, exit 2 and a message saying why).
#[test]
fn timeout_0_is_no_time_limit_and_needs_nodes_to_improve() {
    let scratch = Scratch::new();
    let tiny = example("tiny.12.csv")
        .to_str()
        .expect("UTF-8 path")
        .to_string();
    let out = scratch
        .path("out")
        .to_str()
        .expect("UTF-8 path")
        .to_string();
    let memories = scratch.file("mem.csv", "id,capacity,cost\nsram,12,1\ndram,64,20\n");
    let memories = memories.to_str().expect("UTF-8 path");
    let run = |command: &[&str], nodes: Option<&str>| {
        let mut args = vec![command[0], &tiny];
        args.extend(&command[1..]);
        args.extend(["--timeout", "0"]);
        args.extend(nodes.map(|n| ["--nodes", n]).iter().flatten());
        (telamalloc(&args), args.join(" "))
    };
    let fits: [&[&str]; 6] = [
        &["solve"],
        &["solve", "--algo", "tflite"],
        &["solve", "--minimize", "--nodes", "1000"],
        &["bench", "--algo", "search,xla"],
        &["eval"],
        &["collect", "--out", &out],
    ];
    for command in fits {
        let (ran, args) = run(command, None);
        assert_eq!(ran.code, 0, "{args}: {}", ran.stderr);
        assert!(command != ["solve"] || ran.stderr.contains("solved by search: peak 12"));
    }
    let improving: [&[&str]; 4] = [
        &["solve", "--minimize"],
        &["solve", "--spill"],
        &["solve", "--memories", memories],
        &["bench", "--algo", "search", "--minimize"],
    ];
    for command in improving {
        let (ran, args) = run(command, None);
        assert_eq!(ran.code, 2, "{args}: {}", ran.stderr);
        let why = "--timeout 0 (no time limit) needs --nodes N";
        assert!(ran.stderr.contains(why), "{args}: {}", ran.stderr);
        let (ran, args) = run(command, Some("1000"));
        assert_eq!(ran.code, 0, "{args}: {}", ran.stderr);
    }
}

/// `--threads` takes 1 to 1024 in every command (each thread is started before the work: a
/// hundred million used to hang `eval`).
#[test]
fn thread_counts_out_of_range_are_rejected() {
    let tiny = example("tiny.12.csv");
    let tiny = tiny.to_str().expect("UTF-8 path");
    let scratch = Scratch::new();
    let out = scratch.path("out");
    let out = out.to_str().expect("UTF-8 path");
    let commands: [&[&str]; 4] = [
        &["solve", tiny],
        &["bench", tiny, "--algo", "search"],
        &["eval", tiny],
        &["collect", tiny, "--out", out],
    ];
    for command in commands {
        for value in ["0", "1025", "100000000", "18446744073709551616"] {
            let mut args = command.to_vec();
            args.extend(["--threads", value]);
            let run = telamalloc(&args);
            assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
            assert!(run.stderr.contains("--threads"), "{args:?}: {}", run.stderr);
        }
        let mut args = command.to_vec();
        args.extend(["--threads", "1024"]);
        let run = telamalloc(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
}

/// `gen` rejects options whose problem could not be read back (sizes or alignments whose sum
/// overflows 64 bits, a capacity of 0 or below a buffer) or that make no sense, with exit 2 and
/// no file written, where it used to write an unusable file and exit 0, panic (`--buffers`
/// past memory) or loop (`gen perfect --buffers 2^64-1`).
#[test]
fn gen_rejects_options_whose_problem_would_not_read_back() {
    let scratch = Scratch::new();
    let output = scratch.path("g.csv");
    let output = output.to_str().expect("UTF-8 path");
    let max = "18446744073709551615";
    let cases: [(&[&str], &str); 12] = [
        (
            &["random", "--max-size", max, "--buffers", "3"],
            "overflows 64 bits",
        ),
        (
            &["overlap", "--max-size", max, "--buffers", "5"],
            "overflows 64 bits",
        ),
        (
            &["perfect", "--alignment", "9223372036854775808"],
            "overflow 64 bits",
        ),
        (
            &["perfect", "--capacity", max, "--horizon", max],
            "overflows 64 bits",
        ),
        (&["perfect", "--alignment", "3"], "not a power of two"),
        (
            &["random", "--tightness", "NaN"],
            "--tightness must be a positive",
        ),
        (
            &["random", "--tightness", "0"],
            "--tightness must be a positive",
        ),
        (
            &["random", "--tightness", "1e-300"],
            "capacity must be greater than 0",
        ),
        (
            &["random", "--tightness", "0.5", "--buffers", "3"],
            "larger than the capacity",
        ),
        (&["random", "--buffers", max], "--buffers"),
        (&["perfect", "--buffers", "0"], "--buffers"),
        (
            &["random", "--min-size", "10", "--max-size", "5"],
            "--min-size 10 is larger",
        ),
    ];
    for (options, why) in cases {
        let mut args = vec!["gen"];
        args.extend(options);
        args.extend(["-o", output]);
        let run = telamalloc(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains(why), "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
        assert!(!Path::new(output).exists(), "{args:?} wrote {output}");
    }
    let run = telamalloc(["gen", "random", "--tightness", "1e300", "-o", output]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(read_problem(Path::new(output), None).is_ok());
}

#[test]
fn eval_keeps_each_finished_run_while_it_runs_and_tidies_up_after() {
    let scratch = Scratch::new();
    let out = scratch.path("eval");
    let tiny = example("tiny.12.csv");
    // A perfect packing the search does not decide in a few seconds: the evaluation is still
    // on it when the tiny problem's run is already saved.
    let options = telamalloc::generate::PerfectOptions {
        capacity: 1 << 20,
        horizon: 1024,
        buffers: 250,
        style: telamalloc::generate::CutStyle::NonGuillotine,
        remove: 7,
        alignment: 1024,
        cuts: Default::default(),
    };
    let (hard, _) = telamalloc::generate::perfect(&options, 903);
    let hard = scratch.file(
        "hard.1048576.csv",
        &telamalloc::io::write_csv_problem(&hard),
    );
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_telamalloc"))
        .args([OsStr::new("eval"), tiny.as_os_str(), hard.as_os_str()])
        .args([
            "--policies",
            "fixed",
            "--threads",
            "1",
            "--timeout",
            "60",
            "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the binary runs");
    let partial = out.join("eval.partial.jsonl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(50);
    let mut saved = String::new();
    while std::time::Instant::now() < deadline {
        saved = std::fs::read_to_string(&partial).unwrap_or_default();
        if saved.ends_with('\n') || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let first: serde_json::Value =
        serde_json::from_str(saved.lines().next().expect("a saved run")).unwrap();
    assert_eq!(first["problem"], "tiny.12.csv", "{saved}");
    assert_eq!(first["status"], "solved");
    assert!(
        !out.join("eval.json").exists(),
        "interrupted before the end"
    );
    // Run to the end, the evaluation writes eval.json and removes the partial file.
    let done = telamalloc([
        OsStr::new("eval"),
        tiny.as_os_str(),
        OsStr::new("--policies"),
        OsStr::new("fixed,portfolio"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(out.join("eval.json").exists());
    assert!(!partial.exists());
}

#[test]
fn spill_and_memories_solve_validate_and_reject_bad_memory_specs() {
    let scratch = Scratch::new();
    let problem = scratch.file(
        "weights.csv",
        "id,lower,upper,size,memories\nweights,0,4,4,sram\na,0,4,4,\nb,2,6,4,\n",
    );
    let memories = scratch.file("sram-dram.csv", "id,capacity,cost\nsram,8,1\ndram,64,20\n");
    let solution = scratch.path("out.csv");
    let run = telamalloc([
        OsStr::new("solve"),
        problem.as_os_str(),
        OsStr::new("--memories"),
        memories.as_os_str(),
        OsStr::new("-o"),
        solution.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("cost: 88"), "{}", run.stderr);
    let check = telamalloc([
        OsStr::new("validate"),
        problem.as_os_str(),
        solution.as_os_str(),
        OsStr::new("--memories"),
        memories.as_os_str(),
    ]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    assert!(check.stdout.contains("cost 88"), "{}", check.stdout);
    // Spill at 8 bytes: two of the three fit; the line compares with greedy admission.
    let plain = scratch.file(
        "plain.8.csv",
        "id,lower,upper,size\nx,0,4,6\ny,0,4,5\nz,0,4,3\n",
    );
    let run = telamalloc([
        OsStr::new("solve"),
        plain.as_os_str(),
        OsStr::new("--spill"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("x,0,4,6,,\n"), "{}", run.stdout);
    assert!(
        run.stderr.contains(
            "kept on chip: 8 bytes (benefit 8) of 14, moved out 1; greedy admission keeps 6 bytes"
        ),
        "{}",
        run.stderr
    );
    // With memories, the file name's capacity does not limit the buffers.
    let named = scratch.file("named.2.csv", "id,lower,upper,size\na,0,2,4\n");
    let run = telamalloc([
        OsStr::new("solve"),
        named.as_os_str(),
        OsStr::new("--memories"),
        memories.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // A buffer larger than the capacity is moved out, not an error, with --spill only.
    let big = scratch.file("big.4.csv", "id,lower,upper,size\na,0,2,9\nb,0,2,3\n");
    let run = telamalloc([OsStr::new("solve"), big.as_os_str(), OsStr::new("--spill")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("a,0,2,9,,\nb,0,2,3,0,chip\n"),
        "{}",
        run.stdout
    );
    assert_eq!(telamalloc([OsStr::new("solve"), big.as_os_str()]).code, 2);
    // Bad specs: exit 2 with the file, line and field.
    for (text, field) in [
        ("id,capacity\nsram,0\n", "line 2: field 'capacity'"),
        ("id,capacity,cost\nsram,8,x\n", "line 2: field 'cost'"),
        (
            "id,capacity\nsram,8\nsram,9\n",
            "line 3: field 'id': duplicate memory id 'sram'",
        ),
        ("id,size\nsram,8\n", "field 'size': unknown column"),
    ] {
        let bad = scratch.file("bad-memories.csv", text);
        let run = telamalloc([
            OsStr::new("solve"),
            problem.as_os_str(),
            OsStr::new("--memories"),
            bad.as_os_str(),
        ]);
        assert_eq!(run.code, 2, "{text:?}: {}", run.stderr);
        assert!(run.stderr.contains("bad-memories.csv"), "{}", run.stderr);
        assert!(run.stderr.contains(field), "{text:?}: {}", run.stderr);
    }
    let unknown = scratch.file("unknown.csv", "id,lower,upper,size,memories\na,0,2,4,tcm\n");
    let run = telamalloc([
        OsStr::new("solve"),
        unknown.as_os_str(),
        OsStr::new("--memories"),
        memories.as_os_str(),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("unknown.csv: line 2: field 'memories': unknown memory 'tcm'"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_reader_closing_the_pipe_ends_the_command_quietly() {
    // 2,000 lines of stats, more than a pipe holds: the writes after the reader is gone fail.
    let problem = example("tiny.12.csv");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_telamalloc"))
        .arg("stats")
        .args(std::iter::repeat_n(problem.as_os_str(), 2000))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("it ends");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(output.status.code(), Some(141), "{stderr}");
}
