//! The seam between the layers, checked on the source: the fronts (`src/tui`, `src/cli`)
//! reach the core and the store only through `app` (the core benchmark command, which
//! measures the core itself, excepted), and the core does no I/O.

use std::path::Path;

fn sources(dir: &str) -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    assert!(!out.is_empty(), "no sources in {dir}");
    out
}

#[test]
fn the_fronts_reach_the_core_and_the_store_only_through_app() {
    for dir in ["src/tui", "src/cli"] {
        for (name, text) in sources(dir) {
            if dir == "src/cli" && name == "bench.rs" {
                continue;
            }
            for (n, line) in text.lines().enumerate() {
                assert!(
                    !line.contains("crate::core") && !line.contains("crate::store"),
                    "{dir}/{name}:{}: {line}",
                    n + 1
                );
            }
        }
    }
}

#[test]
fn the_core_does_no_io() {
    for (name, text) in sources("src/core") {
        for forbidden in [
            "rusqlite",
            "std::fs",
            "ratatui",
            "crate::store",
            "crate::app",
            "crate::tui",
            "crate::cli",
        ] {
            assert!(
                !text.contains(forbidden),
                "src/core/{name} uses {forbidden}"
            );
        }
    }
}
