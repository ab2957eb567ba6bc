//! Matrix products: `Gemm` and the broadcasting `MatMul` family.

use super::known::{broadcast, Inputs, Out};

/// `Gemm`: `M x N` from the (possibly transposed) 2-D inputs.
pub(super) fn gemm(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let elem0 = inputs.elem0();
    let a = inputs.shape(0)?;
    let b = inputs.shape(1)?;
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
    Some(vec![Out::new(elem0, vec![m, n])])
}

/// `MatMul`, `MatMulInteger`, `QLinearMatMul`: numpy matrix products with broadcast batch dimensions.
pub(super) fn matmul(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let ins = inputs.ins;
    let op = inputs.op();
    let elem0 = inputs.elem0();
    let (ai, bi) = if op == "QLinearMatMul" {
        (0, 3)
    } else {
        (0, 1)
    };
    let mut a = inputs.shape(ai)?;
    let mut b = inputs.shape(bi)?;
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
    Some(vec![Out::new(elem, out)])
}
