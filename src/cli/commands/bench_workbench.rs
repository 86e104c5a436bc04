//! `rulebench bench --workbench FILE`: drives the real workbench (keys → workspace →
//! panes → render on a test backend, background work on its worker) on a page file and
//! reports the whole frame of each kind of edit, how long the background results take
//! to arrive after the last key, and the peak memory.

use std::path::Path;
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::App;
use crate::cli::io::{Failure, usage};
use crate::tui::theme::Theme;
use crate::tui::ui::Ui;
use crate::tui::view;

/// Frame times of one kind of edit.
struct Frames {
    name: &'static str,
    times: Vec<Duration>,
}

impl Frames {
    fn line(&self) -> String {
        let mut t = self.times.clone();
        t.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        match (t.first(), t.last()) {
            (Some(_), Some(&max)) => format!(
                "  {:<34} median {:>7.2} ms   p99 {:>7.2} ms   max {:>7.2} ms   ({} frames)\n",
                self.name,
                ms(t[t.len() / 2]),
                ms(t[(t.len() * 99 / 100).min(t.len() - 1)]),
                ms(max),
                t.len()
            ),
            _ => format!("  {:<34} (no frames)\n", self.name),
        }
    }
}

struct Driver {
    ui: Ui,
    terminal: Terminal<TestBackend>,
}

impl Driver {
    /// One key, then one frame: the time of both.
    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> Duration {
        let started = Instant::now();
        self.ui.handle_key(KeyEvent::new(code, modifiers));
        self.ui.tick(Instant::now());
        let ui = &self.ui;
        self.terminal
            .draw(|f| view::render(f, ui))
            .expect("the test backend draws");
        started.elapsed()
    }

    /// The keys of a part did what the part measures: no dialog left open (every key
    /// after it would go to the dialog and measure nothing), and `ok` of the page.
    fn check(
        &self,
        part: &str,
        ok: impl Fn(&crate::tui::ui::PageUi) -> bool,
    ) -> Result<(), crate::app::AppError> {
        let page_ok = self.ui.page().is_some_and(ok);
        if self.ui.modal.is_some() || !page_ok {
            return Err(crate::app::AppError::Usage(format!(
                "bench --workbench: the keys of {part} did not do what they measure (a dialog is open, or the page is not as expected): the figures would be wrong"
            )));
        }
        Ok(())
    }

    fn press(&mut self, code: KeyCode) -> Duration {
        self.key(code, KeyModifiers::NONE)
    }

    fn chars(&mut self, text: &str, into: &mut Vec<Duration>) {
        for c in text.chars() {
            into.push(self.press(KeyCode::Char(c)));
        }
    }
}

/// Peak resident memory of this process (Linux), in MB.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Runs the benchmark on a page file; `rounds` of each kind of edit.
pub fn run(file: &Path, rounds: usize) -> Result<String, Failure> {
    let text =
        std::fs::read_to_string(file).map_err(|e| usage(format!("{}: {e}", file.display())))?;
    /// The page's id alone (the rest is skipped, not built).
    #[derive(serde::Deserialize)]
    struct Id {
        id: String,
    }
    let page: Id =
        serde_json::from_str(&text).map_err(|e| usage(format!("{}: {e}", file.display())))?;
    drop(text);
    let dir = std::env::temp_dir().join(format!("rulebench-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| usage(format!("{}: {e}", dir.display())))?;
    let db = dir.join("bench.db");
    let result = (|| {
        // Imported by a child process, so the peak memory below is the workbench's.
        let status = std::process::Command::new(
            std::env::current_exe()
                .map_err(|e| crate::app::AppError::Usage(format!("the rulebench binary: {e}")))?,
        )
        .arg("--db")
        .arg(&db)
        .args(["import", "--replace"])
        .arg(file)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| crate::app::AppError::Usage(format!("importing {}: {e}", file.display())))?;
        if !status.success() {
            return Err(crate::app::AppError::Usage(format!(
                "importing {} failed",
                file.display()
            )));
        }
        let app = App::open(&db)?;
        let page = page.id;
        let mut out = format!(
            "rulebench bench --workbench {} ({rounds} rounds)\n",
            file.display()
        );

        let started = Instant::now();
        let ui = Ui::workbench(app, Some(&page), Theme::mono(), None)?;
        let mut d = Driver {
            ui,
            terminal: Terminal::new(TestBackend::new(200, 50)).expect("a test backend"),
        };
        let ui = &d.ui;
        d.terminal
            .draw(|f| view::render(f, ui))
            .expect("the test backend draws");
        let first_frame = started.elapsed();
        d.ui.settle();
        let opened = started.elapsed();
        out.push_str(&format!(
            "  cold open → first frame            {:>7.2} ms (background results after {:.0} ms)\n",
            first_frame.as_secs_f64() * 1e3,
            opened.as_secs_f64() * 1e3
        ));

        // Keystrokes in the rule editor: wrap the first rule in a negation, again and
        // again (half-typed states are invalid; each closing brace changes the logic).
        let mut editor = Frames {
            name: "keystroke in the rule editor",
            times: Vec::new(),
        };
        d.press(KeyCode::Char('2'));
        d.press(KeyCode::Home);
        d.press(KeyCode::Char('e'));
        for _ in 0..rounds {
            // To the start of the text (Alt-< keeps the column; Home then).
            editor
                .times
                .push(d.key(KeyCode::Char('<'), KeyModifiers::ALT));
            editor.times.push(d.press(KeyCode::Home));
            d.chars("{\"!\": ", &mut editor.times);
            editor
                .times
                .push(d.key(KeyCode::Char('>'), KeyModifiers::ALT));
            editor.times.push(d.press(KeyCode::End));
            d.chars("}", &mut editor.times);
        }
        let last_key = Instant::now();
        d.ui.settle();
        let after_editor = last_key.elapsed();
        d.check("the rule editor", |p| !p.editor.is_invalid())?;
        d.press(KeyCode::Esc);

        // Valid keystrokes, each changing the rule's outcomes: a threshold rule
        // (`target.contextWindow >= N`, the second rule of a synthetic page) in infix,
        // a digit typed at its end and taken back (or the last one taken and put back),
        // again and again.
        let mut valid = Frames {
            name: "valid keystroke (moves outcomes)",
            times: Vec::new(),
        };
        let mut moved = 0;
        d.press(KeyCode::Char('2'));
        d.press(KeyCode::Home);
        d.press(KeyCode::Down);
        d.press(KeyCode::Char('e'));
        d.press(KeyCode::F(2));
        d.press(KeyCode::End);
        let passes = |d: &Driver| {
            d.ui.page()
                .and_then(|p| p.ws.eval.columns.get(1).map(|c| c.passes))
        };
        // N × 10 when that moves outcomes, else N / 10 (a threshold above every
        // target's value moves nothing upward).
        let before = passes(&d);
        d.press(KeyCode::Char('0'));
        let up_moves = passes(&d) != before;
        d.press(KeyCode::Backspace);
        let keys = if up_moves {
            [KeyCode::Char('0'), KeyCode::Backspace]
        } else {
            [KeyCode::Backspace, KeyCode::Char('0')]
        };
        for _ in 0..rounds * 20 {
            for code in keys {
                let before = passes(&d);
                valid.times.push(d.press(code));
                if passes(&d) != before {
                    moved += 1;
                }
            }
        }
        let valid_keys = valid.times.len();
        d.ui.settle();
        d.check("the valid keystrokes", |p| !p.editor.is_invalid())?;
        d.press(KeyCode::Esc);

        // Policy steps: the full threshold down and up.
        let mut policy = Frames {
            name: "policy step",
            times: Vec::new(),
        };
        d.press(KeyCode::Char('6'));
        d.press(KeyCode::Home);
        d.press(KeyCode::Down);
        for i in 0..rounds {
            let key = if i % 2 == 0 { '-' } else { '+' };
            policy.times.push(d.press(KeyCode::Char(key)));
        }
        let last_key = Instant::now();
        d.ui.settle();
        let after_policy = last_key.elapsed();
        d.check("the policy steps", |p| {
            p.focus == crate::tui::action::PaneId::Policy
        })?;

        // Source switches.
        let mut sources = Frames {
            name: "source switch",
            times: Vec::new(),
        };
        d.press(KeyCode::Char('1'));
        for i in 0..rounds {
            let key = if i % 2 == 0 {
                KeyCode::Down
            } else {
                KeyCode::Up
            };
            sources.times.push(d.press(key));
        }

        d.check("the source switches", |p| {
            p.focus == crate::tui::action::PaneId::Sources
        })?;

        // Override toggles: `o` sets an override (its note prompt, Enter), `o` again
        // clears it (asked: y). Each toggle is timed with its dialog.
        let mut overrides = Frames {
            name: "override toggle (with its dialog)",
            times: Vec::new(),
        };
        d.press(KeyCode::Char('3'));
        for _ in 0..rounds.max(2) {
            let mut t = d.press(KeyCode::Char('o'));
            for _ in 0..3 {
                match &d.ui.modal {
                    Some(crate::tui::ui::Modal::Prompt { .. }) => t += d.press(KeyCode::Enter),
                    Some(crate::tui::ui::Modal::Confirm { .. }) => t += d.press(KeyCode::Char('y')),
                    _ => break,
                }
            }
            overrides.times.push(t);
        }
        d.ui.settle();
        d.check("the override toggles", |p| {
            p.focus == crate::tui::action::PaneId::Matrix
        })?;

        // Cell edits in the dataset pane: a field the target rows have and the rules
        // read (`latencyMs` on a synthetic page), set low and high in turn so that each
        // edit moves outcomes. A field the rows lack would open the "add the field?"
        // question and time a dialog: that is refused below.
        let mut cells = Frames {
            name: "cell edit (Enter on the prompt)",
            times: Vec::new(),
        };
        d.press(KeyCode::Char('9'));
        for i in 0..rounds.div_ceil(3).max(1) {
            d.press(KeyCode::Enter);
            let mut typing = Vec::new();
            let value = if i % 2 == 0 { 2000 } else { 100 };
            d.chars(&format!("latencyMs={value}"), &mut typing);
            cells.times.push(d.press(KeyCode::Enter));
            d.check("the cell edits", |p| {
                p.ws.page
                    .target
                    .rows
                    .first()
                    .and_then(|r| r.get("latencyMs"))
                    == Some(&serde_json::json!(value))
            })?;
        }
        let last_key = Instant::now();
        d.ui.settle();
        let after_cells = last_key.elapsed();
        d.check("the cell edits", |p| {
            p.focus == crate::tui::action::PaneId::Dataset
        })?;

        for f in [&editor, &valid, &policy, &sources, &overrides, &cells] {
            out.push_str(&f.line());
        }
        out.push_str(&format!(
            "  ({moved} of the {valid_keys} valid keystrokes moved the rule's pass count)\n"
        ));
        out.push_str(&format!(
            "  background results after the last key: editor {:.0} ms, policy {:.0} ms, cell edit {:.0} ms\n",
            after_editor.as_secs_f64() * 1e3,
            after_policy.as_secs_f64() * 1e3,
            after_cells.as_secs_f64() * 1e3,
        ));
        if let Some(mb) = peak_rss_mb() {
            out.push_str(&format!(
                "  peak RSS                           {mb:>7.0} MB\n"
            ));
        }
        Ok::<String, crate::app::AppError>(out)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result.map_err(Failure::from)
}
