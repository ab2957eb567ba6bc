//! Hints to the processor to start loading memory that a query will soon read: a best-fit
//! run over a large problem reads each buffer's records and its neighbours' lists at places
//! no cache holds, one buffer after another.

/// Starts loading the cache line holding `value` (nothing on processors without the hint).
#[inline(always)]
pub(super) fn line<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that reads nothing and cannot fault.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Starts loading the first `lines` cache lines of `slice` (all, if fewer).
#[inline(always)]
pub(super) fn lines<T>(slice: &[T], lines: usize) {
    let per_line = (64 / std::mem::size_of::<T>().max(1)).max(1);
    for item in slice.iter().step_by(per_line).take(lines) {
        line(item);
    }
}
