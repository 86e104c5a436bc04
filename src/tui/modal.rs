//! The dialogs over the screen (help, palette, confirm, prompt, rule form, history,
//! JSON, conflict) and what a one-line prompt is for. A dialog takes every key while
//! open.

use ratatui_textarea::TextArea;

use super::action::Action;
use crate::app::types::Side;

/// What a one-line prompt is for.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptFor {
    AddRule,
    /// Find in the focused pane (`/`).
    Find,
    FilterRules,
    FilterPages,
    /// The matrix's target filter.
    FilterTargets,
    /// The file to export the matrix to.
    ExportMatrix,
    /// The dialect (and file) to copy or export the page as SQL in.
    SqlPage,
    /// The Sources pane's filter.
    FilterSources,
    /// The note of an override about to be set on a target.
    OverrideNote {
        target: usize,
        value: bool,
    },
    /// A typed policy value for the policy pane's field.
    PolicyValue {
        field: usize,
    },
    /// The dataset pane's row search.
    FilterDataset,
    /// The id to save the open page under (it was removed or renamed elsewhere).
    SaveAsPage,
    /// `field=value` for a row of a dataset.
    DatasetCell {
        side: Side,
        row: usize,
    },
}

/// A dialog over the screen; it takes every key while open.
pub enum Modal {
    Help {
        scroll: u16,
        /// What help is narrowed to (`/` in help, then type; Esc clears): only the
        /// bindings whose keys, text or place have every word.
        query: Option<String>,
    },
    Palette {
        query: String,
        selected: usize,
    },
    Confirm {
        message: String,
        on_yes: Action,
        /// What `n` or Esc does (else nothing).
        on_no: Option<Action>,
    },
    Prompt {
        title: String,
        input: Box<TextArea<'static>>,
        purpose: PromptFor,
    },
    RuleForm(super::rule_form::Form),
    History(Box<super::history::State>),
    /// The frequency view (`F` in the Matrix).
    Frequency(Box<super::frequency::State>),
    /// The multi-line JSON dialog (assertions).
    Json(Box<super::json_dialog::State>),
    /// A value edited here was changed elsewhere: mine, theirs, the person's choice.
    Conflict(Box<super::conflict::State>),
}
