//! Every command's `--help` ends with examples, every example parses as a command line
//! of this binary, and every command has its own man page.

mod common;

use clap::{CommandFactory, Parser};
use rulebench::cli::Cli;

/// (command path, its after-help text), for every command and subcommand.
fn helps() -> Vec<(Vec<String>, String)> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
        for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
            let mut p = path.clone();
            p.push(sub.get_name().to_owned());
            let text = sub
                .get_after_help()
                .map(|h| h.to_string())
                .unwrap_or_default();
            out.push((p.clone(), text));
            walk(sub, p, out);
        }
    }
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, vec![], &mut out);
    out
}

/// The words of one example: a `rulebench …` segment of a shell line, up to a pipe,
/// a redirection, `&&` or a comment; single and double quotes as a shell reads them.
fn example_words(line: &str) -> Option<Vec<String>> {
    let start = line.find("rulebench ")?;
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut single, mut double, mut any) = (false, false, false);
    let mut chars = line[start..].chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => {
                single = !single;
                any = true;
            }
            '"' if !single => {
                double = !double;
                any = true;
            }
            '\\' if double && chars.peek() == Some(&'"') => word.push(chars.next().unwrap()),
            ' ' if !single && !double => {
                if any || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            '|' | '>' | '#' | '&' | ';' | ')' if !single && !double => break,
            c => word.push(c),
        }
    }
    if any || !word.is_empty() {
        words.push(word);
    }
    Some(words)
}

#[test]
fn every_command_has_examples_that_parse() {
    let mut missing = Vec::new();
    let mut bad = Vec::new();
    let mut seen = 0;
    for (path, text) in helps() {
        let Some(at) = text.find("Examples:") else {
            missing.push(path.join(" "));
            continue;
        };
        for line in text[at..].lines().skip(1) {
            // An example may run on over a `\` line end: the first line is enough for
            // the command and its first flags only when it parses alone, so skip those.
            if line.trim_end().ends_with('\\') {
                continue;
            }
            let Some(words) = example_words(line) else {
                continue;
            };
            seen += 1;
            if let Err(e) = Cli::try_parse_from(&words) {
                bad.push(format!("{}: {line}\n{e}", path.join(" ")));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "no examples in the help of: {missing:?}"
    );
    assert!(
        bad.is_empty(),
        "examples that do not parse:\n{}",
        bad.join("\n")
    );
    assert!(seen > 60, "{seen} examples");
}

#[test]
fn every_command_has_a_man_page() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db");
    let (code, list, _) = common::rb_as_is(&db, &["man", "--list"]);
    assert_eq!(code, 0);
    let names: Vec<&str> = list.lines().collect();
    assert!(
        names.contains(&"evaluate") && names.contains(&"dataset-import"),
        "{list}"
    );
    for name in names {
        let (code, page, err) = common::rb_as_is(&db, &["man", name]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(
            page.contains(&format!(".TH rulebench-{name} 1")),
            "{name}: {}",
            &page[..200.min(page.len())]
        );
    }
    let (code, _, err) = common::rb_as_is(&db, &["man", "evaluat"]);
    assert_eq!(code, 2);
    assert!(err.contains("no command `evaluat`"), "{err}");
    assert!(!db.exists(), "man reads no database");
}

#[test]
fn examples_split_as_a_shell_splits_them() {
    assert_eq!(
        example_words("  echo x | rulebench eval --logic '{\"a\": 1}' --data - # c").unwrap(),
        ["rulebench", "eval", "--logic", "{\"a\": 1}", "--data", "-"]
    );
}

/// One `--format` vocabulary: every command that takes `--format` takes `table` and
/// `text` (the human form, by either name) and `json`; those that list rows take every
/// row format, and every command that prints data takes `-o FILE`.
#[test]
fn one_format_vocabulary() {
    fn walk(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
            let p = format!("{path} {}", sub.get_name()).trim().to_owned();
            out.push((p.clone(), sub.clone()));
            walk(sub, p, out);
        }
    }
    let mut root = Cli::command();
    root.build();
    let mut all = Vec::new();
    walk(&root, String::new(), &mut all);
    let mut checked = 0;
    for (path, cmd) in &all {
        let Some(format) = cmd.get_arguments().find(|a| a.get_id() == "format") else {
            continue;
        };
        let values = format.get_possible_values();
        let takes = |word: &str| values.iter().any(|v| v.matches(word, false));
        checked += 1;
        assert!(takes("json"), "{path}: no json");
        assert!(
            cmd.get_arguments().any(|a| a.get_id() == "output"),
            "{path}: prints data but has no -o"
        );
        // A command whose only form is data (a page file, SQL) has no human form.
        assert!(
            takes("table") && takes("text"),
            "{path}: --format takes {:?}",
            values.iter().map(|v| v.get_name()).collect::<Vec<_>>()
        );
    }
    assert!(checked >= 10, "{checked}");
    for listing in [
        "pages",
        "dataset schema",
        "page log",
        "assertion list",
        "evaluate",
        "matrix",
    ] {
        let cmd = &all.iter().find(|(p, _)| p == listing).unwrap().1;
        let format = cmd
            .get_arguments()
            .find(|a| a.get_id() == "format")
            .unwrap();
        let values = format.get_possible_values();
        for word in ["csv", "tsv", "jsonl", "md", "parquet"] {
            assert!(
                values.iter().any(|v| v.matches(word, false)),
                "{listing}: no {word}"
            );
        }
        assert!(
            cmd.get_arguments().any(|a| a.get_id() == "output"),
            "{listing}: no -o"
        );
    }
}

#[test]
fn listings_print_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("l.db");
    for format in ["table", "text", "json", "jsonl", "csv", "tsv", "md"] {
        let (code, out, err) = common::rb(&db, &["pages", "--format", format]);
        assert_eq!(code, 0, "{format}: {err}");
        assert!(out.contains("loan-eligibility"), "{format}: {out}");
    }
    let (_, out, _) = common::rb(&db, &["pages", "--format", "csv"]);
    let mut reader = csv::Reader::from_reader(out.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "id",
            "name",
            "rules",
            "sources",
            "targets",
            "revision",
            "updatedAt"
        ]
    );
    assert_eq!(reader.records().count(), 3);
    let (_, out, _) = common::rb(
        &db,
        &["page", "log", "loan-eligibility", "--format", "jsonl"],
    );
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["revision"].is_i64(), "{line}");
    }
    let file = dir.path().join("fields.parquet");
    let (code, _, err) = common::rb(
        &db,
        &[
            "dataset",
            "schema",
            "loan-eligibility",
            "source",
            "--format",
            "parquet",
            "-o",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes::Bytes::from(std::fs::read(&file).unwrap()),
    )
    .unwrap();
    let schema = reader.schema().clone();
    assert_eq!(
        schema.field_with_name("present").unwrap().data_type(),
        &arrow_schema::DataType::Int64
    );
    assert_eq!(
        schema.field_with_name("name").unwrap().data_type(),
        &arrow_schema::DataType::Utf8
    );
    // An empty listing has its columns too (Parquet refused a file of no columns).
    let empty = dir.path().join("empty.db");
    let (code, _, _) = common::rb(&empty, &["--no-seed", "pages"]);
    assert_eq!(code, 0);
    let file = dir.path().join("pages.parquet");
    let (code, _, err) = common::rb(
        &empty,
        &["pages", "--format", "parquet", "-o", file.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = common::rb(&empty, &["pages", "--format", "csv"]);
    assert_eq!(out, "id,name,rules,sources,targets,revision,updatedAt\n");
}
