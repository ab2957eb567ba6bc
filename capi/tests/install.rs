//! `install.sh PREFIX` installs what a C or C++ build needs, and the C example builds against
//! the installed copy through pkg-config and through CMake's `find_package(telamalloc)`, then
//! runs. The libraries installed are this test build's (`TELAMALLOC_LIB_DIR`): cargo cannot
//! build in release from inside its own test run. Each tool's part skips, saying so, when the
//! tool is missing (`.ci/run` installs both).

use std::path::{Path, PathBuf};
use std::process::Command;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("telamalloc-install-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    dir
}

/// A scratch folder for one test with this build's libraries installed in its `prefix`
/// subfolder by `install.sh`; returns the folder and the prefix.
fn installed(name: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let prefix = dir.join("prefix");
    let exe = std::env::current_exe().expect("the test binary's path");
    let libs = exe.parent().expect("target/<profile>/deps/<test>");
    assert!(
        libs.join("libtelamalloc_c.so").exists() && libs.join("libtelamalloc_c.a").exists(),
        "the shared and static libraries were built beside the tests in {}",
        libs.display()
    );
    let ran = Command::new("bash")
        .arg(crate_dir().join("install.sh"))
        .arg(&prefix)
        .env("TELAMALLOC_LIB_DIR", libs)
        .output()
        .expect("bash runs");
    assert!(
        ran.status.success(),
        "install.sh failed:\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    (dir, prefix)
}

/// Whether `tool --version` runs; if not, says the part that needs it is skipped.
fn have(tool: &str) -> bool {
    let found = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("{tool} not found: skipping the build through {tool} (.ci/run installs it)");
    }
    found
}

/// Runs a command, panicking with its output when it fails; returns its standard output.
fn run(command: &mut Command) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?} runs: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{command:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Runs a built example and checks it found the installed library and solved.
fn check_runs(exe: &Path, lib_path: Option<&Path>) {
    let mut command = Command::new(exe);
    if let Some(lib) = lib_path {
        command.env("LD_LIBRARY_PATH", lib);
    }
    let stdout = run(&mut command);
    assert!(
        stdout.starts_with(&format!("telamalloc {VERSION}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains("solved: peak 12, LOAD 12, offsets"),
        "{stdout}"
    );
}

#[test]
fn install_lays_out_the_prefix() {
    let (dir, prefix) = installed("layout");
    let abi = match VERSION.split('.').collect::<Vec<_>>()[..] {
        ["0", minor, _] => format!("0.{minor}"),
        [major, _, _] => major.to_string(),
        _ => panic!("a version MAJOR.MINOR.PATCH"),
    };
    for file in [
        "include/telamalloc.h".to_string(),
        "lib/libtelamalloc_c.a".to_string(),
        format!("lib/libtelamalloc_c.so.{VERSION}"),
        format!("lib/libtelamalloc_c.so.{abi}"),
        "lib/libtelamalloc_c.so".to_string(),
        "lib/pkgconfig/telamalloc.pc".to_string(),
        "lib/cmake/telamalloc/telamallocConfig.cmake".to_string(),
        "lib/cmake/telamalloc/telamallocConfigVersion.cmake".to_string(),
    ] {
        assert!(prefix.join(&file).exists(), "{file} installed");
    }
    let link = std::fs::read_link(prefix.join("lib/libtelamalloc_c.so")).expect("a link");
    assert_eq!(link, Path::new(&format!("libtelamalloc_c.so.{abi}")));
    // The shared library names its ABI, so programs linked against it load that name.
    if let Ok(out) = Command::new("readelf")
        .arg("-d")
        .arg(prefix.join("lib/libtelamalloc_c.so"))
        .output()
    {
        let dynamic = String::from_utf8_lossy(&out.stdout);
        assert!(
            dynamic.contains(&format!("[libtelamalloc_c.so.{abi}]")),
            "{dynamic}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_example_builds_against_the_prefix_with_pkg_config() {
    if !have("pkg-config") {
        return;
    }
    let (dir, prefix) = installed("pkg-config");
    let pkg_config = || {
        let mut command = Command::new("pkg-config");
        command.env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"));
        command
    };
    assert_eq!(
        run(pkg_config().args(["--modversion", "telamalloc"])).trim(),
        VERSION
    );
    let flags = run(pkg_config().args(["--cflags", "--libs", "telamalloc"]));
    let exe = dir.join("example");
    run(Command::new("cc")
        .args(["-std=c99", "-Wall", "-Werror"])
        .arg(crate_dir().join("examples/example.c"))
        .args(flags.split_whitespace())
        .arg("-o")
        .arg(&exe));
    check_runs(&exe, Some(&prefix.join("lib")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_example_builds_against_the_prefix_with_cmake() {
    if !have("cmake") {
        return;
    }
    let (dir, prefix) = installed("cmake");
    let build = dir.join("build");
    run(Command::new("cmake")
        .arg("-S")
        .arg(crate_dir().join("examples"))
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())));
    run(Command::new("cmake").arg("--build").arg(&build));
    // CMake links the shared library with its folder as the run path: no LD_LIBRARY_PATH.
    check_runs(&build.join("example"), None);
    check_runs(&build.join("example_static"), None);
    let _ = std::fs::remove_dir_all(&dir);
}
