//! Crash safety: a writer killed (`kill -9`) at random moments leaves the database
//! intact and every page at a committed revision, its rows all old or all new.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const LLM: &str = "llm-chat-clients";

fn writer(db: &Path, csv: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .env_remove("RULEBENCH_DB")
        .arg("--db")
        .arg(db)
        .args(["dataset", "import", LLM, "target"])
        .arg(csv)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run rulebench")
}

#[test]
fn a_writer_killed_at_random_moments_leaves_a_committed_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("k.db");
    // Seed the database.
    let status = Command::new(env!("CARGO_BIN_EXE_rulebench"))
        .arg("--db")
        .arg(&db)
        .args(["db", "init"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    // Two versions of the target rows, so a half-applied import would show.
    let rows = |n: usize, tag: &str| -> String {
        let mut t = String::from("id,provider,supportsStreaming,tag\n");
        for i in 0..n {
            t.push_str(&format!("m{i},openai,true,{tag}\n"));
        }
        t
    };
    let small = dir.path().join("small.csv");
    let big = dir.path().join("big.csv");
    std::fs::write(&small, rows(50, "small")).unwrap();
    std::fs::write(&big, rows(30_000, "big")).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut killed = 0;
    let mut round = 0;
    // Until 50 writers were killed mid-way (each checked), at moments spread over the
    // opening, parsing, validating and writing.
    while killed < 50 && round < 400 {
        round += 1;
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let csv = if round % 2 == 0 { &big } else { &small };
        let mut child = writer(&db, csv);
        std::thread::sleep(Duration::from_millis(seed % 120));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed += 1;
        }
        let _ = child.wait();
        let conn = rusqlite::Connection::open(&db).unwrap();
        let check: String = conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok", "round {round}");
        let (revision, logged): (i64, i64) = conn
            .query_row(
                "SELECT revision, (SELECT MAX(revision) FROM revisions WHERE page_id = ?1)
                 FROM pages WHERE id = ?1",
                [LLM],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(
            revision, logged,
            "round {round}: the page is at a logged revision"
        );
        let (count, tags): (i64, i64) = conn
            .query_row(
                "SELECT COUNT(*), COUNT(DISTINCT json_extract(row_json, '$.tag'))
                 FROM dataset_rows WHERE page_id = ?1 AND side = 'target'",
                [LLM],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert!(
            [14, 50, 30_000].contains(&count) && tags <= 1,
            "round {round}: rows all old or all new, got {count} rows with {tags} tags"
        );
    }
    assert!(killed >= 50, "only {killed} writers were killed mid-way");
}
