//! Colours and glyphs. Under NO_COLOR every style is plain and meaning is carried by
//! glyphs alone.

use ratatui::style::{Color, Modifier, Style};

use crate::app::types::Verdict;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set (to anything non-empty).
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    pub fn mono() -> Theme {
        Theme { color: false }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    pub fn pass(&self) -> Style {
        self.fg(Color::Green)
    }

    pub fn fail(&self) -> Style {
        self.fg(Color::Red)
    }

    pub fn warn(&self) -> Style {
        self.fg(Color::Yellow)
    }

    pub fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default().add_modifier(Modifier::DIM)
        }
    }

    pub fn title(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    pub fn focused_border(&self) -> Style {
        if self.color {
            Style::default().fg(Color::Cyan)
        } else {
            Style::default().add_modifier(Modifier::BOLD)
        }
    }

    pub fn border(&self) -> Style {
        self.dim()
    }

    /// The highlighted row or cell.
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }

    pub fn accent(&self) -> Style {
        if self.color {
            Style::default()
                .fg(Color::Cyan)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::BOLD)
        }
    }

    pub fn verdict(&self, verdict: Verdict) -> Style {
        match verdict {
            Verdict::Full => self.pass(),
            Verdict::Partial => self.warn(),
            Verdict::None => self.fail(),
        }
    }
}

/// ● full, ◐ partial, ○ none.
pub fn verdict_glyph(verdict: Verdict) -> &'static str {
    // The printers' glyphs: the workbench and the command line draw verdicts alike.
    crate::print::listing::glyph(verdict)
}

pub const PASS: &str = "✓";
pub const FAIL: &str = "✗";
/// A rule that does not apply to the pair (its `appliesWhen` is falsy).
pub const NOT_APPLICABLE: &str = "–";
/// A cell whose outcome changed since the last save.
pub const CHANGED: &str = "*";
/// A column decided by an override.
pub const OVERRIDE: &str = "⚑";
/// The recommended target.
pub const RECOMMENDED: &str = "★";

/// Untrusted text made safe for the terminal: control characters escaped.
pub fn safe(text: &str) -> String {
    crate::app::text::sanitize(text)
}
