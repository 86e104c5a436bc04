//! Actions: what a key (or the palette, or a pane) asks for. Panes never call each
//! other; they react to actions and emit follow-up events.

/// The panes of the page screen, in Tab order (the order of the variants: their list
/// is derived, and every list of panes is as long as it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::VariantArray)]
pub enum PaneId {
    Sources,
    Rules,
    Matrix,
    Editor,
    Explain,
    Policy,
    // Numbered as the screen shows them, top to bottom: Tests above Overrides.
    Tests,
    Overrides,
    Dataset,
}

impl PaneId {
    /// How many panes there are: every array of panes has this length, so a new pane
    /// does not compile until each lists it.
    pub const COUNT: usize = <PaneId as strum::VariantArray>::VARIANTS.len();

    /// Every pane, in Tab order.
    pub const ALL: [PaneId; PaneId::COUNT] = {
        let mut all = [PaneId::Sources; PaneId::COUNT];
        let mut i = 0;
        while i < PaneId::COUNT {
            all[i] = <PaneId as strum::VariantArray>::VARIANTS[i];
            i += 1;
        }
        all
    };

    /// Whether `/` finds in the pane (it lists things).
    pub fn finds(self) -> bool {
        !matches!(self, PaneId::Editor | PaneId::Explain | PaneId::Policy)
    }

    /// Whether the pane shares the wide layout's bottom-right slot (the last of them
    /// focused is shown there).
    pub fn shares_slot(self) -> bool {
        match self {
            PaneId::Overrides | PaneId::Dataset => true,
            PaneId::Sources
            | PaneId::Rules
            | PaneId::Matrix
            | PaneId::Editor
            | PaneId::Explain
            | PaneId::Policy
            | PaneId::Tests => false,
        }
    }

    /// The pane's number: its key (`1`–`9`), shown in its title; Tab follows it.
    pub fn number(self) -> usize {
        Self::ALL
            .iter()
            .position(|p| *p == self)
            .expect("every pane is listed")
            + 1
    }

    pub fn title(self) -> &'static str {
        match self {
            PaneId::Sources => "Sources",
            PaneId::Rules => "Rules",
            PaneId::Matrix => "Matrix",
            PaneId::Editor => "Rule editor",
            PaneId::Explain => "Explanation",
            PaneId::Policy => "Policy",
            PaneId::Overrides => "Overrides",
            PaneId::Tests => "Tests",
            PaneId::Dataset => "Dataset",
        }
    }

    /// What the pane shows, so which changes it must hear of: the one routing table
    /// of [`Action::Changed`].
    pub fn concerns(self) -> Changed {
        match self {
            // The selection's verdict follows every edit; the rest come from the
            // background work.
            PaneId::Sources => Changed::OUTCOMES,
            PaneId::Rules => Changed::RULES | Changed::LOGIC | Changed::ROWS,
            PaneId::Editor => Changed::RULES,
            // The matrix shows row labels and summary fields, and filters by them.
            PaneId::Matrix => Changed::OUTCOMES | Changed::ROWS,
            PaneId::Explain | PaneId::Policy => Changed::OUTCOMES,
            PaneId::Overrides => Changed::OVERRIDES | Changed::SELECTION | Changed::ROWS,
            // Its runs come from the background work, which hears of every change.
            PaneId::Tests => Changed::ASSERTIONS,
            PaneId::Dataset => Changed::ROWS | Changed::RULES | Changed::SELECTION,
        }
    }

    pub fn next(self) -> PaneId {
        let i = Self::ALL.iter().position(|&p| p == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    pub fn prev(self) -> PaneId {
        let i = Self::ALL.iter().position(|&p| p == self).unwrap_or(0);
        Self::ALL[(i + Self::ALL.len() - 1) % Self::ALL.len()]
    }
}

pub use crate::app::Changed;

/// Work done off the key thread that came back (verdicts of every source, the page's
/// assertions), as an event through the pump. Two are equal when they are the same
/// result.
#[derive(Debug, Clone)]
pub struct JobDone(pub std::sync::Arc<crate::app::jobs::JobResult>);

impl PartialEq for JobDone {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A key typed into the focused pane's text (the rule editor), not a command: it
    /// goes to the focused pane alone.
    Typed(ratatui::crossterm::event::KeyEvent),
    // ── global ──
    Quit,
    /// Ctrl-C: save what is valid and leave at once.
    ForceQuit,
    Help,
    Palette,
    FocusNext,
    FocusPrev,
    Focus(PaneId),
    /// Esc: close, leave, go back.
    Back,
    /// Back to the page picker.
    Pages,
    // ── navigation, for the focused pane ──
    Up,
    Down,
    Left,
    Right,
    PageUp,
    PageDown,
    Home,
    End,
    Enter,
    // ── commands ──
    /// Open the focused pane's filter (`\\`).
    Filter,
    /// Open the find prompt (`/`).
    Find,
    /// The find query as typed: the focused pane selects its best match.
    FindText(String),
    /// Go to the next (`true`) or previous match of the last find (`n` / `N`).
    FindNext(bool),
    /// The next (`true`) or previous match of this query after the cursor, for the
    /// focused pane.
    FindFrom(String, bool),
    AddRule,
    DeleteRule,
    /// The deletion of rule `i` was confirmed.
    DeleteConfirmed(usize),
    EditRule,
    EditRuleMeta,
    /// Start writing a new rule with this name in the editor (added once valid).
    NewRule(String),
    /// Undo the page's last change (`u`): a walk back through its history.
    UndoChange,
    /// Redo what `u` undid (Ctrl-R).
    RedoChange,
    ToggleOverride,
    /// Force the (selection, target) pair incompatible at once (`O`), asking for one
    /// note.
    ForceIncompatible,
    SaveNow,
    Undo,
    /// Redo what the editor's undo took back (Ctrl-R).
    Redo,
    Increase,
    Decrease,
    Cycle,
    /// Pin the selection's verdicts as assertions.
    Pin,
    AddAssertion,
    EditAssertion,
    DeleteAssertion,
    /// Removing the assertion with this id was confirmed.
    DeleteAssertionConfirmed(String),
    /// Set a cell (asked first when the field is new to the dataset).
    SetCell {
        side: crate::app::types::Side,
        row: usize,
        field: String,
        value: serde_json::Value,
    },
    /// Clearing the override of (source row, target row) was confirmed.
    ClearOverride(usize, usize),
    /// Throw away the invalid text in the rule editor (asked on Esc).
    DiscardDraft,
    /// The open page was renamed elsewhere: follow it to this id, with the edits.
    FollowRename(String),
    /// Ask for an id to save the page as the workbench has it (removed or renamed
    /// elsewhere; the edits included).
    SaveAsPagePrompt,
    /// Put the drafts kept from an earlier session back (offered on opening a page).
    RestoreDrafts,
    /// Let the kept drafts go.
    DiscardDrafts,
    /// The person's choice for the conflict on screen.
    Resolve(crate::app::Choice),
    /// Restore the rules edited here but deleted elsewhere, with the edits.
    RestoreOrphans,
    /// Let those drafts go: the deletion made elsewhere stands.
    DropOrphans,
    /// Switch the rule editor between JSONLogic and infix.
    ToggleInfix,
    /// Show or hide the dataset pane's schema.
    ToggleSchema,
    /// Open the History dialog (revisions, compare, restore).
    History,
    /// Compare the matrix with the revision chosen in History.
    CompareRevision,
    /// Compare with the last saved state again.
    StopComparing,
    /// Matrix: targets as rows (and back).
    Transpose,
    /// Matrix: all targets → only those not fully compatible → only those that moved.
    CycleShow,
    /// Matrix: page order → verdict → score → label.
    CycleSort,
    /// Sort the targets by the cursor's rule: failing first, or (`true`) the other way.
    SortByRule(bool),
    /// Reverse the targets' order (`R`).
    ReverseSort,
    /// Open the frequency view of the targets shown (`F` in the Matrix).
    Frequency,
    /// Show only these targets in the matrix (Enter in the frequency view).
    ShowOnly(super::only::Only),
    /// Move the matrix cursor to the next cell that moved (`*`; `#` the one before):
    /// `true` forward.
    NextMoved(bool),
    /// The matrix's target filter (as typed).
    FilterTargets(String),
    /// The Sources pane's filter (as typed); `true` once it is entered (the selection
    /// then moves to a match when the filter hides it).
    FilterSources(String, bool),
    /// Maximise the focused pane (and back).
    Zoom,
    /// Matrix: fold the cursor's category into one row (and back).
    Collapse,
    /// A question's answer (y: true; n or Esc: false).
    Answer(bool),
    /// Delete the character before the cursor (in a dialog's text).
    DeleteBack,
    /// The first row (`g`).
    Top,
    /// The last row (`G`).
    Bottom,
    /// Export the matrix's view (its targets and rules, as shown) to a file (asks for its
    /// name).
    ExportMatrix,
    /// Write the export to this file (overwriting it).
    ExportTo(std::path::PathBuf),
    /// Copy the cell's explanation or the rule's JSON to the clipboard (OSC 52).
    Copy,
    /// Copy the matrix's view (its targets and rules, as shown) as TSV rows (OSC 52).
    CopyView,
    /// Copy or export the page as SQL (asks for the dialect, and a file to export to).
    SqlPage,
    /// Run the assertions again now.
    RerunTests,
    /// Explanation: show (and hide) what would move the target to each other verdict.
    WhyNot,
    /// Tests: list how the assertions cover the rules (and back).
    ToggleCoverage,
    // ── events: broadcast to every pane ──
    /// The selection (source row) changed.
    SourceSelected(usize),
    /// The highlighted rule changed.
    RuleSelected(usize),
    /// The highlighted target changed.
    TargetSelected(usize),
    /// The page or the selection changed: what, as flags. Reaches only the panes that
    /// show any of it ([`PaneId::concerns`]).
    Changed(Changed),
    /// Background work came back (reaches every pane; the ones it is for take it).
    JobDone(JobDone),
    /// The search query of the rules pane.
    FilterRules(String),
    /// The filter of the page picker.
    FilterPages(String),
    /// Open a page by id.
    OpenPage(String),
}

impl Action {
    /// Events go to every pane; other actions go to the focused pane.
    pub fn is_event(&self) -> bool {
        matches!(
            self,
            Action::SourceSelected(_)
                | Action::RuleSelected(_)
                | Action::TargetSelected(_)
                | Action::Changed(_)
                | Action::JobDone(_)
                | Action::FilterRules(_)
                | Action::FilterTargets(_)
                | Action::FilterSources(..)
        )
    }
}
