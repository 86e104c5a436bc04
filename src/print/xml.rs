//! XML text for the JUnit reports (`rulebench test --format junit`): one escaping for
//! attributes and content.

/// Escapes text for XML attributes and content; characters XML 1.0 cannot hold and
/// those that must not reach a terminal raw (bidi, zero-width) are written escaped
/// (`\u{1b}`).
pub fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if crate::app::text::is_unsafe(c) || matches!(c, '\u{fffe}' | '\u{ffff}') => {
                out.extend(c.escape_default())
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_escapes_markup_and_controls() {
        assert_eq!(
            xml("a<b & \"c\" 'd'\u{1b}[31m\u{202e}\n"),
            "a&lt;b &amp; &quot;c&quot; 'd'\\u{1b}[31m\\u{202e}&#10;"
        );
    }
}
