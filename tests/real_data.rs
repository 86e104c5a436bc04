//! The README's "Real data, start to finish" commands, run as they are written on the
//! committed samples (a slice of litellm's model list; clients as Parquet and Excel):
//! a page from data files, rules and assertions from files, every source evaluated to
//! Parquet and read back with its types. No jq, no Python.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use arrow_schema::DataType;

/// The commands between the README's `<!-- real-data -->` markers.
fn readme_commands() -> Vec<Vec<String>> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme
        .find("<!-- real-data -->")
        .expect("the real-data marker");
    let end = readme.find("<!-- /real-data -->").expect("the end marker");
    readme[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("rulebench "))
        .map(|l| words(l.trim()))
        .collect()
}

/// A command line split as a POSIX shell splits one of plain and single-quoted words.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        out.push(word);
    }
    out
}

#[test]
fn the_readme_real_data_commands_run_as_written() {
    let commands = readme_commands();
    assert!(commands.len() >= 8, "{commands:?}");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("real.db");
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/real");
    let mut said = String::new();
    for args in &commands {
        // The samples' paths are the repository's; the outputs go to the test's directory.
        let args: Vec<String> = args
            .iter()
            .map(|a| match a.strip_prefix("tests/data/real/") {
                Some(name) => samples.join(name).display().to_string(),
                None => a.clone(),
            })
            .collect();
        common::ensure_db(&db, &[]);
        let out = Command::new(env!("CARGO_BIN_EXE_rulebench"))
            .env_remove("RULEBENCH_DB")
            .current_dir(dir.path())
            .arg("--db")
            .arg(&db)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "rulebench {args:?}:\n{err}");
        said.push_str(&String::from_utf8_lossy(&out.stdout));
        said.push_str(&err);
    }
    assert!(said.contains("2 assertions: 2 passed, 0 failed"), "{said}");
    assert!(said.contains("imported 10 source rows into llm"), "{said}");
    // The last command: the recommended rows as CSV, with the summary columns.
    assert!(
        said.contains("target.litellm_provider,target.mode,rule.tools"),
        "{said}"
    );
    // Every source evaluated to Parquet, read back typed.
    let bytes = bytes::Bytes::from(std::fs::read(dir.path().join("verdicts.parquet")).unwrap());
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    let schema = reader.schema().clone();
    let t = |name: &str| schema.field_with_name(name).unwrap().data_type().clone();
    assert_eq!(t("verdict"), DataType::Int64);
    assert_eq!(t("selectionVerdict"), DataType::Int64);
    assert_eq!(t("score"), DataType::Float64);
    assert_eq!(t("recommended"), DataType::Boolean);
    assert_eq!(t("rule.output-room"), DataType::Boolean);
    assert_eq!(t("target.litellm_provider"), DataType::Utf8);
    let rows: usize = reader.build().unwrap().map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 10 * 17);
}

#[test]
fn words_split_as_a_shell_splits_them() {
    assert_eq!(
        words("rule add llm --name 'Long context' --expr 'a >= 1' ''"),
        [
            "rule",
            "add",
            "llm",
            "--name",
            "Long context",
            "--expr",
            "a >= 1",
            ""
        ]
    );
}
