//! Text helpers shared by the fronts.

/// Whether a character must not reach a terminal raw: C0 and C1 controls and DEL (so
/// every escape sequence, which starts with ESC or a C1 introducer), the bidirectional
/// controls (which reorder what is shown) and the zero-width characters (which hide
/// text).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Makes untrusted text safe for a terminal: the characters of [`is_unsafe`] are shown
/// escaped (`\u{1b}`), never written raw. The one function every output uses.
pub fn sanitize(text: &str) -> String {
    if !text.chars().any(is_unsafe) {
        return text.to_owned();
    }
    text.chars()
        .flat_map(|c| -> Vec<char> {
            if is_unsafe(c) {
                c.escape_default().collect()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// JSON text made safe for a terminal without changing what it means: every character
/// of [`is_unsafe`] that a JSON writer leaves raw (DEL, C1, bidi and zero-width; C0 is
/// escaped already) is written as a `\uXXXX` escape, which is the same string to a JSON
/// reader. Such characters only occur inside JSON strings, so the text stays valid.
pub fn json_safe(text: &str) -> std::borrow::Cow<'_, str> {
    // Raw line breaks and tabs in a JSON writer's output are its own layout (inside
    // strings they are escaped): they stay.
    let escape = |c: char| is_unsafe(c) && !matches!(c, '\n' | '\r' | '\t');
    if !text.chars().any(escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escape(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`sanitize`] line by line: line breaks stay, everything else unsafe is escaped.
pub fn sanitize_lines(text: &str) -> String {
    text.split('\n')
        .map(sanitize)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Pretty JSON that keeps a value on one line when it fits in `width` columns, as
/// people write rules: `{"==": [{"var": "target.provider"}, "openai"]}`.
pub fn pretty_json(value: &serde_json::Value, width: usize) -> String {
    let mut out = String::new();
    write_pretty(value, 0, width, &mut out);
    out
}

fn one_line(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(one_line).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), one_line(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        other => other.to_string(),
    }
}

fn write_pretty(value: &serde_json::Value, indent: usize, width: usize, out: &mut String) {
    use serde_json::Value;
    let flat = one_line(value);
    if indent + flat.chars().count() <= width {
        out.push_str(&flat);
        return;
    }
    let pad = "  ".repeat(indent + 1);
    let end = "  ".repeat(indent);
    match value {
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&pad);
                write_pretty(item, indent + 1, width, out);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&end);
            out.push(']');
        }
        Value::Object(map) => {
            out.push_str("{\n");
            for (i, (k, v)) in map.iter().enumerate() {
                out.push_str(&pad);
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                write_pretty(v, indent + 1, width, out);
                out.push_str(if i + 1 < map.len() { ",\n" } else { "\n" });
            }
            out.push_str(&end);
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_json_keeps_short_values_on_one_line() {
        let v = serde_json::json!({"or": [{"==": [{"var": "source.needsStreaming"}, false]},
            {"and": [{"==": [{"var": "source.needsStreaming"}, true]}, {"==": [{"var": "target.supportsStreaming"}, true]}]}]});
        let text = pretty_json(&v, 60);
        assert_eq!(
            text,
            "{\n  \"or\": [\n    {\"==\": [{\"var\": \"source.needsStreaming\"}, false]},\n    {\n      \"and\": [\n        {\"==\": [{\"var\": \"source.needsStreaming\"}, true]},\n        {\"==\": [{\"var\": \"target.supportsStreaming\"}, true]}\n      ]\n    }\n  ]\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        assert_eq!(
            pretty_json(&serde_json::json!({"var": "x"}), 60),
            "{\"var\": \"x\"}"
        );
    }

    #[test]
    fn sanitize_escapes_terminal_controls() {
        assert_eq!(sanitize("a\u{1b}[31mred\u{7}"), "a\\u{1b}[31mred\\u{7}");
        assert_eq!(sanitize("plain ✓"), "plain ✓");
        assert_eq!(sanitize("tab\there"), "tab\\there");
    }
}
