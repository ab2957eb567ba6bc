//! What inference knows of tensors, a node's inputs as the rules read them, and shared shape arithmetic.

use super::super::proto::{Node, Values};

/// The most values inference computes for one tensor (shape computations need only a few): a
/// rule whose output would hold more leaves its values unknown, so no node can make the
/// importer's memory grow faster than the file (a Concat of 20,000 inputs of 4,096 values each
/// would otherwise build 82 million).
pub(crate) const VALUE_LIMIT: u64 = 4096;

/// What is known of one tensor.
#[derive(Clone, Debug, Default)]
pub(crate) struct Info {
    pub(crate) elem: Option<i32>,
    pub(crate) shape: Option<Vec<u64>>,
    pub(crate) values: Option<Values>,
    pub(crate) constant: bool,
}

impl Info {
    /// Its size in work units: one, and one per dimension and per known value.
    pub(crate) fn units(&self) -> u64 {
        1 + self.shape.as_ref().map_or(0, Vec::len) as u64
            + self.values.as_ref().map_or(0, Values::len) as u64
    }
}

/// What inference found for one output.
#[derive(Clone, Debug, Default)]
pub(crate) struct Out {
    pub(crate) elem: Option<i32>,
    pub(crate) shape: Option<Vec<u64>>,
    pub(crate) values: Option<Values>,
}

impl Out {
    pub(crate) fn new(elem: Option<i32>, shape: Vec<u64>) -> Out {
        Out {
            elem,
            shape: Some(shape),
            values: None,
        }
    }

    pub(crate) fn ints(elem: Option<i32>, shape: Vec<u64>, values: Option<Vec<i64>>) -> Out {
        let count = product(&shape);
        let values = values
            .filter(|v| Some(v.len() as u64) == count)
            .map(Values::Ints);
        Out {
            elem,
            shape: Some(shape),
            values,
        }
    }
}

/// One node and what is known of its inputs: what every rule reads.
pub(super) struct Inputs<'a, 'n> {
    pub(super) node: &'a Node<'n>,
    pub(super) ins: &'a [Info],
    pub(super) opset: i64,
}

impl Inputs<'_, '_> {
    /// The operator's name (`op_type`).
    pub(super) fn op(&self) -> &str {
        self.node.op_type.as_str()
    }

    /// The element type of the first input.
    pub(super) fn elem0(&self) -> Option<i32> {
        self.ins.first().and_then(|i| i.elem)
    }

    /// The shape of input `k`, if known.
    pub(super) fn shape(&self, k: usize) -> Option<Vec<u64>> {
        self.ins.get(k).and_then(|i| i.shape.clone())
    }

    /// The values of input `k`, if known and integers.
    pub(super) fn ints(&self, k: usize) -> Option<Vec<i64>> {
        self.ins
            .get(k)
            .and_then(|i| i.values.as_ref())
            .and_then(Values::ints)
    }

    /// The values of input `k` as floats, if known.
    pub(super) fn floats(&self, k: usize) -> Option<Vec<f64>> {
        self.ins
            .get(k)
            .and_then(|i| i.values.as_ref())
            .map(Values::floats)
    }

    /// Whether input `k` is given and something is known of it (an empty name gives nothing).
    pub(super) fn present(&self, k: usize) -> bool {
        self.ins
            .get(k)
            .is_some_and(|i| i.shape.is_some() || i.values.is_some())
    }
}

/// The product of the dimensions, `None` on overflow.
pub(super) fn product(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

/// Normalises a possibly negative axis against `rank`.
pub(super) fn axis(value: i64, rank: usize) -> Option<usize> {
    let rank = rank as i64;
    let a = if value < 0 { value + rank } else { value };
    (0..rank).contains(&a).then_some(a as usize)
}

/// Which of `rank` axes are listed in `axes` (each below `rank`): a lookup table, so that
/// checking every axis costs one step, not a scan of the list.
pub(super) fn axis_mask(axes: &[usize], rank: usize) -> Vec<bool> {
    let mut mask = vec![false; rank];
    for &a in axes {
        mask[a] = true;
    }
    mask
}

/// Numpy-style broadcasting of several shapes.
pub(super) fn broadcast(shapes: &[&[u64]]) -> Option<Vec<u64>> {
    let rank = shapes.iter().map(|s| s.len()).max()?;
    let mut out = vec![1u64; rank];
    for shape in shapes {
        let pad = rank - shape.len();
        for (k, &d) in shape.iter().enumerate() {
            let o = &mut out[pad + k];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return None;
            }
        }
    }
    Some(out)
}
