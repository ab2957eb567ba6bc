//! Several memories and the spill goal through the C ABI, called from Rust through the same
//! functions C calls: the cheapest assignment and what is moved out, with known answers; bad
//! memory specs are `TM_ERROR_INVALID_PROBLEM` with a message naming the field.

use std::ffi::CStr;
use telamalloc_c::{
    tm_last_error, tm_options_default, tm_problem_free, tm_problem_new, tm_problem_set_benefit,
    tm_problem_set_memories, tm_result_free, tm_result_memories, tm_result_offsets,
    tm_result_proven_best, tm_result_status, tm_solve, tm_solve_spill, TmError, TmOptions,
    TmProblem, TmResult, TmStatus,
};

/// Three buffers of 4 bytes: `b0` over [0, 4), `b1` over [0, 4), `b2` over [2, 6).
fn three() -> *mut TmProblem {
    let (lower, upper, size) = ([0u64, 0, 2], [4u64, 4, 6], [4u64, 4, 4]);
    // SAFETY: three arrays of three values.
    let problem = unsafe {
        tm_problem_new(
            3,
            lower.as_ptr(),
            upper.as_ptr(),
            size.as_ptr(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert!(!problem.is_null());
    problem
}

fn options(capacity: u64) -> TmOptions {
    let mut options = std::mem::MaybeUninit::<TmOptions>::uninit();
    // SAFETY: writable memory for the defaults, read after they are written.
    unsafe {
        tm_options_default(options.as_mut_ptr());
        let mut options = options.assume_init();
        options.capacity = capacity;
        options
    }
}

/// The status, memories and offsets of a solve (by `solve`) of `problem` at `capacity`.
fn outcome(
    problem: *mut TmProblem,
    capacity: u64,
    spill: bool,
) -> (TmStatus, Vec<i64>, Vec<u64>, bool) {
    let mut result: *mut TmResult = std::ptr::null_mut();
    // SAFETY: a live problem, options on the stack, room for three values in each output; the
    // result is freed once after its last use.
    unsafe {
        let code = if spill {
            tm_solve_spill(problem, &options(capacity), &mut result)
        } else {
            tm_solve(problem, &options(capacity), &mut result)
        };
        assert_eq!(code, TmError::Ok);
        let (mut memory, mut offsets) = (vec![0i64; 3], vec![0u64; 3]);
        assert_eq!(tm_result_memories(result, memory.as_mut_ptr(), 3), 3);
        assert_eq!(tm_result_offsets(result, offsets.as_mut_ptr(), 3), 3);
        let best = tm_result_proven_best(result) != 0;
        let status = tm_result_status(result);
        tm_result_free(result);
        (status, memory, offsets, best)
    }
}

#[test]
fn spill_keeps_the_most_benefit_and_names_the_rest() {
    let problem = three();
    // Capacity 8: two of the three fit; by size any two, so the first best in order.
    let (status, memory, _, best) = outcome(problem, 8, true);
    assert_eq!(status, TmStatus::Solved);
    assert_eq!(memory.iter().filter(|&&m| m == -1).count(), 1);
    assert!(best);
    // b2 is worth the most: it stays, and one of b0 and b1 goes.
    let benefit = [1u64, 2, 10];
    // SAFETY: a live problem and one value per buffer.
    assert_eq!(
        unsafe { tm_problem_set_benefit(problem, benefit.as_ptr()) },
        TmError::Ok
    );
    let (_, memory, _, _) = outcome(problem, 8, true);
    assert_eq!(memory, vec![-1, 0, 0]);
    // SAFETY: freed once.
    unsafe { tm_problem_free(problem) };
}

#[test]
fn memories_take_the_cheapest_assignment_that_fits() {
    let problem = three();
    let (capacity, cost, allowed) = ([8u64, 64], [1u64, 10], [0b01u64, 0, 0]);
    // SAFETY: a live problem, two memories, one allowed mask per buffer.
    let code = unsafe {
        tm_problem_set_memories(
            problem,
            2,
            capacity.as_ptr(),
            cost.as_ptr(),
            allowed.as_ptr(),
        )
    };
    assert_eq!(code, TmError::Ok);
    let (status, memory, offsets, best) = outcome(problem, 0, false);
    assert_eq!(status, TmStatus::Solved);
    // b0 must be in m0; one more fits beside it; the third goes to m1.
    assert_eq!(memory[0], 0);
    assert_eq!(memory.iter().filter(|&&m| m == 1).count(), 1);
    assert!(offsets.iter().all(|&o| o <= 4));
    assert!(best);
    // SAFETY: freed once.
    unsafe { tm_problem_free(problem) };
}

#[test]
fn bad_memory_specs_are_invalid_problems_naming_the_field() {
    let problem = three();
    let cases: [(&[u64], &[u64], &str); 3] = [
        (&[0, 64], &[0, 0, 0], "capacity"),
        (&[8, 64], &[0b100, 0, 0], "allowed"),
        (&[2, 2], &[0, 0, 0], "size"),
    ];
    for (capacity, allowed, field) in cases {
        // SAFETY: a live problem, two capacities, one mask per buffer; the message is read
        // before the next call.
        let (code, message) = unsafe {
            let code = tm_problem_set_memories(
                problem,
                2,
                capacity.as_ptr(),
                std::ptr::null(),
                allowed.as_ptr(),
            );
            let message = CStr::from_ptr(tm_last_error())
                .to_string_lossy()
                .to_string();
            (code, message)
        };
        assert_eq!(code, TmError::InvalidProblem, "{message}");
        assert!(message.contains(field), "{field}: {message}");
    }
    // SAFETY: freed once.
    unsafe { tm_problem_free(problem) };
}
