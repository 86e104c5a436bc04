//! Colours and glyphs. Under NO_COLOR (or the `mono` theme) every style is plain and
//! meaning is carried by glyphs alone. Themes: `dark` (the default), `light` (for light
//! backgrounds: no yellow or cyan text), `high-contrast` (bright, bold, nothing dimmed)
//! and `mono`.

use ratatui::style::{Color, Modifier, Style};

use crate::app::types::Verdict;

/// The themes a config file can name.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    strum::EnumString,
    strum::Display,
    strum::VariantArray,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Scheme {
    #[default]
    Dark,
    Light,
    HighContrast,
    Mono,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
    pub scheme: Scheme,
}

impl Default for Theme {
    fn default() -> Theme {
        Theme::from_env()
    }
}

impl Theme {
    /// Colour unless `NO_COLOR` is set (to anything non-empty).
    pub fn from_env() -> Theme {
        Theme::named(Scheme::Dark)
    }

    /// Theme `scheme`; `NO_COLOR` (set to anything non-empty) makes any theme mono.
    pub fn named(scheme: Scheme) -> Theme {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        if no_color || scheme == Scheme::Mono {
            return Theme::mono();
        }
        Theme {
            color: true,
            scheme,
        }
    }

    pub fn mono() -> Theme {
        Theme {
            color: false,
            scheme: Scheme::Mono,
        }
    }

    fn fg(&self, dark: Color, light: Color, high: Color) -> Style {
        match (self.color, self.scheme) {
            (false, _) | (_, Scheme::Mono) => Style::default(),
            (true, Scheme::Dark) => Style::default().fg(dark),
            (true, Scheme::Light) => Style::default().fg(light),
            (true, Scheme::HighContrast) => Style::default().fg(high).add_modifier(Modifier::BOLD),
        }
    }

    pub fn pass(&self) -> Style {
        self.fg(Color::Green, Color::Green, Color::LightGreen)
    }

    pub fn fail(&self) -> Style {
        self.fg(Color::Red, Color::Red, Color::LightRed)
    }

    pub fn warn(&self) -> Style {
        // Yellow text is unreadable on a light background: dark orange there.
        self.fg(Color::Yellow, Color::Indexed(130), Color::LightYellow)
    }

    pub fn dim(&self) -> Style {
        match (self.color, self.scheme) {
            (true, Scheme::Dark) => Style::default().fg(Color::DarkGray),
            (true, Scheme::Light) => Style::default().fg(Color::Gray),
            // Nothing is dimmed in high contrast.
            (true, Scheme::HighContrast) => Style::default().fg(Color::White),
            _ => Style::default().add_modifier(Modifier::DIM),
        }
    }

    pub fn title(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    pub fn focused_border(&self) -> Style {
        if self.color {
            self.fg(Color::Cyan, Color::Blue, Color::LightYellow)
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
            self.fg(Color::Cyan, Color::Blue, Color::LightCyan)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_themes_differ_where_they_should() {
        let dark = Theme {
            color: true,
            scheme: Scheme::Dark,
        };
        let light = Theme {
            color: true,
            scheme: Scheme::Light,
        };
        let high = Theme {
            color: true,
            scheme: Scheme::HighContrast,
        };
        let mono = Theme::mono();
        // No yellow or cyan text on a light background.
        assert_ne!(light.warn(), dark.warn());
        assert_ne!(light.accent(), dark.accent());
        // High contrast: bright and bold, nothing dimmed.
        assert!(high.pass().add_modifier.contains(Modifier::BOLD));
        assert_eq!(high.dim().fg, Some(Color::White));
        // Mono: meaning by glyphs alone.
        assert_eq!(mono.pass(), Style::default());
        assert_eq!(mono.fail(), Style::default());
        assert_eq!(
            "high-contrast".parse::<Scheme>().unwrap(),
            Scheme::HighContrast
        );
    }
}
