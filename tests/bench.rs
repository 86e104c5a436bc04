//! `rulebench bench --workbench`: drives the real workbench on a synthetic page and
//! times what it names — valid keystrokes that move outcomes apart from the rest, a cell
//! edit of a field the rows have (no dialog timed), the background results awaited.

mod common;

use common::rb;

#[test]
fn the_workbench_benchmark_times_what_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let page = dir.path().join("page.json");
    let page = page.to_str().unwrap();
    let (code, _, err) = rb(
        &db,
        &[
            "bench",
            "--targets",
            "300",
            "--rules",
            "12",
            "--sources",
            "4",
            "--write-page",
            page,
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = rb(&db, &["bench", "--workbench", page, "--rounds", "4"]);
    // The benchmark refuses to report when a part's keys did not do what it measures
    // (a dialog left open, a cell not set): exit 0 means each part was what it says.
    assert_eq!(code, 0, "{err}\n{out}");
    for part in [
        "valid keystroke (moves outcomes)",
        "cell edit (Enter on the prompt)",
        "background results after the last key",
    ] {
        assert!(out.contains(part), "{part}:\n{out}");
    }
    // Every valid keystroke moved the rule's outcomes.
    let moved = out
        .lines()
        .find(|l| l.contains("valid keystrokes moved"))
        .unwrap_or_else(|| panic!("{out}"));
    let numbers: Vec<&str> = moved
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(numbers.len(), 2, "{moved}");
    assert_eq!(numbers[0], numbers[1], "{moved}");
}
