//! The workbench's config file: `$XDG_CONFIG_HOME/rulebench/config.toml` (the
//! platform's config directory elsewhere; `RULEBENCH_CONFIG` names another file). It
//! sets the theme, the mouse, the page opened on start, and remaps keys over the one
//! keymap (help and the palette follow). A file that is not there is the defaults; one
//! that does not read is an error that says where (exit 2), never half applied.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::keymap::Remap;
use super::theme::Scheme;

/// What the config file says (every part optional).
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// `dark`, `light`, `high-contrast` or `mono`.
    #[serde(default)]
    pub theme: Option<String>,
    /// Take the mouse (as `--mouse`).
    #[serde(default)]
    pub mouse: Option<bool>,
    /// The page opened on start (`--page` wins); empty: the picker.
    #[serde(default)]
    pub default_page: Option<String>,
    /// `ACTION = "KEY"` or `["KEY", …]`, and `PLACE.ACTION = …` (a table per place).
    #[serde(default)]
    pub keys: BTreeMap<String, toml::Value>,
}

/// The config file read and checked: what the workbench applies.
#[derive(Debug, Default, PartialEq)]
pub struct Settings {
    pub scheme: Scheme,
    pub mouse: bool,
    pub default_page: Option<String>,
    pub remaps: Vec<Remap>,
}

/// Where the config file is: `RULEBENCH_CONFIG`, else `config.toml` in the platform's
/// config directory for rulebench (`$XDG_CONFIG_HOME/rulebench` on Linux).
pub fn path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RULEBENCH_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    directories::ProjectDirs::from("", "", "rulebench").map(|d| d.config_dir().join("config.toml"))
}

/// Reads the config file at `path` (none there: the defaults).
pub fn load(path: &Path) -> Result<Settings, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    read(&text).map_err(|(at, message)| match at {
        Some((line, col)) => format!("{}:{line}:{col}: {message}", path.display()),
        None => format!("{}: {message}", path.display()),
    })
}

/// Line and column (1-based) of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Reads config text; an error comes with its line and column when the text says.
pub fn read(text: &str) -> Result<Settings, (Option<(usize, usize)>, String)> {
    let config: Config = toml::from_str(text).map_err(|e| {
        (
            e.span().map(|s| line_col(text, s.start)),
            e.message().trim().to_owned(),
        )
    })?;
    // Keys and values are located by finding their text (the deserializer keeps no
    // spans for them).
    let locate = |needle: &str| text.find(needle).map(|o| line_col(text, o));
    let scheme = match &config.theme {
        None => Scheme::default(),
        Some(name) => name.parse().map_err(|_| {
            let names: Vec<String> = <Scheme as strum::VariantArray>::VARIANTS
                .iter()
                .map(|s| s.to_string())
                .collect();
            (
                locate(&format!("\"{name}\"")),
                format!(
                    "no theme `{name}`: {}",
                    crate::app::text::one_of(&names.iter().map(String::as_str).collect::<Vec<_>>())
                ),
            )
        })?,
    };
    let mut remaps = Vec::new();
    // One key or several, as strings.
    let keys_of = |name: &str, v: &toml::Value| -> Result<Vec<String>, String> {
        match v {
            toml::Value::String(k) => Ok(vec![k.clone()]),
            toml::Value::Array(ks) => ks
                .iter()
                .map(|k| {
                    k.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("`{name}`: a key is a string, as \"Ctrl-F\""))
                })
                .collect(),
            _ => Err(format!(
                "`{name}`: keys are a string or a list of strings, as \"Ctrl-F\" or [\"f\", \"F3\"]"
            )),
        }
    };
    for (name, value) in &config.keys {
        match value {
            // A place: its actions.
            toml::Value::Table(actions) => {
                for (action, v) in actions {
                    let full = format!("{name}.{action}");
                    let keys = keys_of(&full, v).map_err(|m| (locate(action), m))?;
                    remaps.push(Remap::parse(&full, &keys).map_err(|m| (locate(action), m))?);
                }
            }
            v => {
                let keys = keys_of(name, v).map_err(|m| (locate(name), m))?;
                remaps.push(Remap::parse(name, &keys).map_err(|m| (locate(name), m))?);
            }
        }
    }
    super::keymap::check(&remaps).map_err(|m| (None, m))?;
    Ok(Settings {
        scheme,
        mouse: config.mouse.unwrap_or(false),
        default_page: config.default_page.filter(|p| !p.trim().is_empty()),
        remaps,
    })
}

/// The config file with every default written out (`rulebench config --print-default`):
/// a file that reads as the defaults, every key binding listed in comments.
pub fn default_text() -> String {
    let themes: Vec<String> = <Scheme as strum::VariantArray>::VARIANTS
        .iter()
        .map(|s| s.to_string())
        .collect();
    format!(
        "# rulebench: the workbench's config file ({}).
# Every setting is optional; this file reads as the defaults.

# The colours: {} (NO_COLOR makes any theme mono).
theme = \"dark\"

# Take the mouse: the wheel scrolls, a click focuses a pane and selects what is under it
# (as --mouse; the terminal's own selection then needs Shift).
mouse = false

# The page to open on start (--page wins; empty: the page picker).
default-page = \"\"

# Keys. Remap an action everywhere it is bound (ACTION = ...) or in one place
# (PLACE.ACTION = ..., or ACTION = ... under [keys.PLACE]), to one key or several: \"x\" or [\"x\", \"Ctrl-X\"]. Keys: a
# character, Space, Enter, Esc, Tab, Shift-Tab, Backspace, Delete, Up, Down, Left, Right,
# PgUp, PgDn, Home, End, F1-F12, with Ctrl- or Alt- before. Help (?) and the palette
# show the keys as remapped. Every binding and its keys now:
[keys]
{}",
        "$XDG_CONFIG_HOME/rulebench/config.toml; RULEBENCH_CONFIG names another",
        crate::app::text::one_of(&themes.iter().map(String::as_str).collect::<Vec<_>>()),
        super::keymap::config_lines()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn the_default_text_reads_as_the_defaults() {
        assert_eq!(read(&default_text()).unwrap(), Settings::default());
    }

    #[test]
    fn every_commented_binding_reads_back_as_it_is() {
        // Uncommented, each line of the default `[keys]` remaps an action to its own keys.
        let keys: String = super::super::keymap::config_lines()
            .lines()
            .map(|l| {
                l.trim_start_matches("# ")
                    .split("   # ")
                    .next()
                    .unwrap()
                    .to_owned()
                    + "\n"
            })
            .collect::<Vec<_>>()
            .into_iter()
            .fold(String::new(), |mut acc, l| {
                // One line per name: an action bound in several ways in one place (its
                // keys differ by line) would be a duplicate key in TOML.
                let name = l.split(" = ").next().unwrap().to_owned();
                if !acc
                    .lines()
                    .any(|x| x.split(" = ").next() == Some(name.as_str()))
                {
                    acc.push_str(&l);
                }
                acc
            });
        let settings = read(&format!("[keys]\n{keys}")).unwrap();
        assert!(settings.remaps.len() > 50, "{}", settings.remaps.len());
    }

    #[test]
    fn settings_and_remaps() {
        let s = read(
            "theme = \"high-contrast\"\nmouse = true\ndefault-page = \"loan\"\n[keys]\nfind = \"Ctrl-F\"\nmatrix.filter = [\"|\", \"F3\"]\n",
        )
        .unwrap();
        assert_eq!(s.scheme, Scheme::HighContrast);
        assert!(s.mouse);
        assert_eq!(s.default_page.as_deref(), Some("loan"));
        assert_eq!(s.remaps.len(), 2);
        let find = s.remaps.iter().find(|r| r.action == "find").unwrap();
        assert_eq!(find.keys, vec![(KeyCode::Char('f'), KeyModifiers::CONTROL)]);
        assert!(find.context.is_none());
        let filter = s.remaps.iter().find(|r| r.action == "filter").unwrap();
        assert_eq!(
            filter.keys,
            vec![
                (KeyCode::Char('|'), KeyModifiers::NONE),
                (KeyCode::F(3), KeyModifiers::NONE)
            ]
        );
    }

    #[test]
    fn mistakes_say_what_and_where() {
        let (at, m) = read("theme = \"darkk\"\n").unwrap_err();
        assert_eq!(at, Some((1, 9)));
        assert!(
            m.contains("no theme `darkk`") && m.contains("high-contrast"),
            "{m}"
        );
        let (at, m) = read("mouse = true\ncolour = 1\n").unwrap_err();
        assert_eq!(at.map(|(l, _)| l), Some(2));
        assert!(m.contains("colour"), "{m}");
        let (at, m) = read("[keys]\nfnid = \"x\"\n").unwrap_err();
        assert_eq!(at, Some((2, 1)));
        assert!(
            m.contains("no action `fnid`") && m.contains("did you mean `find`"),
            "{m}"
        );
        let (_, m) = read("[keys]\nmatrx.filter = \"x\"\n").unwrap_err();
        assert!(
            m.contains("no place called `matrx`") && m.contains("`matrix`"),
            "{m}"
        );
        let (_, m) = read("[keys]\nfind = \"Ctrl-Banana\"\n").unwrap_err();
        assert!(m.contains("`Ctrl-Banana` is not a key"), "{m}");
        // Bound twice in one place, and a typing key where text is typed.
        let (_, m) = read("[keys]\nmatrix.frequency = \"s\"\n").unwrap_err();
        assert!(m.contains("`s` is bound twice in matrix"), "{m}");
        let (_, m) = read("[keys]\nback = \"x\"\n").unwrap_err();
        assert!(m.contains("`x` types text in"), "{m}");
        // The place-specific line wins over the one for every place, in any order.
        let s = read("[keys]\nfilter = \"|\"\ndataset.filter = \"F4\"\n").unwrap();
        let all = super::super::keymap::bindings_with(&s.remaps);
        for b in all
            .iter()
            .filter(|b| b.action == crate::tui::action::Action::Filter)
        {
            let dataset = super::super::keymap::Context::Pane(crate::tui::action::PaneId::Dataset);
            let want = if b.context == dataset {
                KeyCode::F(4)
            } else {
                KeyCode::Char('|')
            };
            assert_eq!(b.keys[0].0, want, "{:?}", b.context);
        }
        let (at, _) = read("theme = \n").unwrap_err();
        assert_eq!(at.map(|(l, _)| l), Some(1));
    }
}
