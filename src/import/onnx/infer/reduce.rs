//! Reductions along axes: the `Reduce*` operators, `ArgMax`/`ArgMin` and `TopK`.

use super::super::dtype::INT64;
use super::known::{axis, axis_mask, Inputs, Out};

/// `ReduceMean`, `ReduceSum`, ...: the reduced axes dropped (kept as 1 with `keepdims`); the axes
/// come from the attribute or (newer opsets) the second input.
pub(super) fn reduce(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let (node, ins, elem) = (inputs.node, inputs.ins, inputs.elem0());
    let x = ins.first()?.shape.clone()?;
    let keep = node.int("keepdims", 1) != 0;
    let axes = match node.ints("axes") {
        Some(a) => a,
        None if ins.len() > 1 && ins[1].shape.is_some() => ins[1].values.as_ref()?.ints()?,
        None => Vec::new(),
    };
    let axes: Vec<usize> = if axes.is_empty() {
        if node.int("noop_with_empty_axes", 0) != 0 {
            return Some(vec![Out::new(elem, x)]);
        }
        (0..x.len()).collect()
    } else {
        axes.iter()
            .map(|&a| axis(a, x.len()))
            .collect::<Option<_>>()?
    };
    let reduced = axis_mask(&axes, x.len());
    let shape = x
        .iter()
        .enumerate()
        .filter_map(|(k, &d)| {
            if reduced[k] {
                keep.then_some(1)
            } else {
                Some(d)
            }
        })
        .collect();
    Some(vec![Out::new(elem, shape)])
}

/// `ArgMax`, `ArgMin`: `axis` reduced (kept as 1 with `keepdims`), `INT64` indices.
pub(super) fn arg_reduce(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let x = inputs.shape(0)?;
    let a = axis(node.int("axis", 0), x.len())?;
    let keep = node.int("keepdims", 1) != 0;
    let mut out = x.clone();
    if keep {
        out[a] = 1;
    } else {
        out.remove(a);
    }
    Some(vec![Out::new(Some(INT64), out)])
}

/// `TopK`: `k` along `axis`, for the values and their `INT64` indices.
pub(super) fn top_k(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let opset = inputs.opset;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let k = if opset < 10 {
        node.int("k", 0)
    } else {
        *inputs.ints(1)?.first()?
    };
    let a = axis(node.int("axis", -1), x.len())?;
    let mut out = x.clone();
    out[a] = u64::try_from(k).ok()?;
    Some(vec![
        Out::new(elem0, out.clone()),
        Out::new(Some(INT64), out),
    ])
}
