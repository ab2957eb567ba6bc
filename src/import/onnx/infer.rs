//! Shape inference for common ONNX operators, carrying the values of small integer tensors.

use super::dtype::{is_integer, BOOL, FLOAT, INT64, UINT8};
use super::proto::{Node, Values};

/// The most values a `ConstantOfShape` output keeps.
const VALUE_LIMIT: u64 = 4096;

/// What is known of one tensor.
#[derive(Clone, Debug, Default)]
pub(super) struct Info {
    pub(super) elem: Option<i32>,
    pub(super) shape: Option<Vec<u64>>,
    pub(super) values: Option<Values>,
    pub(super) constant: bool,
}

/// What inference found for one output.
#[derive(Clone, Debug, Default)]
pub(super) struct Out {
    pub(super) elem: Option<i32>,
    pub(super) shape: Option<Vec<u64>>,
    pub(super) values: Option<Values>,
}

impl Out {
    pub(super) fn new(elem: Option<i32>, shape: Vec<u64>) -> Out {
        Out {
            elem,
            shape: Some(shape),
            values: None,
        }
    }

    pub(super) fn ints(elem: Option<i32>, shape: Vec<u64>, values: Option<Vec<i64>>) -> Out {
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

/// The product of the dimensions, `None` on overflow.
fn product(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

/// A dimension from wide arithmetic: positive and within `u64`.
fn dimension(value: i128) -> Option<u64> {
    u64::try_from(value).ok().filter(|&d| d > 0)
}

/// Normalises a possibly negative axis against `rank`.
fn axis(value: i64, rank: usize) -> Option<usize> {
    let rank = rank as i64;
    let a = if value < 0 { value + rank } else { value };
    (0..rank).contains(&a).then_some(a as usize)
}

/// Numpy-style broadcasting of several shapes.
fn broadcast(shapes: &[&[u64]]) -> Option<Vec<u64>> {
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

/// Element-wise integer arithmetic on known values (one side may be a single value).
fn combine(a: &[i64], b: &[i64], f: impl Fn(i64, i64) -> Option<i64>) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    if !(a.len() == n || a.len() == 1) || !(b.len() == n || b.len() == 1) {
        return None;
    }
    (0..n)
        .map(|k| {
            f(
                a[if a.len() == 1 { 0 } else { k }],
                b[if b.len() == 1 { 0 } else { k }],
            )
        })
        .collect()
}

/// Output spatial sizes of a convolution or pooling window.
fn window_output(
    node: &Node<'_>,
    spatial: &[u64],
    kernel: &[u64],
    ceil_mode: bool,
) -> Option<Vec<u64>> {
    let n = spatial.len();
    if kernel.len() != n {
        return None;
    }
    let strides = node.ints("strides").unwrap_or_else(|| vec![1; n]);
    let dilations = node.ints("dilations").unwrap_or_else(|| vec![1; n]);
    let pads = node.ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
    if strides.len() != n || dilations.len() != n || pads.len() != 2 * n {
        return None;
    }
    let auto_pad = node.string("auto_pad").unwrap_or("NOTSET");
    // Wide arithmetic: no attribute value can overflow it.
    (0..n)
        .map(|k| {
            let input = i128::from(spatial[k]);
            let stride = i128::from(strides[k].max(1));
            let extent = (i128::from(kernel[k]) - 1) * i128::from(dilations[k]) + 1;
            let (pad_begin, pad_end) = (i128::from(pads[k]), i128::from(pads[k + n]));
            let out = match auto_pad {
                "SAME_UPPER" | "SAME_LOWER" => (input + stride - 1) / stride,
                "VALID" => (input - extent) / stride + 1,
                _ => {
                    let span = input + pad_begin + pad_end - extent;
                    if span < 0 {
                        return None;
                    }
                    if ceil_mode {
                        let mut out = (span + stride - 1) / stride + 1;
                        // The last window must start inside the input or its left padding.
                        if (out - 1) * stride >= input + pad_begin {
                            out -= 1;
                        }
                        out
                    } else {
                        span / stride + 1
                    }
                }
            };
            dimension(out)
        })
        .collect()
}

/// Reduction axes: from the attribute or (newer opsets) the second input.
fn reduce(node: &Node<'_>, ins: &[Info], elem: Option<i32>) -> Option<Vec<Out>> {
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
    let shape = x
        .iter()
        .enumerate()
        .filter_map(|(k, &d)| {
            if axes.contains(&k) {
                keep.then_some(1)
            } else {
                Some(d)
            }
        })
        .collect();
    Some(vec![Out::new(elem, shape)])
}

/// Infers the outputs of `node` from its inputs; `None` when the operator is not covered or
/// something it needs is unknown.
pub(super) fn infer(node: &Node<'_>, ins: &[Info], opset: i64) -> Option<Vec<Out>> {
    let shape = |k: usize| ins.get(k).and_then(|i| i.shape.clone());
    let elem0 = ins.first().and_then(|i| i.elem);
    let ints = |k: usize| {
        ins.get(k)
            .and_then(|i| i.values.as_ref())
            .and_then(Values::ints)
    };
    let floats = |k: usize| {
        ins.get(k)
            .and_then(|i| i.values.as_ref())
            .map(Values::floats)
    };
    let present = |k: usize| {
        ins.get(k)
            .is_some_and(|i| i.shape.is_some() || i.values.is_some())
    };
    let op = node.op_type.as_str();
    if !(node.domain.is_empty() || node.domain == "ai.onnx") {
        return None;
    }
    let out = match op {
        "Relu"
        | "Sigmoid"
        | "Tanh"
        | "LeakyRelu"
        | "Elu"
        | "Selu"
        | "Celu"
        | "HardSigmoid"
        | "HardSwish"
        | "Softmax"
        | "LogSoftmax"
        | "Hardmax"
        | "LRN"
        | "Clip"
        | "Abs"
        | "Neg"
        | "Exp"
        | "Log"
        | "Sqrt"
        | "Reciprocal"
        | "Floor"
        | "Ceil"
        | "Round"
        | "Erf"
        | "Sign"
        | "Softplus"
        | "Softsign"
        | "Mish"
        | "Gelu"
        | "Sin"
        | "Cos"
        | "Tan"
        | "Atan"
        | "Asin"
        | "Acos"
        | "Sinh"
        | "Cosh"
        | "Asinh"
        | "Acosh"
        | "Atanh"
        | "ThresholdedRelu"
        | "Shrink"
        | "PRelu"
        | "InstanceNormalization"
        | "MeanVarianceNormalization"
        | "LpNormalization"
        | "GroupNormalization"
        | "CumSum"
        | "Trilu"
        | "Identity"
        | "BatchNormalization"
        | "LayerNormalization" => {
            let values = match op {
                "Identity" => ins[0].values.clone(),
                "Neg" => {
                    ints(0).map(|v| Values::Ints(v.iter().map(|x| x.wrapping_neg()).collect()))
                }
                "Abs" => {
                    ints(0).map(|v| Values::Ints(v.iter().map(|x| x.wrapping_abs()).collect()))
                }
                _ => None,
            };
            vec![Out {
                elem: elem0,
                shape: shape(0),
                values,
            }]
        }
        "Dropout" => {
            let x = shape(0)?;
            // The mask is boolean from opset 10, of the input's type before.
            let mask = if opset < 10 { elem0 } else { Some(BOOL) };
            vec![Out::new(elem0, x.clone()), Out::new(mask, x)]
        }
        "Not" | "IsNaN" | "IsInf" => vec![Out::new(Some(BOOL), shape(0)?)],
        "Cast" => {
            let to = node.int("to", 0) as i32;
            let values = match ints(0) {
                Some(v) if is_integer(to) => Some(Values::Ints(v)),
                _ if to == FLOAT => ins[0].values.clone().map(|v| Values::Floats(v.floats())),
                _ => None,
            };
            vec![Out {
                elem: Some(to),
                shape: shape(0),
                values,
            }]
        }
        "CastLike" => vec![Out::new(ins.get(1)?.elem, shape(0)?)],
        "QuantizeLinear" => {
            let elem = ins.get(2).and_then(|i| i.elem).or(Some(UINT8));
            vec![Out::new(elem, shape(0)?)]
        }
        "DequantizeLinear" => vec![Out::new(Some(FLOAT), shape(0)?)],
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "Max" | "Min" | "Sum" | "Mean" | "And"
        | "Or" | "Xor" | "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual"
        | "BitShift" | "BitwiseAnd" | "BitwiseOr" | "BitwiseXor" => {
            let shapes: Vec<Vec<u64>> = (0..ins.len()).map(shape).collect::<Option<_>>()?;
            let refs: Vec<&[u64]> = shapes.iter().map(Vec::as_slice).collect();
            let out = broadcast(&refs)?;
            let elem = match op {
                "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or"
                | "Xor" => Some(BOOL),
                _ => elem0,
            };
            let values = match (op, ints(0), ints(1)) {
                ("Add", Some(a), Some(b)) => combine(&a, &b, i64::checked_add),
                ("Sub", Some(a), Some(b)) => combine(&a, &b, i64::checked_sub),
                ("Mul", Some(a), Some(b)) => combine(&a, &b, i64::checked_mul),
                ("Div", Some(a), Some(b)) => combine(&a, &b, i64::checked_div),
                ("Max", Some(a), Some(b)) => combine(&a, &b, |x, y| Some(x.max(y))),
                ("Min", Some(a), Some(b)) => combine(&a, &b, |x, y| Some(x.min(y))),
                ("Equal", Some(a), Some(b)) => combine(&a, &b, |x, y| Some(i64::from(x == y))),
                _ => None,
            }
            .filter(|_| ins.len() == 2 && elem.is_some_and(is_integer));
            vec![Out::ints(elem, out, values)]
        }
        "Where" => {
            let shapes: Vec<Vec<u64>> = (0..3).map(shape).collect::<Option<_>>()?;
            let refs: Vec<&[u64]> = shapes.iter().map(Vec::as_slice).collect();
            let values = match (ints(0), ints(1), ints(2)) {
                (Some(c), Some(a), Some(b)) if c.len() == a.len() && a.len() == b.len() => Some(
                    c.iter()
                        .zip(a.iter().zip(&b))
                        .map(|(&c, (&a, &b))| if c != 0 { a } else { b })
                        .collect(),
                ),
                _ => None,
            };
            vec![Out::ints(ins.get(1)?.elem, broadcast(&refs)?, values)]
        }
        "Conv" | "ConvInteger" | "QLinearConv" => {
            let (x_index, w_index) = if op == "QLinearConv" { (0, 3) } else { (0, 1) };
            let x = shape(x_index)?;
            let w = shape(w_index)?;
            if x.len() < 3 || w.len() != x.len() {
                return None;
            }
            let kernel = node
                .ints("kernel_shape")
                .map(|k| k.iter().map(|&d| d as u64).collect())
                .unwrap_or_else(|| w[2..].to_vec());
            let spatial = window_output(node, &x[2..], &kernel, false)?;
            let elem = match op {
                "ConvInteger" => Some(6),
                "QLinearConv" => ins.get(7).and_then(|i| i.elem),
                _ => elem0,
            };
            let mut out = vec![x[0], w[0]];
            out.extend(spatial);
            vec![Out::new(elem, out)]
        }
        "ConvTranspose" => {
            let x = shape(0)?;
            let w = shape(1)?;
            if x.len() < 3 || w.len() != x.len() {
                return None;
            }
            let n = x.len() - 2;
            let group = node.int("group", 1).max(1) as u64;
            let mut out = vec![x[0], w[1].checked_mul(group)?];
            if let Some(output_shape) = node.ints("output_shape") {
                let spatial = &output_shape[output_shape.len().checked_sub(n)?..];
                for &d in spatial {
                    out.push(dimension(i128::from(d))?);
                }
                return Some(vec![Out::new(elem0, out)]);
            }
            let kernel: Vec<i64> = node
                .ints("kernel_shape")
                .unwrap_or_else(|| w[2..].iter().map(|&d| d as i64).collect());
            let strides = node.ints("strides").unwrap_or_else(|| vec![1; n]);
            let dilations = node.ints("dilations").unwrap_or_else(|| vec![1; n]);
            let pads = node.ints("pads").unwrap_or_else(|| vec![0; 2 * n]);
            let extra = node.ints("output_padding").unwrap_or_else(|| vec![0; n]);
            if kernel.len() != n
                || strides.len() != n
                || pads.len() != 2 * n
                || extra.len() != n
                || dilations.len() != n
            {
                return None;
            }
            let auto_pad = node.string("auto_pad").unwrap_or("NOTSET");
            let wide = |v: &[i64], k: usize| i128::from(v[k]);
            for k in 0..n {
                let input = i128::from(x[2 + k]);
                let size = match auto_pad {
                    "SAME_UPPER" | "SAME_LOWER" => input * wide(&strides, k),
                    _ => {
                        wide(&strides, k) * (input - 1)
                            + wide(&extra, k)
                            + (wide(&kernel, k) - 1) * wide(&dilations, k)
                            + 1
                            - wide(&pads, k)
                            - wide(&pads, k + n)
                    }
                };
                out.push(dimension(size)?);
            }
            vec![Out::new(elem0, out)]
        }
        "MaxPool" | "AveragePool" | "LpPool" => {
            let x = shape(0)?;
            if x.len() < 3 {
                return None;
            }
            let kernel: Vec<u64> = node
                .ints("kernel_shape")?
                .iter()
                .map(|&d| d as u64)
                .collect();
            let ceil_mode = node.int("ceil_mode", 0) != 0;
            let mut out = x[..2].to_vec();
            out.extend(window_output(node, &x[2..], &kernel, ceil_mode)?);
            vec![Out::new(elem0, out.clone()), Out::new(Some(INT64), out)]
        }
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => {
            let x = shape(0)?;
            if x.len() < 2 {
                return None;
            }
            let mut out = x[..2].to_vec();
            out.resize(x.len(), 1);
            vec![Out::new(elem0, out)]
        }
        "Gemm" => {
            let a = shape(0)?;
            let b = shape(1)?;
            if a.len() != 2 || b.len() != 2 {
                return None;
            }
            let m = if node.int("transA", 0) != 0 {
                a[1]
            } else {
                a[0]
            };
            let n = if node.int("transB", 0) != 0 {
                b[0]
            } else {
                b[1]
            };
            vec![Out::new(elem0, vec![m, n])]
        }
        "MatMul" | "MatMulInteger" | "QLinearMatMul" => {
            let (ai, bi) = if op == "QLinearMatMul" {
                (0, 3)
            } else {
                (0, 1)
            };
            let mut a = shape(ai)?;
            let mut b = shape(bi)?;
            if a.is_empty() || b.is_empty() {
                return None;
            }
            let (a1, b1) = (a.len() == 1, b.len() == 1);
            if a1 {
                a.insert(0, 1);
            }
            if b1 {
                b.push(1);
            }
            if a[a.len() - 1] != b[b.len() - 2] {
                return None;
            }
            let batch = broadcast(&[&a[..a.len() - 2], &b[..b.len() - 2]]).unwrap_or_default();
            let mut out = batch;
            if !a1 {
                out.push(a[a.len() - 2]);
            }
            if !b1 {
                out.push(b[b.len() - 1]);
            }
            let elem = match op {
                "MatMulInteger" => Some(6),
                "QLinearMatMul" => ins.get(7).and_then(|i| i.elem),
                _ => elem0,
            };
            vec![Out::new(elem, out)]
        }
        "Flatten" => {
            let x = shape(0)?;
            let a = node.int("axis", 1);
            let a = if a < 0 { a + x.len() as i64 } else { a };
            if !(0..=x.len() as i64).contains(&a) {
                return None;
            }
            let (head, tail) = x.split_at(a as usize);
            vec![Out::new(elem0, vec![product(head)?, product(tail)?])]
        }
        "Reshape" => {
            let x = shape(0)?;
            let target = if opset < 5 {
                node.ints("shape")?
            } else {
                ints(1)?
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
            vec![Out {
                elem: elem0,
                shape: Some(out),
                values,
            }]
        }
        "Transpose" => {
            let x = shape(0)?;
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
            vec![Out::new(elem0, out)]
        }
        "Squeeze" => {
            let x = shape(0)?;
            let axes = if opset < 13 {
                node.ints("axes")
            } else if present(1) {
                Some(ints(1)?)
            } else {
                None
            };
            let out: Vec<u64> = match axes {
                Some(axes) => {
                    let axes: Vec<usize> = axes
                        .iter()
                        .map(|&a| axis(a, x.len()))
                        .collect::<Option<_>>()?;
                    x.iter()
                        .enumerate()
                        .filter(|(k, _)| !axes.contains(k))
                        .map(|(_, &d)| d)
                        .collect()
                }
                None => x.iter().copied().filter(|&d| d != 1).collect(),
            };
            vec![Out::ints(elem0, out, ints(0))]
        }
        "Unsqueeze" => {
            let x = shape(0)?;
            let axes = if opset < 13 {
                node.ints("axes")?
            } else {
                ints(1)?
            };
            let rank = x.len() + axes.len();
            let axes: Vec<usize> = axes.iter().map(|&a| axis(a, rank)).collect::<Option<_>>()?;
            let mut source = x.iter();
            let out = (0..rank)
                .map(|k| {
                    if axes.contains(&k) {
                        Some(1)
                    } else {
                        source.next().copied()
                    }
                })
                .collect::<Option<Vec<_>>>()?;
            vec![Out::ints(elem0, out, ints(0))]
        }
        "Concat" => {
            let shapes: Vec<Vec<u64>> = (0..ins.len())
                .filter(|&k| present(k))
                .map(shape)
                .collect::<Option<_>>()?;
            let first = shapes.first()?;
            let a = axis(node.int("axis", 0), first.len())?;
            let mut out = first.clone();
            out[a] = 0;
            for s in &shapes {
                if s.len() != first.len() {
                    return None;
                }
                out[a] += s[a];
            }
            let values = (first.len() == 1)
                .then(|| {
                    (0..ins.len())
                        .filter(|&k| present(k))
                        .map(ints)
                        .collect::<Option<Vec<_>>>()
                        .map(|v| v.concat())
                })
                .flatten();
            vec![Out::ints(elem0, out, values)]
        }
        "Split" => {
            let x = shape(0)?;
            let a = axis(node.int("axis", 0), x.len())?;
            let parts = node.outputs.len();
            let sizes: Vec<u64> = match (opset < 13, node.ints("split"), present(1)) {
                (true, Some(s), _) if !s.is_empty() => s.iter().map(|&d| d as u64).collect(),
                (false, _, true) => ints(1)?.iter().map(|&d| d as u64).collect(),
                _ => {
                    let n = parts.max(1) as u64;
                    let each = x[a].div_ceil(n);
                    (0..n)
                        .map(|k| each.min(x[a].saturating_sub(k.saturating_mul(each))))
                        .collect()
                }
            };
            sizes
                .iter()
                .map(|&s| {
                    let mut out = x.clone();
                    out[a] = s;
                    Out::new(elem0, out)
                })
                .collect()
        }
        "Slice" => {
            let x = shape(0)?;
            let (starts, ends, axes, steps) = if opset < 10 {
                (
                    node.ints("starts")?,
                    node.ints("ends")?,
                    node.ints("axes"),
                    None,
                )
            } else {
                (
                    ints(1)?,
                    ints(2)?,
                    if present(3) { Some(ints(3)?) } else { None },
                    if present(4) { Some(ints(4)?) } else { None },
                )
            };
            let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
            let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
            if ends.len() != starts.len()
                || axes.len() != starts.len()
                || steps.len() != starts.len()
            {
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
            let values = match (ints(0), x.len()) {
                (Some(v), 1) => {
                    let (start, step) = ranges[0];
                    (0..i128::from(out[0]))
                        .map(|k| v.get(usize::try_from(start + k * step).ok()?).copied())
                        .collect()
                }
                _ => None,
            };
            vec![Out::ints(elem0, out, values)]
        }
        "Pad" => {
            let x = shape(0)?;
            let pads = if opset < 11 {
                node.ints("pads").or_else(|| node.ints("paddings"))?
            } else {
                ints(1)?
            };
            let n = x.len();
            let axes: Vec<usize> = if opset >= 18 && present(3) {
                ints(3)?
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
            vec![Out::new(elem0, out)]
        }
        "Resize" | "Upsample" => {
            let x = shape(0)?;
            let (scales, sizes) = match (op, opset) {
                ("Upsample", o) if o < 9 => (node.floats("scales"), None),
                ("Upsample", _) | ("Resize", 10) => (floats(1), None),
                _ => (
                    floats(2).filter(|s| !s.is_empty()),
                    if present(3) { ints(3) } else { None },
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
            vec![Out::new(elem0, out)]
        }
        "Shape" => {
            let x = shape(0)?;
            let rank = x.len() as i64;
            let fix = |v: i64| (if v < 0 { v + rank } else { v }).clamp(0, rank) as usize;
            let start = fix(node.int("start", 0));
            let end = fix(node.int("end", rank));
            let dims: Vec<i64> = x[start..end.max(start)].iter().map(|&d| d as i64).collect();
            vec![Out::ints(Some(INT64), vec![dims.len() as u64], Some(dims))]
        }
        "Size" => {
            let x = shape(0)?;
            vec![Out::ints(
                Some(INT64),
                vec![],
                Some(vec![i64::try_from(product(&x)?).ok()?]),
            )]
        }
        "Gather" => {
            let x = shape(0)?;
            let indices = shape(1)?;
            let a = axis(node.int("axis", 0), x.len())?;
            let mut out = x[..a].to_vec();
            out.extend(&indices);
            out.extend(&x[a + 1..]);
            let values = match (ints(0), ints(1), x.len()) {
                (Some(v), Some(i), 1) => i
                    .iter()
                    .map(|&k| {
                        let k = if k < 0 { k + v.len() as i64 } else { k };
                        v.get(usize::try_from(k).ok()?).copied()
                    })
                    .collect(),
                _ => None,
            };
            vec![Out::ints(elem0, out, values)]
        }
        "ConstantOfShape" => {
            let dims: Vec<u64> = ints(0)?.iter().map(|&d| d.max(0) as u64).collect();
            let value = node.attribute("value").and_then(|a| a.t.as_ref());
            let elem = value.map_or(FLOAT, |t| t.data_type);
            let fill = value
                .and_then(|t| t.values.as_ref())
                .and_then(Values::ints)
                .and_then(|v| v.first().copied())
                .unwrap_or(0);
            let count = product(&dims)?;
            let values =
                (is_integer(elem) && count <= VALUE_LIMIT).then(|| vec![fill; count as usize]);
            vec![Out::ints(Some(elem), dims, values)]
        }
        "Constant" => {
            let a = node.attributes.first()?;
            match a.name.as_str() {
                "value" => {
                    let t = a.t.as_ref()?;
                    let dims = t
                        .dims
                        .iter()
                        .map(|&d| u64::try_from(d).ok())
                        .collect::<Option<Vec<_>>>()?;
                    vec![Out {
                        elem: Some(t.data_type),
                        shape: Some(dims),
                        values: t.values.clone(),
                    }]
                }
                "value_int" => vec![Out::ints(Some(INT64), vec![], Some(vec![a.i?]))],
                "value_ints" => vec![Out::ints(
                    Some(INT64),
                    vec![a.ints.len() as u64],
                    Some(a.ints.clone()),
                )],
                "value_float" => vec![Out {
                    elem: Some(FLOAT),
                    shape: Some(vec![]),
                    values: Some(Values::Floats(vec![a.f?])),
                }],
                "value_floats" => vec![Out {
                    elem: Some(FLOAT),
                    shape: Some(vec![a.floats.len() as u64]),
                    values: Some(Values::Floats(a.floats.clone())),
                }],
                _ => return None,
            }
        }
        "Expand" => {
            let x = shape(0)?;
            let target: Vec<u64> = ints(1)?.iter().map(|&d| d.max(0) as u64).collect();
            vec![Out::new(elem0, broadcast(&[&x, &target])?)]
        }
        "Tile" => {
            let x = shape(0)?;
            let repeats = ints(1)?;
            if repeats.len() != x.len() {
                return None;
            }
            let out = x
                .iter()
                .zip(&repeats)
                .map(|(&d, &r)| d.checked_mul(r.max(0) as u64))
                .collect::<Option<Vec<_>>>()?;
            vec![Out::new(elem0, out)]
        }
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1"
        | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => {
            reduce(node, ins, elem0)?
        }
        "ArgMax" | "ArgMin" => {
            let x = shape(0)?;
            let a = axis(node.int("axis", 0), x.len())?;
            let keep = node.int("keepdims", 1) != 0;
            let mut out = x.clone();
            if keep {
                out[a] = 1;
            } else {
                out.remove(a);
            }
            vec![Out::new(Some(INT64), out)]
        }
        "TopK" => {
            let x = shape(0)?;
            let k = if opset < 10 {
                node.int("k", 0)
            } else {
                *ints(1)?.first()?
            };
            let a = axis(node.int("axis", -1), x.len())?;
            let mut out = x.clone();
            out[a] = u64::try_from(k).ok()?;
            vec![Out::new(elem0, out.clone()), Out::new(Some(INT64), out)]
        }
        "DepthToSpace" | "SpaceToDepth" => {
            let x = shape(0)?;
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
            vec![Out::new(elem0, out)]
        }
        "Range" => {
            let (start, limit, delta) = (floats(0)?, floats(1)?, floats(2)?);
            let n = ((limit.first()? - start.first()?) / delta.first()?)
                .ceil()
                .max(0.0) as u64;
            vec![Out::new(elem0, vec![n])]
        }
        _ => return None,
    };
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::onnx::proto::Attribute;

    fn node(
        op: &str,
        outputs: usize,
        ints: &[(&str, &[i64])],
        strings: &[(&str, &str)],
    ) -> Node<'static> {
        let mut attributes: Vec<Attribute<'static>> = ints
            .iter()
            .map(|(name, values)| Attribute {
                name: name.to_string(),
                ints: values.to_vec(),
                i: values.first().copied().filter(|_| values.len() == 1),
                ..Attribute::default()
            })
            .collect();
        attributes.extend(strings.iter().map(|(name, value)| Attribute {
            name: name.to_string(),
            s: Some(value.to_string()),
            ..Attribute::default()
        }));
        Node {
            op_type: op.to_string(),
            outputs: (0..outputs).map(|k| format!("o{k}")).collect(),
            attributes,
            ..Node::default()
        }
    }

    fn tensor(shape: &[u64]) -> Info {
        Info {
            elem: Some(FLOAT),
            shape: Some(shape.to_vec()),
            ..Info::default()
        }
    }

    fn values(values: &[i64]) -> Info {
        Info {
            elem: Some(INT64),
            shape: Some(vec![values.len() as u64]),
            values: Some(Values::Ints(values.to_vec())),
            constant: true,
        }
    }

    fn shape_of(node: &Node<'_>, ins: &[Info], opset: i64) -> Option<Vec<u64>> {
        infer(node, ins, opset)?.into_iter().next()?.shape
    }

    #[test]
    fn convolutions_and_pools() {
        let x = tensor(&[1, 3, 224, 224]);
        let w = tensor(&[64, 3, 7, 7]);
        let conv = node(
            "Conv",
            1,
            &[("strides", &[2, 2]), ("pads", &[3, 3, 3, 3])],
            &[],
        );
        assert_eq!(
            shape_of(&conv, &[x.clone(), w.clone()], 13),
            Some(vec![1, 64, 112, 112])
        );
        let same = node(
            "Conv",
            1,
            &[("strides", &[2, 2])],
            &[("auto_pad", "SAME_UPPER")],
        );
        assert_eq!(
            shape_of(&same, &[tensor(&[1, 3, 225, 225]), w], 13),
            Some(vec![1, 64, 113, 113])
        );
        // 112 -> 3x3 stride 2, no padding: floor 55, ceil 56.
        let floor = node(
            "MaxPool",
            1,
            &[("kernel_shape", &[3, 3]), ("strides", &[2, 2])],
            &[],
        );
        assert_eq!(
            shape_of(&floor, &[tensor(&[1, 64, 112, 112])], 13),
            Some(vec![1, 64, 55, 55])
        );
        let ceil = node(
            "MaxPool",
            1,
            &[
                ("kernel_shape", &[3, 3]),
                ("strides", &[2, 2]),
                ("ceil_mode", &[1]),
            ],
            &[],
        );
        assert_eq!(
            shape_of(&ceil, &[tensor(&[1, 64, 112, 112])], 13),
            Some(vec![1, 64, 56, 56])
        );
        let transpose = node(
            "ConvTranspose",
            1,
            &[("strides", &[2, 2]), ("pads", &[1, 1, 1, 1])],
            &[],
        );
        assert_eq!(
            shape_of(
                &transpose,
                &[tensor(&[1, 8, 10, 10]), tensor(&[8, 4, 4, 4])],
                13
            ),
            Some(vec![1, 4, 20, 20])
        );
        // Absurd attributes give no shape rather than an overflow.
        let huge = node(
            "Conv",
            1,
            &[("pads", &[i64::MAX, i64::MAX, i64::MAX, i64::MAX])],
            &[],
        );
        assert_eq!(shape_of(&huge, &[x, tensor(&[64, 3, 7, 7])], 13), None);
    }

    #[test]
    fn shape_computations_carry_values() {
        // Shape -> Gather(0) -> Unsqueeze -> Concat with [-1] -> Reshape.
        let x = tensor(&[2, 3, 4]);
        let shape = &infer(&node("Shape", 1, &[], &[]), std::slice::from_ref(&x), 13).unwrap()[0];
        assert_eq!(shape.values, Some(Values::Ints(vec![2, 3, 4])));
        let as_info = |out: &Out| Info {
            elem: out.elem,
            shape: out.shape.clone(),
            values: out.values.clone(),
            constant: false,
        };
        let mut scalar = values(&[0]);
        scalar.shape = Some(vec![]);
        let gathered =
            &infer(&node("Gather", 1, &[], &[]), &[as_info(shape), scalar], 13).unwrap()[0];
        assert_eq!(gathered.values, Some(Values::Ints(vec![2])));
        let unsqueezed = &infer(
            &node("Unsqueeze", 1, &[], &[]),
            &[as_info(gathered), values(&[0])],
            13,
        )
        .unwrap()[0];
        assert_eq!(unsqueezed.shape, Some(vec![1]));
        let target = &infer(
            &node("Concat", 1, &[("axis", &[0])], &[]),
            &[as_info(unsqueezed), values(&[-1])],
            13,
        )
        .unwrap()[0];
        assert_eq!(target.values, Some(Values::Ints(vec![2, -1])));
        let reshape = node("Reshape", 1, &[], &[]);
        assert_eq!(
            shape_of(&reshape, &[x, as_info(target)], 13),
            Some(vec![2, 12])
        );
    }

    #[test]
    fn slices_with_negative_steps_and_large_ends() {
        let x = tensor(&[10, 6]);
        let slice = node("Slice", 1, &[], &[]);
        // axis 0 from the end backwards with step -3: 9, 6, 3, 0 -> 4; axis 1 to "infinity".
        let ins = [
            x.clone(),
            values(&[-1, 2]),
            values(&[i64::MIN, i64::MAX]),
            values(&[0, 1]),
            values(&[-3, 1]),
        ];
        assert_eq!(shape_of(&slice, &ins, 13), Some(vec![4, 4]));
        let empty = [
            tensor(&[0]),
            values(&[0]),
            values(&[5]),
            values(&[0]),
            values(&[-1]),
        ];
        assert_eq!(shape_of(&slice, &empty, 13), Some(vec![0]));
        let values_in = values(&[5, 6, 7, 8]);
        let out = &infer(
            &slice,
            &[
                values_in,
                values(&[-1]),
                values(&[0]),
                values(&[0]),
                values(&[-2]),
            ],
            13,
        )
        .unwrap()[0];
        assert_eq!(out.values, Some(Values::Ints(vec![8, 6])));
    }

    #[test]
    fn broadcasting_matmul_and_split() {
        let add = node("Add", 1, &[], &[]);
        assert_eq!(
            shape_of(&add, &[tensor(&[8, 1, 6]), tensor(&[7, 1])], 13),
            Some(vec![8, 7, 6])
        );
        assert_eq!(shape_of(&add, &[tensor(&[3]), tensor(&[4])], 13), None);
        let matmul = node("MatMul", 1, &[], &[]);
        assert_eq!(
            shape_of(&matmul, &[tensor(&[5, 1, 2, 3]), tensor(&[4, 3, 7])], 13),
            Some(vec![5, 4, 2, 7])
        );
        assert_eq!(
            shape_of(&matmul, &[tensor(&[3]), tensor(&[3, 7])], 13),
            Some(vec![7])
        );
        let split = node("Split", 3, &[("axis", &[1])], &[]);
        let parts: Vec<_> = infer(&split, &[tensor(&[1, 10])], 13)
            .unwrap()
            .into_iter()
            .map(|o| o.shape.unwrap())
            .collect();
        assert_eq!(parts, vec![vec![1, 4], vec![1, 4], vec![1, 2]]);
    }
}
