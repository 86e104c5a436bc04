//! The diagnostic codes are documented: docs/page-format.md has a table row
//! (`| `code` | severity | finding |`) for every code, and none for a code there is not.

use std::collections::BTreeSet;

use rulebench_core::diag::Code;
use strum::VariantArray;

/// The codes of the doc's code tables: rows whose first cell is one code in backticks and
/// whose second is a severity.
fn documented(doc: &str) -> BTreeSet<&str> {
    doc.lines()
        .filter_map(|line| {
            let mut cells = line.strip_prefix('|')?.split('|').map(str::trim);
            let code = cells.next()?.strip_prefix('`')?.strip_suffix('`')?;
            let one = !code.contains(['`', ' ']);
            (one && matches!(cells.next()?, "error" | "warning")).then_some(code)
        })
        .collect()
}

#[test]
fn the_page_format_doc_lists_every_diagnostic_code() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/page-format.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let listed = documented(&doc);
    let codes: BTreeSet<&str> = Code::VARIANTS.iter().map(|c| c.as_str()).collect();
    let missing: Vec<_> = codes.difference(&listed).collect();
    assert!(
        missing.is_empty(),
        "docs/page-format.md has no row for {missing:?}"
    );
    let unknown: Vec<_> = listed.difference(&codes).collect();
    assert!(
        unknown.is_empty(),
        "docs/page-format.md lists codes there are not: {unknown:?}"
    );
}

#[test]
fn a_code_table_row_is_read_as_one() {
    let doc = "| code | severity | finding |\n|---|---|---|\n| `arity` | error | … |\n\
               | `key` | string | … |\n| `a` `b` | warning | … |\n";
    assert_eq!(documented(doc), BTreeSet::from(["arity"]));
}
