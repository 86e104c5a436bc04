//! The terminal workbench. One file per pane; panes talk through actions; the keymap
//! lives in one place and help is generated from it.

pub mod action;
pub mod config;
pub mod conflict;
pub mod dataset_pane;
pub mod editor;
pub mod explain;
pub mod find;
pub mod frequency;
pub mod fuzzy;
pub mod history;
pub mod json_dialog;
pub mod keymap;
pub mod layout;
pub mod matrix;
pub mod modal;
pub mod only;
pub mod overrides;
pub mod palette;
pub mod pane;
pub mod picker;
pub mod policy;
pub mod rule_form;
pub mod rules;
pub mod sources;
pub mod tests_pane;
pub mod theme;
pub mod ui;
pub mod view;
pub mod widgets;

use std::io::{self, Write};
use std::time::Instant;

use ratatui::crossterm::event::{self, DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;

use crate::app::{App, AppError};
use theme::Theme;
use ui::Ui;

/// How the workbench starts.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub page: Option<String>,
    pub mouse: bool,
    pub theme: Theme,
    /// What the status line says first (a config's default page that is not there).
    pub note: Option<String>,
    /// Append per-frame recompute and render times to this file.
    pub profile: Option<std::path::PathBuf>,
    /// The database file (the watcher of linked dataset files opens its own connection).
    pub db: Option<std::path::PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error(transparent)]
    App(#[from] AppError),
    #[error("terminal: {0}")]
    Io(#[from] io::Error),
}

/// The escape sequence that asks the terminal to put `text` on the system clipboard
/// (OSC 52; xterm, kitty, WezTerm, iTerm2, Windows Terminal, and tmux with
/// `set-clipboard on`). Only written when the user presses `y`.
pub fn osc52(text: &str) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(text);
    format!("\x1b]52;c;{b64}\x07")
}

/// Runs the workbench until the user quits. The terminal is restored on return, on
/// panic (ratatui's hook) and on Ctrl-C (a key in raw mode, handled as quit).
pub fn run(app: App, options: Options) -> Result<(), TuiError> {
    let mut ui = Ui::workbench(
        app,
        options.page.as_deref(),
        options.theme,
        options.db.clone(),
    )?;
    // Frame timings show on the status line only when profiling.
    ui.show_timings = options.profile.is_some();
    if let Some(note) = &options.note {
        ui.status.error(note.clone());
    }
    let mut terminal = ratatui::try_init()?;
    if options.mouse {
        execute!(io::stdout(), EnableMouseCapture)?;
    }
    let mut profile = match &options.profile {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        ),
        None => None,
    };
    let mut handled = std::time::Duration::ZERO;
    let result = (|| -> Result<(), TuiError> {
        loop {
            let started = Instant::now();
            terminal.draw(|frame| view::render(frame, &ui))?;
            ui.last_render = started.elapsed();
            ui.last_frame = handled + ui.last_render;
            if let Some(text) = ui.clipboard.take() {
                let mut out = io::stdout();
                out.write_all(osc52(&text).as_bytes())?;
                out.flush()?;
            }
            if let Some(file) = profile.as_mut() {
                let at = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
                for note in std::mem::take(&mut ui.profile_notes) {
                    writeln!(file, "{at} {note}")?;
                }
                if let Some(page) = ui.page() {
                    writeln!(
                        file,
                        "{at} event={} handle_ms={:.3} recompute_ms={:.3} render_ms={:.3} frame_ms={:.3} background={}",
                        if ui.last_event.is_empty() {
                            "idle"
                        } else {
                            &ui.last_event
                        },
                        handled.as_secs_f64() * 1e3,
                        page.ws.last_recompute.as_secs_f64() * 1e3,
                        ui.last_render.as_secs_f64() * 1e3,
                        ui.last_frame.as_secs_f64() * 1e3,
                        if ui.busy() { "busy" } else { "idle" },
                    )?;
                }
            } else {
                ui.profile_notes.clear();
            }
            ui.last_event.clear();
            if ui.quit {
                return Ok(());
            }
            handled = std::time::Duration::ZERO;
            if event::poll(ui.next_deadline(Instant::now()))? {
                let started = Instant::now();
                ui.handle_event(event::read()?);
                // Take every queued event before drawing again.
                while event::poll(std::time::Duration::ZERO)? {
                    ui.handle_event(event::read()?);
                }
                handled = started.elapsed();
            }
            ui.tick(Instant::now());
        }
    })();
    if options.mouse {
        let _ = execute!(io::stdout(), DisableMouseCapture);
    }
    ratatui::restore();
    ui.flush_saves();
    if let Some(note) = &ui.exit_note {
        eprintln!("{note}");
    }
    result
}
