//! Operators whose output follows from attributes and shapes: `Shape`, `Size`, `Constant`, `ConstantOfShape`, `Range`.

use super::super::dtype::{is_integer, FLOAT, INT64};
use super::super::proto::Values;
use super::known::{product, Inputs, Out, VALUE_LIMIT};

/// `Shape`: the (sliced) input shape as a 1-D `INT64` tensor with its values.
pub(super) fn shape(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let x = inputs.shape(0)?;
    let rank = x.len() as i64;
    let fix = |v: i64| (if v < 0 { v + rank } else { v }).clamp(0, rank) as usize;
    let start = fix(node.int("start", 0));
    let end = fix(node.int("end", rank));
    let dims: Vec<i64> = x[start..end.max(start)].iter().map(|&d| d as i64).collect();
    Some(vec![Out::ints(
        Some(INT64),
        vec![dims.len() as u64],
        Some(dims),
    )])
}

/// `Size`: the element count as an `INT64` scalar with its value.
pub(super) fn size(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let x = inputs.shape(0)?;
    Some(vec![Out::ints(
        Some(INT64),
        vec![],
        Some(vec![i64::try_from(product(&x)?).ok()?]),
    )])
}

/// `ConstantOfShape`: the shape given by the input's values, filled with `value`.
pub(super) fn constant_of_shape(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let dims: Vec<u64> = inputs.ints(0)?.iter().map(|&d| d.max(0) as u64).collect();
    let value = node.attribute("value").and_then(|a| a.t.as_ref());
    let elem = value.map_or(FLOAT, |t| t.data_type);
    let fill = value
        .and_then(|t| t.values.as_ref())
        .and_then(Values::ints)
        .and_then(|v| v.first().copied())
        .unwrap_or(0);
    let count = product(&dims)?;
    let values = (is_integer(elem) && count <= VALUE_LIMIT).then(|| vec![fill; count as usize]);
    Some(vec![Out::ints(Some(elem), dims, values)])
}

/// `Constant`: the attribute's tensor, integer(s) or float(s), with its values.
pub(super) fn constant(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let a = node.attributes.first()?;
    Some(match a.name.as_str() {
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
    })
}

/// `Range`: `ceil((limit - start) / delta)` elements.
pub(super) fn range(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let elem0 = inputs.elem0();
    let (start, limit, delta) = (inputs.floats(0)?, inputs.floats(1)?, inputs.floats(2)?);
    let n = ((limit.first()? - start.first()?) / delta.first()?)
        .ceil()
        .max(0.0) as u64;
    Some(vec![Out::new(elem0, vec![n])])
}
