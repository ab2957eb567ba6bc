//! An address range `[offset, end)` as the unions store it: in 64 bits, or in 32 while every
//! address fits, which halves the bytes a query reads.

use super::prefetch;

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

    /// `lists` as kept, in this width: the caller reads them in the width they are kept in.
    fn of(lists: &Lists) -> &[Vec<Self>];

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

    #[inline(always)]
    fn of(lists: &Lists) -> &[Vec<Self>] {
        match lists {
            Lists::Wide(lists) => lists,
            Lists::Narrow(_) => panic!("lists in 32 bits read in 64"),
        }
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

    #[inline(always)]
    fn of(lists: &Lists) -> &[Vec<Self>] {
        match lists {
            Lists::Narrow(lists) => lists,
            Lists::Wide(_) => panic!("lists in 64 bits read in 32"),
        }
    }
}

/// Lists of ranges in one width: in 32 bits until a range ends above 4 GiB, then in 64 (even
/// once cleared). A query reads a list in the width its index reads all of them in.
#[derive(Clone, Debug)]
pub(super) enum Lists {
    Narrow(Vec<Vec<(u32, u32)>>),
    Wide(Vec<Vec<(u64, u64)>>),
}

impl Default for Lists {
    fn default() -> Lists {
        Lists::Narrow(Vec::new())
    }
}

impl Lists {
    /// `count` empty lists, in 32 bits.
    pub(super) fn new(count: usize) -> Lists {
        Lists::Narrow(vec![Vec::new(); count])
    }

    /// How many lists there are.
    pub(super) fn len(&self) -> usize {
        match self {
            Lists::Narrow(lists) => lists.len(),
            Lists::Wide(lists) => lists.len(),
        }
    }

    /// Empties every list.
    pub(super) fn clear(&mut self) {
        match self {
            Lists::Narrow(lists) => lists.iter_mut().for_each(Vec::clear),
            Lists::Wide(lists) => lists.iter_mut().for_each(Vec::clear),
        }
    }

    /// Keeps the lists in 64 bits from now on.
    pub(super) fn widen(&mut self) {
        if let Lists::Narrow(lists) = self {
            let wide = lists.iter().map(|l| l.iter().map(|r| r.wide()).collect());
            *self = Lists::Wide(wide.collect());
        }
    }

    /// Whether the lists are kept in 32 bits.
    pub(super) fn is_narrow(&self) -> bool {
        matches!(self, Lists::Narrow(_))
    }

    /// Starts loading the last range of list `index`, if any.
    pub(super) fn prefetch_top(&self, index: usize) {
        match self {
            Lists::Narrow(lists) => lists[index].last().map(prefetch::line),
            Lists::Wide(lists) => lists[index].last().map(prefetch::line),
        };
    }

    /// The lists, read in width `R`, the width they are kept in.
    #[inline(always)]
    pub(super) fn get<R: Range>(&self) -> &[Vec<R>] {
        R::of(self)
    }
}

/// The highest end of `union`, compacted or sorted by offset (0 if empty): that of its last
/// range.
pub(super) fn top<R: Range>(union: &[R]) -> u64 {
    union.last().map_or(0, |r| r.end())
}
