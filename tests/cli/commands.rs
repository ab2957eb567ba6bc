//! The `telamalloc` subcommands beyond `solve` and `validate`, through the binary: `bench`
//! (table and JSON), `plot` (the SVG's rectangles against the solution), `gen` (deterministic,
//! perfect packings at LOAD), `collect` and `logs` (counts checked against the logs read
//! independently), and `solve --timeout` on a hard problem.

use crate::common;

use common::{naive_load, telamalloc, Run, Scratch};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use telamalloc::io::{parse_csv_problem, read_problem};
use telamalloc::Problem;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The examples with their capacity (from the file name) and optimal peak
/// (`datasets/examples/README.md`); `None`: infeasible at the capacity.
const EXAMPLES: [(&str, u64, Option<u64>); 5] = [
    ("aligned-fixed.48.csv", 48, Some(48)),
    ("best-fit-trap.8.csv", 8, Some(8)),
    ("gaps-hints.8.csv", 8, Some(8)),
    ("infeasible-at-load.9.csv", 9, None),
    ("tiny.12.csv", 12, Some(12)),
];

fn example_problem(name: &str) -> Problem {
    read_problem(&repo("datasets/examples").join(name), None).expect("the example reads")
}

// ---------------------------------------------------------------------------------------------
// bench

/// What `bench` must report for one problem and algorithm: the status, and the peak.
fn expected_bench_row(name: &str, algorithm: &str) -> (&'static str, Option<u64>) {
    let (_, capacity, optimum) = EXAMPLES
        .iter()
        .find(|(n, _, _)| *n == name)
        .expect("an example");
    if algorithm == "search" {
        // The examples' optima are their capacities: a solved search peaks exactly there.
        return match optimum {
            Some(peak) => ("solved", Some(*peak)),
            None => ("infeasible", None),
        };
    }
    // tflite-micro: size descending, first-fit, fixed buffers first. Its peak, computed here.
    let problem = example_problem(name);
    let peak = size_descending_first_fit_peak(&problem);
    (
        if peak <= *capacity {
            "solved"
        } else {
            "exceeds"
        },
        Some(peak),
    )
}

/// TFLite Micro's layout (size descending, stable; each buffer at the lowest aligned offset
/// clear of the placed buffers it shares a time step with; fixed buffers where they are),
/// written without the library's placement code; returns its peak.
fn size_descending_first_fit_peak(problem: &Problem) -> u64 {
    let b = &problem.buffers;
    let mut order: Vec<usize> = (0..b.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(b[i].size));
    let mut offsets: Vec<Option<u64>> = b.iter().map(|b| b.offset).collect();
    for i in order {
        if offsets[i].is_some() {
            continue;
        }
        let mut offset = 0;
        while (0..b.len())
            .any(|j| offsets[j].is_some_and(|o| j != i && common::collide(&b[i], offset, &b[j], o)))
        {
            offset += b[i].alignment;
        }
        offsets[i] = Some(offset);
    }
    b.iter()
        .zip(&offsets)
        .map(|(b, o)| o.expect("placed") + b.size)
        .max()
        .unwrap_or(0)
}

#[test]
fn bench_footprint_measures_each_baseline_and_the_search_setup() {
    let problem = repo("datasets/challenging/K.1048576.csv");
    let run = telamalloc([
        OsStr::new("bench"),
        OsStr::new("--footprint"),
        OsStr::new("--algo"),
        OsStr::new("tflite,search"),
        problem.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let rows: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 2, "{}", run.stdout);
    // The same layout as `solve --algo tflite`: its peak (1.276 x the capacity on K).
    let tflite = &rows[0];
    assert_eq!(
        &tflite[..3],
        ["K.1048576.csv", &example_count(&problem), "tflite"]
    );
    assert!(tflite[3].parse::<f64>().is_ok(), "{tflite:?}");
    assert_eq!(rows[1][2], "search");
    assert_eq!(rows[1].last(), Some(&"-"), "the setup has no layout");
    let cpsat = telamalloc([
        OsStr::new("bench"),
        OsStr::new("--footprint"),
        OsStr::new("--algo"),
        OsStr::new("cpsat"),
        problem.as_os_str(),
    ]);
    assert_eq!(cpsat.code, 2, "{}", cpsat.stdout);
}

/// How many buffers the problem file has (its data lines).
fn example_count(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).expect("readable");
    (text.lines().filter(|l| !l.trim().is_empty()).count() - 1).to_string()
}

#[test]
fn bench_prints_a_row_per_problem_and_algorithm_and_the_same_in_json() {
    let scratch = Scratch::new();
    let json = scratch.path("bench.json");
    let run = telamalloc([
        OsStr::new("bench"),
        OsStr::new("--algo"),
        OsStr::new("search,tflite-micro"),
        repo("datasets/examples").as_os_str(),
        OsStr::new("--json"),
        json.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut lines = run.stdout.lines();
    let header: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    assert_eq!(
        header,
        [
            "problem",
            "algorithm",
            "status",
            "peak",
            "peak/LOAD",
            "peak/cap",
            "time",
            "(s)"
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 10, "{}", run.stdout);
    let mut seen = Vec::new();
    for row in &rows {
        assert_eq!(row.len(), 7, "{row:?}");
        let (name, algorithm, status) = (row[0], row[1], row[2]);
        seen.push((name.to_string(), algorithm.to_string()));
        let (capacity, load) = {
            let problem = example_problem(name);
            (
                problem.capacity.expect("from the name"),
                naive_load(&problem),
            )
        };
        let (expected_status, expected_peak) = expected_bench_row(name, algorithm);
        assert_eq!(status, expected_status, "{row:?}");
        match expected_peak {
            Some(peak) => {
                assert_eq!(row[3], peak.to_string(), "{row:?}");
                assert_eq!(
                    row[4],
                    format!("{:.3}", peak as f64 / load as f64),
                    "{row:?}"
                );
                assert_eq!(
                    row[5],
                    format!("{:.3}", peak as f64 / capacity as f64),
                    "{row:?}"
                );
            }
            None => assert_eq!(row[3..6], ["-", "-", "-"], "{row:?}"),
        }
        assert!(row[6].parse::<f64>().is_ok_and(|s| s >= 0.0), "{row:?}");
    }
    let mut expected: Vec<(String, String)> = EXAMPLES
        .iter()
        .flat_map(|(name, _, _)| {
            ["search", "tflite-micro"].map(|a| (name.to_string(), a.to_string()))
        })
        .collect();
    expected.sort();
    seen.sort();
    assert_eq!(seen, expected);

    // The JSON file holds the same rows, with LOAD and the capacity.
    let text = std::fs::read_to_string(&json).expect("bench wrote --json");
    let entries: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let entries = entries.as_array().expect("a list of rows");
    assert_eq!(entries.len(), 10);
    for entry in entries {
        let name = entry["problem"].as_str().expect("a problem name");
        let algorithm = entry["algorithm"].as_str().expect("an algorithm");
        let problem = example_problem(name);
        let (status, peak) = expected_bench_row(name, algorithm);
        assert_eq!(entry["status"], status, "{entry}");
        assert_eq!(entry["peak"].as_u64(), peak, "{entry}");
        assert_eq!(
            entry["load"].as_u64(),
            Some(naive_load(&problem)),
            "{entry}"
        );
        assert_eq!(entry["capacity"].as_u64(), problem.capacity, "{entry}");
        assert!(
            entry["seconds"].as_f64().is_some_and(|s| s >= 0.0),
            "{entry}"
        );
        // The search's rows carry its counters; the heuristic's do not.
        assert_eq!(
            entry["search"].is_object(),
            algorithm == "search",
            "{entry}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// plot

/// A `<rect>` of an SVG: its attributes (name, value) and its `<title>`, if any.
type Rect = (Vec<(String, String)>, Option<String>);

/// Every `<rect ...>` of an SVG, in order.
fn rects(svg: &str) -> Vec<Rect> {
    svg.split("<rect ")
        .skip(1)
        .map(|rest| {
            let tag_end = rest.find('>').expect("a closed tag");
            let tag = rest[..tag_end].trim_end_matches('/');
            let mut attributes = Vec::new();
            for part in tag.split("\" ") {
                let (name, value) = part.split_once("=\"").expect("name=\"value\"");
                attributes.push((name.trim().to_string(), value.trim_end_matches('"').into()));
            }
            let title = rest[tag_end..]
                .strip_prefix("><title>")
                .map(|t| t[..t.find("</title>").expect("closed title")].to_string());
            (attributes, title)
        })
        .collect()
}

fn attribute(attributes: &[(String, String)], name: &str) -> f64 {
    attributes
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in {attributes:?}"))
        .1
        .parse()
        .expect("a number")
}

/// `telamalloc plot PROBLEM SOLUTION -o SVG`.
fn plot(problem: &Path, solution: &Path, svg: &Path) -> Run {
    telamalloc([
        OsStr::new("plot"),
        problem.as_os_str(),
        solution.as_os_str(),
        OsStr::new("-o"),
        svg.as_os_str(),
    ])
}

#[test]
fn plot_draws_one_rectangle_per_buffer_where_the_solution_puts_it() {
    let scratch = Scratch::new();
    let input = repo("datasets/examples/tiny.12.csv");
    let problem = example_problem("tiny.12.csv");
    // A valid packing at 12, written by hand (b1 and b2 at 0, b3 above them, b4 at 0, b5 on top).
    let offsets = [0u64, 0, 4, 0, 8];
    let good = scratch.file("good.csv", "id,offset\nb1,0\nb2,0\nb3,4\nb4,0\nb5,8\n");
    let svg_path = scratch.path("good.svg");
    let run = plot(&input, &good, &svg_path);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let svg = std::fs::read_to_string(&svg_path).expect("plot wrote the SVG");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let all = rects(&svg);
    let buffers: Vec<_> = all.iter().filter(|(_, title)| title.is_some()).collect();
    assert_eq!(buffers.len(), problem.len(), "one rectangle per buffer");
    // The plot area is the background rectangle that is not the whole canvas; time runs
    // across it from 0 to the horizon, addresses up it from 0 to max(capacity, peak, LOAD) = 12.
    let area = &all[1].0;
    let (left, top) = (attribute(area, "x"), attribute(area, "y"));
    let (width, height) = (attribute(area, "width"), attribute(area, "height"));
    let horizon = 21.0;
    let y_top = 12.0;
    let close = |a: f64, b: f64| (a - b).abs() <= 0.011;
    for ((attributes, title), (b, &offset)) in
        buffers.iter().zip(problem.buffers.iter().zip(&offsets))
    {
        let title = title.as_deref().unwrap_or_default();
        assert_eq!(
            title,
            format!(
                "{}: time [{}, {}) size {} offset {offset}",
                b.id, b.lower, b.upper, b.size
            )
        );
        let x = left + b.lower as f64 / horizon * width;
        let w = (b.upper - b.lower) as f64 / horizon * width;
        let y = top + height - (offset + b.size) as f64 / y_top * height;
        let h = b.size as f64 / y_top * height;
        for (name, expected) in [("x", x), ("width", w), ("y", y), ("height", h)] {
            let got = attribute(attributes, name);
            assert!(
                close(got, expected),
                "{}: {name} {got}, expected {expected}",
                b.id
            );
        }
    }
    // The same input draws the same picture, byte for byte, in another process.
    let again = scratch.path("again.svg");
    let run = plot(&input, &good, &again);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), svg);

    // An invalid solution (b3 moved onto b1) is still drawn, and exits 1 naming the clash.
    let bad = scratch.file("bad.csv", "id,offset\nb1,0\nb2,0\nb3,2\nb4,0\nb5,8\n");
    let bad_svg = scratch.path("bad.svg");
    let run = plot(&input, &bad, &bad_svg);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("invalid"), "{}", run.stderr);
    assert!(run.stderr.contains("'b1' and 'b3'"), "{}", run.stderr);
    let svg = std::fs::read_to_string(&bad_svg).expect("an invalid plan is drawn too");
    let titled = rects(&svg).into_iter().filter(|(_, t)| t.is_some()).count();
    assert_eq!(titled, problem.len());
    assert!(svg.contains("<title>b3: time [0, 9) size 4 offset 2</title>"));

    // A solution file that is bad input: exit 2, and nothing drawn.
    let broken = scratch.file("broken.csv", "id,offset\nb1,0\nb9,4\n");
    let none = scratch.path("none.svg");
    let run = plot(&input, &broken, &none);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(!none.exists(), "no SVG for bad input");
}

// ---------------------------------------------------------------------------------------------
// gen

fn gen(args: &[&str]) -> Run {
    let mut all = vec!["gen"];
    all.extend_from_slice(args);
    telamalloc(all)
}

#[test]
fn a_dash_as_the_output_is_standard_output() {
    // `gen -o -` and `solve -o -` print what they would write and leave no file named `-`.
    let scratch = Scratch::new();
    let generated = common::telamalloc_in(
        scratch.dir(),
        ["gen", "random", "--buffers", "12", "--seed", "3", "-o", "-"],
    );
    assert_eq!(generated.code, 0, "{}", generated.stderr);
    let problem =
        parse_csv_problem(&generated.stdout, "gen.csv", None).expect("a problem on stdout");
    assert_eq!(problem.len(), 12);
    std::fs::write(scratch.dir().join("p.csv"), &generated.stdout).expect("writable");
    let solved = common::telamalloc_in(scratch.dir(), ["solve", "p.csv", "--minimize", "-o", "-"]);
    assert_eq!(solved.code, 0, "{}", solved.stderr);
    assert!(solved.stdout.lines().count() > 12, "{}", solved.stdout);
    assert!(!scratch.dir().join("-").exists());
}

#[test]
fn gen_puts_the_capacity_in_the_file_name_when_asked() {
    // One loop makes a folder of problems at their LOAD that `solve` and `learn` read at their
    // capacity, with no renaming.
    let scratch = Scratch::new();
    for seed in ["1", "2"] {
        let pattern = format!("rand_{seed}.{{capacity}}.csv");
        let args = [
            "gen",
            "random",
            "--seed",
            seed,
            "--tightness",
            "1.0",
            "-o",
            &pattern,
        ];
        let run = common::telamalloc_in(scratch.dir(), args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        let capacity = run
            .stderr
            .lines()
            .find_map(|line| line.strip_prefix("capacity "))
            .expect("the capacity on standard error");
        let file = format!("rand_{seed}.{capacity}.csv");
        assert!(scratch.path(&file).exists(), "{file} was not written");
        let solved = common::telamalloc_in(scratch.dir(), ["solve", file.as_str()]);
        assert!(
            solved.stderr.contains(&format!("capacity {capacity})")),
            "{}",
            solved.stderr
        );
    }
    assert!(!scratch.path("rand_1.{capacity}.csv").exists());
}

#[test]
fn gen_is_deterministic_from_the_seed() {
    for kind in ["perfect", "overlap", "random"] {
        let args =
            |seed: &'static str| [kind, "--seed", seed, "--buffers", "40", "--horizon", "200"];
        let first = gen(&args("7"));
        assert_eq!(first.code, 0, "{kind}: {}", first.stderr);
        let second = gen(&args("7"));
        assert_eq!(second.code, 0, "{kind}: {}", second.stderr);
        assert_eq!(first.stdout, second.stdout, "{kind}: same seed, same bytes");
        let other = gen(&args("8"));
        assert_ne!(
            first.stdout, other.stdout,
            "{kind}: another seed, another problem"
        );
        let problem = parse_csv_problem(&first.stdout, "gen.csv", None).expect("valid CSV");
        assert_eq!(problem.len(), 40, "{kind}");
    }
    // -o writes the same bytes as standard output.
    let scratch = Scratch::new();
    let out = scratch.path("p.csv");
    let run = telamalloc([
        OsStr::new("gen"),
        OsStr::new("perfect"),
        OsStr::new("--seed"),
        OsStr::new("7"),
        OsStr::new("--buffers"),
        OsStr::new("40"),
        OsStr::new("--horizon"),
        OsStr::new("200"),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.is_empty());
    let stdout = gen(&[
        "perfect",
        "--seed",
        "7",
        "--buffers",
        "40",
        "--horizon",
        "200",
    ])
    .stdout;
    assert_eq!(std::fs::read_to_string(&out).unwrap(), stdout);
}

#[test]
fn gen_options_for_the_effort_corpus_reach_the_generators() {
    // Cut positions change the packing, keep LOAD = capacity.
    let perfect = |cuts: &str| {
        let run = gen(&["perfect", "--buffers", "80", "--seed", "3", "--cuts", cuts]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stderr.contains("load 1048576"), "{}", run.stderr);
        run.stdout
    };
    assert_ne!(perfect("uniform"), perfect("edge"));
    assert_eq!(
        perfect("uniform"),
        gen(&["perfect", "--buffers", "80", "--seed", "3"]).stdout
    );
    // On-chip: alignment on every kept buffer, tiles named NAME#K, benefit orders differ.
    let scratch = Scratch::new();
    let source = scratch.file(
        "model.csv",
        "id,lower,upper,size\nbig,0,10,9000\na,0,4,1000\nb,3,8,1500\nc,5,10,700\nd,1,6,300\n",
    );
    let source = source.to_str().unwrap();
    let onchip = |extra: &[&str]| {
        let mut args = vec![
            "onchip",
            "--from",
            source,
            "--fraction",
            "0.5",
            "--seed",
            "1",
        ];
        args.extend_from_slice(extra);
        let run = gen(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        parse_csv_problem(&run.stdout, "gen.csv", None).expect("valid CSV")
    };
    let aligned = onchip(&["--alignment", "64", "--tiles", "3"]);
    assert!(aligned
        .buffers
        .iter()
        .all(|b| b.alignment == 64 && b.size % 64 == 0));
    assert!(aligned.buffers.iter().any(|b| b.id.starts_with("big#")));
    let kept = |benefit: &str| {
        let problem = onchip(&["--benefit", benefit]);
        problem
            .buffers
            .into_iter()
            .map(|b| b.id)
            .collect::<Vec<_>>()
    };
    assert_ne!(kept("size"), kept("density"));
    // --tiles and --no-tile do not go together.
    let run = gen(&["onchip", "--from", source, "--tiles", "3", "--no-tile"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn gen_perfect_packings_have_load_equal_to_their_capacity() {
    for (seed, capacity, style) in [
        ("1", "4096", "mixed"),
        ("2", "1048576", "guillotine"),
        ("3", "1000", "non-guillotine"),
    ] {
        let run = gen(&[
            "perfect",
            "--seed",
            seed,
            "--buffers",
            "60",
            "--horizon",
            "300",
            "--capacity",
            capacity,
            "--style",
            style,
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stderr.contains(&format!("capacity {capacity}")),
            "{}",
            run.stderr
        );
        let problem = parse_csv_problem(&run.stdout, "gen.csv", None).expect("valid CSV");
        assert_eq!(problem.len(), 60, "seed {seed}");
        // A full cut of the capacity x horizon rectangle: the live total is the capacity at
        // every step, so LOAD is the capacity.
        let capacity: u64 = capacity.parse().unwrap();
        assert_eq!(naive_load(&problem), capacity, "seed {seed} {style}");
        assert!(
            common::naive_live_totals(&problem)
                .iter()
                .all(|&total| total == capacity),
            "seed {seed} {style}: not a full cut"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// collect and logs

/// The counts of a gzip-compressed solve log, read here with flate2 and serde_json (not the
/// library's reader): decisions, candidates, tries, tries on the solution path, and the outcome.
fn count_log(path: &Path) -> (u64, u64, u64, u64, String) {
    let file = std::fs::File::open(path).expect("the log exists");
    let reader = BufReader::new(flate2::read::GzDecoder::new(file));
    let (mut decisions, mut candidates, mut tries, mut found) = (0, 0, 0, 0);
    let mut outcome = String::from("incomplete");
    let mut kinds = Vec::new();
    for line in reader.lines() {
        let line: serde_json::Value =
            serde_json::from_str(&line.expect("gzip text")).expect("a JSON line");
        let kind = line["kind"].as_str().expect("a kind").to_string();
        match kind.as_str() {
            "decision" => {
                decisions += 1;
                candidates += line["candidates"].as_array().expect("candidates").len() as u64;
                let t = line["tries"].as_array().expect("tries");
                tries += t.len() as u64;
                found += t.iter().filter(|t| t["result"] == "found").count() as u64;
            }
            "footer" => outcome = line["outcome"].as_str().expect("an outcome").to_string(),
            _ => {}
        }
        kinds.push(kind);
    }
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("header"),
        "{path:?}"
    );
    assert_eq!(kinds.last().map(String::as_str), Some("footer"), "{path:?}");
    (decisions, candidates, tries, found, outcome)
}

#[test]
fn collect_writes_a_log_per_problem_that_logs_reads_and_counts() {
    let scratch = Scratch::new();
    let out = scratch.path("logs");
    let run = telamalloc([
        OsStr::new("collect"),
        repo("datasets/examples").as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
        OsStr::new("--nodes"),
        OsStr::new("100000"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("5 problems: 4 solved, 1 infeasible, 0 limit reached"),
        "{}",
        run.stdout
    );
    let mut written: Vec<String> = std::fs::read_dir(&out)
        .expect("collect made --out")
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    written.sort();
    let expected: Vec<String> = EXAMPLES
        .iter()
        .map(|(name, _, _)| format!("{name}.jsonl.gz"))
        .collect();
    assert_eq!(written, expected);

    let (mut decisions, mut candidates, mut tries, mut found) = (0, 0, 0, 0);
    let mut solved = 0;
    for (name, _, optimum) in EXAMPLES {
        let path = out.join(format!("{name}.jsonl.gz"));
        let (d, c, t, f, outcome) = count_log(&path);
        let expected = if optimum.is_some() {
            "solved"
        } else {
            "infeasible"
        };
        assert_eq!(outcome, expected, "{name}");
        solved += (outcome == "solved") as u64;
        // The library reads each log back, header first.
        let log = telamalloc::solve_log::read_log_file(&path).expect("readable");
        assert_eq!(log.header.problem, name);
        assert_eq!(log.decisions.len() as u64, d, "{name}");
        (decisions, candidates, tries, found) =
            (decisions + d, candidates + c, tries + t, found + f);
    }
    assert_eq!(solved, 4);
    assert!(decisions > 0, "the search made decisions");

    // `logs` over the folder, and over one file, counts what is in them.
    let run = telamalloc([OsStr::new("logs"), out.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let expected = format!(
        "5 logs (schema version {}, feature version {}): {decisions} decisions, {candidates} \
         candidates, {tries} tries, {found} on solution paths",
        telamalloc::solve_log::LOG_SCHEMA_VERSION,
        telamalloc::search::FEATURE_SCHEMA_VERSION
    );
    assert!(
        run.stdout.contains(&expected),
        "{}\nexpected {expected}",
        run.stdout
    );
    assert!(
        run.stdout.contains("outcomes: 1 infeasible, 4 solved"),
        "{}",
        run.stdout
    );
    let one = out.join("tiny.12.csv.jsonl.gz");
    let (d, c, t, f, _) = count_log(&one);
    let run = telamalloc([OsStr::new("logs"), one.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "1 log (schema version {}, feature version {}): {}, {}, {}, {f} on solution paths",
            telamalloc::solve_log::LOG_SCHEMA_VERSION,
            telamalloc::search::FEATURE_SCHEMA_VERSION,
            counted(d, "decision", "decisions"),
            counted(c, "candidate", "candidates"),
            counted(t, "try", "tries"),
        )),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("outcomes: 1 solved"), "{}", run.stdout);

    // A file that is not a log: exit 2, naming it.
    let bogus = scratch.file("bogus.jsonl", "{\"kind\": \"nonsense\"}\n");
    let run = telamalloc([OsStr::new("logs"), bogus.as_os_str()]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains("bogus.jsonl"), "{}", run.stderr);
}

/// `n` and the noun, singular for one, as `logs` prints counts.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

// ---------------------------------------------------------------------------------------------
// solve with a time limit

#[test]
fn solve_with_a_timeout_on_a_hard_problem_reports_the_limit() {
    // E of the hard set: the portfolio needs its most nodes; the fixed policy alone does not
    // solve it within 5 s, so 0.5 s is a limit it reaches on any machine.
    let path = repo("datasets/challenging/E.1048576.csv");
    let started = Instant::now();
    let run = telamalloc([
        OsStr::new("solve"),
        path.as_os_str(),
        OsStr::new("--timeout"),
        OsStr::new("0.5"),
        OsStr::new("--no"),
        OsStr::new("heuristic-first"),
        OsStr::new("--policy"),
        OsStr::new("fixed"),
    ]);
    let elapsed = started.elapsed();
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.contains("limit reached"), "{}", run.stderr);
    assert!(!run.stderr.contains("infeasible"), "{}", run.stderr);
    // Generous: the limit is 0.5 s, the process must end well within 10 s.
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    // The solution file is not written when there is no solution.
    let scratch = Scratch::new();
    let out = scratch.path("none.csv");
    let run = telamalloc([
        OsStr::new("solve"),
        path.as_os_str(),
        OsStr::new("--timeout"),
        OsStr::new("0.5"),
        OsStr::new("--no"),
        OsStr::new("heuristic-first"),
        OsStr::new("--policy"),
        OsStr::new("fixed"),
        OsStr::new("-o"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!out.exists());
}

#[test]
fn the_policy_help_names_the_default_portfolio() {
    let help = telamalloc(["solve", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    let words: Vec<&str> = help
        .stdout
        .split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .collect();
    let network = telamalloc::learned::Network::built_in().expect("the built-in model");
    let head = network
        .portfolio()
        .expect("the built-in model has a portfolio head");
    // `fixed` is the head's slot for the model's own learned policy.
    for strategy in head.strategies().iter().filter(|s| *s != "fixed") {
        assert!(
            words.contains(&strategy.as_str()),
            "--policy's help does not name {strategy}: {}",
            help.stdout
        );
    }
    assert!(
        help.stdout.contains("fixed/WAT~/TAW~/TWA"),
        "{}",
        help.stdout
    );
}

#[test]
fn switches_lists_every_switch_with_its_default() {
    let run = telamalloc(["switches"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let defaults = telamalloc::SearchOptions::default();
    // A layer's heading starts at the first column; a switch's first line starts, indented by
    // two, with its name; its help and when to flip it go on, indented further, below.
    let headings: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with(' '))
        .collect();
    let titles: Vec<&str> = telamalloc::search::LAYERS
        .iter()
        .map(|layer| layer.title())
        .collect();
    assert_eq!(headings, titles, "{}", run.stdout);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .collect();
    let names = telamalloc::search::technique_names();
    assert_eq!(lines.len(), names.len(), "{}", run.stdout);
    for (line, name) in lines.iter().zip(&names) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], *name, "{line}");
        let on = defaults.get(name).expect("a known switch");
        assert_eq!(words[1], if on { "on" } else { "off" }, "{line}");
        assert!(words.len() > 2, "{line}: no help");
    }
    assert_eq!(
        run.stdout.matches("When:").count(),
        names.len(),
        "every switch says when to flip it"
    );
    // Every line of the list and of `solve --help` fits a 100-column terminal.
    let help = telamalloc(["solve", "--help"]);
    assert_eq!(help.code, 0);
    for line in help.stdout.lines().chain(run.stdout.lines()) {
        assert!(
            line.chars().count() <= 100,
            "{} columns: {line}",
            line.len()
        );
    }
}
