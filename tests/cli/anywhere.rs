//! The binary as installed (`cargo install --path .`): it works from any directory (the learned
//! model is compiled in, the split lists are the one thing it needs the repository for, and it
//! says so), it states its version, and it prints shell completion scripts.

use crate::common;

use common::{telamalloc, telamalloc_in, Run, Scratch};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use telamalloc::io::{parse_csv_solution, read_problem};
use telamalloc::validate;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The search counters `--stats` prints on standard error.
fn stats(run: &Run) -> serde_json::Value {
    let line = run
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("stats: "))
        .unwrap_or_else(|| panic!("no stats line: {}", run.stderr));
    serde_json::from_str(line).expect("the stats are JSON")
}

/// `--policy learned` from a folder without `models/`: the built-in model runs, with no fallback
/// warning, and searches exactly as the repository's model file named by its path does.
#[test]
fn learned_policy_runs_outside_the_repository() {
    let scratch = Scratch::new();
    assert!(!scratch.dir().join("models").exists());
    let input = repo("datasets/challenging/K.1048576.csv");
    let args = |policy: &OsStr| {
        vec![
            OsStr::new("solve").to_owned(),
            input.clone().into_os_string(),
            OsStr::new("--policy").to_owned(),
            policy.to_owned(),
            OsStr::new("--stats").to_owned(),
        ]
    };
    let run = telamalloc_in(scratch.dir(), args(OsStr::new("learned")));
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(!run.stderr.contains("warning"), "{}", run.stderr);
    assert!(
        run.stderr.contains("solved by search: peak"),
        "{}",
        run.stderr
    );
    let problem = read_problem(&input, None).expect("K reads");
    let solution = parse_csv_solution(&run.stdout, "stdout", &problem).expect("a CSV solution");
    assert!(validate(&problem, &solution, None).is_valid());
    // The learned portfolio: the learned policy and its head's strategies, in the head's order,
    // after the slack-filling members (K has 5-8% slack).
    let ran = stats(&run);
    let mut portfolio: Vec<&str> = ran["portfolio"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|name| name.as_str())
        .collect();
    portfolio.sort_unstable();
    let expected = [
        "TAW",
        "TAW+",
        "TWA",
        "TWA+",
        "WAT",
        "WAT+",
        "ZAT",
        "ZAT+",
        "learned",
        "slack-fill",
        "slack-fill-draw",
        "slack-fill-fifo",
        // The most likely cut's member and the next three ranked cuts' (`more-likely`).
        "slack-fill-likely",
        "slack-fill-likely",
        "slack-fill-likely",
        "slack-fill-likely",
        "slack-fill-match",
    ];
    assert_eq!(portfolio, expected, "{ran}");

    let model = repo("models/policy.json");
    let named = telamalloc(args(model.as_os_str()));
    assert_eq!(named.code, 0, "{}", named.stderr);
    assert!(!named.stderr.contains("warning"), "{}", named.stderr);
    assert_eq!(named.stdout, run.stdout, "the same offsets");
    let named_stats = stats(&named);
    for counter in ["nodes", "restarts", "policy", "portfolio"] {
        assert_eq!(named_stats[counter], ran[counter], "{counter}");
    }
}

/// A model file named by a path is still read from that path (relative to the working
/// directory): one that is not there is an error (exit 2) naming it, with nothing on standard
/// output, not a silent change of policy.
#[test]
fn a_named_model_file_is_still_read() {
    let scratch = Scratch::new();
    let input = repo("datasets/examples/tiny.12.csv");
    let run = telamalloc_in(
        scratch.dir(),
        [
            OsStr::new("solve"),
            input.as_os_str(),
            OsStr::new("--policy"),
            OsStr::new("models/policy.json"),
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error: no policy model file at models/policy.json"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "{}", run.stdout);
}

/// `--split` reads the repository's split lists; elsewhere the error names the folder and says
/// where to run from.
#[test]
fn a_split_outside_the_repository_is_a_clear_error() {
    let scratch = Scratch::new();
    let run = telamalloc_in(
        scratch.dir(),
        [
            "eval",
            "--split",
            "tight-test",
            "--policies",
            "fixed",
            "--nodes",
            "10",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("datasets/splits/tight-test.txt")
            && run
                .stderr
                .contains("no datasets/splits folder in the working directory")
            && run.stderr.contains("root of the telamalloc repository"),
        "{}",
        run.stderr
    );
    // In the repository, an unknown split says so.
    let run = telamalloc(["eval", "--split", "no-such-split", "--policies", "fixed"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("no split 'no-such-split'"),
        "{}",
        run.stderr
    );
}

#[test]
fn version_names_the_crate_version_and_the_built_in_models() {
    let version = env!("CARGO_PKG_VERSION");
    let short = telamalloc(["-V"]);
    assert_eq!(short.code, 0, "{}", short.stderr);
    assert_eq!(short.stdout, format!("telamalloc {version}\n"));
    let scratch = Scratch::new();
    let long = telamalloc_in(scratch.dir(), ["--version"]);
    assert_eq!(long.code, 0, "{}", long.stderr);
    let mut lines = long.stdout.lines();
    assert_eq!(lines.next(), Some(format!("telamalloc {version}").as_str()));
    let model = lines.next().expect("a second line");
    assert!(
        model.starts_with("learned model: models/policy.json built in (FNV-1a ")
            && model.contains("feature schema"),
        "{model}"
    );
    assert!(!model.contains("unusable"), "{model}");
    let holes = lines.next().expect("a third line");
    assert!(
        holes.starts_with("hole-shape model: models/hole_shapes.json built in (FNV-1a ")
            && holes.ends_with("15 weights, feature schema 1)"),
        "{holes}"
    );
    let restarts = lines.next().expect("a fourth line");
    assert!(
        restarts.starts_with("restart model: models/restarts.json built in (FNV-1a "),
        "{restarts}"
    );
    let gate = lines.next().expect("a fifth line");
    assert!(
        gate.starts_with("CP-SAT gate: models/cpsat_gate.json built in (FNV-1a "),
        "{gate}"
    );
    // Every model file the repository ships is named: a model added later must be too.
    let models = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    for entry in std::fs::read_dir(models).expect("models/") {
        let name = entry.expect("an entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".json") {
            assert!(
                long.stdout.contains(&format!("models/{name} built in")),
                "--version does not name models/{name}: {}",
                long.stdout
            );
        }
    }
}

#[test]
fn completions_are_printed_for_each_shell() {
    for (shell, marker) in [
        ("bash", "_telamalloc()"),
        ("zsh", "#compdef telamalloc"),
        ("fish", "complete -c telamalloc"),
    ] {
        let run = telamalloc(["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains(marker), "{shell}: {}", run.stdout);
        // Every command and the search flags are completed.
        for word in ["solve", "eval", "completions", "policy"] {
            assert!(run.stdout.contains(word), "{shell} lacks {word}");
        }
    }
    let bad = telamalloc(["completions", "cmd.exe"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("bash"), "{}", bad.stderr);
}
