//! Convolutions and pooling: output sizes of windows sliding over the spatial dimensions.

use super::super::dtype::INT64;
use super::super::proto::Node;
use super::known::{Inputs, Out};

/// A dimension from wide arithmetic: positive and within `u64`.
fn dimension(value: i128) -> Option<u64> {
    u64::try_from(value).ok().filter(|&d| d > 0)
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

/// `Conv`, `ConvInteger`, `QLinearConv`: batch, output channels, then the windows' output sizes.
pub(super) fn conv(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let ins = inputs.ins;
    let op = inputs.op();
    let elem0 = inputs.elem0();
    let (x_index, w_index) = if op == "QLinearConv" { (0, 3) } else { (0, 1) };
    let x = inputs.shape(x_index)?;
    let w = inputs.shape(w_index)?;
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
    Some(vec![Out::new(elem, out)])
}

/// `ConvTranspose`: from `output_shape`, or the inverse of a convolution's output size.
pub(super) fn conv_transpose(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    let w = inputs.shape(1)?;
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
    Some(vec![Out::new(elem0, out)])
}

/// `MaxPool`, `AveragePool`, `LpPool`: the windows' output sizes (and `MaxPool`'s indices).
pub(super) fn pool(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let node = inputs.node;
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
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
    Some(vec![
        Out::new(elem0, out.clone()),
        Out::new(Some(INT64), out),
    ])
}

/// Global pooling: batch and channels kept, every spatial dimension 1.
pub(super) fn global_pool(inputs: &Inputs<'_, '_>) -> Option<Vec<Out>> {
    let elem0 = inputs.elem0();
    let x = inputs.shape(0)?;
    if x.len() < 2 {
        return None;
    }
    let mut out = x[..2].to_vec();
    out.resize(x.len(), 1);
    Some(vec![Out::new(elem0, out)])
}
