//! Conflicts: a value edited here that was changed elsewhere since the edit began
//! (a rule's logic, policy values, an assertion). No save writes over a change it did
//! not see: the save is refused with a [`Conflict`], and the person chooses
//! ([`Choice`]): keep mine, take theirs, or edit a merge of the two.

use serde_json::Value;

/// One value edited here and changed elsewhere since the edit began: mine, theirs and
/// the state both started from.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub page_id: String,
    pub what: ConflictOn,
    /// The value as edited here.
    pub mine: Value,
    /// The value as stored now (`null` for a rule or assertion deleted elsewhere).
    pub theirs: Value,
    /// The value both started from.
    pub base: Value,
    /// The page's revision when theirs was read, and who made the last change.
    pub revision: i64,
    pub author: Option<String>,
}

/// What a [`Conflict`] is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConflictOn {
    /// A rule's logic (by rule id).
    RuleLogic(String),
    /// Policy values (by name: `fullThreshold`, `mode`, …).
    Policy(Vec<String>),
    /// An assertion (by id).
    Assertion(String),
}

impl ConflictOn {
    pub fn describe(&self) -> String {
        match self {
            ConflictOn::RuleLogic(id) => format!("rule `{id}`"),
            ConflictOn::Policy(names) => format!("policy {}", names.join(", ")),
            ConflictOn::Assertion(id) => format!("assertion `{id}`"),
        }
    }
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of page `{}` was changed elsewhere (revision {}{}) since your edit began: nothing saved (hint: keep mine, take theirs, or edit a merge)",
            self.what.describe(),
            self.page_id,
            self.revision,
            self.author
                .as_ref()
                .map(|a| format!(", by {a}"))
                .unwrap_or_default()
        )
    }
}

/// What the person chose for a [`Conflict`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Save mine over theirs (theirs has been seen).
    KeepMine,
    /// Drop mine; theirs stands.
    TakeTheirs,
    /// Edit a text holding both (conflict markers), saved over theirs once valid.
    EditMerge,
}

/// One line of the difference between mine and theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffLine {
    Same(String),
    /// Only in mine.
    Mine(String),
    /// Only in theirs.
    Theirs(String),
}

impl Conflict {
    /// Mine and theirs as the editor shows JSON (pretty, with every character a
    /// terminal could act on escaped).
    pub fn texts(&self) -> (String, String) {
        (show(&self.mine), show(&self.theirs))
    }

    /// Who made theirs, as the dialog and the merge text say it.
    pub fn theirs_label(&self) -> String {
        format!(
            "theirs (revision {}{})",
            self.revision,
            self.author
                .as_ref()
                .map(|a| format!(", by {}", rulebench_core::text::sanitize(a)))
                .unwrap_or_default()
        )
    }

    /// The text of "edit a merge": mine and theirs between conflict markers, as git
    /// writes them. It is not JSON until the person keeps what they want of each.
    pub fn merge_text(&self) -> String {
        let (mine, theirs) = self.texts();
        format!(
            "<<<<<<< mine\n{mine}\n=======\n{theirs}\n>>>>>>> {}\n",
            self.theirs_label()
        )
    }

    /// Mine against theirs, line by line (the longest common subsequence of lines).
    pub fn diff(&self) -> Vec<DiffLine> {
        let (mine, theirs) = self.texts();
        line_diff(&mine, &theirs)
    }
}

fn show(v: &Value) -> String {
    let text = rulebench_core::text::pretty_json(v, 60);
    rulebench_core::text::json_safe(&text).into_owned()
}

/// A line diff of two short texts (longest common subsequence; texts of more than
/// 2,000 lines each are shown as all removed, all added).
pub fn line_diff(a: &str, b: &str) -> Vec<DiffLine> {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    if a.len() > 2000 || b.len() > 2000 {
        return a
            .iter()
            .map(|l| DiffLine::Mine((*l).to_owned()))
            .chain(b.iter().map(|l| DiffLine::Theirs((*l).to_owned())))
            .collect();
    }
    // lcs[i][j]: the common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            out.push(DiffLine::Same(a[i].to_owned()));
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push(DiffLine::Theirs(b[j].to_owned()));
            j += 1;
        } else {
            out.push(DiffLine::Mine(a[i].to_owned()));
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_diff_keeps_common_lines_and_marks_the_rest() {
        let d = line_diff("a\nb\nc", "a\nx\nc");
        assert_eq!(
            d,
            vec![
                DiffLine::Same("a".into()),
                DiffLine::Theirs("x".into()),
                DiffLine::Mine("b".into()),
                DiffLine::Same("c".into()),
            ]
        );
    }
}
