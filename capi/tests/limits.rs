//! The C ABI's limits, called from Rust through the same functions C calls: a time limit or a
//! thread count that does not fit is `TM_INVALID_OPTION` with a message, never a panic caught
//! as `TM_INTERNAL`.

use std::ffi::CStr;
use telamalloc_c::{
    tm_last_error, tm_options_default, tm_problem_free, tm_problem_new, tm_result_free,
    tm_result_status, tm_solve, TmError, TmOptions, TmResult, TmStatus,
};

/// Solves two buffers live at once (sizes 4 and 8) at capacity 12 under `options`, changed by
/// `change`; the error code, the last error message and the status when solved.
fn solve_with(change: impl FnOnce(&mut TmOptions)) -> (TmError, String, Option<TmStatus>) {
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
        let mut options = std::mem::MaybeUninit::<TmOptions>::uninit();
        tm_options_default(options.as_mut_ptr());
        let mut options = options.assume_init();
        options.capacity = 12;
        change(&mut options);
        let mut result: *mut TmResult = std::ptr::null_mut();
        let code = tm_solve(problem, &options, &mut result);
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
