//! Operators that rearrange dimensions: reshaping, transposing, squeezing, padding, resizing, tiling.

use super::known::{axis, axis_mask, broadcast, product, Inputs, Out};

/// `Flatten`: two dimensions, before and after `axis`.
pub(super) fn flatten(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let a = node.int("axis", 1);
    let a = if a < 0 { a + x.len() as i64 } else { a };
    if !(0..=x.len() as i64).contains(&a) {
        return None;
    }
    let (head, tail) = x.split_at(a as usize);
    Some(vec![Out::new(elem0, vec![product(head)?, product(tail)?])])
}

/// `Reshape`: the target shape (`0` copies, `-1` infers a dimension), carrying values.
pub(super) fn reshape(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let ins = inputs.ins;
    let opset = inputs.opset;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let target = if opset < 5 {
        node.ints("shape")?
    } else {
        inputs.ints(1)?
    };
    let allow_zero = node.int("allowzero", 0) != 0;
    let total = product(&x)?;
    let mut out = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (k, &d) in target.iter().enumerate() {
        match d {
            0 if !allow_zero => out.push(*x.get(k)?),
            -1 if infer_at.is_none() => {
                infer_at = Some(k);
                out.push(1);
            }
            d if d >= 0 => out.push(d as u64),
            _ => return None,
        }
    }
    let known = product(&out)?;
    if let Some(k) = infer_at {
        if known == 0 || !total.is_multiple_of(known) {
            return None;
        }
        out[k] = total / known;
    } else if known != total {
        return None;
    }
    let values = ins[0].values.clone();
    Some(vec![Out {
        elem: elem0,
        shape: Some(out),
        values,
    }])
}

/// `Transpose`: the dimensions permuted by `perm` (reversed without it).
pub(super) fn transpose(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let perm: Vec<i64> = node
        .ints("perm")
        .unwrap_or_else(|| (0..x.len() as i64).rev().collect());
    if perm.len() != x.len() {
        return None;
    }
    let out = perm
        .iter()
        .map(|&p| axis(p, x.len()).map(|a| x[a]))
        .collect::<Option<Vec<_>>>()?;
    Some(vec![Out::new(elem0, out)])
}

/// `Squeeze`: the given axes (or every dimension 1) removed, carrying values.
pub(super) fn squeeze(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let opset = inputs.opset;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let axes = if opset < 13 {
        node.ints("axes")
    } else if inputs.present(1) {
        Some(inputs.ints(1)?)
    } else {
        None
    };
    let out: Vec<u64> = match axes {
        Some(axes) => {
            let axes: Vec<usize> = axes
                .iter()
                .map(|&a| axis(a, x.len()))
                .collect::<Option<_>>()?;
            let squeezed = axis_mask(&axes, x.len());
            x.iter()
                .enumerate()
                .filter(|&(k, _)| !squeezed[k])
                .map(|(_, &d)| d)
                .collect()
        }
        None => x.iter().copied().filter(|&d| d != 1).collect(),
    };
    Some(vec![Out::ints(elem0, out, inputs.ints(0))])
}

/// `Unsqueeze`: dimensions 1 inserted at the given axes, carrying values.
pub(super) fn unsqueeze(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let opset = inputs.opset;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let axes = if opset < 13 {
        node.ints("axes")?
    } else {
        inputs.ints(1)?
    };
    let rank = x.len() + axes.len();
    let axes: Vec<usize> = axes.iter().map(|&a| axis(a, rank)).collect::<Option<_>>()?;
    let inserted = axis_mask(&axes, rank);
    let mut source = x.iter();
    let out = (0..rank)
        .map(|k| {
            if inserted[k] {
                Some(1)
            } else {
                source.next().copied()
            }
        })
        .collect::<Option<Vec<_>>>()?;
    Some(vec![Out::ints(elem0, out, inputs.ints(0))])
}

/// `Pad`: each padded axis grows by its two pads.
pub(super) fn pad(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let opset = inputs.opset;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let pads = if opset < 11 {
        node.ints("pads").or_else(|| node.ints("paddings"))?
    } else {
        inputs.ints(1)?
    };
    let n = x.len();
    let axes: Vec<usize> = if opset >= 18 && inputs.present(3) {
        inputs
            .ints(3)?
            .iter()
            .map(|&a| axis(a, n))
            .collect::<Option<_>>()?
    } else {
        (0..n).collect()
    };
    if pads.len() != 2 * axes.len() {
        return None;
    }
    let mut out = x.clone();
    for (k, &a) in axes.iter().enumerate() {
        let d = i128::from(out[a]) + i128::from(pads[k]) + i128::from(pads[k + axes.len()]);
        out[a] = u64::try_from(d).ok()?;
    }
    Some(vec![Out::new(elem0, out)])
}

/// `Resize`, `Upsample`: from `sizes`, or the dimensions times `scales` (rounded down).
pub(super) fn resize(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let opset = inputs.opset;
    let op = inputs.op();
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let (scales, sizes) = match (op, opset) {
        ("Upsample", o) if o < 9 => (node.floats("scales"), None),
        ("Upsample", _) | ("Resize", 10) => (inputs.floats(1), None),
        _ => (
            inputs.floats(2).filter(|s| !s.is_empty()),
            if inputs.present(3) {
                inputs.ints(3)
            } else {
                None
            },
        ),
    };
    if node.ints("axes").is_some() {
        return None;
    }
    let out: Vec<u64> = if let Some(sizes) = sizes.filter(|s| s.len() == x.len()) {
        sizes.iter().map(|&d| d as u64).collect()
    } else {
        let scales = scales.filter(|s| s.len() == x.len())?;
        x.iter()
            .zip(&scales)
            .map(|(&d, &s)| (d as f64 * s).floor() as u64)
            .collect()
    };
    Some(vec![Out::new(elem0, out)])
}

/// `Expand`: the input broadcast with the target shape.
pub(super) fn expand(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let target: Vec<u64> = inputs.ints(1)?.iter().map(|&d| d.max(0) as u64).collect();
    Some(vec![Out::new(elem0, broadcast(&[&x, &target])?)])
}

/// `Tile`: each dimension times its repeat count.
pub(super) fn tile(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let repeats = inputs.ints(1)?;
    if repeats.len() != x.len() {
        return None;
    }
    let out = x
        .iter()
        .zip(&repeats)
        .map(|(&d, &r)| d.checked_mul(r.max(0) as u64))
        .collect::<Option<Vec<_>>>()?;
    Some(vec![Out::new(elem0, out)])
}

/// `DepthToSpace`, `SpaceToDepth`: channels traded for spatial blocks.
pub(super) fn depth_space(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let op = inputs.op();
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let b = node.int("blocksize", 1).max(1) as u64;
    if x.len() != 4 {
        return None;
    }
    let square = b.checked_mul(b)?;
    let out = if op == "DepthToSpace" {
        vec![
            x[0],
            x[1] / square,
            x[2].checked_mul(b)?,
            x[3].checked_mul(b)?,
        ]
    } else {
        vec![x[0], x[1].checked_mul(square)?, x[2] / b, x[3] / b]
    };
    Some(vec![Out::new(elem0, out)])
}
