//! Operators that join tensors or take parts of them: `Concat`, `Split`, `Slice`, `Gather`.

use super::known::{axis, Inputs, Out, VALUE_LIMIT};

/// `Concat`: the inputs' sizes along `axis` summed, carrying the values of 1-D inputs.
pub(super) fn concat(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let ins = inputs.ins;
    let elem0 = inputs.elem0();
    let shapes: Vec<Vec<u64>> = (0..ins.len())
        .filter(|&k| inputs.present(k))
        .map(|k| inputs.shape(k))
        .collect::<Option<_>>()?;
    let first = shapes.first()?;
    let a = axis(node.int("axis", 0), first.len())?;
    let mut out = first.clone();
    out[a] = 0;
    for s in &shapes {
        if s.len() != first.len() {
            return None;
        }
        out[a] = out[a].checked_add(s[a])?;
    }
    let values = (first.len() == 1 && out[0] <= VALUE_LIMIT)
        .then(|| {
            (0..ins.len())
                .filter(|&k| inputs.present(k))
                .map(|k| inputs.ints(k))
                .collect::<Option<Vec<_>>>()
                .map(|v| v.concat())
        })
        .flatten();
    Some(vec![Out::ints(elem0, out, values)])
}

/// `Split`: one output per part, from `split` or equal parts (the last smaller).
pub(super) fn split(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let opset = inputs.opset;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let a = axis(node.int("axis", 0), x.len())?;
    let parts = node.outputs.len();
    let mut sizes: Vec<u64> = match (opset < 13, node.ints("split"), inputs.present(1)) {
        (true, Some(s), _) if !s.is_empty() => s.iter().map(|&d| d as u64).collect(),
        (false, _, true) => inputs.ints(1)?.iter().map(|&d| d as u64).collect(),
        _ => {
            let n = parts.max(1) as u64;
            let each = x[a].div_ceil(n);
            (0..n)
                .map(|k| each.min(x[a].saturating_sub(k.saturating_mul(each))))
                .collect()
        }
    };
    // Only the node's outputs are used: a longer `split` list makes no more shapes.
    sizes.truncate(parts);
    Some(
        sizes
            .iter()
            .map(|&s| {
                let mut out = x.clone();
                out[a] = s;
                Out::new(elem0, out)
            })
            .collect(),
    )
}

/// `Slice`: each sliced axis's length from its start, end and step, carrying 1-D values.
pub(super) fn slice(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let opset = inputs.opset;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let (starts, ends, axes, steps) = if opset < 10 {
        (
            node.ints("starts")?,
            node.ints("ends")?,
            node.ints("axes"),
            None,
        )
    } else {
        (
            inputs.ints(1)?,
            inputs.ints(2)?,
            if inputs.present(3) {
                Some(inputs.ints(3)?)
            } else {
                None
            },
            if inputs.present(4) {
                Some(inputs.ints(4)?)
            } else {
                None
            },
        )
    };
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return None;
    }
    // Wide arithmetic: starts and ends may be any i64 (INT64_MAX means "to the end").
    let mut out = x.clone();
    let mut ranges: Vec<(i128, i128)> = vec![(0, 1); x.len()];
    for k in 0..starts.len() {
        let a = axis(axes[k], x.len())?;
        let dim = i128::from(x[a]);
        let step = i128::from(steps[k]);
        if step == 0 {
            return None;
        }
        if dim == 0 {
            out[a] = 0;
            continue;
        }
        let fix = |v: i64| {
            let v = i128::from(v);
            if v < 0 {
                v + dim
            } else {
                v
            }
        };
        let (start, end) = if step > 0 {
            (fix(starts[k]).clamp(0, dim), fix(ends[k]).clamp(0, dim))
        } else {
            (
                fix(starts[k]).clamp(0, dim - 1),
                fix(ends[k]).clamp(-1, dim - 1),
            )
        };
        let len = if step > 0 {
            (end - start + step - 1).div_euclid(step)
        } else {
            (start - end - step - 1).div_euclid(-step)
        };
        out[a] = u64::try_from(len.max(0)).ok()?;
        ranges[a] = (start, step);
    }
    let values = match (inputs.ints(0), x.len()) {
        (Some(v), 1) => {
            let (start, step) = ranges[0];
            (0..i128::from(out[0]))
                .map(|k| v.get(usize::try_from(start + k * step).ok()?).copied())
                .collect()
        }
        _ => None,
    };
    Some(vec![Out::ints(elem0, out, values)])
}

/// `Gather`: the indices' shape in place of `axis`, carrying 1-D values.
pub(super) fn gather(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let indices = inputs.shape(1)?;
    let a = axis(node.int("axis", 0), x.len())?;
    let mut out = x[..a].to_vec();
    out.extend(&indices);
    out.extend(&x[a + 1..]);
    let values = match (inputs.ints(0), inputs.ints(1), x.len()) {
        (Some(v), Some(i), 1) => i
            .iter()
            .map(|&k| {
                let k = if k < 0 { k + v.len() as i64 } else { k };
                v.get(usize::try_from(k).ok()?).copied()
            })
            .collect(),
        _ => None,
    };
    Some(vec![Out::ints(elem0, out, values)])
}
