//! Drawing pieces every pane and dialog uses: a pane's frame and numbered title, a
//! centred dialog rectangle, the diagnostics panel. A leaf: it knows no pane.

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType, Borders};

use super::action::PaneId;
use super::theme::{Theme, safe};

/// A pane's frame: its title, highlighted when focused.
/// A pane's title with its number (`2 Rules (8)`): the key that focuses it.
/// A one-line prompt's input holding `text`, all of it selected: typing replaces it (as
/// a browser's search box does), Enter keeps it, an arrow key keeps it for editing.
pub fn prefilled(text: &str) -> ratatui_textarea::TextArea<'static> {
    let mut input = ratatui_textarea::TextArea::default();
    input.insert_str(text);
    if !text.is_empty() {
        input.select_all();
    }
    input
}

/// `text` cut to `width` columns (display width: CJK and emoji take two), with `…`
/// when cut.
pub fn fit(text: &str, width: usize) -> String {
    if Span::raw(text).width() <= width {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = Span::raw(c.to_string()).width();
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    if width > 0 {
        out.push('…');
    }
    out
}

/// `text` cut to `width` columns as [`fit`] does, then padded with spaces to `width`.
pub fn fit_padded(text: &str, width: usize) -> String {
    let cut = fit(text, width);
    let pad = width.saturating_sub(Span::raw(cut.as_str()).width());
    format!("{cut}{}", " ".repeat(pad))
}

pub fn numbered(pane: PaneId, title: &str) -> String {
    format!("{} {title}", pane.number())
}

pub fn pane_block<'a>(title: &str, theme: &Theme, focused: bool) -> Block<'a> {
    let (style, kind) = if focused {
        (theme.focused_border(), BorderType::Thick)
    } else {
        (theme.border(), BorderType::Plain)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_type(kind)
        .border_style(style)
        .title(Span::styled(
            // Titles name stored things (pages, rules, assertions): escaped here, once.
            format!(" {} ", safe(title)),
            if focused {
                theme.accent()
            } else {
                theme.title()
            },
        ))
}

/// A count of lines as a height: `u16::MAX` past it (a cast would wrap, and adding to
/// it overflow).
pub fn rows(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// A centred rectangle of at most `w` × `h`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [v] = Layout::vertical([Constraint::Length(h.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [r] = Layout::horizontal([Constraint::Length(w.min(area.width))])
        .flex(Flex::Center)
        .areas(v);
    r
}

/// `text` cut into lines of at most `width` display columns.
fn wrap_to(text: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthChar;
    let width = width.max(8);
    let mut out = vec![String::new()];
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > width {
            out.push(String::new());
            used = 0;
        }
        out.last_mut().expect("one line at least").push(c);
        used += w;
    }
    out
}

/// The diagnostics panel: for the first diagnostic with a position, the line of text it
/// is on with a caret under its column; then every diagnostic, message and hint,
/// wrapped to `width` (nothing is cut). `true` marks the dim lines (the quoted text).
pub fn diagnostic_lines(
    diags: &[crate::app::types::Diagnostic],
    text: &[String],
    width: usize,
) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    if let Some(d) = diags.iter().find(|d| d.line.is_some()) {
        let (line, col) = (d.line.unwrap_or(1), d.column.unwrap_or(1).max(1));
        if let Some(src) = text.get(line - 1) {
            let number = format!("{line:>3}");
            let gutter = format!("{number} │ ");
            let room = width.saturating_sub(gutter.chars().count() + 1).max(8);
            // Scrolled so that the column is in sight.
            let start = (col - 1).saturating_sub(room.saturating_sub(8));
            let shown: String = src.chars().skip(start).take(room).collect();
            out.push((true, format!("{gutter}{}", safe(&shown))));
            // The caret under the column as shown: measured on the text as it is drawn
            // (escaped: a tab shows as `\t`), in display columns.
            let before: String = src.chars().skip(start).take(col - 1 - start).collect();
            let caret_at = unicode_width::UnicodeWidthStr::width(safe(&before).as_str());
            out.push((
                false,
                format!(
                    "{} │ {}^",
                    " ".repeat(number.chars().count()),
                    " ".repeat(caret_at)
                ),
            ));
        }
    }
    for d in diags {
        let at = match (d.line, d.column) {
            (Some(l), Some(c)) => format!(" {l}:{c}"),
            _ => String::new(),
        };
        let glyph = match d.severity {
            crate::app::types::Severity::Error => "✗",
            crate::app::types::Severity::Warning => "⚠",
        };
        let head = format!("{glyph} {}{at}: {}", d.code, safe(&d.message));
        out.extend(wrap_to(&head, width).into_iter().map(|l| (false, l)));
        if let Some(hint) = &d.hint {
            let hint = format!("  hint: {}", safe(hint));
            out.extend(wrap_to(&hint, width).into_iter().map(|l| (false, l)));
        }
    }
    out
}

/// `text` wrapped at word boundaries to lines of at most `width` columns (a word longer
/// than a line is cut with `…`).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let w = Span::raw(word).width();
        let now = Span::raw(line.as_str()).width();
        if !line.is_empty() && now + 1 + w > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&if w > width {
            fit(word, width)
        } else {
            word.to_owned()
        });
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod wrap_tests {
    use super::wrap;

    #[test]
    fn words_wrap_within_the_width() {
        assert_eq!(
            wrap("one two three four", 9),
            vec!["one two", "three", "four"]
        );
        assert_eq!(wrap("", 5), vec![""]);
        let long = wrap("abcdefghijkl x", 5);
        assert_eq!(long[0].chars().count(), 5);
        assert!(long[0].ends_with('…'));
    }
}
