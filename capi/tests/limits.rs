//! The C ABI's limits, called from Rust through the same functions C calls: a time limit or a
//! thread count that does not fit is `TM_INVALID_OPTION` with a message, never a panic caught
//! as `TM_INTERNAL`; a negative time limit (`TELAMALLOC_NO_TIME_LIMIT`) is none.

use std::ffi::CStr;
use telamalloc_c::{
    tm_last_error, tm_options_default, tm_problem_free, tm_problem_new, tm_problem_set_memories,
    tm_result_free, tm_result_status, tm_solve, tm_solve_spill, TmError, TmOptions, TmProblem,
    TmResult, TmStatus, TM_NO_TIME_LIMIT,
};

/// `tm_solve` or `tm_solve_spill`.
type SolveFn =
    unsafe extern "C" fn(*const TmProblem, *const TmOptions, *mut *mut TmResult) -> TmError;

/// Solves two buffers live at once (sizes 4 and 8) at capacity 12 under `options`, changed by
/// `change`; the error code, the last error message and the status when solved.
fn solve_with(change: impl FnOnce(&mut TmOptions)) -> (TmError, String, Option<TmStatus>) {
    solve_by(tm_solve, false, change)
}

/// [`solve_with`] by `solve`, the problem with two memories (of 12 and 64 bytes) when
/// `memories`.
fn solve_by(
    solve: SolveFn,
    memories: bool,
    change: impl FnOnce(&mut TmOptions),
) -> (TmError, String, Option<TmStatus>) {
    let (lower, upper, size) = ([0u64, 0], [2u64, 2], [4u64, 8]);
    // SAFETY: three arrays of two values; no alignments or fixed offsets; every object is
    // freed once, after its last use.
    unsafe {
        let problem = tm_problem_new(
            2,
            lower.as_ptr(),
            upper.as_ptr(),
            size.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
        );
        assert!(!problem.is_null());
        if memories {
            let (capacity, cost) = ([12u64, 64], [1u64, 20]);
            let set = tm_problem_set_memories(
                problem,
                2,
                capacity.as_ptr(),
                cost.as_ptr(),
                std::ptr::null(),
            );
            assert_eq!(set, TmError::Ok);
        }
        let mut options = std::mem::MaybeUninit::<TmOptions>::uninit();
        tm_options_default(options.as_mut_ptr());
        let mut options = options.assume_init();
        options.capacity = 12;
        change(&mut options);
        let mut result: *mut TmResult = std::ptr::null_mut();
        let code = solve(problem, &options, &mut result);
        let message = CStr::from_ptr(tm_last_error())
            .to_string_lossy()
            .to_string();
        let status = (code == TmError::Ok).then(|| tm_result_status(result));
        tm_result_free(result);
        tm_problem_free(problem);
        (code, message, status)
    }
}

#[test]
fn time_limits_beyond_the_maximum_are_invalid_options() {
    for seconds in [1e30, 9.3e18, 1.000_000_1e9, f64::INFINITY] {
        let (code, message, _) = solve_with(|o| o.timeout_seconds = seconds);
        assert_eq!(code, TmError::InvalidOption, "{seconds}: {message}");
        assert!(message.starts_with("timeout_seconds "), "{message}");
        assert!(
            message.contains("at most 1000000000 seconds") || message.contains("positive, finite"),
            "{message}"
        );
    }
    let (code, message, _) = solve_with(|o| o.timeout_seconds = f64::NAN);
    assert_eq!(code, TmError::InvalidOption, "{message}");
    for seconds in [1e9, 10.0, 0.0, -1.0] {
        let (code, message, status) = solve_with(|o| o.timeout_seconds = seconds);
        assert_eq!(code, TmError::Ok, "{seconds}: {message}");
        assert_eq!(status, Some(TmStatus::Solved), "{seconds}");
    }
}

/// `TELAMALLOC_NO_TIME_LIMIT` of the header is the library's value, and any negative time
/// limit is none: a fit solves; minimise, spill and memories take it only with a node limit
/// (an invalid option without, saying why). 0 stays the default and NaN an error.
#[test]
fn a_negative_time_limit_is_none_and_needs_a_node_limit_to_improve() {
    let header = concat!(env!("CARGO_MANIFEST_DIR"), "/include/telamalloc.h");
    let header = std::fs::read_to_string(header).expect("the header reads");
    let value = header
        .lines()
        .find_map(|line| line.strip_prefix("#define TELAMALLOC_NO_TIME_LIMIT "))
        .expect("#define TELAMALLOC_NO_TIME_LIMIT");
    assert_eq!(value.trim(), format!("({TM_NO_TIME_LIMIT:.1})"));
    for seconds in [TM_NO_TIME_LIMIT, -1e-9, f64::NEG_INFINITY] {
        let (code, message, status) = solve_with(|o| o.timeout_seconds = seconds);
        assert_eq!(code, TmError::Ok, "{seconds}: {message}");
        assert_eq!(status, Some(TmStatus::Solved), "{seconds}");
    }
    let improving: [(SolveFn, bool, u64); 3] = [
        (tm_solve, false, 0),
        (tm_solve_spill, false, 12),
        (tm_solve, true, 0),
    ];
    for (solve, memories, capacity) in improving {
        let ask = |o: &mut TmOptions, nodes: u64| {
            (o.minimize, o.capacity) = (i32::from(capacity == 0), capacity);
            (o.timeout_seconds, o.node_limit) = (TM_NO_TIME_LIMIT, nodes);
        };
        let (code, message, _) = solve_by(solve, memories, |o| ask(o, 0));
        assert_eq!(code, TmError::InvalidOption, "{message}");
        assert!(message.contains("needs a node_limit"), "{message}");
        let (code, message, status) = solve_by(solve, memories, |o| ask(o, 10_000));
        assert_eq!(code, TmError::Ok, "{message}");
        assert_eq!(status, Some(TmStatus::Solved), "{message}");
    }
    let (code, message, _) = solve_with(|o| o.timeout_seconds = f64::NAN);
    assert_eq!(code, TmError::InvalidOption, "{message}");
    assert!(message.contains("not a number"), "{message}");
}

#[test]
fn thread_counts_beyond_the_maximum_are_invalid_options() {
    let (code, message, _) = solve_with(|o| o.threads = 1025);
    assert_eq!(code, TmError::InvalidOption, "{message}");
    assert!(message.contains("at most 1024"), "{message}");
    let (code, message, _) = solve_with(|o| o.threads = u32::MAX);
    assert_eq!(code, TmError::InvalidOption, "{message}");
    for threads in [0, 1, 1024] {
        let (code, message, status) = solve_with(|o| o.threads = threads);
        assert_eq!(code, TmError::Ok, "{threads}: {message}");
        assert_eq!(status, Some(TmStatus::Solved), "{threads}");
    }
}

#[test]
fn a_model_file_is_a_policy_and_a_missing_one_an_error() {
    let model = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/policy.json\0");
    let (code, message, status) = solve_with(|o| o.policy = model.as_ptr().cast());
    assert_eq!(code, TmError::Ok, "{message}");
    assert_eq!(status, Some(TmStatus::Solved));
    let missing = "/nonexistent/model.json\0";
    let (code, message, _) = solve_with(|o| o.policy = missing.as_ptr().cast());
    assert_ne!(code, TmError::Ok);
    assert!(message.contains("/nonexistent/model.json"), "{message}");
}
