//! Compiles `examples/example.c` against the header and the static library with the system C
//! compiler (`cc`) and, as C++17, with `c++`, runs it, and checks what it prints: the C ABI
//! works from C and C++ as documented.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The static library of this test build: cargo builds the crate's every type (`staticlib`
/// among them) in one step before its tests, into the folder of the test binaries.
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent()
        .expect("target/<profile>/deps/<test>")
        .join("libtelamalloc_c.a")
}

#[test]
fn the_c_example_builds_and_runs() {
    check_example("cc", &["-std=c99"]);
}

#[test]
fn the_example_builds_and_runs_as_cpp() {
    check_example("c++", &["-std=c++17", "-x", "c++"]);
}

/// Compiles the example with `compiler` and `flags` (which set the language), runs it, checks
/// its output.
fn check_example(compiler: &str, flags: &[&str]) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let library = static_library();
    assert!(
        library.exists(),
        "{} was built (crate-type staticlib)",
        library.display()
    );
    let out_dir =
        std::env::temp_dir().join(format!("telamalloc-capi-{compiler}-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("a temp dir");
    let exe = out_dir.join("example");
    let compiled = Command::new(compiler)
        .args(flags)
        .arg("-Wall")
        .arg("-Werror")
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("examples/example.c"))
        .args(["-x", "none"])
        .arg(&library)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{compiler} runs (the machine has C and C++ compilers): {e}"));
    assert!(
        compiled.status.success(),
        "{compiler} failed:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let run = Command::new(&exe).output().expect("the example runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "example failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("solved: peak 12, LOAD 12, offsets"),
        "{stdout}"
    );
    assert!(stdout.contains("at 11: infeasible (proven"), "{stdout}");
    assert!(stdout.contains("tflite: peak "), "{stdout}");
    assert!(
        stdout.contains("bad algorithm: unknown algorithm 'nonsense'"),
        "{stdout}"
    );
    assert!(
        stdout.contains("bad problem: buffers[1]: field 'upper'"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}
