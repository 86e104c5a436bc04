//! The workbench state and its one update path: key → action → (queue) → panes / app.
//! Split by what it does: the shell (screen, panes, the pump), dialogs and prompts,
//! work in the background, conflicts and drafts.

mod background;
mod conflicts;
mod drafts;
mod kept_view;
mod modals;
mod shell;

pub use super::modal::{Modal, PromptFor};
pub use super::pane::{Ctx, Level, Look, Pane, Status};
pub use shell::{PageUi, Screen, Ui};
