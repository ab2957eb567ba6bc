//! Shape inference for common ONNX operators, carrying the values of small integer tensors.
//!
//! Each operator family has its rules in its own file; [`rule`] names the rule of every operator
//! covered, family by family.

mod constants;
mod elementwise;
mod known;
mod layout;
mod matmul;
mod parts;
mod reduce;
mod window;

use super::proto::Node;
use known::{Inputs, Out};

pub(super) use known::Info;

/// Infers the outputs of one node from what is known of its inputs.
type Rule = fn(&Inputs<'_, '_>) -> Option<Vec<Out>>;

/// Infers the outputs of `node` from its inputs; `None` when the operator is not covered or
/// something it needs is unknown.
pub(super) fn infer(node: &Node<'_>, ins: &[Info], opset: i64) -> Option<Vec<Out>> {
    if !(node.domain.is_empty() || node.domain == "ai.onnx") {
        return None;
    }
    let rule = rule(node.op_type.as_str())?;
    rule(&Inputs { node, ins, opset })
}

/// The element-wise operators whose output has their input's shape.
const SAME_SHAPE: [&str; 52] = [
    "Relu",
    "Sigmoid",
    "Tanh",
    "LeakyRelu",
    "Elu",
    "Selu",
    "Celu",
    "HardSigmoid",
    "HardSwish",
    "Softmax",
    "LogSoftmax",
    "Hardmax",
    "LRN",
    "Clip",
    "Abs",
    "Neg",
    "Exp",
    "Log",
    "Sqrt",
    "Reciprocal",
    "Floor",
    "Ceil",
    "Round",
    "Erf",
    "Sign",
    "Softplus",
    "Softsign",
    "Mish",
    "Gelu",
    "Sin",
    "Cos",
    "Tan",
    "Atan",
    "Asin",
    "Acos",
    "Sinh",
    "Cosh",
    "Asinh",
    "Acosh",
    "Atanh",
    "ThresholdedRelu",
    "Shrink",
    "PRelu",
    "InstanceNormalization",
    "MeanVarianceNormalization",
    "LpNormalization",
    "GroupNormalization",
    "CumSum",
    "Trilu",
    "Identity",
    "BatchNormalization",
    "LayerNormalization",
];

/// The rule for an operator of the default domain, `None` for the operators not covered.
fn rule(op: &str) -> Option<Rule> {
    Some(match op {
        // Element-wise: the input's shape, or the inputs' broadcast shape.
        op if SAME_SHAPE.contains(&op) => elementwise::same_shape,
        "Dropout" => elementwise::dropout,
        "Not" | "IsNaN" | "IsInf" => elementwise::predicate,
        "Cast" => elementwise::cast,
        "CastLike" => elementwise::cast_like,
        "QuantizeLinear" => elementwise::quantize,
        "DequantizeLinear" => elementwise::dequantize,
        "Add" | "Sub" | "Mul" | "Div" | "Pow" | "Mod" | "Max" | "Min" | "Sum" | "Mean" | "And"
        | "Or" | "Xor" | "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual"
        | "BitShift" | "BitwiseAnd" | "BitwiseOr" | "BitwiseXor" => elementwise::broadcasting,
        "Where" => elementwise::conditional,
        // Convolutions and pooling.
        "Conv" | "ConvInteger" | "QLinearConv" => window::conv,
        "ConvTranspose" => window::conv_transpose,
        "MaxPool" | "AveragePool" | "LpPool" => window::pool,
        "GlobalAveragePool" | "GlobalMaxPool" | "GlobalLpPool" => window::global_pool,
        // Matrix products.
        "Gemm" => matmul::gemm,
        "MatMul" | "MatMulInteger" | "QLinearMatMul" => matmul::matmul,
        // Reshaping and other rearrangements of the dimensions.
        "Flatten" => layout::flatten,
        "Reshape" => layout::reshape,
        "Transpose" => layout::transpose,
        "Squeeze" => layout::squeeze,
        "Unsqueeze" => layout::unsqueeze,
        "Pad" => layout::pad,
        "Resize" | "Upsample" => layout::resize,
        "Expand" => layout::expand,
        "Tile" => layout::tile,
        "DepthToSpace" | "SpaceToDepth" => layout::depth_space,
        // Joining tensors and taking parts of them.
        "Concat" => parts::concat,
        "Split" => parts::split,
        "Slice" => parts::slice,
        "Gather" => parts::gather,
        // Reductions along axes.
        "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" | "ReduceProd" | "ReduceL1"
        | "ReduceL2" | "ReduceLogSum" | "ReduceLogSumExp" | "ReduceSumSquare" => reduce::reduce,
        "ArgMax" | "ArgMin" => reduce::arg_reduce,
        "TopK" => reduce::top_k,
        // Shapes and constants.
        "Shape" => constants::shape,
        "Size" => constants::size,
        "ConstantOfShape" => constants::constant_of_shape,
        "Constant" => constants::constant,
        "Range" => constants::range,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::onnx::dtype::{FLOAT, INT64};
    use crate::import::onnx::proto::{Attribute, Values};

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
    fn concat_keeps_values_only_up_to_the_limit() {
        let concat = node("Concat", 1, &[("axis", &[0])], &[]);
        let part = values(&[7; 1000]);
        let out = |k: usize| infer(&concat, &vec![part.clone(); k], 13).expect("a rule")[0].clone();
        // 4 x 1000 values are kept; 5 x 1000 are more than the limit: shape only.
        let four = out(4);
        assert!(matches!(&four.values, Some(Values::Ints(v)) if v.len() == 4000));
        let many = out(2000);
        assert_eq!(many.shape, Some(vec![2_000_000]));
        assert!(many.values.is_none());
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
