//! What a change touched: the flags every use case and pane speak.

bitflags::bitflags! {
    /// What a change touched. Every mutation of the workbench says which of these it
    /// changed; each pane listens only to the ones it shows
    /// (`tui::action::PaneId::concerns`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Changed: u16 {
        /// Rules were added, removed, renamed or re-weighted.
        const RULES = 1;
        /// A rule's logic changed: its column of outcomes.
        const LOGIC = 1 << 1;
        /// The device or selection policy.
        const POLICY = 1 << 2;
        /// Overrides (and their notes).
        const OVERRIDES = 1 << 3;
        /// Dataset rows (a cell edit, a reload).
        const ROWS = 1 << 4;
        /// The page's assertions.
        const ASSERTIONS = 1 << 5;
        /// The selected source row.
        const SELECTION = 1 << 6;
        /// Whatever moves cells or verdicts on screen.
        const OUTCOMES = Self::RULES.bits() | Self::LOGIC.bits() | Self::POLICY.bits()
            | Self::OVERRIDES.bits() | Self::ROWS.bits() | Self::SELECTION.bits();
    }
}
