//! Time buckets: the placed buffers live in each stretch of time, sorted by offset.

use super::flat::running_sums;

/// A placed buffer in a bucket, in 16 bytes: its offset and size, and its lifetime in the
/// bucket's own coordinates (see [`Buckets::local`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    offset: u64,
    size: u32,
    lo: u16,
    hi: u16,
}

/// The largest size a bucket entry holds; larger buffers go to the long tree.
pub(super) const LARGEST: u64 = u32::MAX as u64;

/// The widest a bucket may be, in ranks (its coordinates, 0 to width + 1, fit 16 bits).
pub(super) const WIDEST: u32 = u16::MAX as u32 - 2;

impl Entry {
    const EMPTY: Entry = Entry {
        offset: 0,
        size: 0,
        lo: 0,
        hi: 0,
    };

    /// The entry's addresses `[offset, end)`.
    #[inline]
    pub(super) fn range(&self) -> (u64, u64) {
        (self.offset, self.offset.saturating_add(self.size as u64))
    }

    /// Whether the entry's lifetime overlaps the window's (written without a branch: the
    /// filters that call it keep about half the entries they read).
    #[inline]
    pub(super) fn keep(&self, window: Window) -> bool {
        (self.lo < window.hi) & (window.lo < self.hi) & (self.lo >= window.from)
    }
}

/// A lifetime in one bucket's coordinates, for [`Entry::keep`]; `from` 1 keeps only the
/// entries starting in the bucket (whose lifetime starts before it map to 0).
#[derive(Clone, Copy, Debug)]
pub(super) struct Window {
    lo: u16,
    hi: u16,
    from: u16,
}

/// The time ranks cut into buckets of `width` ranks; a placed buffer is stored in every bucket
/// its lifetime meets, and each bucket keeps its buffers sorted by offset. A buffer whose
/// lifetime lies within one or two buckets finds its neighbours there already in address
/// order: a filter by time, no sort. Every bucket's capacity is known when the buckets are
/// made (each buffer's lifetime is), so the entries are laid out once, flat.
#[derive(Clone, Debug)]
pub(super) struct Buckets {
    /// Ranks per bucket (at least 1).
    width: u32,
    /// Bucket `k`'s entries are `entries[from[k]..from[k] + len[k]]`, by offset; its capacity
    /// ends at `from[k + 1]`.
    from: Vec<usize>,
    len: Vec<u32>,
    /// The largest size stored in each bucket.
    largest: Vec<u32>,
    entries: Vec<Entry>,
    /// The buffer of each entry (moved with it), for the queries that need buffers.
    ids: Vec<u32>,
}

impl Buckets {
    /// Buckets of `width` ranks over ranks `0..points`, with room for the lifetimes `spans`
    /// (those of the buffers that will be stored here).
    pub(super) fn new(width: u32, points: usize, spans: impl Iterator<Item = (u32, u32)>) -> Self {
        let width = width.clamp(1, WIDEST);
        let count = points / width as usize + 1;
        let mut capacity = vec![0u32; count];
        for (lo, hi) in spans {
            let (first, last) = span(width, lo, hi);
            capacity[first..=last].iter_mut().for_each(|c| *c += 1);
        }
        let from = running_sums(&capacity);
        let total = *from.last().unwrap_or(&0);
        Buckets {
            width,
            from,
            len: vec![0; count],
            largest: vec![0; count],
            entries: vec![Entry::EMPTY; total],
            ids: vec![0; total],
        }
    }

    /// How many buckets there are.
    pub(super) fn count(&self) -> usize {
        self.len.len()
    }

    /// The first and last bucket that the ranks `[lo, hi)` meet.
    #[inline]
    pub(super) fn span(&self, lo: u32, hi: u32) -> (usize, usize) {
        span(self.width, lo, hi)
    }

    /// The rank `rank` in bucket `k`'s own coordinates: 0 for any rank before the bucket,
    /// 1 to `width` for its ranks, `width + 1` for any rank after it. Two lifetimes that both
    /// meet the bucket overlap if and only if they do in these coordinates (they then overlap
    /// inside the bucket, where the map keeps every rank apart).
    #[inline]
    fn local(&self, k: usize, rank: u32) -> u16 {
        let start = k as u32 * self.width;
        (rank.saturating_add(1).saturating_sub(start)).min(self.width + 1) as u16
    }

    /// The lifetime `[lo, hi)`, which meets bucket `k`, as a window on it; with `starting`,
    /// a window that keeps only the entries of buffers starting in the bucket (those met in an
    /// earlier bucket too are not kept again).
    #[inline]
    pub(super) fn window(&self, k: usize, lo: u32, hi: u32, starting: bool) -> Window {
        Window {
            lo: self.local(k, lo),
            hi: self.local(k, hi),
            from: u16::from(starting),
        }
    }

    /// Bucket `k`'s entries, by offset.
    #[inline]
    pub(super) fn run(&self, k: usize) -> &[Entry] {
        &self.entries[self.from[k]..self.from[k] + self.len[k] as usize]
    }

    /// The buffers of bucket `k`'s entries, in the same order.
    pub(super) fn run_ids(&self, k: usize) -> &[u32] {
        &self.ids[self.from[k]..self.from[k] + self.len[k] as usize]
    }

    /// Stores `buffer` (lifetime `[lo, hi)`, `size` bytes from `offset`, at most [`LARGEST`])
    /// in each bucket its lifetime meets, keeping each sorted by offset. Panics if a bucket is
    /// full (the buffer was not among the spans the buckets were made for, or was stored
    /// twice).
    pub(super) fn insert(&mut self, buffer: usize, lo: u32, hi: u32, offset: u64, size: u64) {
        let size = u32::try_from(size).expect("a bucket entry's size fits 32 bits");
        let (first, last) = self.span(lo, hi);
        for k in first..=last {
            let entry = Entry {
                offset,
                size,
                lo: self.local(k, lo),
                hi: self.local(k, hi),
            };
            let (start, len) = (self.from[k], self.len[k] as usize);
            assert!(start + len < self.from[k + 1], "bucket {k} is full");
            let at = self.entries[start..start + len].partition_point(|e| e.offset <= offset);
            let (at, end_of_run) = (start + at, start + len);
            self.entries.copy_within(at..end_of_run, at + 1);
            self.ids.copy_within(at..end_of_run, at + 1);
            self.entries[at] = entry;
            self.ids[at] = buffer as u32;
            self.len[k] += 1;
            self.largest[k] = self.largest[k].max(size);
        }
    }

    /// The highest end, or `highest` if none is higher, among the entries of bucket `k` that
    /// `window` keeps. The entries are read from the highest offset down, and no further once
    /// an offset plus the bucket's largest size cannot end higher: usually a few.
    pub(super) fn highest_end(&self, k: usize, window: Window, mut highest: u64) -> u64 {
        let largest = self.largest[k] as u64;
        for e in self.run(k).iter().rev() {
            if e.offset.saturating_add(largest) <= highest {
                break;
            }
            if e.keep(window) {
                highest = highest.max(e.range().1);
            }
        }
        highest
    }

    /// Empties every bucket, keeping the layout.
    pub(super) fn clear(&mut self) {
        self.len.iter_mut().for_each(|len| *len = 0);
        self.largest.iter_mut().for_each(|size| *size = 0);
    }
}

/// The first and last bucket of `width` ranks that the ranks `[lo, hi)` meet (the bucket of
/// `lo` alone when the lifetime is empty).
#[inline]
fn span(width: u32, lo: u32, hi: u32) -> (usize, usize) {
    let last = lo.max(hi.saturating_sub(1));
    ((lo / width) as usize, (last / width) as usize)
}
