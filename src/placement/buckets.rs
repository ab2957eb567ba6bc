//! Time buckets: the placed buffers live in each stretch of time, sorted by offset.

use super::flat::running_sums;

/// A placed buffer in a bucket: its address range and its lifetime as ranks `[lo, hi)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) offset: u64,
    pub(super) end: u64,
    pub(super) lo: u32,
    pub(super) hi: u32,
}

impl Entry {
    const EMPTY: Entry = Entry {
        offset: 0,
        end: 0,
        lo: 0,
        hi: 0,
    };

    /// Whether the entry overlaps the ranks `[lo, hi)` and starts at or after `from` (written
    /// without a branch: the filters that call it keep about half the entries they read).
    #[inline]
    pub(super) fn keep(&self, lo: u32, hi: u32, from: u32) -> bool {
        (self.lo < hi) & (lo < self.hi) & (self.lo >= from)
    }
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
    entries: Vec<Entry>,
    /// The buffer of each entry (moved with it), for the queries that need buffers.
    ids: Vec<u32>,
}

impl Buckets {
    /// Buckets of `width` ranks over ranks `0..points`, with room for the lifetimes `spans`
    /// (those of the buffers that will be stored here).
    pub(super) fn new(width: u32, points: usize, spans: impl Iterator<Item = (u32, u32)>) -> Self {
        let width = width.max(1);
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

    /// The first rank of bucket `k`.
    #[inline]
    pub(super) fn start(&self, k: usize) -> u32 {
        k as u32 * self.width
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

    /// Stores `buffer` (lifetime `[lo, hi)`, addresses `[offset, end)`) in each bucket its
    /// lifetime meets, keeping each sorted by offset. Panics if a bucket is full (the buffer
    /// was not among the spans the buckets were made for, or was stored twice).
    pub(super) fn insert(&mut self, buffer: usize, lo: u32, hi: u32, offset: u64, end: u64) {
        let entry = Entry {
            offset,
            end,
            lo,
            hi,
        };
        let (first, last) = self.span(lo, hi);
        for k in first..=last {
            let (start, len) = (self.from[k], self.len[k] as usize);
            assert!(start + len < self.from[k + 1], "bucket {k} is full");
            let at = self.entries[start..start + len].partition_point(|e| e.offset <= offset);
            let (at, end_of_run) = (start + at, start + len);
            self.entries.copy_within(at..end_of_run, at + 1);
            self.ids.copy_within(at..end_of_run, at + 1);
            self.entries[at] = entry;
            self.ids[at] = buffer as u32;
            self.len[k] += 1;
        }
    }

    /// Empties every bucket, keeping the layout.
    pub(super) fn clear(&mut self) {
        self.len.iter_mut().for_each(|len| *len = 0);
    }
}

/// The first and last bucket of `width` ranks that the ranks `[lo, hi)` meet (the bucket of
/// `lo` alone when the lifetime is empty).
#[inline]
fn span(width: u32, lo: u32, hi: u32) -> (usize, usize) {
    let last = lo.max(hi.saturating_sub(1));
    ((lo / width) as usize, (last / width) as usize)
}
