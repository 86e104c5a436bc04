//! The core's types (and constants) the fronts may name: the fronts depend on this crate
//! alone, and what they need to *do* with the core is a use case here (`App`,
//! `Session`, [`crate::expr`], [`crate::text`]), never a core function re-exported.

pub use rulebench_core::analyze::{Analysis, Finding, Kind as FindingKind, Unknown, Witness};
pub use rulebench_core::assertions::{Assertion, AssertionResult, PathMatch, Report};
pub use rulebench_core::coverage::{ConditionCoverage, Coverage, Fate, Mutant, RuleCoverage};
pub use rulebench_core::dataset::{ColumnType, DataError, DataFormat, ReadOptions, RowPlace};
pub use rulebench_core::diag::{Code, Diagnostic, MAX_TEXT_DEPTH, Severity};
pub use rulebench_core::diff::{Flip, ItemChanges, Moved, PageDiff};
pub use rulebench_core::engine::Reads;
pub use rulebench_core::expect::{
    Actual, ExpectReport, Mismatch, PINNED_COLUMNS, Pinned, RowOutcome,
};
pub use rulebench_core::explain::{Explanation, Kind, Node};
pub use rulebench_core::matrix::{Column, ERROR, NOT_APPLICABLE, Outcome, PASS};
pub use rulebench_core::model::{
    AggregateMode, Dataset, DevicePolicy, ElseMode, Override, Page, PolicyField,
    RecommendationStrategy, RequiredMode, Row, Rule, SelectionPolicy, Side,
};
pub use rulebench_core::result::{FeatureKeys, Names, Needs, SelectionResult};
pub use rulebench_core::sql::{Dialect, OverrideKeys};
pub use rulebench_core::validate::DatasetSchema;
pub use rulebench_core::validate::PAGE_SCHEMA;
pub use rulebench_core::verdict::{DeviceVerdict, FULL, Reason, Verdict};
pub use rulebench_core::whatif::{
    Change, FlipSet, MAX_CHANGES, RecommendationMove, ThresholdMove, WhyNot, WhyNotReport,
};
