//! Element-wise operators: one output of the input's shape, or of the inputs' broadcast shape.

use super::super::dtype::{is_integer, BOOL, FLOAT, UINT8};
use super::super::proto::Values;
use super::known::{broadcast, Inputs, Out};

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

/// Activations, normalisations and other element-wise unary operators: the input's shape and type
/// (`Identity`, `Neg` and `Abs` also carry integer values).
pub(super) fn same_shape(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let ins = inputs.ins;
    let op = inputs.op();
    let elem0 = inputs.elem0();
    let values = match op {
        "Identity" => ins[0].values.clone(),
        "Neg" => inputs
            .ints(0)
            .map(|v| Values::Ints(v.iter().map(|x| x.wrapping_neg()).collect())),
        "Abs" => inputs
            .ints(0)
            .map(|v| Values::Ints(v.iter().map(|x| x.wrapping_abs()).collect())),
        _ => None,
    };
    Some(vec![Out {
        elem: elem0,
        shape: inputs.shape(0),
        values,
    }])
}

/// `Dropout`: the output and the mask have the input's shape.
pub(super) fn dropout(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let opset = inputs.opset;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    // The mask is boolean from opset 10, of the input's type before.
    let mask = if opset < 10 { elem0 } else { Some(BOOL) };
    Some(vec![Out::new(elem0, x.clone()), Out::new(mask, x)])
}

/// `Not`, `IsNaN`, `IsInf`: a boolean of the input's shape.
pub(super) fn predicate(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    Some(vec![Out::new(Some(BOOL), inputs.shape(0)?)])
}

/// `Cast`: the input's shape in the `to` type, carrying values.
pub(super) fn cast(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let ins = inputs.ins;
    let to = node.int("to", 0) as i32;
    let values = match inputs.ints(0) {
        Some(v) if is_integer(to) => Some(Values::Ints(v)),
        _ if to == FLOAT => ins[0].values.clone().map(|v| Values::Floats(v.floats())),
        _ => None,
    };
    Some(vec![Out {
        elem: Some(to),
        shape: inputs.shape(0),
        values,
    }])
}

/// `CastLike`: the first input's shape in the second input's type.
pub(super) fn cast_like(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let ins = inputs.ins;
    Some(vec![Out::new(ins.get(1)?.elem, inputs.shape(0)?)])
}

/// `QuantizeLinear`: the input's shape in the zero point's type (`UINT8` without one).
pub(super) fn quantize(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let ins = inputs.ins;
    let elem = ins.get(2).and_then(|i| i.elem).or(Some(UINT8));
    Some(vec![Out::new(elem, inputs.shape(0)?)])
}

/// `DequantizeLinear`: the input's shape as floats.
pub(super) fn dequantize(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    Some(vec![Out::new(Some(FLOAT), inputs.shape(0)?)])
}

/// Arithmetic, logic and comparisons over broadcast inputs, carrying integer values of two inputs.
pub(super) fn broadcasting(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let ins = inputs.ins;
    let op = inputs.op();
    let elem0 = inputs.elem0();
    let shapes: Vec<Vec<u64>> = (0..ins.len())
        .map(|k| inputs.shape(k))
        .collect::<Option<_>>()?;
    let refs: Vec<&[u64]> = shapes.iter().map(Vec::as_slice).collect();
    let out = broadcast(&refs)?;
    let elem = match op {
        "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor" => {
            Some(BOOL)
        }
        _ => elem0,
    };
    let values = match (op, inputs.ints(0), inputs.ints(1)) {
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
    Some(vec![Out::ints(elem, out, values)])
}

/// `Where`: the broadcast shape of the condition and both choices.
pub(super) fn conditional(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let ins = inputs.ins;
    let shapes: Vec<Vec<u64>> = (0..3).map(|k| inputs.shape(k)).collect::<Option<_>>()?;
    let refs: Vec<&[u64]> = shapes.iter().map(Vec::as_slice).collect();
    let values = match (inputs.ints(0), inputs.ints(1), inputs.ints(2)) {
        (Some(c), Some(a), Some(b)) if c.len() == a.len() && a.len() == b.len() => Some(
            c.iter()
                .zip(a.iter().zip(&b))
                .map(|(&c, (&a, &b))| if c != 0 { a } else { b })
                .collect(),
        ),
        _ => None,
    };
    Some(vec![Out::ints(ins.get(1)?.elem, broadcast(&refs)?, values)])
}
