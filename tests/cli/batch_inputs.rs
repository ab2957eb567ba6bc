//! What a new user meets with the batch commands: folders that hold solutions beside the
//! problems, `stats` on a folder, a split whose problems are not built, and `gen layers`'s
//! count of buffers.

use crate::common;

use common::{telamalloc, telamalloc_in, Scratch};

const TINY: &str = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n";

/// A folder with one problem and the solutions `solve` wrote beside it (CSV and JSON, under
/// solution names and plain ones), plus a hand-written solution with every buffer placed.
fn folder_with_solutions(scratch: &Scratch) -> std::path::PathBuf {
    let folder = scratch.path("problems");
    std::fs::create_dir(&folder).unwrap();
    let problem = folder.join("tiny.12.csv");
    std::fs::write(&problem, TINY).unwrap();
    for (output, extra) in [
        ("tiny.12.solution.csv", None),
        ("out.12.csv", None),
        ("out.12.json", None),
        ("spilled.12.csv", Some("--spill")),
    ] {
        let mut args = vec![
            "solve".into(),
            problem.clone().into_os_string(),
            "-o".into(),
        ];
        args.push(folder.join(output).into_os_string());
        args.extend(extra.map(Into::into));
        let run = telamalloc(&args);
        assert_eq!(run.code, 0, "{output}: {}", run.stderr);
    }
    std::fs::write(
        folder.join("solution.12.csv"),
        "id,lower,upper,size,offset\nb1,0,3,4,0\nb2,3,9,4,0\nb3,0,9,4,4\n",
    )
    .unwrap();
    folder
}

#[test]
fn bench_and_stats_read_a_folder_without_its_solutions() {
    let scratch = Scratch::new();
    let folder = folder_with_solutions(&scratch);
    let folder = folder.to_str().unwrap();
    let bench = telamalloc(["bench", "--algo", "tflite", folder]);
    assert_eq!(bench.code, 0, "{}", bench.stderr);
    let stats = telamalloc(["stats", folder]);
    assert_eq!(stats.code, 0, "{}", stats.stderr);
    for (command, out) in [("bench", &bench.stdout), ("stats", &stats.stdout)] {
        assert!(out.contains("tiny.12.csv"), "{command}: {out}");
        for solution in ["solution", "out.12", "spilled"] {
            assert!(!out.contains(solution), "{command} read {solution}: {out}");
        }
    }
    // A file named on the command line is read as given.
    let named = format!("{folder}/solution.12.csv");
    let run = telamalloc(["stats", named.as_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("solution.12.csv"), "{}", run.stdout);
}

#[test]
fn a_split_not_built_says_how_to_build_it() {
    let scratch = Scratch::new();
    let splits = scratch.path("datasets/splits");
    std::fs::create_dir_all(&splits).unwrap();
    for (split, builder) in [
        ("test", "datasets/tools/build_splits.sh"),
        ("family-test", "datasets/tools/build_families.py"),
        ("tight-test", "datasets/tools/build_tight.sh"),
    ] {
        std::fs::write(
            splits.join(format!("{split}.txt")),
            format!("# {split}\ndatasets/splits/{split}/a.12.csv\n"),
        )
        .unwrap();
        let run = telamalloc_in(
            scratch.dir(),
            ["eval", "--split", split, "--policies", "fixed"],
        );
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "datasets/splits/{split}/a.12.csv: cannot read file: split '{split}' lists it but its problem files are not built"
            )) && run.stderr.contains(builder),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn gen_layers_writes_the_buffers_asked_for() {
    for (buffers, tiles) in [("30", "20"), ("7", "3"), ("40", "20"), ("1", "20")] {
        let run = telamalloc([
            "gen",
            "layers",
            "--buffers",
            buffers,
            "--tiles",
            tiles,
            "--seed",
            "3",
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let rows = run.stdout.lines().filter(|l| !l.starts_with("id,")).count();
        assert_eq!(rows.to_string(), buffers, "--tiles {tiles}: {}", run.stdout);
    }
}
