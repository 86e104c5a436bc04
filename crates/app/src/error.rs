//! What can go wrong in a use case, each saying what and where.

use rulebench_core::diag::Diagnostic;
use rulebench_core::matrix::CompileError;
use rulebench_store::StoreError;

use crate::conflict::Conflict;

/// What can go wrong in a use case. Each says what and where.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{what} `{id}` not found{}", hint.as_ref().map(|h| format!(" (hint: {h})")).unwrap_or_default())]
    NotFound {
        what: &'static str,
        id: String,
        hint: Option<String>,
    },
    #[error("{origin}: {}", render_diagnostics(diagnostics))]
    Invalid {
        origin: String,
        diagnostics: Vec<Diagnostic>,
    },
    #[error("Rule limit reached ({limit}/{limit})")]
    RuleLimit { limit: usize },
    #[error("page `{0}` already exists (hint: use --replace to overwrite it)")]
    PageExists(String),
    #[error("rule `{rule}` already exists in page `{page}` (hint: use --replace to overwrite it)")]
    RuleExists { page: String, rule: String },
    /// A change to one member of a rule family: members change with their family.
    #[error(
        "rule `{rule}` is a member of the rule family `{family}`: it changes with its family (hint: change the family with `rule add {page} FILE --replace`, or remove it with `rule rm {page} {family}`)"
    )]
    FamilyMember {
        page: String,
        rule: String,
        family: String,
    },
    #[error("{0}")]
    Usage(String),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Compile(#[from] CompileError),
    #[error(transparent)]
    Data(#[from] rulebench_core::dataset::DataError),
    /// A save of a value changed elsewhere since the edit began: nothing was written;
    /// the person chooses (keep mine, take theirs, edit a merge).
    #[error("{0}")]
    Conflict(Box<Conflict>),
}

impl AppError {
    /// A change refused because its page moved on past the revision it expected
    /// (`--if-revision`): a finding for the person, not bad input.
    pub fn is_moved(&self) -> bool {
        matches!(self, AppError::Store(StoreError::Moved { .. }))
    }

    /// A change refused because its page is not there any more (removed or renamed
    /// elsewhere).
    pub fn is_page_gone(&self) -> bool {
        matches!(self, AppError::Store(StoreError::PageGone { .. }))
    }

    /// The conflict a save found, if that is what refused it.
    pub fn conflict(&self) -> Option<&Conflict> {
        match self {
            AppError::Conflict(c) => Some(c),
            _ => None,
        }
    }
}

/// A hint listing what there is (`rules: a, b, c`), the first 12 and how many more.
pub fn some_of<S: AsRef<str>>(what: &str, ids: &[S]) -> String {
    const SHOWN: usize = 12;
    let shown: Vec<&str> = ids.iter().take(SHOWN).map(AsRef::as_ref).collect();
    let more = ids.len().saturating_sub(SHOWN);
    if more > 0 {
        format!("{what}: {} and {more} more", shown.join(", "))
    } else {
        format!("{what}: {}", shown.join(", "))
    }
}

pub(crate) fn render_diagnostics(diags: &[Diagnostic]) -> String {
    let errors: Vec<String> = diags
        .iter()
        .filter(|d| d.is_error())
        .map(ToString::to_string)
        .collect();
    match errors.as_slice() {
        [one] => one.clone(),
        many => format!("{} errors:\n  {}", many.len(), many.join("\n  ")),
    }
}

pub type Result<T> = std::result::Result<T, AppError>;
