//! The core types and pure helpers the fronts use: the fronts reach the core only
//! through `app` (the benchmark command, which measures the core itself, excepted).

pub use rulebench_core::assertions::{Assertion, AssertionResult, Report};
pub use rulebench_core::dataset::DataError;
pub use rulebench_core::diag::{
    Code, Diagnostic, MAX_TEXT_DEPTH, Severity, did_you_mean, parse_json, prescan,
};
pub use rulebench_core::diff::{Flip, ItemChanges, Moved, PageDiff};
pub use rulebench_core::engine::{Reads, apply};
pub use rulebench_core::explain::{Explanation, Kind, Node, fmt_value};
pub use rulebench_core::infix;
pub use rulebench_core::matrix::{ERROR, PASS};
pub use rulebench_core::model::{
    AggregateMode, Dataset, DevicePolicy, ElseMode, Override, Page, PolicyField,
    RecommendationStrategy, RequiredMode, Row, Rule, SelectionPolicy, Side, key_hash, slugify,
};
pub use rulebench_core::result::{FeatureKeys, Names, Needs, SelectionResult};
pub use rulebench_core::sql::Dialect;
pub use rulebench_core::text::{is_unsafe, json_safe, sanitize, sanitize_lines};
pub use rulebench_core::validate::DatasetSchema;
pub use rulebench_core::validate::PAGE_SCHEMA;
pub use rulebench_core::verdict::{DeviceVerdict, FULL, Reason, Verdict};
