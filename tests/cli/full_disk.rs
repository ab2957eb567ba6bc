//! Standard output that cannot be written (a full disk) is an error of the output, exit 2 with
//! a message, never a panic; a closed pipe stays quiet (`exit_codes.rs`).

use crate::common;

use common::Scratch;

#[test]
fn a_full_disk_is_an_error_of_the_output_not_a_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("no /dev/full here: skipped");
        return;
    };
    let scratch = Scratch::new();
    let three = scratch.file(
        "three.8.csv",
        "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\n",
    );
    let solution = scratch.file("s.csv", "id,offset\nb1,0\nb2,0\nb3,4\n");
    let three = three.to_str().unwrap();
    let solution = solution.to_str().unwrap();
    for args in [
        vec!["solve", three, "--spill", "--capacity", "7"],
        vec!["solve", three],
        vec!["validate", three, solution],
        vec!["stats", three],
    ] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_telamalloc"))
            .args(&args)
            .stdout(full.try_clone().unwrap())
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("error: cannot write standard output: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
