//! An address range `[offset, end)` as the unions store it: in 64 bits, or in 32 while every
//! address fits, which halves the bytes a query reads.

/// An address range `[offset, end)`, read as 64-bit addresses whatever its width.
pub(super) trait Range: Copy + std::fmt::Debug + PartialEq {
    /// The range `[offset, end)`; `end` (so `offset`, not above it) fits the type ([`fits`]).
    ///
    /// [`fits`]: Range::fits
    fn new(offset: u64, end: u64) -> Self;

    /// Whether every address up to `end` fits the type.
    fn fits(end: u64) -> bool;

    /// The first address.
    fn offset(self) -> u64;

    /// The address after the last.
    fn end(self) -> u64;

    /// The range in 64 bits.
    #[inline(always)]
    fn wide(self) -> (u64, u64) {
        (self.offset(), self.end())
    }
}

impl Range for (u64, u64) {
    #[inline(always)]
    fn new(offset: u64, end: u64) -> Self {
        (offset, end)
    }

    #[inline(always)]
    fn fits(_: u64) -> bool {
        true
    }

    #[inline(always)]
    fn offset(self) -> u64 {
        self.0
    }

    #[inline(always)]
    fn end(self) -> u64 {
        self.1
    }
}

impl Range for (u32, u32) {
    #[inline(always)]
    fn new(offset: u64, end: u64) -> Self {
        debug_assert!(
            offset <= end && Self::fits(end),
            "[{offset}, {end}) in 32 bits"
        );
        (offset as u32, end as u32)
    }

    #[inline(always)]
    fn fits(end: u64) -> bool {
        end <= u32::MAX as u64
    }

    #[inline(always)]
    fn offset(self) -> u64 {
        self.0 as u64
    }

    #[inline(always)]
    fn end(self) -> u64 {
        self.1 as u64
    }
}
