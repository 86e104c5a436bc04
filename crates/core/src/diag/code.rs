//! The diagnostic codes: one variant per kind of finding, its text (`unknown-operator`)
//! the stable name scripts match on, in `check`'s output and its JSON.

use serde::Serialize;

/// What a [`Diagnostic`](super::Diagnostic) found: a stable code for scripts. Its text is
/// the kebab-case form of the variant (`Code::UnknownOperator` is `unknown-operator`):
/// printed in `severity[code]`, written as the `code` of the JSON, parsed back by
/// [`FromStr`](std::str::FromStr). docs/page-format.md (Diagnostics) lists every one.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "kebab-case")]
pub enum Code {
    // The JSON text.
    /// A text that is not JSON (or opens with a second byte-order mark).
    JsonSyntax,
    /// JSON of the wrong shape: a missing required key, a wrong type, an unknown enum
    /// value.
    JsonShape,
    /// An integer literal beyond ±2^53 − 1, which would lose digits as a 64-bit float.
    BigInteger,
    /// A key written twice in one JSON object; or two rows of a dataset with the same
    /// key.
    DuplicateKey,
    /// A JSON text, a rule's logic or a dataset row nesting deeper than the limit.
    TooDeep,

    // The page.
    /// A key the page schema does not know where it allows no other.
    UnknownKey,
    /// A page `format` other than `rulebench.page/v1`.
    Format,
    /// A page id that is empty, or (where a page file comes in) not a slug.
    PageId,

    // The datasets.
    /// A dataset whose `key` names no field.
    Key,
    /// A default for a key field (every row names its own key).
    KeyDefault,
    /// A row with no value for a key field.
    KeyField,
    /// A target whose id is `name`, which collides with the rule name in the result's
    /// `features[]` (a warning).
    ReservedId,
    /// A dataset's linked file not found on import: the embedded rows are used (a
    /// warning).
    LinkedFile,
    /// A dataset field holding values of more than one type across rows (numbers in
    /// some, text in others): a warning naming the types and a row of each.
    MixedTypes,

    // Rules.
    /// A rule name that is empty or has no letter or digit.
    RuleName,
    /// A rule weight that is not a number from 0 to the maximum.
    Weight,
    /// Two rules with the same id.
    DuplicateRule,
    /// More rules than the page's plan tier allows.
    RuleLimit,

    // A rule's logic.
    /// An operator the engine does not know (with a did-you-mean).
    UnknownOperator,
    /// A wrong argument count for a fixed-arity operator.
    Arity,
    /// A `var` / `missing` / `missing_some` path that does not start with `source.` or
    /// `target.` (or a number or boolean `var` outside an item scope).
    VarPrefix,
    /// A field no row of that side has: an error in logic, a warning in a patch.
    UnknownField,
    /// A field only some rows have, the others reading null (a warning).
    PartialField,
    /// Logic larger than 64 KB as compact JSON.
    RuleTooLarge,
    /// Logic the engine refuses to compile.
    Compile,
    /// Logic that reads no field, with one outcome for every pair (a warning).
    ConstantLogic,
    /// An object with several keys in logic: data rather than an operation (a warning).
    ObjectLiteral,

    // The type-aware lint (warnings).
    /// A field null or absent in some rows compared with a number, where null reads as 0.
    NullAsZero,
    /// A field holding strings compared with a number.
    StringVsNumber,
    /// A boolean field compared with a string.
    BoolVsString,
    /// `<` `<=` `>` `>=` with `true`, `false` or `null`: JSONLogic reads them as 1 and 0,
    /// so `95 >= false` holds.
    BoolOrNullOrder,
    /// `<` `<=` `>` `>=` between a string that looks like a number or a version and
    /// another string: strings order as text, so `"9" >= "10"` holds.
    TextOrder,
    /// `in` over a field that is a string in some rows and an array in others.
    InMixed,
    /// A rule that reads no target field, or no source field.
    OneSided,
    /// A rule that, over the current rows, passes for every pair or fails for every pair.
    ConstantOverData,

    // The analysis (`rulebench analyze`; warnings).
    /// A rule no row the schema allows passes.
    NeverTrue,
    /// A rule every row the schema allows passes (wherever it applies).
    AlwaysTrue,
    /// A rule that passes wherever another passes.
    ImpliedRule,
    /// Two rules with the same outcome on every row.
    EquivalentRules,
    /// A required rule that fails every target for a source of the page.
    RequiredVetoes,
    /// A threshold no pair of the current rows (or no row at all) reaches.
    UnreachableThreshold,
    /// An override that forces what the rules alone give.
    StaleOverride,

    // Other forms of a rule.
    /// A rule with both `logic` and `predicates` (or `expression` and `predicates`), or
    /// with neither.
    LogicOrPredicates,
    /// A malformed predicate list or predicate (empty, not an object, no `field`, no
    /// `operator`, no `value`, an unknown key, a bad `value`).
    Predicate,
    /// A predicate operator that is unknown or not a string.
    PredicateOperator,
    /// A predicate list's `logical_operator` other than `AND` or `OR`.
    LogicalOperator,
    /// A rule's infix `expression` that does not parse (or is not a string, or holds a
    /// control character).
    InfixSyntax,

    // The policies and overrides.
    /// A threshold outside 0–1, or `partialThreshold` above `fullThreshold`.
    Threshold,
    /// Weights or thresholds of more than nine decimal places (or sums too large to
    /// count exactly): the page's scores are summed and compared in double precision (a
    /// warning).
    InexactScores,
    /// An override that names no source or no target.
    Override,
    /// Two overrides for the same (source, target) pair.
    DuplicateOverride,
    /// An override whose source or target matches no row: kept, inactive (a warning).
    OrphanedOverride,

    // Row patches.
    /// Two patches for the same row.
    DuplicatePatch,
    /// A patch whose key matches no row: kept, inactive (a warning).
    OrphanedPatch,
    /// A patch that sets a key field.
    PatchKeyField,

    // Assertions.
    /// An assertion typed in the workbench's JSON dialog that could not be saved for a
    /// reason other than a finding in it (the page gone, the database refusing).
    Assertion,
    /// An assertion id that is empty or used twice.
    AssertionId,
    /// An assertion whose `select` is missing.
    AssertionSelect,
    /// An assertion whose `path` is missing or not a JSONPath.
    AssertionPath,
    /// An assertion whose `matcher` is missing or unknown (with a did-you-mean).
    AssertionMatcher,
    /// An assertion's `expected` missing, given to a matcher that takes none, too deep,
    /// or not what the matcher takes.
    AssertionExpected,
    /// An assertion whose `select` matches no source row: it fails when the tests run
    /// (a warning).
    AssertionOrphaned,
    /// A page's assertions larger than the limit.
    AssertionsTooLarge,

    // SQL.
    /// A rule `check --sql` cannot translate to SQL.
    SqlUntranslatable,
}

impl Code {
    /// Every code, in the order above.
    pub const ALL: &'static [Code] = <Code as strum::VariantArray>::VARIANTS;

    /// The code's text (`unknown-operator`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use strum::VariantArray;

    #[test]
    fn each_code_is_unique_kebab_case_and_reads_back() {
        let mut seen = HashSet::new();
        for &code in Code::VARIANTS {
            let text = code.as_str();
            assert!(seen.insert(text), "`{text}` twice");
            assert!(
                !text.is_empty()
                    && !text.starts_with('-')
                    && !text.ends_with('-')
                    && !text.contains("--")
                    && text
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "`{text}` is not kebab-case"
            );
            assert_eq!(text.parse::<Code>(), Ok(code));
            assert_eq!(code.to_string(), text);
            assert_eq!(serde_json::to_value(code).unwrap(), text);
        }
        assert!("unknown_operator".parse::<Code>().is_err());
        assert_eq!(format!("[{:<8}]", Code::Arity), "[arity   ]");
    }

    /// The codes are an interface: adding, removing or renaming one is a change made here
    /// on purpose (and in docs/page-format.md).
    #[test]
    fn the_codes_are_these() {
        let codes: Vec<&str> = Code::VARIANTS.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            codes,
            [
                "json-syntax",
                "json-shape",
                "big-integer",
                "duplicate-key",
                "too-deep",
                "unknown-key",
                "format",
                "page-id",
                "key",
                "key-default",
                "key-field",
                "reserved-id",
                "linked-file",
                "mixed-types",
                "rule-name",
                "weight",
                "duplicate-rule",
                "rule-limit",
                "unknown-operator",
                "arity",
                "var-prefix",
                "unknown-field",
                "partial-field",
                "rule-too-large",
                "compile",
                "constant-logic",
                "object-literal",
                "null-as-zero",
                "string-vs-number",
                "bool-vs-string",
                "bool-or-null-order",
                "text-order",
                "in-mixed",
                "one-sided",
                "constant-over-data",
                "never-true",
                "always-true",
                "implied-rule",
                "equivalent-rules",
                "required-vetoes",
                "unreachable-threshold",
                "stale-override",
                "logic-or-predicates",
                "predicate",
                "predicate-operator",
                "logical-operator",
                "infix-syntax",
                "threshold",
                "inexact-scores",
                "override",
                "duplicate-override",
                "orphaned-override",
                "duplicate-patch",
                "orphaned-patch",
                "patch-key-field",
                "assertion",
                "assertion-id",
                "assertion-select",
                "assertion-path",
                "assertion-matcher",
                "assertion-expected",
                "assertion-orphaned",
                "assertions-too-large",
                "sql-untranslatable",
            ]
        );
    }
}
