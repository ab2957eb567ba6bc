//! ONNX `TensorProto.DataType` codes: element sizes and which types carry integer values.

pub(super) const FLOAT: i32 = 1;
pub(super) const UINT8: i32 = 2;
pub(super) const INT64: i32 = 7;
pub(super) const BOOL: i32 = 9;

/// Bits per element of an ONNX `TensorProto.DataType`, `None` for `STRING`, `UNDEFINED` and
/// unknown codes.
pub(crate) fn element_bits(data_type: i32) -> Option<u64> {
    Some(match data_type {
        1 => 32,      // FLOAT
        2 | 3 => 8,   // UINT8, INT8
        4 | 5 => 16,  // UINT16, INT16
        6 => 32,      // INT32
        7 => 64,      // INT64
        9 => 8,       // BOOL
        10 => 16,     // FLOAT16
        11 => 64,     // DOUBLE
        12 => 32,     // UINT32
        13 => 64,     // UINT64
        14 => 64,     // COMPLEX64
        15 => 128,    // COMPLEX128
        16 => 16,     // BFLOAT16
        17..=20 => 8, // FLOAT8 variants
        21..=23 => 4, // UINT4, INT4, FLOAT4E2M1
        24 => 8,      // FLOAT8E8M0
        _ => return None,
    })
}

/// Integer data types whose values may be carried through shape computations.
pub(super) fn is_integer(data_type: i32) -> bool {
    matches!(data_type, 2..=7 | 9 | 12 | 13)
}
