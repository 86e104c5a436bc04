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
        }
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
        for spec in &self.map {
            let (side, field, column) = read_map(page, spec)?;
            self.dialect
                .check_ident(&column)
                .map_err(|why| AppError::Usage(format!("--map `{spec}`: {why}")))?;
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
                // A rule's own problem is in its logic; a clash of its id with another
                // column is the page's (no partial compilation leaves it out).
                let of_rule = |e: &sql::SqlError| e.rule.is_some() && !e.pointer.ends_with("/id");
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
    let rules_only = errors
        .iter()
        .all(|e| e.rule.is_some() && !e.pointer.ends_with("/id"));
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
        let mut options = request.options(page)?;
        options.provenance = revision.map(|r| (r, env!("CARGO_PKG_VERSION").to_owned()));
        let compiled =
            sql::query(page, &options).map_err(|e| invalid(page, request.dialect, &e))?;
        Ok(SqlQuery {
            text: compiled.sql,
            left_out: compiled
                .refused
                .iter()
                .map(sql::SqlError::left_out)
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
        let mut options = request.options(page)?;
        options.overrides_table = Some(
            request
                .overrides_table
                .clone()
                .unwrap_or_else(|| "overrides".into()),
        );
        sql::data(page, &options).map_err(|e| invalid(page, request.dialect, &[e]))
    }

    /// The DDL and rows of the page's overrides table alone.
    pub fn sql_overrides(&self, spec: &str, request: &SqlRequest) -> Result<String> {
        let (page, _) = self.page_spec(spec)?;
        let mut options = request.options(&page)?;
        options.overrides_table = Some(
            request
                .overrides_table
                .clone()
                .unwrap_or_else(|| "overrides".into()),
        );
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
                    diags.extend(
                        rulebench_core::lint::constant_over_data(&page, &mut matrix)
                            .into_iter()
                            .map(|d| rulebench_core::family::at_written(d, &page.rules, &written))
                            .map(|d| d.locate_in(text)),
                    );
                }
                Checked::of(Some(&page), diags, sql)
            }
            (_, diags) => Checked::of(None, diags, sql),
        }
    }
}

/// `side.field=column` read against the page: the side, a field its rows have, and the
/// column's name; what is not so is a usage error that says which and offers a name.
fn read_map(page: &Page, spec: &str) -> Result<(Side, String, String)> {
    let usage = |why: String| AppError::Usage(format!("--map `{spec}`: {why}"));
    let (name, column) = spec
        .split_once('=')
        .ok_or_else(|| usage("write it as side.field=column, as source.minVcpu=min_vcpu".into()))?;
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
