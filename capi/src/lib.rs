//! The C ABI of telamalloc (`include/telamalloc.h`): build a problem from arrays, solve it with
//! options and limits through the library's front door ([`telamalloc::Solver`]), read the
//! status and the validated offsets, free. Errors are codes with a per-thread message; a panic
//! never crosses the boundary.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use telamalloc::{
    Algorithm, Allocation, Buffer, Goal, Limits, Memory, PolicySpec, Problem, Solver, Status,
};

/// `tm_error` of the header.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmError {
    /// No error.
    Ok = 0,
    /// A required pointer was NULL.
    NullArgument = 1,
    /// The buffers break a rule of the problem model.
    InvalidProblem = 2,
    /// An unknown policy or algorithm, or a bad limit.
    InvalidOption = 3,
    /// A caught panic: a bug in telamalloc.
    Internal = 4,
}

/// `tm_status` of the header.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmStatus {
    /// Offsets available, validated.
    Solved = 0,
    /// Proven infeasible.
    Infeasible = 1,
    /// A limit came first.
    LimitReached = 2,
    /// A heuristic's layout needs more than the capacity.
    HeuristicExceeded = 3,
}

/// `TELAMALLOC_NO_TIME_LIMIT` of the header: a `timeout_seconds` that asks for no time limit
/// (any negative value does).
pub const TM_NO_TIME_LIMIT: f64 = -1.0;

/// `tm_options` of the header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TmOptions {
    /// Bytes; required unless `minimize` is set.
    pub capacity: u64,
    /// Nonzero: find the smallest peak.
    pub minimize: c_int,
    /// Wall-clock limit in seconds; 0: the library's default (a fit 60 s); negative
    /// ([`TM_NO_TIME_LIMIT`]): none, a fit runs until it decides (minimise, spill and memories
    /// only with a node limit).
    pub timeout_seconds: f64,
    /// Search nodes over all restarts and minimise's probes, never exceeded; 0 means none
    /// (minimise with a node limit and no timeout has no clock).
    pub node_limit: u64,
    /// NULL or an algorithm name.
    pub algorithm: *const c_char,
    /// NULL or a policy name, or a model file `PATH.json` (as `--policy` takes).
    pub policy: *const c_char,
    /// Search threads.
    pub threads: u32,
    /// Seed.
    pub seed: u64,
}

/// `tm_problem` of the header: an opaque problem.
pub struct TmProblem {
    problem: Problem,
}

/// `tm_result` of the header: an opaque result.
pub struct TmResult {
    allocation: Allocation,
    message: CString,
    bound_source: CString,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error and returns `code`.
fn fail(code: TmError, message: &str) -> TmError {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|last| *last.borrow_mut() = text);
    code
}

/// Runs `body`, turning a panic into [`TmError::Internal`] with its message.
fn guarded(body: impl FnOnce() -> TmError) -> TmError {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        fail(TmError::Internal, &format!("internal error: {what}"))
    })
}

/// Reads an optional C string option named `what`.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string.
unsafe fn option_text<'a>(text: *const c_char, what: &str) -> Result<Option<&'a str>, TmError> {
    if text.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller passes a NUL-terminated string.
    let text = unsafe { CStr::from_ptr(text) };
    text.to_str()
        .map(Some)
        .map_err(|_| fail(TmError::InvalidOption, &format!("{what} is not UTF-8")))
}

/// Fills `*options` with the defaults.
///
/// # Safety
/// `options` is NULL or points to writable memory for a `tm_options`.
#[no_mangle]
pub unsafe extern "C" fn tm_options_default(options: *mut TmOptions) {
    if options.is_null() {
        return;
    }
    let defaults = TmOptions {
        capacity: 0,
        minimize: 0,
        timeout_seconds: 0.0,
        node_limit: 0,
        algorithm: std::ptr::null(),
        policy: std::ptr::null(),
        threads: 1,
        seed: 0,
    };
    // SAFETY: checked non-null; the caller provides writable memory.
    unsafe { options.write(defaults) };
}

/// A problem of `n` buffers from arrays; NULL on error.
///
/// # Safety
/// `lower`, `upper` and `size` point to `n` values each; `alignment` and `fixed_offset` are
/// NULL or point to `n` values each.
#[no_mangle]
pub unsafe extern "C" fn tm_problem_new(
    n: usize,
    lower: *const u64,
    upper: *const u64,
    size: *const u64,
    alignment: *const u64,
    fixed_offset: *const u64,
) -> *mut TmProblem {
    let mut made = std::ptr::null_mut();
    guarded(|| {
        if n > 0 && (lower.is_null() || upper.is_null() || size.is_null()) {
            return fail(
                TmError::NullArgument,
                "lower, upper and size must not be NULL",
            );
        }
        let slice = |p: *const u64| -> Option<&[u64]> {
            // SAFETY: the caller passes n values at each non-null pointer.
            (!p.is_null() && n > 0).then(|| unsafe { std::slice::from_raw_parts(p, n) })
        };
        let (lower, upper, size) = (slice(lower), slice(upper), slice(size));
        let (alignment, fixed) = (slice(alignment), slice(fixed_offset));
        let buffers: Vec<Buffer> = (0..n)
            .map(|i| Buffer {
                id: format!("b{i}"),
                lower: lower.map_or(0, |v| v[i]),
                upper: upper.map_or(0, |v| v[i]),
                size: size.map_or(0, |v| v[i]),
                alignment: alignment.map_or(1, |v| v[i]),
                offset: fixed.and_then(|v| (v[i] != u64::MAX).then_some(v[i])),
                hint: None,
                gaps: Vec::new(),
                memories: Vec::new(),
                benefit: None,
            })
            .collect();
        let problem = Problem::new(buffers, None);
        if let Err(why) = problem.check(None) {
            return fail(TmError::InvalidProblem, &why.to_string());
        }
        made = Box::into_raw(Box::new(TmProblem { problem }));
        TmError::Ok
    });
    made
}

/// Frees a problem.
///
/// # Safety
/// `problem` is NULL or was returned by `tm_problem_new` and not freed yet.
#[no_mangle]
pub unsafe extern "C" fn tm_problem_free(problem: *mut TmProblem) {
    if !problem.is_null() {
        // SAFETY: made by Box::into_raw in tm_problem_new, freed once.
        drop(unsafe { Box::from_raw(problem) });
    }
}

/// The most memories [`tm_problem_set_memories`] takes (one bit each in `allowed`).
pub const TM_MAX_MEMORIES: usize = 64;

/// Gives `problem` `m` memories (`m0`, `m1`, ...) of `capacity[k]` bytes at `cost[k]` per byte
/// (`cost` NULL: 0), and buffer `i` the memories of the bits of `allowed[i]` (bit `k`: memory
/// `k`; 0 or `allowed` NULL: any). `m` = 0 removes the memories.
///
/// # Safety
/// `problem` was returned by `tm_problem_new`; `capacity` points to `m` values; `cost` is NULL
/// or points to `m` values; `allowed` is NULL or points to one value per buffer.
#[no_mangle]
pub unsafe extern "C" fn tm_problem_set_memories(
    problem: *mut TmProblem,
    m: usize,
    capacity: *const u64,
    cost: *const u64,
    allowed: *const u64,
) -> TmError {
    guarded(|| {
        if problem.is_null() || (m > 0 && capacity.is_null()) {
            return fail(
                TmError::NullArgument,
                "problem and capacity must not be NULL",
            );
        }
        if m > TM_MAX_MEMORIES {
            return fail(
                TmError::InvalidProblem,
                &format!("{m} memories is too many (at most {TM_MAX_MEMORIES})"),
            );
        }
        // SAFETY: checked non-null; a live problem.
        let problem = unsafe { &mut (*problem).problem };
        let n = problem.len();
        let slice = |p: *const u64, len: usize| -> Option<&[u64]> {
            // SAFETY: the caller passes `len` values at each non-null pointer.
            (!p.is_null() && len > 0).then(|| unsafe { std::slice::from_raw_parts(p, len) })
        };
        let (capacity, cost, allowed) = (slice(capacity, m), slice(cost, m), slice(allowed, n));
        let mut changed = problem.clone();
        changed.memories = (0..m)
            .map(|k| {
                Memory::new(
                    format!("m{k}"),
                    capacity.map_or(0, |c| c[k]),
                    cost.map_or(0, |c| c[k]),
                )
            })
            .collect();
        for (i, b) in changed.buffers.iter_mut().enumerate() {
            let bits = allowed.map_or(0, |a| a[i]);
            if m > 0 && m < 64 && bits >> m != 0 {
                return fail(
                    TmError::InvalidProblem,
                    &format!(
                        "buffers[{i}]: field 'allowed': bit set for a memory beyond the {m} given"
                    ),
                );
            }
            b.memories = (0..m)
                .filter(|&k| bits >> k & 1 == 1)
                .map(|k| format!("m{k}"))
                .collect();
        }
        if let Err(why) = changed.check(None) {
            return fail(TmError::InvalidProblem, &why.to_string());
        }
        *problem = changed;
        TmError::Ok
    })
}

/// Sets what keeping each buffer on chip is worth to [`tm_solve_spill`] (`benefit` NULL: each
/// buffer's size).
///
/// # Safety
/// `problem` was returned by `tm_problem_new`; `benefit` is NULL or points to one value per
/// buffer.
#[no_mangle]
pub unsafe extern "C" fn tm_problem_set_benefit(
    problem: *mut TmProblem,
    benefit: *const u64,
) -> TmError {
    guarded(|| {
        if problem.is_null() {
            return fail(TmError::NullArgument, "problem must not be NULL");
        }
        // SAFETY: checked non-null; a live problem.
        let problem = unsafe { &mut (*problem).problem };
        let n = problem.len();
        for i in 0..n {
            // SAFETY: the caller passes n values when non-null.
            problem.buffers[i].benefit = (!benefit.is_null()).then(|| unsafe { *benefit.add(i) });
        }
        TmError::Ok
    })
}

/// The solver and goal the options ask for.
///
/// # Safety
/// The option strings are NULL or NUL-terminated.
unsafe fn solver_of(options: &TmOptions) -> Result<(Solver, Goal), TmError> {
    let invalid = |m: String| fail(TmError::InvalidOption, &m);
    // SAFETY: forwarded from the caller.
    let algorithm = match unsafe { option_text(options.algorithm, "algorithm") }? {
        None => Algorithm::Search,
        Some(name) => Algorithm::from_name(name).ok_or_else(|| {
            invalid(format!(
                "unknown algorithm '{name}' (known: {})",
                Algorithm::names().join(", ")
            ))
        })?,
    };
    // SAFETY: forwarded from the caller.
    let policy: PolicySpec = match unsafe { option_text(options.policy, "policy") }? {
        None => PolicySpec::default(),
        Some(name) => name.parse().map_err(|e| invalid(format!("{e}")))?,
    };
    let goal = match (options.minimize != 0, options.capacity) {
        (true, _) => Goal::Minimize,
        (false, 0) => return Err(invalid("capacity must be set (or minimize)".into())),
        (false, capacity) => Goal::Fit(capacity),
    };
    if options.threads as usize > Solver::MAX_THREADS {
        return Err(invalid(format!(
            "threads {} is too many (at most {})",
            options.threads,
            Solver::MAX_THREADS
        )));
    }
    let mut solver = Solver::new()
        .algorithm(algorithm)
        .policy(policy)
        .threads(options.threads.max(1) as usize)
        .seed(options.seed);
    let seconds = options.timeout_seconds;
    if seconds.is_nan() {
        return Err(invalid("timeout_seconds is not a number".into()));
    }
    if seconds > 0.0 {
        let timeout = Limits::timeout_from_secs(seconds)
            .map_err(|why| invalid(format!("timeout_seconds {why}")))?;
        solver = solver.timeout(timeout);
    } else if seconds < 0.0 {
        solver = solver.no_time_limit();
    }
    if options.node_limit > 0 {
        solver = solver.nodes(options.node_limit);
    }
    Ok((solver, goal))
}

/// Rejects no time limit (a negative `timeout_seconds`) without a node limit for a goal that
/// improves its answer until a limit stops it: the library would keep the goal's default time
/// limit, and with neither limit its search could run for ever.
fn no_time_limit_allowed(options: &TmOptions, goal: Goal) -> Result<(), TmError> {
    if options.timeout_seconds < 0.0 && options.node_limit == 0 && goal.improves_until_a_limit() {
        return Err(fail(
            TmError::InvalidOption,
            "timeout_seconds < 0 (TELAMALLOC_NO_TIME_LIMIT) needs a node_limit with minimize, \
             tm_solve_spill or memories: they improve their answer until a limit stops them, \
             and their search may not end on a hard problem",
        ));
    }
    Ok(())
}

/// Solves `problem` under `options` into `*result` (a problem with memories: the least total
/// cost over them, `capacity` and `minimize` unused).
///
/// # Safety
/// `problem` was returned by `tm_problem_new`; `options` points to a `tm_options` whose
/// strings are NULL or NUL-terminated; `result` points to writable memory for a pointer.
#[no_mangle]
pub unsafe extern "C" fn tm_solve(
    problem: *const TmProblem,
    options: *const TmOptions,
    result: *mut *mut TmResult,
) -> TmError {
    // SAFETY: forwarded from the caller.
    unsafe { solve_for(problem, options, result, false) }
}

/// [`tm_solve`] for the spill goal: keep the most benefit within `options.capacity`, move the
/// rest out (see [`tm_result_memories`]); with memories, the same as [`tm_solve`].
///
/// # Safety
/// As for [`tm_solve`].
#[no_mangle]
pub unsafe extern "C" fn tm_solve_spill(
    problem: *const TmProblem,
    options: *const TmOptions,
    result: *mut *mut TmResult,
) -> TmError {
    // SAFETY: forwarded from the caller.
    unsafe { solve_for(problem, options, result, true) }
}

/// [`tm_solve`], for the spill goal when `spill`.
///
/// # Safety
/// As for [`tm_solve`].
unsafe fn solve_for(
    problem: *const TmProblem,
    options: *const TmOptions,
    result: *mut *mut TmResult,
    spill: bool,
) -> TmError {
    guarded(|| {
        if problem.is_null() || options.is_null() || result.is_null() {
            return fail(
                TmError::NullArgument,
                "problem, options and result must not be NULL",
            );
        }
        // SAFETY: checked non-null; the caller passes live objects.
        let (problem, options) = unsafe { (&(*problem).problem, &*options) };
        // SAFETY: the option strings are NULL or NUL-terminated.
        let with_memories = !problem.memories.is_empty();
        let mut options = *options;
        if with_memories || spill {
            // The capacity comes from the memories; spill fits the capacity given.
            options.minimize = 0;
            if with_memories {
                options.capacity = u64::MAX;
            }
        }
        let (solver, goal) = match unsafe { solver_of(&options) } {
            Ok(made) => made,
            Err(code) => return code,
        };
        let goal = match goal {
            _ if with_memories => Goal::Memories,
            Goal::Fit(capacity) if spill => Goal::Spill(capacity),
            goal => goal,
        };
        if let Err(code) = no_time_limit_allowed(&options, goal) {
            return code;
        }
        let allocation = match solver.solve(problem, goal) {
            Ok(allocation) => allocation,
            Err(e) => return fail(TmError::InvalidProblem, &e.to_string()),
        };
        let message = CString::new(allocation.status.to_string()).unwrap_or_default();
        let source = allocation.lower_bound_source.as_ref();
        let bound_source =
            CString::new(source.map(|s| s.to_string()).unwrap_or_default()).unwrap_or_default();
        let made = Box::new(TmResult {
            allocation,
            message,
            bound_source,
        });
        // SAFETY: checked non-null; the caller provides writable memory.
        unsafe { result.write(Box::into_raw(made)) };
        TmError::Ok
    })
}

/// The result behind `result`, if any.
///
/// # Safety
/// `result` is NULL or was returned by `tm_solve` and not freed yet.
unsafe fn allocation<'a>(result: *const TmResult) -> Option<&'a Allocation> {
    // SAFETY: forwarded from the caller.
    (!result.is_null()).then(|| unsafe { &(*result).allocation })
}

/// The status of a result.
///
/// # Safety
/// As for [`tm_result_free`] (NULL gives `TM_LIMIT_REACHED`).
#[no_mangle]
pub unsafe extern "C" fn tm_result_status(result: *const TmResult) -> TmStatus {
    // SAFETY: forwarded from the caller.
    match unsafe { allocation(result) }.map(|a| &a.status) {
        Some(Status::Solved) => TmStatus::Solved,
        Some(Status::Infeasible(_)) => TmStatus::Infeasible,
        Some(Status::HeuristicExceeded { .. }) => TmStatus::HeuristicExceeded,
        Some(Status::LimitReached) | None => TmStatus::LimitReached,
    }
}

/// The peak of the layout (0 without one).
///
/// # Safety
/// As for [`tm_result_free`].
#[no_mangle]
pub unsafe extern "C" fn tm_result_peak(result: *const TmResult) -> u64 {
    // SAFETY: forwarded from the caller.
    unsafe { allocation(result) }
        .and_then(|a| a.peak)
        .unwrap_or(0)
}

/// LOAD of the problem.
///
/// # Safety
/// As for [`tm_result_free`].
#[no_mangle]
pub unsafe extern "C" fn tm_result_load(result: *const TmResult) -> u64 {
    // SAFETY: forwarded from the caller.
    unsafe { allocation(result) }.map_or(0, |a| a.load)
}

/// The best proven lower bound on any peak: LOAD, or more when minimise proved it.
///
/// # Safety
/// As for [`tm_result_free`].
#[no_mangle]
pub unsafe extern "C" fn tm_result_lower_bound(result: *const TmResult) -> u64 {
    // SAFETY: forwarded from the caller.
    unsafe { allocation(result) }.map_or(0, |a| a.lower_bound.unwrap_or(a.load))
}

/// Where the lower bound of minimise comes from (`LOAD`, or e.g. `window [0,5) of 7 buffers
/// infeasible at 4`); empty for the other goals.
///
/// # Safety
/// As for [`tm_result_free`].
#[no_mangle]
pub unsafe extern "C" fn tm_result_lower_bound_source(result: *const TmResult) -> *const c_char {
    if result.is_null() {
        return c"".as_ptr();
    }
    // SAFETY: a live result.
    unsafe { (*result).bound_source.as_ptr() }
}

/// Search nodes of the solve.
///
/// # Safety
/// As for [`tm_result_free`].
#[no_mangle]
pub unsafe extern "C" fn tm_result_nodes(result: *const TmResult) -> u64 {
    // SAFETY: forwarded from the caller.
    unsafe { allocation(result) }
        .and_then(|a| a.search.as_ref())
        .map_or(0, |s| s.nodes)
}

/// Copies the offsets into `out` (room for `capacity` values); returns how many there are.
///
/// # Safety
/// As for [`tm_result_free`]; `out` is NULL or has room for `capacity` values.
#[no_mangle]
pub unsafe extern "C" fn tm_result_offsets(
    result: *const TmResult,
    out: *mut u64,
    capacity: usize,
) -> usize {
    // SAFETY: forwarded from the caller.
    let Some(solution) = unsafe { allocation(result) }.and_then(|a| a.solution.as_ref()) else {
        return 0;
    };
    let offsets = &solution.offsets;
    if !out.is_null() && capacity >= offsets.len() {
        // SAFETY: the caller provides room for `capacity` >= len values.
        unsafe { std::ptr::copy_nonoverlapping(offsets.as_ptr(), out, offsets.len()) };
    }
    offsets.len()
}

/// Copies each buffer's memory into `out` (room for `capacity` values): its index among the
/// problem's memories (0, the one capacity, for the spill goal), or -1 when moved out; returns
/// how many there are (0 when the solve had no memories or spill goal, or did not solve).
///
/// # Safety
/// As for [`tm_result_free`]; `out` is NULL or has room for `capacity` values.
#[no_mangle]
pub unsafe extern "C" fn tm_result_memories(
    result: *const TmResult,
    out: *mut i64,
    capacity: usize,
) -> usize {
    // SAFETY: forwarded from the caller.
    let Some(assignment) = unsafe { allocation(result) }.and_then(|a| a.assignment.as_ref()) else {
        return 0;
    };
    let memory = &assignment.memory;
    if !out.is_null() && capacity >= memory.len() {
        for (i, m) in memory.iter().enumerate() {
            // SAFETY: the caller provides room for `capacity` >= len values.
            unsafe { out.add(i).write(m.map_or(-1, |m| m as i64)) };
        }
    }
    memory.len()
}

/// Whether the result's assignment is proven the best (every better one was shown not to fit).
///
/// # Safety
/// As for [`tm_result_free`].
#[no_mangle]
pub unsafe extern "C" fn tm_result_proven_best(result: *const TmResult) -> c_int {
    // SAFETY: forwarded from the caller.
    let best = unsafe { allocation(result) }
        .and_then(|a| a.assignment.as_ref())
        .is_some_and(|a| a.proven_best);
    c_int::from(best)
}

/// A one-line description of the result.
///
/// # Safety
/// As for [`tm_result_free`].
#[no_mangle]
pub unsafe extern "C" fn tm_result_message(result: *const TmResult) -> *const c_char {
    if result.is_null() {
        return c"".as_ptr();
    }
    // SAFETY: a live result.
    unsafe { (*result).message.as_ptr() }
}

/// Frees a result.
///
/// # Safety
/// `result` is NULL or was returned by `tm_solve` and not freed yet.
#[no_mangle]
pub unsafe extern "C" fn tm_result_free(result: *mut TmResult) {
    if !result.is_null() {
        // SAFETY: made by Box::into_raw in tm_solve, freed once.
        drop(unsafe { Box::from_raw(result) });
    }
}

/// The last error message of this thread ("" if none).
#[no_mangle]
pub extern "C" fn tm_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// The library's version (`TELAMALLOC_VERSION_STRING` of the header it matches).
#[no_mangle]
pub extern "C" fn tm_version() -> *const c_char {
    const VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => panic!("the version has no NUL byte"),
        };
    VERSION.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The solver `timeout_seconds` configures, as its debug text shows it.
    fn configured(timeout_seconds: f64, node_limit: u64) -> String {
        let mut options = std::mem::MaybeUninit::<TmOptions>::uninit();
        // SAFETY: room for a tm_options; filled before it is read.
        let mut options = unsafe {
            tm_options_default(options.as_mut_ptr());
            options.assume_init()
        };
        (options.capacity, options.timeout_seconds) = (8, timeout_seconds);
        options.node_limit = node_limit;
        // SAFETY: no option strings.
        let (solver, _) = unsafe { solver_of(&options) }.expect("valid options");
        format!("{solver:?}")
    }

    /// 0 (a zero-initialised `tm_options`) keeps the library's defaults, a negative value asks
    /// for no time limit, a positive one sets it.
    #[test]
    fn a_negative_timeout_is_no_time_limit_and_0_the_default() {
        let default = configured(0.0, 0);
        assert!(default.contains("timeout: None, nodes: None"), "{default}");
        assert!(default.contains("no_time_limit: false"), "{default}");
        for seconds in [TM_NO_TIME_LIMIT, -0.5, f64::NEG_INFINITY] {
            let none = configured(seconds, 0);
            assert!(none.contains("no_time_limit: true"), "{seconds}: {none}");
            assert!(none.contains("timeout: None"), "{seconds}: {none}");
        }
        let with_nodes = configured(TM_NO_TIME_LIMIT, 100);
        assert!(with_nodes.contains("nodes: Some(100)"), "{with_nodes}");
        assert!(with_nodes.contains("no_time_limit: true"), "{with_nodes}");
        let two = configured(2.0, 0);
        assert!(two.contains("timeout: Some(2s)"), "{two}");
        assert!(two.contains("no_time_limit: false"), "{two}");
    }
}
