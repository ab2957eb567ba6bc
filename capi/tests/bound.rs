//! Minimise's lower bound through the C ABI: seven buffers with LOAD 4 that need 5 bytes.

use std::ffi::CStr;
use std::ptr::null;
use telamalloc_c::{
    tm_options_default, tm_problem_free, tm_problem_new, tm_result_free, tm_result_load,
    tm_result_lower_bound, tm_result_lower_bound_source, tm_result_peak, tm_solve, TmError,
    TmOptions, TmResult,
};

#[test]
fn minimise_proves_and_names_a_bound_above_load() {
    // The fragmentation gadget of the search's tests: LOAD 4, optimum 5.
    let (l, u, s) = (
        [0u64, 0, 1, 1, 2, 3, 4],
        [2u64, 1, 3, 4, 4, 5, 5],
        [2u64, 2, 1, 1, 1, 2, 2],
    );
    // SAFETY: three arrays of seven values; no alignments or fixed offsets; every object is
    // freed once, after its last use.
    unsafe {
        let problem = tm_problem_new(7, l.as_ptr(), u.as_ptr(), s.as_ptr(), null(), null());
        assert!(!problem.is_null());
        let mut defaults = std::mem::MaybeUninit::uninit();
        tm_options_default(defaults.as_mut_ptr());
        let options = TmOptions {
            minimize: 1,
            node_limit: 10_000,
            ..defaults.assume_init()
        };
        let mut result: *mut TmResult = std::ptr::null_mut();
        assert_eq!(tm_solve(problem, &options, &mut result), TmError::Ok);
        assert_eq!(tm_result_load(result), 4);
        assert_eq!(tm_result_lower_bound(result), 5);
        assert_eq!(tm_result_peak(result), 5);
        let source = CStr::from_ptr(tm_result_lower_bound_source(result)).to_string_lossy();
        assert!(!source.is_empty() && source != "LOAD", "{source}");
        tm_result_free(result);
        tm_problem_free(problem);
    }
}
