//! A segment tree over sections with range add and range max, for the section-inference check
//! under the canonical bound: `bound + max(unplaced total)` over a range in `O(log sections)`.

/// Range-add, range-max tree over `i128` values (wide enough for any sum of `u64` sizes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaxTree {
    len: usize,
    max: Vec<i128>,
    add: Vec<i128>,
}

impl MaxTree {
    /// A tree holding `values`.
    pub fn new(values: &[i128]) -> MaxTree {
        let len = values.len().max(1);
        let mut tree = MaxTree {
            len,
            max: vec![0; 4 * len],
            add: vec![0; 4 * len],
        };
        if !values.is_empty() {
            tree.build(1, 0, len, values);
        }
        tree
    }

    fn build(&mut self, node: usize, l: usize, r: usize, values: &[i128]) {
        if r - l == 1 {
            self.max[node] = values[l];
            return;
        }
        let mid = (l + r) / 2;
        self.build(2 * node, l, mid, values);
        self.build(2 * node + 1, mid, r, values);
        self.max[node] = self.max[2 * node].max(self.max[2 * node + 1]);
    }

    /// Adds `delta` to every value in `range`.
    pub fn add(&mut self, range: std::ops::Range<usize>, delta: i128) {
        if range.start < range.end {
            self.add_at(1, 0, self.len, range.start, range.end, delta);
        }
    }

    fn add_at(&mut self, node: usize, l: usize, r: usize, lo: usize, hi: usize, delta: i128) {
        if hi <= l || r <= lo {
            return;
        }
        if lo <= l && r <= hi {
            self.max[node] += delta;
            self.add[node] += delta;
            return;
        }
        let mid = (l + r) / 2;
        self.add_at(2 * node, l, mid, lo, hi, delta);
        self.add_at(2 * node + 1, mid, r, lo, hi, delta);
        self.max[node] = self.max[2 * node].max(self.max[2 * node + 1]) + self.add[node];
    }

    /// The largest value in `range` and its index (the leftmost on ties); `None` if empty.
    pub fn max(&self, range: std::ops::Range<usize>) -> Option<(i128, usize)> {
        if range.start >= range.end {
            return None;
        }
        self.max_at(1, 0, self.len, range.start, range.end)
    }

    fn max_at(
        &self,
        node: usize,
        l: usize,
        r: usize,
        lo: usize,
        hi: usize,
    ) -> Option<(i128, usize)> {
        if hi <= l || r <= lo {
            return None;
        }
        if r - l == 1 {
            return Some((self.max[node], l));
        }
        if lo <= l && r <= hi {
            // Descend to the leftmost maximum.
            let (mut node, mut l, mut r) = (node, l, r);
            let mut pending = 0;
            while r - l > 1 {
                pending += self.add[node];
                let mid = (l + r) / 2;
                if self.max[2 * node] >= self.max[2 * node + 1] {
                    node *= 2;
                    r = mid;
                } else {
                    node = 2 * node + 1;
                    l = mid;
                }
            }
            return Some((self.max[node] + pending, l));
        }
        let mid = (l + r) / 2;
        let left = self.max_at(2 * node, l, mid, lo, hi);
        let right = self.max_at(2 * node + 1, mid, r, lo, hi);
        let best = match (left, right) {
            (Some(a), Some(b)) => Some(if b.0 > a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
        best.map(|(v, i)| (v + self.add[node], i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_plain_array_under_random_updates() {
        let mut values: Vec<i128> = (0..37).map(|i| (i * 7919 % 101) as i128).collect();
        let mut tree = MaxTree::new(&values);
        let mut x: u64 = 12345;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..2000 {
            let a = (next() % 37) as usize;
            let b = (next() % 37) as usize;
            let (lo, hi) = (a.min(b), a.max(b) + 1);
            if next() % 2 == 0 {
                let delta = (next() % 41) as i128 - 20;
                tree.add(lo..hi, delta);
                values[lo..hi].iter_mut().for_each(|v| *v += delta);
            } else {
                let expected = values[lo..hi].iter().copied().max().unwrap();
                let (got, at) = tree.max(lo..hi).unwrap();
                assert_eq!(got, expected);
                assert_eq!(values[at], expected);
                assert!(values[lo..at].iter().all(|&v| v < expected), "leftmost");
            }
        }
    }
}
