//! Places in JSON text read without parsing it whole: where an element of the buffer list
//! starts, for errors found after parsing, and the string token at a position.

/// The 1-based line where element `element` of the document's `buffers` list starts, for an
/// error found after parsing (a rule of the problem, an unknown id in a solution).
pub(crate) fn element_line(text: &str, element: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut depth, mut line, mut count) = (0usize, 1, 0);
    // At depth 1 (the root object): whether the next string is a key, and the last key read.
    let (mut expecting_key, mut key) = (false, None);
    let mut in_buffers = false;
    let mut p = 0;
    while p < bytes.len() {
        match bytes[p] {
            b'\n' => line += 1,
            b'"' => {
                let (string, next) = read_string(bytes, p);
                if depth == 1 && expecting_key {
                    key = string;
                    expecting_key = false;
                }
                p = next;
                continue;
            }
            b',' if depth == 1 => expecting_key = true,
            b'{' | b'[' => {
                if depth == 2 && in_buffers {
                    if count == element {
                        return Some(line);
                    }
                    count += 1;
                }
                in_buffers |= depth == 1 && key.as_deref() == Some("buffers");
                expecting_key = depth == 0;
                depth += 1;
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                in_buffers &= depth > 1;
            }
            _ => {}
        }
        p += 1;
    }
    None
}

/// The JSON string whose opening quote is at `start`, decoded, if the text holds it whole (a
/// string the text ends inside reads as far as it goes, escapes raw; one that does not decode
/// reads raw), and the position after it.
pub(crate) fn read_string(bytes: &[u8], start: usize) -> (Option<String>, usize) {
    let mut p = start + 1;
    while p < bytes.len() {
        match bytes[p] {
            b'"' => {
                let raw = &bytes[start..=p];
                let decoded = std::str::from_utf8(raw)
                    .ok()
                    .and_then(|raw| serde_json::from_str::<String>(raw).ok())
                    .unwrap_or_else(|| String::from_utf8_lossy(&raw[1..raw.len() - 1]).into());
                return (Some(decoded), p + 1);
            }
            b'\\' => p += 2,
            _ => p += 1,
        }
    }
    (None, p)
}

#[cfg(test)]
mod tests {
    use super::element_line;

    #[test]
    fn an_element_is_found_on_its_line_past_other_keys_and_strings() {
        let text = "{\"note\": \"[{ not a list\",\n \"buffers\": [\n  {\"id\": \"a\", \"gaps\": [{\"lower\": 1}]},\n\n  {\"id\": \"b\"}],\n \"capacity\": 8}";
        assert_eq!(element_line(text, 0), Some(3));
        assert_eq!(element_line(text, 1), Some(5));
        assert_eq!(element_line(text, 2), None);
        // A `buffers` key inside another object is not the list.
        assert_eq!(element_line("{\"x\": {\"buffers\": [{}]}}", 0), None);
    }
}
