//! Text helpers shared by the fronts.

/// Makes untrusted text safe for a terminal: control characters (and so ANSI escape
/// sequences, which start with ESC) are shown escaped, never written raw.
pub fn sanitize(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .flat_map(|c| -> Vec<char> {
            if c.is_control() {
                c.escape_default().collect()
            } else {
                vec![c]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_escapes_terminal_controls() {
        assert_eq!(sanitize("a\u{1b}[31mred\u{7}"), "a\\u{1b}[31mred\\u{7}");
        assert_eq!(sanitize("plain ✓"), "plain ✓");
        assert_eq!(sanitize("tab\there"), "tab\\there");
    }
}
