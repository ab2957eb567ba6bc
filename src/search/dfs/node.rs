//! A node of the depth-first search: the part it searches and the canonical bound it inherits.

use std::ops::Range;

/// A node of the search: the (sub)problem it belongs to, and the bound that the placement
/// before it leaves to the placements below it.
pub(super) struct Node<'n> {
    /// The buffers of the node's (sub)problem, placed ones included.
    pub buffers: &'n [u32],
    /// The sections of the node's (sub)problem.
    pub sections: Range<usize>,
    /// The offset of the last placement: with canonical placements, no later one goes lower.
    pub bound: u64,
    /// The rank of the last placement: a later one at `bound` must rank higher.
    pub bound_rank: u32,
    /// The decision depth of the node.
    pub depth: u32,
}

impl<'n> Node<'n> {
    /// The root of a (sub)problem searched at `depth`: no bound yet.
    pub fn root(buffers: &'n [u32], sections: Range<usize>, depth: u32) -> Node<'n> {
        Node {
            buffers,
            sections,
            bound: 0,
            bound_rank: 0,
            depth,
        }
    }

    /// The node below this one after a placement at `bound` that keeps rank `bound_rank`.
    pub fn child(&self, bound: u64, bound_rank: u32) -> Node<'n> {
        Node {
            buffers: self.buffers,
            sections: self.sections.clone(),
            bound,
            bound_rank,
            depth: self.depth + 1,
        }
    }
}
