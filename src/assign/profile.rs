//! A memory's live total over time, built as buffers join it: a segment tree whose nodes are
//! made when a range first reaches them, so that thousands of memories each holding a few
//! buffers take memory in proportion to their buffers, not to the horizon.

/// The live total of one memory at each of `len` time points, all 0 at first.
#[derive(Clone, Debug)]
pub(super) struct Profile {
    len: usize,
    /// Nodes: the largest total below (including `add`), what was added to the whole node, and
    /// the children (0: none yet; node 0 is the root, never a child).
    nodes: Vec<Node>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Node {
    max: u64,
    add: u64,
    children: [u32; 2],
}

impl Profile {
    /// A profile of `len` time points, every total 0.
    pub(super) fn new(len: usize) -> Profile {
        Profile {
            len: len.max(1),
            nodes: vec![Node::default()],
        }
    }

    /// Adds `size` at every time point in `range`.
    pub(super) fn add(&mut self, range: std::ops::Range<usize>, size: u64) {
        if range.start < range.end {
            self.add_at(0, (0, self.len), &range, size);
        }
    }

    /// The largest total over `range` (0 for an empty range).
    pub(super) fn max(&self, range: std::ops::Range<usize>) -> u64 {
        if range.start >= range.end {
            return 0;
        }
        self.max_at(0, (0, self.len), &range)
    }

    fn child(&mut self, node: usize, side: usize) -> usize {
        if self.nodes[node].children[side] == 0 {
            self.nodes.push(Node::default());
            let made = (self.nodes.len() - 1) as u32;
            self.nodes[node].children[side] = made;
        }
        self.nodes[node].children[side] as usize
    }

    fn add_at(
        &mut self,
        node: usize,
        (lo, hi): (usize, usize),
        range: &std::ops::Range<usize>,
        size: u64,
    ) {
        if range.end <= lo || hi <= range.start {
            return;
        }
        if range.start <= lo && hi <= range.end {
            self.nodes[node].add += size;
            self.nodes[node].max += size;
            return;
        }
        let mid = lo + (hi - lo) / 2;
        let left = self.child(node, 0);
        let right = self.child(node, 1);
        self.add_at(left, (lo, mid), range, size);
        self.add_at(right, (mid, hi), range, size);
        let below = self.nodes[left].max.max(self.nodes[right].max);
        self.nodes[node].max = below + self.nodes[node].add;
    }

    fn max_at(&self, node: usize, (lo, hi): (usize, usize), range: &std::ops::Range<usize>) -> u64 {
        if range.end <= lo || hi <= range.start {
            return 0;
        }
        let n = &self.nodes[node];
        if range.start <= lo && hi <= range.end {
            return n.max;
        }
        let mid = lo + (hi - lo) / 2;
        let below = n
            .children
            .iter()
            .zip([(lo, mid), (mid, hi)])
            .filter(|(&c, _)| c != 0)
            .map(|(&c, span)| self.max_at(c as usize, span, range))
            .max()
            .unwrap_or(0);
        below + n.add
    }
}

#[cfg(test)]
mod tests {
    use super::Profile;

    /// Against a plain array on random adds and queries.
    #[test]
    fn agrees_with_a_plain_array() {
        let mut state = 12345u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        for len in [1usize, 2, 7, 64, 100] {
            let mut profile = Profile::new(len);
            let mut plain = vec![0u64; len];
            for _ in 0..300 {
                let a = next(len as u64 + 1) as usize;
                let b = next(len as u64 + 1) as usize;
                let (lo, hi) = (a.min(b), a.max(b));
                if next(2) == 0 {
                    let size = next(50);
                    profile.add(lo..hi, size);
                    plain[lo..hi].iter_mut().for_each(|v| *v += size);
                } else {
                    let want = plain[lo..hi].iter().copied().max().unwrap_or(0);
                    assert_eq!(profile.max(lo..hi), want, "len {len}, {lo}..{hi}");
                }
            }
        }
    }
}
