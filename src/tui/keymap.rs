//! The one keymap. Help and the command palette are generated from it.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::{Action, PaneId};

/// Where a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// Everywhere (outside text input).
    Global,
    /// The page picker.
    Picker,
    /// The page screen, whatever pane has focus.
    Page,
    /// One pane of the page screen.
    Pane(PaneId),
    /// The rule editor while typing.
    Editing,
    /// A dialog, while it is open.
    Dialog(Dialog),
}

/// The dialogs whose keys the keymap holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    Help,
    Palette,
    /// A yes/no question.
    Confirm,
    /// A one-line prompt (searches, filters, notes, values).
    Prompt,
    /// The rule's name, required, weight, category and `appliesWhen` (`m` in Rules).
    RuleForm,
    History,
    /// The frequency view (`F` in the Matrix).
    Frequency,
    /// The multi-line JSON dialog (assertions).
    Json,
    /// A value changed elsewhere since your edit began.
    Conflict,
}

impl Context {
    pub fn title(self) -> &'static str {
        match self {
            Context::Global => "Everywhere",
            Context::Picker => "Page picker",
            Context::Page => "Page screen",
            Context::Pane(p) => p.title(),
            Context::Editing => "While editing a rule",
            Context::Dialog(Dialog::Help) => "Help (?)",
            Context::Dialog(Dialog::Palette) => {
                "Command palette (: Ctrl-P; type to filter, fuzzily)"
            }
            Context::Dialog(Dialog::Confirm) => "A question",
            Context::Dialog(Dialog::Prompt) => "A prompt (type the text)",
            Context::Dialog(Dialog::RuleForm) => "Rule form (m in Rules; type in the fields)",
            Context::Dialog(Dialog::History) => "History dialog (H)",
            Context::Dialog(Dialog::Frequency) => "Frequency view (F in the Matrix)",
            Context::Dialog(Dialog::Json) => "JSON dialog (assertions: a, e in Tests)",
            Context::Dialog(Dialog::Conflict) => {
                "Conflict (a value you edit was changed elsewhere)"
            }
        }
    }
}

/// One binding: keys, where, what, and what help says.
pub struct Binding {
    pub keys: &'static [(KeyCode, KeyModifiers)],
    pub context: Context,
    pub action: Action,
    pub help: &'static str,
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

macro_rules! bind {
    ($ctx:expr, [$($k:expr),+], $action:expr, $help:expr) => {
        Binding { keys: &[$($k),+], context: $ctx, action: $action, help: $help }
    };
}

static ALL: std::sync::OnceLock<Vec<Binding>> = std::sync::OnceLock::new();
static REMAPS: std::sync::OnceLock<Vec<Remap>> = std::sync::OnceLock::new();

/// Every binding, in the order help lists them: built once (a key looked up rebuilt
/// the whole list), with the config file's remappings ([`remap`]) over the defaults.
pub fn bindings() -> &'static [Binding] {
    ALL.get_or_init(|| {
        let mut all = build();
        apply(&mut all, REMAPS.get().map_or(&[][..], Vec::as_slice));
        all
    })
}

/// Puts `remaps` over `all`: those for every place first, then those for one place (so
/// the one place's wins, whatever the order they were written in).
fn apply(all: &mut [Binding], remaps: &[Remap]) {
    let ordered = remaps
        .iter()
        .filter(|r| r.context.is_none())
        .chain(remaps.iter().filter(|r| r.context.is_some()));
    for r in ordered {
        let keys: &'static [(KeyCode, KeyModifiers)] = Box::leak(r.keys.clone().into_boxed_slice());
        for b in all.iter_mut().filter(|b| r.applies_to(b)) {
            b.keys = keys;
        }
    }
}

/// The default keymap with `remaps` over it (what [`bindings`] would be), for checks.
pub fn bindings_with(remaps: &[Remap]) -> Vec<Binding> {
    let mut all = build();
    apply(&mut all, remaps);
    all
}

/// The places where keys type text: a printable key bound there could not be typed.
fn types_text(context: Context) -> bool {
    matches!(
        context,
        Context::Editing
            | Context::Dialog(Dialog::Prompt)
            | Context::Dialog(Dialog::RuleForm)
            | Context::Dialog(Dialog::Json)
            | Context::Dialog(Dialog::Palette)
    )
}

/// Checks `remaps` over the keymap: a key bound twice in one place (after remapping)
/// is an error naming both, and so is a key that types text bound where text is typed.
pub fn check(remaps: &[Remap]) -> Result<(), String> {
    let all = bindings_with(remaps);
    let defaults = build();
    for (i, b) in all.iter().enumerate() {
        for &(code, mods) in b.keys {
            let printable = matches!(code, KeyCode::Char(_))
                && !mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
            // A key the keymap binds there itself is fine (Space in the rule form).
            let new_there = !defaults[i].keys.contains(&(code, mods));
            if new_there && printable && types_text(b.context) {
                return Err(format!(
                    "`{}` types text in {}: it cannot be `{}` there (use Ctrl- or Alt-, or name another place)",
                    key_name(code, mods),
                    context_name(b.context),
                    action_name(&b.action)
                ));
            }
            if let Some(other) = all[..i].iter().find(|o| {
                o.context == b.context
                    && o.action != b.action
                    && o.keys.iter().any(|&(c, m)| c == code && m == mods)
            }) {
                return Err(format!(
                    "`{}` is bound twice in {}: `{}` and `{}`",
                    key_name(code, mods),
                    context_name(b.context),
                    action_name(&other.action),
                    action_name(&b.action)
                ));
            }
        }
    }
    Ok(())
}

/// A remapping from the config file: the keys of an action (by name), everywhere it
/// is bound or in one context.
#[derive(Debug, Clone, PartialEq)]
pub struct Remap {
    pub context: Option<Context>,
    pub action: String,
    pub keys: Vec<(KeyCode, KeyModifiers)>,
}

impl Remap {
    fn applies_to(&self, b: &Binding) -> bool {
        action_name(&b.action) == self.action && self.context.is_none_or(|c| c == b.context)
    }

    /// Reads `[CONTEXT.]ACTION` and its keys (`"Ctrl-P"`, `["j", "Down"]`); what is not
    /// a bound action or a key is an error that says so, with a did-you-mean.
    pub fn parse(name: &str, keys: &[String]) -> Result<Remap, String> {
        let defaults = build();
        let (context, action) = match name.split_once('.') {
            Some((c, a)) => {
                let contexts: Vec<Context> = defaults.iter().map(|b| b.context).collect();
                let Some(context) = contexts.iter().copied().find(|&x| context_name(x) == c) else {
                    let names: Vec<String> = contexts.iter().map(|&x| context_name(x)).collect();
                    return Err(format!("no place called `{c}`{}", did_you_mean(c, &names)));
                };
                (Some(context), a)
            }
            None => (None, name),
        };
        let bound = defaults
            .iter()
            .any(|b| action_name(&b.action) == action && context.is_none_or(|c| c == b.context));
        if !bound {
            let names: Vec<String> = defaults
                .iter()
                .filter(|b| context.is_none_or(|c| c == b.context))
                .map(|b| action_name(&b.action))
                .collect();
            return Err(format!(
                "no action `{action}`{}{}",
                context.map_or(String::new(), |c| format!(" in `{}`", context_name(c))),
                did_you_mean(action, &names)
            ));
        }
        if keys.is_empty() {
            return Err(format!("`{name}` names no key"));
        }
        let mut parsed = Vec::new();
        for k in keys {
            parsed.extend(parse_key(k)?);
        }
        Ok(Remap {
            context,
            action: action.to_owned(),
            keys: parsed,
        })
    }
}

fn did_you_mean(word: &str, names: &[String]) -> String {
    crate::app::text::did_you_mean(word, names.iter().map(String::as_str))
        .map_or(String::new(), |s| format!(" (did you mean `{s}`?)"))
}

/// Puts the config file's remappings over the keymap. Only before the keymap is
/// first used (the workbench does it before it starts); later it is an error.
pub fn remap(remaps: Vec<Remap>) -> Result<(), String> {
    if ALL.get().is_some() {
        return Err("the keymap is in use already: remappings apply at start".into());
    }
    REMAPS
        .set(remaps)
        .map_err(|_| "the keymap was remapped already".to_owned())
}

/// An action as the config file names it: `find`, `focus-rules`, `sort-by-rule-false`.
pub fn action_name(action: &Action) -> String {
    kebab(&format!("{action:?}"))
}

/// A context as the config file names it: `global`, `page`, `matrix`, `rule-form`.
pub fn context_name(context: Context) -> String {
    match context {
        Context::Pane(p) => kebab(&format!("{p:?}")),
        Context::Dialog(d) => kebab(&format!("{d:?}")),
        other => kebab(&format!("{other:?}")),
    }
}

/// `FindNext(true)` → `find-next-true`.
fn kebab(debug: &str) -> String {
    let mut out = String::new();
    for c in debug.chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// Reads a key as a config file writes it: a character (an upper-case one with or
/// without Shift, as terminals send it), `Space`, `Enter`, `Esc`, `Tab`, `Shift-Tab`,
/// `Backspace`, `Delete`, `Up`, `Down`, `Left`, `Right`, `PgUp`, `PgDn`, `Home`,
/// `End`, `F1`–`F12`, with `Ctrl-` or `Alt-` before.
pub fn parse_key(text: &str) -> Result<Vec<(KeyCode, KeyModifiers)>, String> {
    let mut mods = KeyModifiers::NONE;
    let mut rest = text.trim();
    loop {
        let lower = rest.to_ascii_lowercase();
        if rest.chars().count() > 2 && (lower.starts_with("ctrl-") || lower.starts_with("ctrl+")) {
            mods |= KeyModifiers::CONTROL;
            rest = &rest[5..];
        } else if rest.chars().count() > 2
            && (lower.starts_with("alt-") || lower.starts_with("alt+"))
        {
            mods |= KeyModifiers::ALT;
            rest = &rest[4..];
        } else {
            break;
        }
    }
    let mut chars = rest.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        let c = if mods.contains(KeyModifiers::CONTROL) {
            c.to_ascii_lowercase()
        } else {
            c
        };
        return Ok(if c.is_uppercase() {
            vec![(KeyCode::Char(c), mods | SHIFT), (KeyCode::Char(c), mods)]
        } else {
            vec![(KeyCode::Char(c), mods)]
        });
    }
    let code = match rest.to_ascii_lowercase().as_str() {
        "space" => KeyCode::Char(' '),
        "enter" | "return" => KeyCode::Enter,
        "esc" | "escape" => KeyCode::Esc,
        "tab" => KeyCode::Tab,
        "shift-tab" | "backtab" => return Ok(vec![(KeyCode::BackTab, mods | SHIFT)]),
        "backspace" => KeyCode::Backspace,
        "delete" | "del" => KeyCode::Delete,
        "up" => KeyCode::Up,
        "down" => KeyCode::Down,
        "left" => KeyCode::Left,
        "right" => KeyCode::Right,
        "pgup" | "pageup" => KeyCode::PageUp,
        "pgdn" | "pagedown" => KeyCode::PageDown,
        "home" => KeyCode::Home,
        "end" => KeyCode::End,
        f if f.starts_with('f') && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) => {
            KeyCode::F(f[1..].parse().expect("checked"))
        }
        _ => {
            return Err(format!(
                "`{text}` is not a key (a character, Space, Enter, Esc, Tab, Shift-Tab, Backspace, Delete, Up, Down, Left, Right, PgUp, PgDn, Home, End or F1–F12, with Ctrl- or Alt- before)"
            ));
        }
    };
    Ok(vec![(code, mods)])
}

/// The keys of a binding as a config file writes them (`["Ctrl-P", ":"]`).
fn config_keys(b: &Binding) -> String {
    let mut names: Vec<String> = Vec::new();
    for &(code, mods) in b.keys {
        let base = match code {
            KeyCode::Char(' ') => "Space".to_owned(),
            KeyCode::Char('"') => "\\\"".to_owned(),
            KeyCode::Char('\\') => "\\\\".to_owned(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::BackTab => "Shift-Tab".to_owned(),
            KeyCode::PageUp => "PgUp".to_owned(),
            KeyCode::PageDown => "PgDn".to_owned(),
            other => format!("{other:?}"),
        };
        let mut name = String::new();
        if mods.contains(KeyModifiers::CONTROL) {
            name.push_str("Ctrl-");
        }
        if mods.contains(KeyModifiers::ALT) {
            name.push_str("Alt-");
        }
        name.push_str(&base);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

/// The `[keys]` part of the default config file: every binding, commented out, as
/// `context.action = [keys]` with what it does.
pub fn config_lines() -> String {
    let mut out = String::new();
    for b in build() {
        out.push_str(&format!(
            "# {}.{} = {}   # {}\n",
            context_name(b.context),
            action_name(&b.action),
            config_keys(&b),
            b.help
        ));
    }
    out
}

/// The SQL dialects as help says them: `sqlite, duckdb, postgres or spark`.
fn dialects() -> String {
    let names: Vec<&str> = crate::app::types::Dialect::ALL
        .iter()
        .map(|d| d.name())
        .collect();
    crate::app::text::one_of(&names)
}

fn build() -> Vec<Binding> {
    use Action as A;
    use Context as C;
    use KeyCode as K;
    vec![
        bind!(
            C::Global,
            [(K::Char('?'), NONE), (K::F(1), NONE)],
            A::Help,
            "help (this screen)"
        ),
        bind!(
            C::Global,
            [(K::Char(':'), NONE), (K::Char('p'), CTRL)],
            A::Palette,
            "command palette"
        ),
        bind!(
            C::Global,
            [(K::Char('q'), NONE)],
            A::Quit,
            "quit (asks when something is unsaved)"
        ),
        bind!(
            C::Global,
            [(K::Char('c'), CTRL)],
            A::ForceQuit,
            "quit now (valid edits are saved)"
        ),
        bind!(C::Global, [(K::Esc, NONE)], A::Back, "close / leave / back"),
        bind!(
            C::Global,
            [(K::Up, NONE), (K::Char('k'), NONE)],
            A::Up,
            "move up"
        ),
        bind!(
            C::Global,
            [(K::Down, NONE), (K::Char('j'), NONE)],
            A::Down,
            "move down"
        ),
        bind!(
            C::Global,
            [(K::Left, NONE), (K::Char('h'), NONE)],
            A::Left,
            "move left / decrease"
        ),
        bind!(
            C::Global,
            [(K::Right, NONE), (K::Char('l'), NONE)],
            A::Right,
            "move right / increase"
        ),
        bind!(C::Global, [(K::PageUp, NONE)], A::PageUp, "page up"),
        bind!(C::Global, [(K::PageDown, NONE)], A::PageDown, "page down"),
        bind!(
            C::Global,
            [(K::Home, NONE), (K::Char('g'), NONE)],
            A::Home,
            "first"
        ),
        bind!(
            C::Global,
            [(K::End, NONE), (K::Char('G'), SHIFT), (K::Char('G'), NONE)],
            A::End,
            "last"
        ),
        bind!(C::Global, [(K::Enter, NONE)], A::Enter, "open / choose"),
        bind!(
            C::Picker,
            [(K::Char('/'), NONE)],
            A::Find,
            "find a page (id, name): the best match is selected; n / N the next / previous"
        ),
        bind!(
            C::Picker,
            [(K::Char('\\'), NONE)],
            A::Filter,
            "filter pages"
        ),
        bind!(
            C::Picker,
            [(K::Char('n'), NONE)],
            A::FindNext(true),
            "next match of the last find"
        ),
        bind!(
            C::Picker,
            [(K::Char('N'), SHIFT), (K::Char('N'), NONE)],
            A::FindNext(false),
            "previous match"
        ),
        bind!(C::Page, [(K::Tab, NONE)], A::FocusNext, "next pane"),
        bind!(
            C::Page,
            [(K::BackTab, SHIFT), (K::BackTab, NONE)],
            A::FocusPrev,
            "previous pane"
        ),
        bind!(
            C::Page,
            [(K::Char('1'), NONE)],
            A::Focus(PaneId::Sources),
            "focus Sources"
        ),
        bind!(
            C::Page,
            [(K::Char('2'), NONE)],
            A::Focus(PaneId::Rules),
            "focus Rules"
        ),
        bind!(
            C::Page,
            [(K::Char('3'), NONE)],
            A::Focus(PaneId::Matrix),
            "focus Matrix"
        ),
        bind!(
            C::Page,
            [(K::Char('4'), NONE)],
            A::Focus(PaneId::Editor),
            "focus Rule editor"
        ),
        bind!(
            C::Page,
            [(K::Char('5'), NONE)],
            A::Focus(PaneId::Explain),
            "focus Explanation"
        ),
        bind!(
            C::Page,
            [(K::Char('6'), NONE)],
            A::Focus(PaneId::Policy),
            "focus Policy"
        ),
        bind!(
            C::Page,
            [(K::Char('7'), NONE)],
            A::Focus(PaneId::Tests),
            "focus Tests"
        ),
        bind!(
            C::Page,
            [(K::Char('8'), NONE)],
            A::Focus(PaneId::Overrides),
            "focus Overrides"
        ),
        bind!(
            C::Page,
            [(K::Char('9'), NONE)],
            A::Focus(PaneId::Dataset),
            "focus Dataset"
        ),
        bind!(
            C::Page,
            [(K::Char('P'), SHIFT), (K::Char('P'), NONE)],
            A::Pages,
            "switch page: back to the page picker"
        ),
        bind!(
            C::Page,
            [(K::Char('y'), NONE)],
            A::Copy,
            "copy to the clipboard (OSC 52): the cell's explanation (Matrix, Explanation) or the rule's JSON (Rules, Editor)"
        ),
        bind!(
            C::Page,
            [(K::Char('z'), NONE)],
            A::Zoom,
            "zoom: the focused pane takes the whole screen (and back)"
        ),
        bind!(
            C::Page,
            [(K::Char('H'), SHIFT), (K::Char('H'), NONE)],
            A::History,
            "history: go to a revision, compare the matrix with it, restore from it"
        ),
        bind!(
            C::Page,
            [(K::Char('u'), NONE)],
            A::UndoChange,
            "undo the page's last change (a rule, the policies, an override, assertions, a cell…); again: the one before (each step a new revision)"
        ),
        bind!(
            C::Page,
            [(K::Char('r'), CTRL)],
            A::RedoChange,
            "redo what u undid"
        ),
        bind!(
            C::Page,
            [(K::Char('/'), NONE)],
            A::Find,
            "find in the focused pane (Matrix: targets, then rules; lists: their rows): the best match is selected as you type"
        ),
        bind!(
            C::Page,
            [(K::Char('n'), NONE)],
            A::FindNext(true),
            "next match of the last find (wraps)"
        ),
        bind!(
            C::Page,
            [(K::Char('N'), SHIFT), (K::Char('N'), NONE)],
            A::FindNext(false),
            "previous match"
        ),
        bind!(
            C::Pane(PaneId::Rules),
            [(K::Char('\\'), NONE)],
            A::Filter,
            "filter rules (name, category, fields read; every word must match), best first"
        ),
        bind!(
            C::Pane(PaneId::Rules),
            [(K::Char('a'), NONE)],
            A::AddRule,
            "write a new rule in the editor: added to the page once its text is valid (Esc before that drops it)"
        ),
        bind!(
            C::Pane(PaneId::Rules),
            [(K::Char('d'), NONE)],
            A::DeleteRule,
            "delete the rule (asks)"
        ),
        bind!(
            C::Pane(PaneId::Rules),
            [(K::Char('e'), NONE)],
            A::EditRule,
            "edit the rule's logic"
        ),
        bind!(
            C::Pane(PaneId::Rules),
            [(K::Char('m'), NONE)],
            A::EditRuleMeta,
            "edit name, required, weight, category, where it applies"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('o'), NONE)],
            A::ToggleOverride,
            "set or clear an override for (selection, target); clearing asks"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('O'), SHIFT), (K::Char('O'), NONE)],
            A::ForceIncompatible,
            "force (selection, target) incompatible at once, with a note"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('e'), NONE)],
            A::EditRule,
            "edit the rule of this row"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('x'), NONE)],
            A::StopComparing,
            "stop comparing with a revision (H, c compares)"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('c'), NONE)],
            A::Collapse,
            "fold the rule's category into one row (✓ all pass, ✗n failing) and back"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('g'), NONE)],
            A::Top,
            "first row (Home: first target)"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('G'), SHIFT), (K::Char('G'), NONE)],
            A::Bottom,
            "last row (End: last target)"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('t'), NONE)],
            A::Transpose,
            "transpose: targets as rows (verdict, score, a glyph per rule) and back"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('\\'), NONE)],
            A::Filter,
            "filter targets by label, key or summary fields (Esc clears)"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('f'), NONE)],
            A::CycleShow,
            "show all targets → only those not fully compatible → only those that moved"
        ),
        bind!(
            C::Pane(PaneId::Sources),
            [(K::Char('\\'), NONE)],
            A::Filter,
            "filter sources by label, key or summary fields (Esc clears)"
        ),
        bind!(
            C::Pane(PaneId::Sources),
            [(K::Char('s'), NONE)],
            A::CycleSort,
            "sort sources by selection verdict, worst first (and back)"
        ),
        bind!(
            C::Pane(PaneId::Tests),
            [(K::Char('r'), NONE)],
            A::RerunTests,
            "re-run the tests (the assertions) now"
        ),
        bind!(
            C::Global,
            [(K::Char('S'), SHIFT), (K::Char('S'), NONE)],
            A::SqlPage,
            // Built once with the list: the dialects named from their enum.
            Box::leak(
                format!(
                    "copy/export this page as SQL (dialect {}; as `rulebench sql --all`)",
                    dialects()
                )
                .into_boxed_str()
            )
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('E'), SHIFT), (K::Char('E'), NONE)],
            A::ExportMatrix,
            "export the view (the targets shown, in their order; the rules not folded) to a file: .csv .tsv .jsonl .parquet a row per target (as `rulebench matrix --long`), .md .json or a table the grid"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('Y'), SHIFT), (K::Char('Y'), NONE)],
            A::CopyView,
            "copy the view as TSV rows (a row per target) to the clipboard: pastes into a spreadsheet as cells"
        ),
        bind!(
            C::Pane(PaneId::Tests),
            [(K::Char('c'), NONE)],
            A::ToggleCoverage,
            "coverage: the conditions the assertions leave uncovered and the mutants no assertion notices, each with a pair that shows it (and back)"
        ),
        bind!(
            C::Pane(PaneId::Tests),
            [(K::Char('f'), NONE)],
            A::CycleShow,
            "only the failing assertions (and back); failures are always listed first"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('s'), NONE)],
            A::CycleSort,
            "sort targets: page order → verdict (worst first) → score (lowest first) → label"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('['), NONE)],
            A::SortByRule(false),
            "sort the targets by the rule under the cursor: failing first"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char(']'), NONE)],
            A::SortByRule(true),
            "sort the targets by the rule under the cursor: not applying, then passing, first"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('R'), SHIFT), (K::Char('R'), NONE)],
            A::ReverseSort,
            "reverse the targets' order (any sort, page order too)"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('F'), SHIFT), (K::Char('F'), NONE)],
            A::Frequency,
            "frequency view of the targets shown: per rule pass / fail / n/a, per summary field value targets at 2 / 1 / 0; Enter shows only those (Esc: all again)"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('*'), SHIFT), (K::Char('*'), NONE)],
            A::NextMoved(true),
            "next cell marked * (moved since the page was opened, or since the revision compared with)"
        ),
        bind!(
            C::Pane(PaneId::Matrix),
            [(K::Char('#'), SHIFT), (K::Char('#'), NONE)],
            A::NextMoved(false),
            "previous cell marked *"
        ),
        bind!(
            C::Pane(PaneId::Overrides),
            [(K::Char('d'), NONE)],
            A::ToggleOverride,
            "clear the override and its note (asks)"
        ),
        bind!(
            C::Pane(PaneId::Dataset),
            [(K::Char(' '), NONE)],
            A::Cycle,
            "browse source / target rows"
        ),
        bind!(
            C::Pane(PaneId::Dataset),
            [(K::Char('\\'), NONE)],
            A::Filter,
            "filter rows (any value; Esc clears)"
        ),
        bind!(
            C::Pane(PaneId::Dataset),
            [(K::Char('s'), NONE)],
            A::ToggleSchema,
            "show / hide the schema (fields, type, coverage)"
        ),
        bind!(
            C::Pane(PaneId::Dataset),
            [(K::Enter, NONE)],
            A::Enter,
            "edit a cell of the row (field=value, a new revision)"
        ),
        bind!(
            C::Pane(PaneId::Tests),
            [(K::Char('p'), NONE)],
            A::Pin,
            "pin the selection's verdicts as assertions"
        ),
        bind!(
            C::Pane(PaneId::Tests),
            [(K::Char('a'), NONE)],
            A::AddAssertion,
            "add an assertion (JSON)"
        ),
        bind!(
            C::Pane(PaneId::Tests),
            [(K::Char('e'), NONE)],
            A::EditAssertion,
            "edit the assertion (JSON)"
        ),
        bind!(
            C::Pane(PaneId::Tests),
            [(K::Char('d'), NONE)],
            A::DeleteAssertion,
            "remove the assertion (asks)"
        ),
        bind!(
            C::Pane(PaneId::Explain),
            [(K::Char('w'), NONE)],
            A::WhyNot,
            "what would change it: the fewest rule outcomes and the threshold values that move the target to each other verdict (and back)"
        ),
        bind!(
            C::Pane(PaneId::Policy),
            [(K::Char('+'), NONE), (K::Char('='), NONE)],
            A::Increase,
            "raise by 0.05"
        ),
        bind!(
            C::Pane(PaneId::Policy),
            [(K::Char('-'), NONE)],
            A::Decrease,
            "lower by 0.05"
        ),
        bind!(
            C::Pane(PaneId::Policy),
            [(K::Char(' '), NONE)],
            A::Cycle,
            "next mode"
        ),
        bind!(
            C::Pane(PaneId::Editor),
            [(K::Char('e'), NONE)],
            A::EditRule,
            "start editing"
        ),
        bind!(
            C::Pane(PaneId::Editor),
            [(K::F(2), NONE)],
            A::ToggleInfix,
            "switch between JSONLogic and infix"
        ),
        bind!(
            C::Editing,
            [(K::Esc, NONE)],
            A::Back,
            "leave the editor (a valid edit is saved; invalid text: asks before discarding)"
        ),
        bind!(C::Editing, [(K::Char('z'), CTRL)], A::Undo, "undo"),
        bind!(
            C::Editing,
            [(K::Char('r'), CTRL)],
            A::Redo,
            "redo (what undo took back)"
        ),
        bind!(
            C::Editing,
            [(K::F(2), NONE)],
            A::ToggleInfix,
            "switch between JSONLogic and infix"
        ),
        bind!(C::Editing, [(K::Char('s'), CTRL)], A::SaveNow, "save now"),
        bind!(
            C::Dialog(Dialog::Help),
            [(K::Up, NONE), (K::Char('k'), NONE)],
            A::Up,
            "scroll up"
        ),
        bind!(
            C::Dialog(Dialog::Help),
            [(K::Down, NONE), (K::Char('j'), NONE)],
            A::Down,
            "scroll down"
        ),
        bind!(
            C::Dialog(Dialog::Help),
            [(K::PageUp, NONE)],
            A::PageUp,
            "10 up"
        ),
        bind!(
            C::Dialog(Dialog::Help),
            [(K::PageDown, NONE)],
            A::PageDown,
            "10 down"
        ),
        bind!(
            C::Dialog(Dialog::Help),
            [(K::Home, NONE), (K::Char('g'), NONE)],
            A::Home,
            "top"
        ),
        bind!(
            C::Dialog(Dialog::Help),
            [(K::End, NONE), (K::Char('G'), NONE)],
            A::End,
            "bottom"
        ),
        bind!(
            C::Dialog(Dialog::Help),
            [(K::Char('/'), NONE)],
            A::Find,
            "search help: type words (keys, what they do, where); Esc clears"
        ),
        bind!(
            C::Dialog(Dialog::Help),
            [(K::Esc, NONE), (K::Char('?'), NONE), (K::Char('q'), NONE)],
            A::Back,
            "close (so does any other key)"
        ),
        bind!(
            C::Dialog(Dialog::Palette),
            [(K::Up, NONE)],
            A::Up,
            "previous entry"
        ),
        bind!(
            C::Dialog(Dialog::Palette),
            [(K::Down, NONE)],
            A::Down,
            "next entry"
        ),
        bind!(
            C::Dialog(Dialog::Palette),
            [(K::Enter, NONE)],
            A::Enter,
            "run the entry (in the pane it belongs to)"
        ),
        bind!(
            C::Dialog(Dialog::Palette),
            [(K::Backspace, NONE)],
            A::DeleteBack,
            "delete a character of the filter"
        ),
        bind!(
            C::Dialog(Dialog::Palette),
            [(K::Esc, NONE)],
            A::Back,
            "close"
        ),
        bind!(
            C::Dialog(Dialog::Confirm),
            [
                (K::Char('y'), NONE),
                (K::Char('Y'), SHIFT),
                (K::Char('Y'), NONE)
            ],
            A::Answer(true),
            "yes"
        ),
        bind!(
            C::Dialog(Dialog::Confirm),
            [
                (K::Char('n'), NONE),
                (K::Char('N'), SHIFT),
                (K::Char('N'), NONE),
                (K::Char('q'), NONE),
                (K::Esc, NONE)
            ],
            A::Answer(false),
            "no"
        ),
        bind!(
            C::Dialog(Dialog::Conflict),
            [(K::Char('m'), NONE)],
            A::Resolve(crate::app::Choice::KeepMine),
            "keep mine: saved over theirs (seen now)"
        ),
        bind!(
            C::Dialog(Dialog::Conflict),
            [(K::Char('t'), NONE)],
            A::Resolve(crate::app::Choice::TakeTheirs),
            "take theirs: your edit is dropped"
        ),
        bind!(
            C::Dialog(Dialog::Conflict),
            [(K::Char('e'), NONE)],
            A::Resolve(crate::app::Choice::EditMerge),
            "edit a merge: both between conflict markers, saved once valid"
        ),
        bind!(
            C::Dialog(Dialog::Conflict),
            [(K::Down, NONE), (K::Char('j'), NONE)],
            A::Down,
            "scroll"
        ),
        bind!(
            C::Dialog(Dialog::Conflict),
            [(K::Up, NONE), (K::Char('k'), NONE)],
            A::Up,
            "scroll"
        ),
        bind!(
            C::Dialog(Dialog::Conflict),
            [(K::Esc, NONE)],
            A::Back,
            "decide later (nothing is saved over theirs meanwhile)"
        ),
        bind!(
            C::Dialog(Dialog::Prompt),
            [(K::Enter, NONE)],
            A::Enter,
            "done (searches and filters apply as you type)"
        ),
        bind!(
            C::Dialog(Dialog::Prompt),
            [(K::Esc, NONE)],
            A::Back,
            "cancel (a search or filter is cleared)"
        ),
        bind!(
            C::Dialog(Dialog::RuleForm),
            [(K::Tab, NONE), (K::Down, NONE)],
            A::FocusNext,
            "next field"
        ),
        bind!(
            C::Dialog(Dialog::RuleForm),
            [(K::BackTab, SHIFT), (K::BackTab, NONE), (K::Up, NONE)],
            A::FocusPrev,
            "previous field"
        ),
        bind!(
            C::Dialog(Dialog::RuleForm),
            [(K::Char(' '), NONE)],
            A::Cycle,
            "required: yes / no (on that field)"
        ),
        bind!(
            C::Dialog(Dialog::RuleForm),
            [(K::Backspace, NONE)],
            A::DeleteBack,
            "delete a character"
        ),
        bind!(
            C::Dialog(Dialog::RuleForm),
            [(K::Enter, NONE)],
            A::Enter,
            "save"
        ),
        bind!(
            C::Dialog(Dialog::RuleForm),
            [(K::Esc, NONE)],
            A::Back,
            "cancel"
        ),
        bind!(
            C::Dialog(Dialog::Json),
            [(K::Char('s'), CTRL)],
            A::SaveNow,
            "save (an invalid text keeps the dialog open, the problem shown under it)"
        ),
        bind!(
            C::Dialog(Dialog::Json),
            [(K::Esc, NONE)],
            A::Back,
            "cancel (asks before dropping edited text)"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::Up, NONE), (K::Char('k'), NONE)],
            A::Up,
            "previous revision (or item)"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::Down, NONE), (K::Char('j'), NONE)],
            A::Down,
            "next revision (or item)"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::PageUp, NONE)],
            A::PageUp,
            "10 up"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::PageDown, NONE)],
            A::PageDown,
            "10 down"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::Home, NONE), (K::Char('g'), NONE)],
            A::Home,
            "newest revision (first item)"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::End, NONE), (K::Char('G'), NONE)],
            A::End,
            "oldest revision (last item)"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::Enter, NONE)],
            A::Enter,
            "open the revision: what differs from now, what can be restored; on an item: restore it (a new revision)"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::Char('c'), NONE)],
            A::CompareRevision,
            "compare the matrix with the revision (cells and verdicts that moved are marked *)"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::Char('x'), NONE)],
            A::StopComparing,
            "stop comparing (back to changes since save)"
        ),
        bind!(
            C::Dialog(Dialog::History),
            [(K::Esc, NONE)],
            A::Back,
            "back to the revisions; close"
        ),
        bind!(
            C::Dialog(Dialog::Frequency),
            [(K::Up, NONE), (K::Char('k'), NONE)],
            A::Up,
            "previous row"
        ),
        bind!(
            C::Dialog(Dialog::Frequency),
            [(K::Down, NONE), (K::Char('j'), NONE)],
            A::Down,
            "next row"
        ),
        bind!(
            C::Dialog(Dialog::Frequency),
            [(K::PageUp, NONE)],
            A::PageUp,
            "10 up"
        ),
        bind!(
            C::Dialog(Dialog::Frequency),
            [(K::PageDown, NONE)],
            A::PageDown,
            "10 down"
        ),
        bind!(
            C::Dialog(Dialog::Frequency),
            [(K::Home, NONE), (K::Char('g'), NONE)],
            A::Home,
            "first row"
        ),
        bind!(
            C::Dialog(Dialog::Frequency),
            [(K::End, NONE), (K::Char('G'), NONE)],
            A::End,
            "last row"
        ),
        bind!(
            C::Dialog(Dialog::Frequency),
            [(K::Enter, NONE)],
            A::Enter,
            "show only the row's targets in the matrix (a rule: those failing it; a value: those with it)"
        ),
        bind!(
            C::Dialog(Dialog::Frequency),
            [(K::Esc, NONE), (K::Char('q'), NONE)],
            A::Back,
            "close"
        ),
    ]
}

fn matches(key: &KeyEvent, code: KeyCode, mods: KeyModifiers) -> bool {
    let relevant = key.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
    match code {
        // Shifted characters arrive with or without SHIFT depending on the terminal.
        KeyCode::Char(_) | KeyCode::BackTab => {
            key.code == code && relevant == (mods & (KeyModifiers::CONTROL | KeyModifiers::ALT))
        }
        _ => key.code == code && key.modifiers == mods,
    }
}

/// The action of a key in the given contexts (most specific first).
pub fn lookup(key: &KeyEvent, contexts: &[Context]) -> Option<Action> {
    let all = bindings();
    contexts.iter().find_map(|ctx| {
        all.iter()
            .filter(|b| b.context == *ctx)
            .find(|b| b.keys.iter().any(|&(code, mods)| matches(key, code, mods)))
            .map(|b| b.action.clone())
    })
}

/// How a key reads in help: `Ctrl-P`, `Tab`, `?`.
pub fn key_name(code: KeyCode, mods: KeyModifiers) -> String {
    let base = match code {
        KeyCode::Char(' ') => "Space".to_owned(),
        KeyCode::Char(c) => c.to_string(),
        KeyCode::F(n) => format!("F{n}"),
        KeyCode::BackTab => "Shift-Tab".to_owned(),
        KeyCode::PageUp => "PgUp".to_owned(),
        KeyCode::PageDown => "PgDn".to_owned(),
        KeyCode::Up => "↑".to_owned(),
        KeyCode::Down => "↓".to_owned(),
        KeyCode::Left => "←".to_owned(),
        KeyCode::Right => "→".to_owned(),
        other => format!("{other:?}"),
    };
    if mods.contains(KeyModifiers::CONTROL) {
        format!("Ctrl-{}", base.to_uppercase())
    } else {
        base
    }
}

/// The keys bound to `action` in `context`, as help shows them (remapped or not); empty
/// when none is.
pub fn keys_for(context: Context, action: &Action) -> String {
    bindings()
        .iter()
        .find(|b| b.context == context && b.action == *action)
        .map(keys_label)
        .unwrap_or_default()
}

/// The keys of a binding as help shows them (`↑ k`).
pub fn keys_label(b: &Binding) -> String {
    let mut names: Vec<String> = b.keys.iter().map(|&(c, m)| key_name(c, m)).collect();
    names.dedup();
    names.join(" ")
}

/// Help text: every binding grouped by context.
pub fn help_lines() -> Vec<(String, Vec<(String, &'static str)>)> {
    let all = bindings();
    let mut groups: Vec<(Context, Vec<(String, &'static str)>)> = Vec::new();
    for b in all {
        let entry = (keys_label(b), b.help);
        match groups.iter_mut().find(|(c, _)| *c == b.context) {
            Some((_, v)) => v.push(entry),
            None => groups.push((b.context, vec![entry])),
        }
    }
    groups
        .into_iter()
        .map(|(c, v)| (c.title().to_owned(), v))
        .collect()
}

/// [`help_lines`] with the groups of the focused pane (and, in the editor, of editing)
/// first: `?` shows the keys that apply where you are before the rest.
pub fn help_lines_for(
    focus: Option<super::action::PaneId>,
) -> Vec<(String, Vec<(String, &'static str)>)> {
    let mut lines = help_lines();
    if let Some(pane) = focus {
        let first: Vec<String> = [Context::Pane(pane), Context::Editing]
            .iter()
            .filter(|c| **c != Context::Editing || pane == super::action::PaneId::Editor)
            .map(|c| c.title().to_owned())
            .collect();
        lines
            .sort_by_key(|(title, _)| first.iter().position(|f| f == title).unwrap_or(first.len()));
    }
    lines
}

/// [`help_lines_for`] narrowed to the bindings with every word of `query` in their
/// keys, text or place (case-insensitive); groups left empty go.
pub fn help_lines_matching(
    focus: Option<super::action::PaneId>,
    query: &str,
) -> Vec<(String, Vec<(String, &'static str)>)> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    help_lines_for(focus)
        .into_iter()
        .filter_map(|(title, entries)| {
            let kept: Vec<(String, &'static str)> = entries
                .into_iter()
                .filter(|(keys, help)| {
                    let hay = format!("{title} {keys} {help}").to_lowercase();
                    words.iter().all(|w| hay.contains(w.as_str()))
                })
                .collect();
            (!kept.is_empty()).then_some((title, kept))
        })
        .collect()
}

/// The keymap as a Markdown table (the README's copy is tested against it).
pub fn markdown() -> String {
    let mut out = String::from("| where | keys | does |\n|---|---|---|\n");
    for (title, entries) in help_lines() {
        for (keys, help) in entries {
            let keys = keys.replace('|', "\\|");
            out.push_str(&format!("| {title} | `{keys}` | {help} |\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pane_can_be_focused_by_a_key() {
        for pane in PaneId::ALL {
            assert!(
                bindings().iter().any(|b| b.action == Action::Focus(pane)),
                "no key focuses {pane:?}"
            );
        }
    }

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn specific_contexts_win() {
        let ctx = [Context::Pane(PaneId::Rules), Context::Page, Context::Global];
        assert_eq!(
            lookup(&key(KeyCode::Char('d'), NONE), &ctx),
            Some(Action::DeleteRule)
        );
        assert_eq!(
            lookup(&key(KeyCode::Tab, NONE), &ctx),
            Some(Action::FocusNext)
        );
        assert_eq!(
            lookup(&key(KeyCode::Char('p'), CTRL), &ctx),
            Some(Action::Palette)
        );
        assert_eq!(lookup(&key(KeyCode::Char('x'), NONE), &ctx), None);
        let matrix = [
            Context::Pane(PaneId::Matrix),
            Context::Page,
            Context::Global,
        ];
        assert_eq!(lookup(&key(KeyCode::Char('d'), NONE), &matrix), None);
    }

    #[test]
    fn no_key_is_bound_twice_in_one_context() {
        let all = bindings();
        for (i, a) in all.iter().enumerate() {
            for b in all.iter().skip(i + 1).filter(|b| b.context == a.context) {
                for k in a.keys {
                    assert!(
                        !b.keys.contains(k),
                        "{:?} bound twice in {:?}",
                        k,
                        a.context
                    );
                }
            }
        }
    }

    #[test]
    fn help_lists_every_binding() {
        let lines: usize = help_lines().iter().map(|(_, v)| v.len()).sum();
        assert_eq!(lines, bindings().len());
    }
}
