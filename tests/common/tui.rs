//! The workbench on TestBackend, driven by keys: what the TUI tests share.
#![allow(dead_code)]

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rulebench::app::App;
use rulebench::tui::theme::Theme;
use rulebench::tui::ui::Ui;
use rulebench::tui::view;

/// A workbench on a fresh database (seeded with the sample pages), opened on a page.
pub struct Bench {
    pub dir: tempfile::TempDir,
    pub ui: Ui,
}

impl Bench {
    pub fn open(page: &str) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let mut app = App::open(&dir.path().join("tui.db")).unwrap();
        super::with_seed_chat(&mut app);
        let ui = Ui::new(app, Some(page), Theme::mono()).unwrap();
        Bench { dir, ui }
    }

    /// The database file.
    pub fn db(&self) -> std::path::PathBuf {
        self.dir.path().join("tui.db")
    }

    pub fn press(&mut self, code: KeyCode) {
        self.ui.handle_key(KeyEvent::new(code, KeyModifiers::NONE));
    }

    pub fn chars(&mut self, text: &str) {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
    }

    pub fn ctrl(&mut self, c: char) {
        self.ui
            .handle_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    }

    /// The screen at `w` × `h`, as text.
    pub fn screen(&self, w: u16, h: u16) -> String {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| view::render(f, &self.ui)).unwrap();
        t.backend().to_string()
    }
}
