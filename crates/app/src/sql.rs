//! Use cases: a page as SQL (the query and the data) and which rules translate.

use super::{App, AppError, Result};
use crate::app::with_data_lint;
use rulebench_core::diag::Diagnostic;
use rulebench_core::matrix::Matrix;
use rulebench_core::model::{Page, Side};
use rulebench_core::sql::{self, Dialect, Options};

/// What `rulebench sql` asks for.
#[derive(Debug, Clone)]
pub struct SqlRequest {
    pub dialect: Dialect,
    /// Only this source row (a key, keyHash, id or label).
    pub select: Option<String>,
    /// Each source's selection verdict and recommended target.
    pub all: bool,
    pub source_table: Option<String>,
    pub target_table: Option<String>,
    pub overrides_table: Option<String>,
    /// The long shape: a row per (source, target, rule).
    pub long: bool,
    /// `side.field=column`: the tables' own names for the page's fields.
    pub map: Vec<String>,
    /// Compile the rules that translate; the others are NULL columns.
    pub partial: bool,
    /// How the overrides table names its pairs.
    pub override_keys: sql::OverrideKeys,
    /// A mapping file (its name, its text): a `side.field=column` per line, `#`
    /// comments and blank lines apart; `--map` given too wins.
    pub map_file: Option<(String, String)>,
    /// The thresholds bound as query parameters (`full_threshold`, `partial_threshold`)
    /// instead of literals; in a dbt model, dbt variables.
    pub params: bool,
}

impl SqlRequest {
    pub fn new(dialect: Dialect) -> SqlRequest {
        SqlRequest {
            dialect,
            select: None,
            all: false,
            source_table: None,
            target_table: None,
            overrides_table: None,
            long: false,
            map: Vec::new(),
            partial: false,
            override_keys: sql::OverrideKeys::Strings,
            map_file: None,
            params: false,
        }
    }

    /// The options of what writes the tables (`--data`, `--data-files`, `--overrides`):
    /// the overrides table always, named `overrides` unless told otherwise.
    fn data_options(&self, page: &Page) -> Result<Options> {
        let mut options = self.options(page)?;
        options.overrides_table = Some(
            self.overrides_table
                .clone()
                .unwrap_or_else(|| "overrides".into()),
        );
        Ok(options)
    }

    fn options(&self, page: &Page) -> Result<Options> {
        let mut o = Options::new(self.dialect);
        if let Some(t) = &self.source_table {
            o.source_table = t.clone();
        }
        if let Some(t) = &self.target_table {
            o.target_table = t.clone();
        }
        // A page without overrides reads no overrides table unless one is named.
        o.overrides_table = match &self.overrides_table {
            Some(t) => Some(t.clone()),
            None if page.overrides.is_empty() => None,
            None => Some("overrides".into()),
        };
        o.selection = self.all;
        o.long = self.long;
        o.partial = self.partial;
        o.override_keys = self.override_keys;
        if self.params {
            o.params = Some(std::array::from_fn(|i| {
                self.dialect.param(sql::PARAMS[i].1, i + 1)
            }));
        }
        if let Some(needle) = &self.select {
            let row = App::find_row(page, Side::Source, needle)?;
            o.select = Some(page.source.row_key(&page.source.rows[row]));
        }
        for (what, name) in [
            ("--source-table", &o.source_table),
            ("--target-table", &o.target_table),
        ]
        .into_iter()
        .chain(o.overrides_table.as_ref().map(|t| ("--overrides-table", t)))
        {
            // A qualified name (`schema.table`): each part a name of its own.
            for part in name.split('.') {
                let checked = if part.is_empty() {
                    Err(
                        "a part of the name is empty (`schema.table` names a table in a schema)"
                            .to_owned(),
                    )
                } else {
                    self.dialect.check_ident(part)
                };
                checked.map_err(|why| AppError::Usage(format!("{what} `{name}`: {why}")))?;
            }
        }
        // The file's lines first, so that `--map` wins; an error names the line.
        let file_lines = self.map_file.iter().flat_map(|(name, text)| {
            text.lines().enumerate().filter_map(move |(i, line)| {
                let line = line.trim();
                (!line.is_empty() && !line.starts_with('#'))
                    .then(|| (Some(format!("{name}:{}", i + 1)), line))
            })
        });
        let flags = self.map.iter().map(|spec| (None, spec.as_str()));
        for (place, spec) in file_lines.chain(flags) {
            let at = |e: AppError| match (&place, e) {
                (Some(place), AppError::Usage(m)) => AppError::Usage(format!("{place}: {m}")),
                (_, e) => e,
            };
            let (side, field, column) = read_map(page, spec).map_err(at)?;
            self.dialect
                .check_ident(&column)
                .map_err(|why| at(AppError::Usage(format!("--map `{spec}`: {why}"))))?;
            o.columns.insert((side, field), column);
        }
        Ok(o)
    }
}

/// A page's check: its diagnostics and, when a dialect was asked for, how many of its
/// rules translate to it.
#[derive(Debug, Clone)]
pub struct Checked {
    pub diagnostics: Vec<Diagnostic>,
    pub sql: Option<SqlSummary>,
}

/// How much of a page translates to a dialect.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SqlSummary {
    pub dialect: Dialect,
    /// Rules that translate, of all.
    pub translated: usize,
    pub rules: usize,
    /// Problems of the page itself (keys, priority, names): `sql` refuses the page
    /// however many rules translate, `--partial` too.
    pub page_problems: usize,
}

impl std::fmt::Display for SqlSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let SqlSummary {
            dialect,
            translated,
            rules,
            page_problems,
        } = *self;
        write!(
            f,
            "{translated} of {rules} rules translate to {} SQL",
            dialect.name()
        )?;
        if page_problems > 0 {
            write!(
                f,
                ", but the page does not: {page_problems} of its own problems above (its keys, priority or names)"
            )
        } else if translated < rules {
            write!(
                f,
                " (`rulebench sql --partial` compiles them and leaves the other {} NULL)",
                rules - translated
            )
        } else {
            Ok(())
        }
    }
}

impl Checked {
    /// A valid page's diagnostics with every reason it does not translate to `sql` (one
    /// compilation); a page with errors is not compiled.
    pub(super) fn of(
        page: Option<&Page>,
        mut diagnostics: Vec<Diagnostic>,
        sql: Option<Dialect>,
    ) -> Checked {
        let sql = match (page, sql) {
            (Some(page), Some(dialect)) if !diagnostics.iter().any(Diagnostic::is_error) => {
                let problems = sql::problems(page, dialect);
                let of_rule = sql::SqlError::in_rule_logic;
                let failing = page
                    .rules
                    .iter()
                    .filter(|r| {
                        problems
                            .iter()
                            .any(|e| of_rule(e) && e.rule.as_deref() == Some(r.id.as_str()))
                    })
                    .count();
                diagnostics.extend(problems.iter().map(sql::SqlError::diagnostic));
                Some(SqlSummary {
                    dialect,
                    translated: page.rules.len() - failing,
                    rules: page.rules.len(),
                    page_problems: problems.iter().filter(|e| !of_rule(e)).count(),
                })
            }
            _ => None,
        };
        Checked { diagnostics, sql }
    }
}

fn invalid(page: &Page, dialect: Dialect, errors: &[sql::SqlError]) -> AppError {
    // Rules that do not translate can be left out (`--partial`); the page's own problems
    // cannot.
    let rules_only = errors.iter().all(sql::SqlError::in_rule_logic);
    AppError::Invalid {
        origin: format!(
            "page `{}` as {} SQL{}",
            page.id,
            dialect.name(),
            if rules_only {
                " (--partial compiles the rules that translate and leaves the others NULL)"
            } else {
                ""
            }
        ),
        diagnostics: errors.iter().map(sql::SqlError::diagnostic).collect(),
    }
}

/// A query, and the rules it leaves out (`--partial`) as diagnostics.
#[derive(Debug, Clone)]
pub struct SqlQuery {
    pub text: String,
    pub left_out: Vec<Diagnostic>,
    /// The ids of the rules left out.
    pub left_out_rules: Vec<String>,
}

impl App {
    /// The page (`PAGE` or `PAGE@N`) compiled to one query.
    pub fn sql_query(&self, spec: &str, request: &SqlRequest) -> Result<SqlQuery> {
        let (page, revision) = self.page_spec(spec)?;
        // The header says which revision, and which rulebench, made it.
        Self::compile(&page, request, Some(revision))
    }

    /// A page compiled to one query.
    pub fn sql_query_of(page: &Page, request: &SqlRequest) -> Result<String> {
        Self::compile(page, request, None).map(|q| q.text)
    }

    /// The one compilation of a query, its header naming `revision` when known.
    fn compile(page: &Page, request: &SqlRequest, revision: Option<i64>) -> Result<SqlQuery> {
        Self::compile_with(page, request, revision, |_| {})
    }

    /// As [`App::compile`], with the options changed by `tweak` last.
    fn compile_with(
        page: &Page,
        request: &SqlRequest,
        revision: Option<i64>,
        tweak: impl FnOnce(&mut Options),
    ) -> Result<SqlQuery> {
        let mut options = request.options(page)?;
        options.provenance = revision.map(|r| (r, env!("CARGO_PKG_VERSION").to_owned()));
        tweak(&mut options);
        let compiled =
            sql::query(page, &options).map_err(|e| invalid(page, request.dialect, &e))?;
        Ok(SqlQuery {
            text: compiled.sql,
            left_out: compiled
                .refused
                .iter()
                .map(sql::SqlError::left_out)
                .collect(),
            left_out_rules: compiled
                .refused
                .into_iter()
                .filter_map(|e| e.rule)
                .collect(),
        })
    }

    /// The DDL and rows of the page's datasets and overrides.
    pub fn sql_data(&self, spec: &str, request: &SqlRequest) -> Result<String> {
        let (page, _) = self.page_spec(spec)?;
        Self::sql_data_of(&page, request)
    }

    /// The DDL and rows of a page's datasets and overrides.
    pub fn sql_data_of(page: &Page, request: &SqlRequest) -> Result<String> {
        let options = request.data_options(page)?;
        sql::data(page, &options).map_err(|e| invalid(page, request.dialect, &[e]))
    }

    /// The page's query as a dbt model: its SQL, where each table is a `{{ ref('name') }}`
    /// (a plain name) or a `{{ source('schema', 'table') }}` (a qualified one), and its
    /// properties file (`schema.yml`: the model's columns with tests).
    pub fn sql_dbt(
        &self,
        spec: &str,
        request: &SqlRequest,
        model: Option<&str>,
    ) -> Result<DbtModel> {
        let (page, revision) = self.page_spec(spec)?;
        let name = match model {
            Some(m) => m.to_owned(),
            None => format!(
                "{}_verdicts",
                page.id
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    })
                    .collect::<String>()
            ),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(AppError::Usage(format!(
                "--dbt-model `{name}`: a dbt model's name is letters, digits and `_`"
            )));
        }
        // Each table by a token the SQL cannot hold otherwise, replaced by its Jinja call
        // once the rest of the text is escaped for Jinja.
        let options = request.options(&page)?;
        let mut tables: Vec<(String, String)> = Vec::new();
        for (what, table) in [
            ("--source-table", Some(&options.source_table)),
            ("--target-table", Some(&options.target_table)),
            ("--overrides-table", options.overrides_table.as_ref()),
        ] {
            let Some(table) = table else { continue };
            let quote = |s: &str| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"));
            let jinja = match table.split('.').collect::<Vec<_>>().as_slice() {
                [model] => format!("{{{{ ref({}) }}}}", quote(model)),
                [source, table] => format!("{{{{ source({}, {}) }}}}", quote(source), quote(table)),
                _ => {
                    return Err(AppError::Usage(format!(
                        "{what} `{table}`: in a dbt model a table is a model (`clients`: ref) or a source's table (`wh.clients`: source)"
                    )));
                }
            };
            tables.push((format!("rb_dbt_table_{}", tables.len()), jinja));
        }
        let tokens: Vec<String> = tables.iter().map(|(t, _)| t.clone()).collect();
        // Bound thresholds are dbt variables, the page's values their defaults.
        let mut params: Vec<(String, String)> = Vec::new();
        if request.params {
            for (policy, name) in sql::PARAMS {
                let value = match policy {
                    "fullThreshold" => page.device_policy.full_threshold,
                    _ => page.device_policy.partial_threshold,
                };
                params.push((
                    format!("rb_dbt_param_{name}"),
                    format!("{{{{ var('{name}', {value}) }}}}"),
                ));
            }
        }
        let query = Self::compile_with(&page, request, Some(revision), |o| {
            if !params.is_empty() {
                o.params = Some([params[0].0.clone(), params[1].0.clone()]);
            }
            o.verbatim_tables = true;
            o.source_table = tokens[0].clone();
            o.target_table = tokens[1].clone();
            if o.overrides_table.is_some() {
                o.overrides_table = Some(tokens[2].clone());
            }
        })?;
        let mut sql = format!(
            "{{{{ config(materialized='table') }}}}\n{}",
            jinja_escape(&query.text)
        );
        for (token, jinja) in tables.iter().chain(&params) {
            sql = sql.replace(token.as_str(), jinja);
        }
        let yml = dbt_properties(&page, request, &name, revision, &query.left_out_rules);
        Ok(DbtModel {
            name,
            sql,
            yml,
            left_out: query.left_out,
        })
    }

    /// The page's dbt model written into `dir` (made if need be) as `NAME.sql` and
    /// `NAME.yml`, each whole or not at all.
    pub fn write_dbt_model(
        &self,
        spec: &str,
        request: &SqlRequest,
        model: Option<&str>,
        dir: &std::path::Path,
    ) -> Result<DbtWritten> {
        let m = self.sql_dbt(spec, request, model)?;
        std::fs::create_dir_all(dir).map_err(|source| AppError::Io {
            path: dir.display().to_string(),
            source,
        })?;
        let (sql, yml) = (
            dir.join(format!("{}.sql", m.name)),
            dir.join(format!("{}.yml", m.name)),
        );
        self.export_file(&sql, m.sql.as_bytes())?;
        self.export_file(&yml, m.yml.as_bytes())?;
        Ok(DbtWritten {
            name: m.name,
            sql,
            yml,
            left_out: m.left_out,
        })
    }

    /// The page's tables as Parquet files in `dir` (made if need be), one per table
    /// (`source.parquet`, `target.parquet`, `overrides.parquet`), and the script that
    /// loads them (`load.sql`: DuckDB's `read_parquet`, Spark's parquet views) by their
    /// absolute paths. Loads in a blink where an INSERT script takes seconds.
    pub fn sql_data_files(
        &self,
        spec: &str,
        request: &SqlRequest,
        dir: &std::path::Path,
    ) -> Result<DataFiles> {
        let (page, _) = self.page_spec(spec)?;
        Self::sql_data_files_of(&page, request, dir, &|path| self.refuse_database_file(path))
    }

    /// A page's tables as Parquet files and their load script (see
    /// [`App::sql_data_files`]); `guard` may refuse a path before it is written.
    pub fn sql_data_files_of(
        page: &Page,
        request: &SqlRequest,
        dir: &std::path::Path,
        guard: &dyn Fn(&std::path::Path) -> Result<()>,
    ) -> Result<DataFiles> {
        let write = |path: &std::path::Path, bytes: &[u8]| -> Result<()> {
            guard(path)?;
            super::export::write_atomic(path, bytes)
        };
        let read = match request.dialect {
            // A qualified name (`wh.clients`) is the table the query reads, in its
            // schema, made if need be.
            Dialect::Duckdb => |d: Dialect, table: &str, path: &str| {
                let schema = match table.rsplit_once('.') {
                    Some((schema, _)) => {
                        format!("CREATE SCHEMA IF NOT EXISTS {};\n", d.table_ident(schema))
                    }
                    None => String::new(),
                };
                format!(
                    "{schema}CREATE TABLE {} AS SELECT * FROM read_parquet({});",
                    d.table_ident(table),
                    d.string(path)
                )
            },
            Dialect::Spark => |d: Dialect, table: &str, path: &str| {
                format!(
                    "CREATE OR REPLACE TEMPORARY VIEW {} USING parquet OPTIONS (path {});",
                    d.ident(table),
                    d.string(path)
                )
            },
            other => {
                return Err(AppError::Usage(format!(
                    "--data-files: {} reads no Parquet files; its data is a script: --data",
                    other.name()
                )));
            }
        };
        let options = request.data_options(page)?;
        let tables =
            sql::tables(page, &options).map_err(|e| invalid(page, request.dialect, &[e]))?;
        let io = |path: &std::path::Path| {
            let path = path.display().to_string();
            move |source| AppError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let dir = std::fs::canonicalize(dir).map_err(io(dir))?;
        let mut load = format!(
            "-- rulebench: the rows of page {} for {}, from Parquet files.\n",
            rulebench_core::text::sanitize(&page.id),
            request.dialect.name()
        );
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        for t in &tables {
            // The file's name from the table's: letters, digits, `_`, `-` and `.` kept,
            // anything else (a `/`) made `_`; two tables never share a file.
            let stem: String = t
                .name
                .chars()
                .map(|c| {
                    if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let path = dir.join(format!("{}.parquet", stem.trim_start_matches('.')));
            if files.contains(&path) {
                return Err(AppError::Usage(format!(
                    "--data-files: two tables would be written to {}: name them apart",
                    path.display()
                )));
            }
            write(&path, &parquet_of(t)?)?;
            load.push_str(&format!(
                "\n-- {}\n{}\n",
                rulebench_core::text::sanitize(&t.note),
                read(request.dialect, &t.name, &path.display().to_string())
            ));
            files.push(path);
        }
        let script = dir.join("load.sql");
        write(&script, load.as_bytes())?;
        Ok(DataFiles { files, script })
    }

    /// The DDL and rows of the page's overrides table alone.
    pub fn sql_overrides(&self, spec: &str, request: &SqlRequest) -> Result<String> {
        let (page, _) = self.page_spec(spec)?;
        let options = request.data_options(&page)?;
        let mut text = format!(
            "-- rulebench: the overrides of page {} for {}.\n",
            rulebench_core::text::sanitize(&page.id),
            request.dialect.name()
        );
        text.push_str(
            &sql::overrides_data(&page, &options)
                .map_err(|e| invalid(&page, request.dialect, &[e]))?,
        );
        Ok(text)
    }

    /// Per rule: whether it translates to a dialect, and why not.
    pub fn sql_rules(page: &Page, dialect: Dialect) -> Vec<(String, Option<String>)> {
        sql::rule_report(page, dialect)
            .into_iter()
            .map(|(id, e)| (id, e.map(|e| e.to_string())))
            .collect()
    }
}

impl App {
    /// Validates a stored page and, given a dialect, says which of its rules translate
    /// to SQL (the page is read once).
    pub fn check_page_with(&self, id: &str, sql: Option<Dialect>) -> Result<Checked> {
        let (page, _) = self.page(id)?;
        let diagnostics = with_data_lint(&page, rulebench_core::check::page(&page));
        Ok(Checked::of(Some(&page), diagnostics, sql))
    }

    /// Validates a page file and, given a dialect, says which of its rules translate to
    /// SQL (the text is read once).
    pub fn check_text_with(text: &str, sql: Option<Dialect>) -> Checked {
        match rulebench_core::read::page_all(text) {
            (Some(page), mut diags) if !diags.iter().any(Diagnostic::is_error) => {
                if let Ok(mut matrix) = Matrix::new(&page) {
                    // Pointed at the file's rules (a family's members at their family).
                    let written = rulebench_core::family::written_indexes(&page.rules);
                    // Placed in one pass over the text (not one per warning).
                    let lints = crate::app::data_lints(&page, &mut matrix)
                        .into_iter()
                        .map(|d| rulebench_core::family::at_written(d, &page.rules, &written))
                        .collect();
                    diags.extend(rulebench_core::diag::locate_all(lints, text));
                }
                Checked::of(Some(&page), diags, sql)
            }
            (_, diags) => Checked::of(None, diags, sql),
        }
    }
}

/// A page's query as a dbt model (`rulebench sql --dbt`).
#[derive(Debug, Clone)]
pub struct DbtModel {
    /// The model's name (`loan_eligibility_verdicts`): its files are `NAME.sql` and
    /// `NAME.yml`.
    pub name: String,
    pub sql: String,
    /// The model's properties: its columns, described, with tests.
    pub yml: String,
    /// The rules left out (`--partial`), as warnings.
    pub left_out: Vec<Diagnostic>,
}

/// Where `--data-files` wrote the tables and the script that loads them.
#[derive(Debug, Clone)]
pub struct DataFiles {
    pub files: Vec<std::path::PathBuf>,
    pub script: std::path::PathBuf,
}

/// A table as a Parquet file: each column in the Arrow type of its kind (strings,
/// 64-bit integers, doubles, booleans, lists of strings); a column of several types,
/// objects or other arrays as each value's JSON text, as the SQL script stores it.
fn parquet_of(t: &sql::TableData<'_>) -> Result<Vec<u8>> {
    use arrow_array::builder::{ListBuilder, StringBuilder};
    use arrow_array::{ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray};
    use serde_json::Value;
    use std::sync::Arc;
    let column = |i: usize| t.rows.iter().map(move |r| r[i].as_ref());
    let mut arrays: Vec<(String, ArrayRef)> = Vec::new();
    for (i, (name, kind)) in t.columns.iter().enumerate() {
        let array: ArrayRef = match kind {
            sql::Kind::Text => Arc::new(StringArray::from_iter(column(i).map(Value::as_str))),
            sql::Kind::Int => {
                let mut values = Vec::with_capacity(t.rows.len());
                for v in column(i) {
                    values.push(match v {
                        Value::Null => None,
                        v => Some(v.as_i64().ok_or_else(|| {
                            AppError::Usage(format!(
                                "--data-files: `{name}` holds {v}, beyond a 64-bit integer"
                            ))
                        })?),
                    });
                }
                Arc::new(Int64Array::from(values))
            }
            sql::Kind::Num => Arc::new(Float64Array::from_iter(column(i).map(Value::as_f64))),
            sql::Kind::Bool => Arc::new(BooleanArray::from_iter(column(i).map(Value::as_bool))),
            sql::Kind::TextArray => {
                let mut list = ListBuilder::new(StringBuilder::new());
                for v in column(i) {
                    match v.as_array() {
                        Some(items) => {
                            for item in items {
                                list.values().append_option(item.as_str());
                            }
                            list.append(true);
                        }
                        None => list.append(false),
                    }
                }
                Arc::new(list.finish())
            }
            sql::Kind::Null | sql::Kind::Mixed(_) | sql::Kind::Other(_) => Arc::new(
                StringArray::from_iter(column(i).map(|v| (!v.is_null()).then(|| v.to_string()))),
            ),
        };
        arrays.push((name.clone(), array));
    }
    if arrays.is_empty() {
        // A dataset without fields still needs a column (as its CREATE TABLE has).
        arrays.push((
            "rb_empty".into(),
            Arc::new(StringArray::from_iter(t.rows.iter().map(|_| None::<&str>))),
        ));
    }
    let batch = RecordBatch::try_from_iter(arrays)
        .map_err(|e| AppError::Usage(format!("--data-files: table {}: {e}", t.name)))?;
    let mut out = Vec::new();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let write = |out: &mut Vec<u8>| -> std::result::Result<(), parquet::errors::ParquetError> {
        let mut writer = parquet::arrow::ArrowWriter::try_new(out, batch.schema(), Some(props))?;
        writer.write(&batch)?;
        writer.close()?;
        Ok(())
    };
    write(&mut out).map_err(|e| AppError::Usage(format!("--data-files: table {}: {e}", t.name)))?;
    Ok(out)
}

/// Where a dbt model was written.
#[derive(Debug, Clone)]
pub struct DbtWritten {
    pub name: String,
    pub sql: std::path::PathBuf,
    pub yml: std::path::PathBuf,
    /// The rules left out (`--partial`), as warnings.
    pub left_out: Vec<Diagnostic>,
}

/// SQL text made literal for Jinja: every `{{`, `{%` and `{#` is printed by an
/// expression (`{{ '{{' }}`), so a rule's string constant never opens a tag.
fn jinja_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '{'
            && let Some(&next) = chars.peek()
            && matches!(next, '{' | '%' | '#')
        {
            chars.next();
            out.push_str(&format!("{{{{ '{{{next}' }}}}"));
            continue;
        }
        out.push(c);
    }
    out
}

/// The dbt properties file of a page's model: every output column, the rules' names as
/// descriptions, and tests that hold whatever the data (keys not null, the verdict and
/// reason in their vocabularies).
fn dbt_properties(
    page: &Page,
    request: &SqlRequest,
    name: &str,
    revision: i64,
    refused: &[String],
) -> String {
    // YAML's double-quoted scalars take JSON's escapes; characters YAML refuses raw
    // (DEL, C1 controls) are escaped too.
    let q = |s: &str| {
        rulebench_core::text::json_safe(&serde_json::Value::String(s.to_owned()).to_string())
            .into_owned()
    };
    let mut out = format!(
        "version: 2\n\nmodels:\n  - name: {}\n    description: {}\n    columns:\n",
        q(name),
        q(&format!(
            "Verdicts of rulebench page {} at revision {revision} (rulebench {}): {}.",
            page.id,
            env!("CARGO_PKG_VERSION"),
            if request.long {
                "a row per (source, target, rule) with the rule's outcome"
            } else {
                "a row per (source, target) with every rule's outcome, the score, the verdict and its reason"
            }
        ))
    );
    let column = |out: &mut String, name: &str, description: &str, tests: &[String]| {
        out.push_str(&format!(
            "      - name: {}\n        description: {}\n",
            q(name),
            q(description)
        ));
        if !tests.is_empty() {
            out.push_str("        data_tests:\n");
            for t in tests {
                out.push_str(&format!("          - {t}\n"));
            }
        }
    };
    let not_null = vec!["not_null".to_owned()];
    column(&mut out, "source_key", "the source row's key", &not_null);
    column(&mut out, "target_key", "the target row's key", &not_null);
    column(&mut out, "target_id", "the target's id", &not_null);
    // The rules the model's own compilation left out (with `--partial`).
    let left_out = |id: &str| refused.iter().any(|r| r == id);
    if request.long {
        let ids: Vec<&str> = page
            .rules
            .iter()
            .map(|r| r.id.as_str())
            .filter(|id| !left_out(id))
            .collect();
        let mut tests = vec!["not_null".to_owned()];
        // dbt's accepted_values quotes each value with `'` and escapes nothing, and an
        // empty list is no SQL: the test only where it can be written.
        if !ids.is_empty() && !ids.iter().any(|id| id.contains('\'')) {
            let values: Vec<String> = ids.iter().map(|id| q(id)).collect();
            tests.push(format!(
                "accepted_values:\n              values: [{}]",
                values.join(", ")
            ));
        }
        column(&mut out, "rule_id", "the rule's id", &tests);
        column(
            &mut out,
            "passed",
            "whether the rule passes (NULL: it does not apply)",
            &[],
        );
        return out;
    }
    for rule in &page.rules {
        let description = if left_out(&rule.id) {
            format!("{} (not translated: NULL)", rule.name)
        } else {
            rule.name.clone()
        };
        column(&mut out, &rule.id, &description, &[]);
    }
    // With rules left out, the verdicts may be NULL.
    let maybe_null = |mut tests: Vec<String>| {
        if !request.partial {
            tests.insert(0, "not_null".to_owned());
        }
        tests
    };
    column(
        &mut out,
        "score",
        "passed weight / applicable weight",
        &maybe_null(vec![]),
    );
    column(
        &mut out,
        "verdict",
        "2 full, 1 partial, 0 not compatible",
        &maybe_null(vec![
            "accepted_values:\n              values: [0, 1, 2]\n              quote: false"
                .to_owned(),
        ]),
    );
    column(
        &mut out,
        "reason",
        "why the verdict",
        &maybe_null(vec![format!(
            "accepted_values:\n              values: [{}]",
            ["full", "partial", "low-score", "required-fail", "override"]
                .iter()
                .map(|r| q(r))
                .collect::<Vec<_>>()
                .join(", ")
        )]),
    );
    if request.all || request.select.is_some() {
        column(
            &mut out,
            "selection_verdict",
            "the source's selection verdict",
            &maybe_null(vec![
                "accepted_values:\n              values: [0, 1, 2]\n              quote: false"
                    .to_owned(),
            ]),
        );
        column(
            &mut out,
            "recommended_target",
            "the source's recommended target (NULL when its selection verdict is 0)",
            &[],
        );
    }
    out
}

/// `side.field=column` read against the page: the side, a field its rows have, and the
/// column's name; what is not so is a usage error that says which and offers a name.
fn read_map(page: &Page, spec: &str) -> Result<(Side, String, String)> {
    let usage = |why: String| AppError::Usage(format!("--map `{spec}`: {why}"));
    let (name, column) = spec
        .split_once('=')
        .ok_or_else(|| usage("write it as side.field=column, as source.minVcpu=min_vcpu".into()))?;
    // Blanks around `=` are not part of the names.
    let (name, column) = (name.trim(), column.trim());
    let (side, field) = name
        .split_once('.')
        .ok_or_else(|| usage("name the side: source.field or target.field".into()))?;
    let side = match side {
        "source" => Side::Source,
        "target" => Side::Target,
        other => return Err(usage(format!("`{other}` is not a side: source or target"))),
    };
    let ds = page.dataset(side);
    let known = ds.rows.iter().any(|r| r.contains_key(field))
        || ds.key.iter().any(|k| k == field)
        || ds.defaults.contains_key(field);
    if !known {
        let fields: std::collections::BTreeSet<&str> = ds
            .rows
            .iter()
            .flat_map(|r| r.keys().map(String::as_str))
            .collect();
        let hint = rulebench_core::diag::did_you_mean(field, fields.iter().copied())
            .map_or(String::new(), |f| format!(" (did you mean `{f}`?)"));
        return Err(usage(format!(
            "the {} rows have no field `{field}`{hint}",
            side.name()
        )));
    }
    if column.trim().is_empty() {
        return Err(usage("the column's name is empty".into()));
    }
    Ok((side, field.to_owned(), column.to_owned()))
}
