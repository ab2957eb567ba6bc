//! A minimal protobuf writer, for the tests that build ONNX files by hand.

/// Appends `value` as a base-128 varint.
pub fn varint(mut value: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// A varint field.
pub fn int_field(number: u64, value: i64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(number << 3, &mut out);
    varint(value as u64, &mut out);
    out
}

/// A length-delimited field (string, bytes or message).
pub fn bytes_field(number: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint((number << 3) | 2, &mut out);
    varint(payload.len() as u64, &mut out);
    out.extend_from_slice(payload);
    out
}
