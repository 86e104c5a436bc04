//! `rulebench sql`: a page's rules and policies as one SQL query over a source and a target table

use std::path::PathBuf;

use crate::cli::common::{dialect_arg, page_ids};
use crate::cli::io::{Db, Exit, Failure, write_text};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The page's id (`rulebench pages` lists them), or PAGE@N
    #[arg(add = page_ids())]
    pub page: String,
    /// The SQL dialect to write
    #[arg(long, value_parser = dialect_arg())]
    pub dialect: crate::app::types::Dialect,
    /// Only this source row (its key, keyHash, id or label), with its selection
    /// verdict and recommended target
    #[arg(long, value_name = "KEY", conflicts_with_all = ["all", "data"])]
    pub select: Option<String>,
    /// Also each source's selection verdict and recommended target
    #[arg(long, conflicts_with = "data")]
    pub all: bool,
    /// Print the DDL and the rows of the page's datasets and overrides instead
    #[arg(long)]
    pub data: bool,
    /// Write the page's tables as Parquet files into DIR instead, with load.sql, the
    /// script that reads them (duckdb: read_parquet; spark: parquet views)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["data", "select", "all", "long", "partial", "output", "dbt", "overrides"])]
    pub data_files: Option<PathBuf>,
    /// Print the DDL and the rows of the page's overrides table alone instead
    #[arg(long, conflicts_with_all = ["data", "select", "all", "long", "partial"])]
    pub overrides: bool,
    /// How the overrides table names a pair: `strings` (source_key, target_key: the
    /// rows' key strings, `site=BER|patientNo=1`) or `fields` (a column per key field:
    /// source_site, source_patientNo, target_id)
    #[arg(long, value_enum, value_name = "HOW", default_value_t = OverrideKeysArg::Strings)]
    pub override_keys: OverrideKeysArg,
    /// The long shape: a row per (source, target, rule) with the rule's outcome
    /// (source_key, target_key, target_id, rule_id, passed), whose columns do not move
    /// when rules are added or renamed
    #[arg(long, conflicts_with = "data")]
    pub long: bool,
    /// The source table's name (`schema.table` names one in a schema)
    #[arg(long, value_name = "NAME")]
    pub source_table: Option<String>,
    /// The target table's name (`schema.table` names one in a schema)
    #[arg(long, value_name = "NAME")]
    pub target_table: Option<String>,
    /// A page field's column in the table, when the table names it otherwise:
    /// `source.minVcpu=min_vcpu` (repeat for more)
    #[arg(long = "map", value_name = "SIDE.FIELD=COLUMN")]
    pub map: Vec<String>,
    /// A file of such mappings, one `side.field=column` per line (`#` comments); a
    /// `--map` given too wins
    #[arg(long, value_name = "FILE")]
    pub map_file: Option<String>,
    /// The overrides table's name (source_key, target_key, value); read when the
    /// page has overrides or this is given
    #[arg(long, value_name = "NAME")]
    pub overrides_table: Option<String>,
    /// Compile the rules that translate and leave the others out: their columns are
    /// NULL, and the score, verdict, reason and selection are NULL where a rule left out
    /// could change them (each rule left out is named on stderr and in the header)
    #[arg(long, conflicts_with = "data")]
    pub partial: bool,
    /// Bind the thresholds as query parameters instead of literals: full_threshold and
    /// partial_threshold (`:name` in SQLite and Spark, `$name` in DuckDB, `$1` and `$2`
    /// in PostgreSQL; dbt variables in a dbt model, the page's values their defaults)
    #[arg(long, conflicts_with_all = ["data", "data_files", "overrides"])]
    pub params: bool,
    /// Write the query as a dbt model into this directory: NAME.sql (each table a
    /// `{{ ref('name') }}`, or a `{{ source('wh', 'name') }}` for `wh.name`) and NAME.yml
    /// (its columns, described, with tests)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["data", "overrides", "output"])]
    pub dbt: Option<PathBuf>,
    /// The dbt model's name (default: the page's id in snake_case, then `_verdicts`)
    #[arg(long, value_name = "NAME", requires = "dbt")]
    pub dbt_model: Option<String>,
    /// Write the SQL here instead of stdout (`-`: stdout)
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--override-keys`, as the command line spells it.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverrideKeysArg {
    Strings,
    Fields,
}

impl From<OverrideKeysArg> for crate::app::types::OverrideKeys {
    fn from(a: OverrideKeysArg) -> Self {
        match a {
            OverrideKeysArg::Strings => Self::Strings,
            OverrideKeysArg::Fields => Self::Fields,
        }
    }
}

pub fn run(db: &Db, args: Args) -> Result<Exit, Failure> {
    let Args {
        page,
        dialect,
        select,
        all,
        data,
        data_files,
        overrides,
        override_keys,
        long,
        map,
        map_file,
        partial,
        params,
        dbt,
        dbt_model,
        source_table,
        target_table,
        overrides_table,
        output,
    } = args;
    let app = db.read()?;
    let request = crate::app::sql::SqlRequest {
        dialect,
        select,
        all,
        source_table,
        target_table,
        overrides_table,
        long,
        map,
        partial,
        params,
        override_keys: override_keys.into(),
        map_file: map_file
            .map(|f| {
                crate::cli::io::read_arg(&f, crate::cli::MAX_RULE_FILE_BYTES)
                    .map(|(text, _)| (f, text))
            })
            .transpose()?,
    };
    if let Some(dir) = data_files {
        let written = app.sql_data_files(&page, &request, &dir)?;
        db.status(&format!(
            "wrote {} tables as Parquet and {}",
            written.files.len(),
            written.script.display()
        ));
        return Ok(Exit::Ok);
    }
    if let Some(dir) = dbt {
        let written = app.write_dbt_model(&page, &request, dbt_model.as_deref(), &dir)?;
        for d in &written.left_out {
            eprintln!("{page}: {d}");
        }
        db.status(&format!(
            "wrote the dbt model {} ({} and {})",
            written.name,
            written.sql.display(),
            written.yml.display()
        ));
        return Ok(Exit::Ok);
    }
    let text = if overrides {
        app.sql_overrides(&page, &request)?
    } else if data {
        app.sql_data(&page, &request)?
    } else {
        let query = app.sql_query(&page, &request)?;
        for d in &query.left_out {
            eprintln!("{page}: {d}");
        }
        query.text
    };
    // `-o -` is stdout, as everywhere else.
    match output.filter(|p| p.as_os_str() != "-") {
        Some(path) => app.export_file(&path, text.as_bytes())?,
        // String literals spell unsafe characters by code: the text is safe.
        None => write_text(&text)?,
    }
    Ok(Exit::Ok)
}
