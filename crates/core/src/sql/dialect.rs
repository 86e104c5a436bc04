//! What differs between the SQL dialects: quoting, literals, types and a few functions.

use super::super::text::is_unsafe;
use super::types::Kind;

/// A SQL dialect the query is written for: the one list the compiler, the command line
/// (`--dialect`, `check --sql`) and the workbench's prompt read (a new variant is listed
/// everywhere by derive, and `name` makes the build say what it is called).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray)]
pub enum Dialect {
    Sqlite,
    Duckdb,
    Postgres,
    Spark,
}

// A variant missing from `ALL` does not build.
const _: () = assert!(Dialect::ALL.len() == <Dialect as strum::VariantArray>::VARIANTS.len());

impl Dialect {
    pub const ALL: [Dialect; 4] = [
        Dialect::Sqlite,
        Dialect::Duckdb,
        Dialect::Postgres,
        Dialect::Spark,
    ];

    /// Every dialect's name, for help and prompts: `sqlite/duckdb/postgres/spark`.
    pub fn names(separator: &str) -> String {
        Dialect::ALL
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(separator)
    }

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Duckdb => "duckdb",
            Dialect::Postgres => "postgres",
            Dialect::Spark => "spark",
        }
    }

    pub fn parse(text: &str) -> Option<Dialect> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(text))
    }

    /// A quoted identifier.
    pub fn ident(self, name: &str) -> String {
        match self {
            Dialect::Spark => format!("`{}`", name.replace('`', "``")),
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Postgres => {
                format!("\"{}\"", name.replace('"', "\"\""))
            }
        }
    }

    /// A table's name, which may be qualified (`schema.table`, `db.schema.table`): each
    /// part quoted on its own.
    pub fn table_ident(self, name: &str) -> String {
        name.split('.')
            .map(|part| self.ident(part))
            .collect::<Vec<_>>()
            .join(".")
    }

    /// The identifier as the dialect compares names: DuckDB and Spark ignore case even
    /// in quoted names.
    pub fn fold_ident(self, name: &str) -> String {
        match self {
            Dialect::Duckdb | Dialect::Spark => name.to_lowercase(),
            Dialect::Sqlite | Dialect::Postgres => name.to_owned(),
        }
    }

    /// Whether a name can be a column: PostgreSQL cuts names at 63 bytes (two rules
    /// would share a column), and no dialect takes a NUL.
    pub fn check_ident(self, name: &str) -> Result<(), String> {
        if name.chars().any(is_unsafe) {
            return Err(
                "a name cannot hold control, bidirectional or zero-width characters".into(),
            );
        }
        let longest = match self {
            Dialect::Postgres => Some(("PostgreSQL", 63)),
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Spark => None,
        };
        if let Some((engine, n)) = longest
            && name.len() > n
        {
            return Err(format!(
                "{engine} cuts names at {n} bytes and this one has {}",
                name.len()
            ));
        }
        if name.is_empty() {
            return Err("a column needs a name".into());
        }
        Ok(())
    }

    /// A string literal. Characters that must not reach a terminal raw (controls,
    /// bidirectional and zero-width characters; line breaks and tabs apart) are spelled
    /// by code, so the SQL text is safe to print and means the same string.
    pub fn string(self, text: &str) -> String {
        let unsafe_char = |c: char| is_unsafe(c) && !matches!(c, '\n' | '\t');
        // The function that makes a character of its code (Spark escapes in literals).
        let chr = match self {
            Dialect::Sqlite => Some("char"),
            Dialect::Duckdb | Dialect::Postgres => Some("chr"),
            Dialect::Spark => None,
        };
        if let Some(chr) = chr
            && text.chars().any(unsafe_char)
        {
            let mut parts: Vec<String> = Vec::new();
            let mut run = String::new();
            for c in text.chars() {
                if unsafe_char(c) {
                    if !run.is_empty() {
                        parts.push(self.plain_string(&std::mem::take(&mut run)));
                    }
                    parts.push(format!("{chr}({})", u32::from(c)));
                } else {
                    run.push(c);
                }
            }
            if !run.is_empty() {
                parts.push(self.plain_string(&run));
            }
            return format!("({})", self.concat(&parts));
        }
        self.plain_string(text)
    }

    fn plain_string(self, text: &str) -> String {
        match self {
            // Spark's literals take backslash escapes (and `''` would be two literals).
            Dialect::Spark => {
                let mut out = String::with_capacity(text.len() + 2);
                out.push('\'');
                for c in text.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '\'' => out.push_str("\\'"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        c if is_unsafe(c) => {
                            let mut units = [0u16; 2];
                            for unit in c.encode_utf16(&mut units) {
                                out.push_str(&format!("\\u{unit:04X}"));
                            }
                        }
                        c => out.push(c),
                    }
                }
                out.push('\'');
                out
            }
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Postgres => {
                format!("'{}'", text.replace('\'', "''"))
            }
        }
    }

    /// A double-precision literal (never a decimal: scores must be computed in floating
    /// point, as the engine does).
    pub fn double(self, f: f64) -> String {
        match self {
            Dialect::Sqlite => format!("{f:?}"),
            // A decimal constant is NUMERIC; its conversion to float8 rounds correctly.
            Dialect::Postgres => format!("CAST({f:?} AS DOUBLE PRECISION)"),
            // A decimal constant would be a DECIMAL first; an exponent makes a DOUBLE.
            Dialect::Duckdb | Dialect::Spark => format!("{f:e}"),
        }
    }

    /// Whether a CTE can be marked `NOT MATERIALIZED` (computed where it is read).
    pub fn not_materialized(self) -> bool {
        match self {
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Postgres => true,
            // Spark inlines its CTEs and has no such clause.
            Dialect::Spark => false,
        }
    }

    pub fn bool(self, b: bool) -> &'static str {
        if b { "TRUE" } else { "FALSE" }
    }

    pub fn to_double(self, e: &str) -> String {
        match self {
            Dialect::Sqlite => format!("CAST({e} AS REAL)"),
            Dialect::Postgres => format!("CAST({e} AS DOUBLE PRECISION)"),
            Dialect::Duckdb | Dialect::Spark => format!("CAST({e} AS DOUBLE)"),
        }
    }

    /// A boolean column as the warehouse may store it (BOOLEAN, or 0/1 in an integer
    /// type) read as a boolean. PostgreSQL casts `integer` (not `smallint`) to boolean,
    /// and booleans to `integer`, so it reads every one of them through `integer`.
    pub fn to_bool(self, e: &str) -> String {
        match self {
            // Booleans are 0/1 integers already.
            Dialect::Sqlite => e.to_owned(),
            Dialect::Postgres => format!("CAST(CAST({e} AS INTEGER) AS BOOLEAN)"),
            Dialect::Duckdb | Dialect::Spark => format!("CAST({e} AS BOOLEAN)"),
        }
    }

    /// A string column as the warehouse may store it read as text: PostgreSQL's
    /// `CHAR(n)` pads with blanks, which its cast to `text` takes off. DuckDB's `CHAR`
    /// is `VARCHAR`; SQLite has no fixed-width strings.
    pub fn to_text(self, e: &str) -> String {
        match self {
            Dialect::Postgres => format!("CAST({e} AS TEXT)"),
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Spark => e.to_owned(),
        }
    }

    /// An integer column of any integer or decimal type as a 64-bit integer (for its
    /// text in a key).
    pub fn to_bigint(self, e: &str) -> String {
        match self {
            // A REAL (as rows read integer fields) made text would be `5.0`.
            Dialect::Sqlite => format!("CAST({e} AS INTEGER)"),
            Dialect::Duckdb | Dialect::Postgres | Dialect::Spark => {
                format!("CAST({e} AS BIGINT)")
            }
        }
    }

    /// `a` equals `b`, NULL equal to NULL (never NULL).
    pub fn same(self, a: &str, b: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{a} IS {b}"),
            Dialect::Duckdb | Dialect::Postgres => format!("{a} IS NOT DISTINCT FROM {b}"),
            Dialect::Spark => format!("{a} <=> {b}"),
        }
    }

    pub fn int_to_text(self, e: &str) -> String {
        match self {
            Dialect::Spark => format!("CAST({e} AS STRING)"),
            Dialect::Duckdb => format!("CAST({e} AS VARCHAR)"),
            Dialect::Sqlite | Dialect::Postgres => format!("CAST({e} AS TEXT)"),
        }
    }

    /// An expression ordered by bytes (code points), as the engine orders ids.
    pub fn binary_order(self, e: &str) -> String {
        match self {
            Dialect::Postgres => format!("{e} COLLATE \"C\""),
            // Their default collation is binary already.
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Spark => e.to_owned(),
        }
    }

    /// A text expression under the binary collation (bytes, or code points), whatever
    /// its column declares (`NOCASE`, a non-deterministic collation): where rows are
    /// grouped by value, values the engine tells apart stay apart. Spark's default is
    /// binary (its `COLLATE` is only in Spark 4).
    pub fn binary_text(self, e: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{e} COLLATE BINARY"),
            Dialect::Postgres => format!("{e} COLLATE \"C\""),
            Dialect::Duckdb => format!("{e} COLLATE C"),
            Dialect::Spark => e.to_owned(),
        }
    }

    /// `needle` occurs in `hay` (both text, not null).
    pub fn contains(self, hay: &str, needle: &str) -> String {
        match self {
            Dialect::Sqlite | Dialect::Spark => format!("instr({hay}, {needle}) > 0"),
            Dialect::Duckdb => format!("contains({hay}, {needle})"),
            Dialect::Postgres => format!("strpos({hay}, {needle}) > 0"),
        }
    }

    /// The string array `array` (a column, maybe null) holds `needle` (text, not null):
    /// never null.
    pub fn array_contains(self, array: &str, needle: &str) -> String {
        match self {
            Dialect::Sqlite => format!(
                "EXISTS (SELECT 1 FROM json_each({array}) AS rb_item WHERE rb_item.type = 'text' AND rb_item.value = {needle})"
            ),
            Dialect::Duckdb => format!("COALESCE(list_contains({array}, {needle}), FALSE)"),
            Dialect::Postgres => format!("COALESCE({needle} = ANY({array}), FALSE)"),
            Dialect::Spark => format!("COALESCE(array_contains({array}, {needle}), FALSE)"),
        }
    }

    /// The number of the text `e` (not null) where it is a plain decimal — `[+-]?` digits
    /// with at most one point, an exponent of one or two digits — read as JavaScript
    /// reads it; NULL for any other text.
    ///
    /// DuckDB, PostgreSQL and Spark test the form with a regular expression and cast.
    /// SQLite has no regular expressions, and its cast rounds some decimals a unit off
    /// before 3.43: there the form is taken apart with `GLOB` and `instr`, and only the
    /// decimals of at most 15 significant digits (the zeros at either end left out)
    /// whose exponent (the point moved past the last of them) is within ±22 are read,
    /// as `digits × 10^k` or `digits / 10^-k` — one rounding of two exact doubles, so
    /// exact in every SQLite (see [`Dialect::reads_decimal`]).
    pub fn plain_number(self, e: &str) -> String {
        // An exponent of two digits at most: no cast overflows or underflows (PostgreSQL
        // fails on `1e400` where JavaScript says Infinity).
        const RE: &str = "[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]{1,2})?";
        let cast = self.to_double(e);
        match self {
            Dialect::Duckdb => format!(
                "CASE WHEN regexp_full_match({e}, {}) THEN {cast} END",
                self.string(RE)
            ),
            Dialect::Postgres => format!(
                "CASE WHEN {e} ~ {} THEN {cast} END",
                self.string(&format!("^{RE}$"))
            ),
            Dialect::Spark => format!(
                "CASE WHEN {e} RLIKE {} THEN {cast} END",
                self.string(&format!("^{RE}$"))
            ),
            Dialect::Sqlite => {
                // The text once (`rb_x`), then its sign, mantissa and exponent's text,
                // then the digits without the zeros at either end and the exponent with
                // the point moved past them (`rb_k`). ASCII only: the length of the
                // text and of its bytes agree (SQLite's text functions stop at a NUL,
                // which JavaScript reads as NaN).
                let d = "rtrim(replace(rb_m, '.', ''), '0')";
                let k = "CAST(rb_e AS INTEGER) - CASE WHEN instr(rb_m, '.') > 0 THEN length(rb_m) - instr(rb_m, '.') ELSE 0 END \
+ length(replace(rb_m, '.', '')) - length(rtrim(replace(rb_m, '.', ''), '0'))";
                format!(
                    "(SELECT CASE WHEN rb_ascii AND rb_m <> '' AND rb_m NOT GLOB '*[^0-9.]*' AND rb_m GLOB '*[0-9]*' \
AND length(rb_m) - length(replace(rb_m, '.', '')) <= 1 \
AND (rb_e GLOB '[0-9]' OR rb_e GLOB '[0-9][0-9]' OR rb_e GLOB '[+-][0-9]' OR rb_e GLOB '[+-][0-9][0-9]') \
AND length(ltrim({d}, '0')) <= 15 AND ({d} = '' OR {k} BETWEEN -22 AND 22) \
THEN (SELECT CASE WHEN rb_k >= 0 THEN rb_n * CAST('1e' || rb_k AS REAL) ELSE rb_n / CAST('1e' || -rb_k AS REAL) END \
FROM (SELECT CAST(rb_sign || {d} AS INTEGER) AS rb_n, CASE WHEN {d} = '' THEN 0 ELSE {k} END AS rb_k)) END \
FROM (SELECT CASE WHEN rb_p > 0 THEN substr(rb_b, 1, rb_p - 1) ELSE rb_b END AS rb_m, \
CASE WHEN rb_p > 0 THEN substr(rb_b, rb_p + 1) ELSE '0' END AS rb_e, rb_sign, rb_ascii \
FROM (SELECT rb_b, instr(replace(rb_b, 'E', 'e'), 'e') AS rb_p, rb_sign, rb_ascii \
FROM (SELECT CASE WHEN substr(rb_x, 1, 1) IN ('+', '-') THEN substr(rb_x, 2) ELSE rb_x END AS rb_b, \
CASE WHEN substr(rb_x, 1, 1) = '-' THEN '-' ELSE '' END AS rb_sign, \
length(CAST(rb_x AS BLOB)) = length(rb_x) AS rb_ascii \
FROM (SELECT {e} AS rb_x)))))"
                )
            }
        }
    }

    /// Whether [`Dialect::plain_number`] reads the text `s` (as JavaScript does); the
    /// others it makes NULL.
    pub fn reads_decimal(self, s: &str) -> bool {
        let Some(d) = Decimal::of(s) else {
            return false;
        };
        match self {
            Dialect::Duckdb | Dialect::Postgres | Dialect::Spark => true,
            Dialect::Sqlite => {
                // The digits without the zeros at either end, and the exponent with
                // the point moved past them.
                let digits: Vec<u8> = d.whole.iter().chain(d.fraction).copied().collect();
                let end = digits.iter().rposition(|c| *c != b'0').map_or(0, |i| i + 1);
                let start = digits[..end].iter().take_while(|c| **c == b'0').count();
                let k = d.exponent - d.fraction.len() as i64 + (digits.len() - end) as i64;
                end - start <= 15 && (end == 0 || (-22..=22).contains(&k))
            }
        }
    }

    /// The item of an array a quantifier walks, as SQL (`alias`: the walk's own name).
    pub fn array_item(self, alias: &str) -> String {
        match self {
            // json_each's row: its value column.
            Dialect::Sqlite => format!("{alias}.value"),
            Dialect::Duckdb | Dialect::Postgres | Dialect::Spark => alias.to_owned(),
        }
    }

    /// Some item of the string array `array` (not null) meets `condition` (a SQL
    /// boolean, never null, over [`Dialect::array_item`] of `alias`).
    pub fn array_any(self, array: &str, alias: &str, condition: &str) -> String {
        match self {
            Dialect::Sqlite => format!(
                "EXISTS (SELECT 1 FROM json_each({array}) AS {alias} WHERE {alias}.type = 'text' AND {condition})"
            ),
            Dialect::Duckdb | Dialect::Postgres => format!(
                "EXISTS (SELECT 1 FROM unnest({array}) AS {alias}_walk({alias}) WHERE {condition})"
            ),
            Dialect::Spark => format!("exists({array}, {alias} -> {condition})"),
        }
    }

    /// JavaScript's text of the string array `array` (its items joined by commas, `""`
    /// for no item); NULL where the array is.
    pub fn array_join(self, array: &str) -> String {
        match self {
            Dialect::Sqlite => format!(
                "CASE WHEN {array} IS NULL THEN NULL ELSE (SELECT COALESCE(group_concat(rb_join.value, ',' ORDER BY rb_join.key), '') FROM json_each({array}) AS rb_join) END"
            ),
            Dialect::Duckdb | Dialect::Postgres => format!("array_to_string({array}, ',')"),
            Dialect::Spark => format!("array_join({array}, ',')"),
        }
    }

    /// Two string arrays (not null) hold the same items in the same order.
    pub fn array_eq(self, a: &str, b: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json({a}) = json({b})"),
            Dialect::Duckdb | Dialect::Postgres | Dialect::Spark => format!("{a} = {b}"),
        }
    }

    /// The string array `array` (not null) has an item.
    pub fn array_nonempty(self, array: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_array_length({array}) > 0"),
            Dialect::Duckdb => format!("len({array}) > 0"),
            Dialect::Postgres => format!("COALESCE(cardinality({array}), 0) > 0"),
            Dialect::Spark => format!("size({array}) > 0"),
        }
    }

    /// The column type of a field.
    pub fn column_type(self, kind: &Kind) -> &'static str {
        // Per dialect (a new one says all of its types); arrays of strings as JSON text
        // in SQLite, and anything else (mixed, objects, other arrays, never a value) as
        // its JSON text.
        match self {
            Dialect::Sqlite => match kind {
                Kind::Int | Kind::Bool => "INTEGER",
                Kind::Num => "REAL",
                Kind::Text | Kind::TextArray | Kind::Null | Kind::Mixed(_) | Kind::Other(_) => {
                    "TEXT"
                }
            },
            Dialect::Duckdb => match kind {
                Kind::Int => "BIGINT",
                Kind::Num => "DOUBLE",
                Kind::Bool => "BOOLEAN",
                Kind::TextArray => "VARCHAR[]",
                Kind::Text | Kind::Null | Kind::Mixed(_) | Kind::Other(_) => "VARCHAR",
            },
            Dialect::Postgres => match kind {
                Kind::Int => "BIGINT",
                Kind::Num => "DOUBLE PRECISION",
                Kind::Bool => "BOOLEAN",
                Kind::TextArray => "TEXT[]",
                Kind::Text | Kind::Null | Kind::Mixed(_) | Kind::Other(_) => "TEXT",
            },
            Dialect::Spark => match kind {
                Kind::Int => "BIGINT",
                Kind::Num => "DOUBLE",
                Kind::Bool => "BOOLEAN",
                Kind::TextArray => "ARRAY<STRING>",
                Kind::Text | Kind::Null | Kind::Mixed(_) | Kind::Other(_) => "STRING",
            },
        }
    }

    /// Text expressions joined end to end.
    pub fn concat(self, parts: &[String]) -> String {
        match self {
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Postgres | Dialect::Spark => {
                parts.join(" || ")
            }
        }
    }

    /// JavaScript's `a % b` of doubles: C's `fmod`, the dividend's sign; NULL (NaN) by 0
    /// or of an infinity; `a` by an infinity is `a`. SQLite's `%` is of integers, and its
    /// `mod()` is in builds with math functions only: there it is [`sqlite_fmod`].
    pub fn fmod(self, a: &str, b: &str) -> String {
        match self {
            // DuckDB's `fmod()` is not exact (1e300 by 0.3 gives 0); its `%` is.
            Dialect::Duckdb | Dialect::Spark => format!("({a} % {b})"),
            Dialect::Postgres => postgres_fmod(a, b),
            Dialect::Sqlite => sqlite_fmod(a, b),
        }
    }

    /// Infinity (`-Infinity` with `negative`) as a double.
    pub fn infinity(self, negative: bool) -> String {
        let sign = if negative { "-" } else { "" };
        match self {
            Dialect::Sqlite => format!("{sign}9e999"),
            Dialect::Postgres => format!("CAST('{sign}Infinity' AS DOUBLE PRECISION)"),
            Dialect::Duckdb | Dialect::Spark => format!("CAST('{sign}Infinity' AS DOUBLE)"),
        }
    }

    /// A double with NaN made NULL (arithmetic over infinities makes NaN, which SQL
    /// orders above every number and finds equal to itself; a query's NaN is NULL).
    pub fn nan_to_null(self, e: &str) -> String {
        match self {
            // SQLite has no NaN: it is NULL already.
            Dialect::Sqlite => e.to_owned(),
            Dialect::Postgres => format!("NULLIF({e}, CAST('NaN' AS DOUBLE PRECISION))"),
            Dialect::Duckdb | Dialect::Spark => format!("NULLIF({e}, CAST('NaN' AS DOUBLE))"),
        }
    }

    /// JavaScript's `String()` of a double that is not null (nor NaN), where the
    /// dialect's own text of a double has the shortest digits that read back as the same
    /// double (DuckDB's; PostgreSQL's with `extra_float_digits` 1 or more, its default,
    /// else the query fails saying so): that text moved to JavaScript's notation
    /// (below 10^21 a plain decimal from 10^-6, its digits padded with zeros past 2^53;
    /// an exponent `e-7` below and `e+21` from 10^21). `None` elsewhere (SQLite writes 15 digits, Spark Java's digits).
    pub fn number_text(self, x: &str) -> Option<String> {
        // The number and its text are computed once, in a scalar subquery: the
        // expression reads each many times.
        let text = match self {
            Dialect::Duckdb => "CAST(rb_x AS VARCHAR)".to_owned(),
            // A setting below 1 rounds the text to 15 digits: the query fails rather
            // than spell numbers otherwise.
            Dialect::Postgres => "CASE WHEN CAST(current_setting('extra_float_digits') AS INTEGER) < 1 THEN CAST(CAST('rulebench: this query needs extra_float_digits 1 or more, not ' || current_setting('extra_float_digits') AS INTEGER) AS TEXT) ELSE CAST(rb_x AS TEXT) END".to_owned(),
            Dialect::Sqlite | Dialect::Spark => return None,
        };
        let exact = self.double(9007199254740992.0);
        let integer = self.int_to_text("CAST(rb_x AS BIGINT)");
        let mantissa = "split_part(rb_t, 'e', 1)";
        // (`e0` appended: a text without an exponent casts too, were it evaluated.)
        let exponent = "CAST(split_part(rb_t || 'e0', 'e', 2) AS INTEGER)";
        let digits = format!("replace(replace({mantissa}, '-', ''), '.', '')");
        let sign = "CASE WHEN rb_x < 0 THEN '-' ELSE '' END";
        Some(format!(
            "(SELECT CASE WHEN rb_x = 0 THEN '0' \
             WHEN rb_x = trunc(rb_x) AND abs(rb_x) < {exact} THEN {integer} \
             WHEN strpos(rb_t, 'e') = 0 THEN CASE WHEN rb_x = trunc(rb_x) THEN substr(rb_t, 1, length(rb_t) - 2) ELSE rb_t END \
             WHEN {exponent} <= -7 THEN {mantissa} || 'e-' || CAST(-{exponent} AS VARCHAR) \
             WHEN {exponent} >= 21 THEN {mantissa} || 'e+' || CAST({exponent} AS VARCHAR) \
             WHEN {exponent} < 0 THEN {sign} || '0.' || repeat('0', -{exponent} - 1) || {digits} \
             WHEN length({digits}) <= {exponent} + 1 THEN {sign} || rpad({digits}, {exponent} + 1, '0') \
             ELSE {sign} || substr({digits}, 1, {exponent} + 1) || '.' || substr({digits}, {exponent} + 2) END \
             FROM (SELECT rb_x, {text} AS rb_t FROM (SELECT {x} AS rb_x) AS rb_number) AS rb_number_text)"
        ))
    }

    /// The placeholder of a query parameter: by name (`:full_threshold` in SQLite and
    /// Spark, `$full_threshold` in DuckDB), or by position in PostgreSQL (`$1`), whose
    /// server binds no names.
    pub fn param(self, name: &str, position: usize) -> String {
        match self {
            Dialect::Sqlite | Dialect::Spark => format!(":{name}"),
            Dialect::Duckdb => format!("${name}"),
            Dialect::Postgres => format!("${position}"),
        }
    }

    /// The aggregate of `arg` at the row whose `keys` are smallest, compared in order
    /// (strings by code point); `None` where the dialect has no such aggregate.
    pub fn min_by(self, arg: &str, keys: &[&str]) -> Option<String> {
        let fields = keys.iter().enumerate().map(|(i, k)| (format!("k{i}"), *k));
        match self {
            Dialect::Duckdb => Some(format!(
                "min_by({arg}, {{{}}})",
                fields
                    .map(|(n, k)| format!("'{n}': {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Dialect::Spark => Some(format!(
                "min_by({arg}, named_struct({}))",
                fields
                    .map(|(n, k)| format!("'{n}', {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Dialect::Sqlite | Dialect::Postgres => None,
        }
    }

    /// A text `NULL`.
    pub fn text_null(self) -> String {
        match self {
            Dialect::Spark => "CAST(NULL AS STRING)".into(),
            Dialect::Duckdb => "CAST(NULL AS VARCHAR)".into(),
            Dialect::Sqlite | Dialect::Postgres => "CAST(NULL AS TEXT)".into(),
        }
    }

    /// A boolean `NULL`.
    pub fn null_bool(self) -> &'static str {
        match self {
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Postgres | Dialect::Spark => {
                "CAST(NULL AS BOOLEAN)"
            }
        }
    }

    /// `CREATE TABLE` with its columns (Spark: a table in the session's catalog).
    pub fn create_table(self, table: &str, columns: &str) -> String {
        let columns = if columns.is_empty() {
            // A dataset without fields still needs a column.
            format!("  rb_empty {}", self.column_type(&Kind::Text))
        } else {
            columns.to_owned()
        };
        match self {
            Dialect::Spark => format!(
                "CREATE TABLE {} (\n{columns}\n) USING parquet;",
                self.ident(table)
            ),
            Dialect::Sqlite | Dialect::Duckdb | Dialect::Postgres => {
                format!("CREATE TABLE {} (\n{columns}\n);", self.ident(table))
            }
        }
    }
}

/// PostgreSQL's exact `fmod` of two doubles: it has no `fmod` of doubles, and its cast to
/// `numeric` rounds to 15 digits. Each double is taken apart from its IEEE bits
/// (`float8send`) into an integer mantissa and a power of two, both scaled to the
/// smaller power as exact integers, the remainder taken in `numeric`, and the result
/// (a double exactly) read back from its exact decimal text.
fn postgres_fmod(a: &str, b: &str) -> String {
    let bits = |x: &str| {
        format!("CAST(CAST('x' || encode(float8send(abs({x})), 'hex') AS bit(64)) AS BIGINT)")
    };
    // The mantissa and exponent of a double's bits (subnormals have no implicit bit).
    let parts = |v: &str| {
        format!(
            "CASE WHEN rb_{v}b >> 52 = 0 THEN rb_{v}b & 4503599627370495 ELSE (rb_{v}b & 4503599627370495) + 4503599627370496 END AS rb_{v}m, \
             CASE WHEN rb_{v}b >> 52 = 0 THEN -1074 ELSE (rb_{v}b >> 52) - 1075 END AS rb_{v}e"
        )
    };
    let infinite = |v: &str| {
        format!(
            "{v} IN (CAST('Infinity' AS DOUBLE PRECISION), CAST('-Infinity' AS DOUBLE PRECISION))"
        )
    };
    let e = "LEAST(rb_ae, rb_be)";
    let r = format!(
        "mod(rb_am * power(CAST(2 AS NUMERIC), rb_ae - {e}), rb_bm * power(CAST(2 AS NUMERIC), rb_be - {e}))"
    );
    format!(
        "(SELECT CASE WHEN {} OR rb_b = 0 THEN NULL WHEN {} OR rb_a = 0 THEN rb_a \
         ELSE sign(rb_a) * CAST(CASE WHEN {e} < 0 THEN CAST({r} * power(CAST(5 AS NUMERIC), -{e}) AS TEXT) || 'e' || CAST({e} AS TEXT) \
         ELSE CAST({r} * power(CAST(2 AS NUMERIC), {e}) AS TEXT) END AS DOUBLE PRECISION) END \
         FROM (SELECT rb_a, rb_b, {}, {} FROM (SELECT rb_a, rb_b, {} AS rb_ab, {} AS rb_bb \
         FROM (SELECT {a} AS rb_a, {b} AS rb_b) AS rb_fmod_in) AS rb_fmod_bits) AS rb_fmod_parts)",
        infinite("rb_a"),
        infinite("rb_b"),
        parts("a"),
        parts("b"),
        bits("rb_a"),
        bits("rb_b"),
    )
}

/// JavaScript's remainder of two doubles in SQLite, whose `%` is of integers and which
/// has no `fmod()` unless built with its math functions: long division in base 2, with
/// `|b|·2^k` from the largest not above `|a|` down to `|b|`, each subtracted where it
/// fits. Every step is exact (doubling and halving; `x - y` with `y <= x < 2y`), so the
/// remainder is C's `fmod` to the last bit. A dividend `2^n` times its divisor takes
/// `n` doublings and as many halvings: about 10 each at a thousand times, at most about
/// 2,100 each (some 4,200 rows) across the whole range of doubles.
fn sqlite_fmod(a: &str, b: &str) -> String {
    format!(
        "(SELECT CASE WHEN rb_a IS NULL OR rb_b IS NULL OR abs(rb_a) >= 9e999 OR rb_b = 0 THEN NULL \
         WHEN abs(rb_b) >= 9e999 OR rb_a = 0 THEN rb_a \
         ELSE (WITH RECURSIVE rb_up(y) AS (SELECT abs(rb_b) UNION ALL SELECT y * 2 FROM rb_up WHERE y * 2 <= abs(rb_a)), \
         rb_down(x, y) AS (SELECT abs(rb_a), (SELECT max(y) FROM rb_up) \
         UNION ALL SELECT CASE WHEN x >= y THEN x - y ELSE x END, y / 2 FROM rb_down WHERE y >= abs(rb_b)) \
         SELECT CASE WHEN rb_a < 0 THEN -min(x) ELSE min(x) END FROM rb_down) END \
         FROM (SELECT {a} AS rb_a, {b} AS rb_b))"
    )
}

#[cfg(test)]
mod list_tests {
    use super::Dialect;

    #[test]
    fn all_lists_every_dialect_once() {
        for d in <Dialect as strum::VariantArray>::VARIANTS {
            assert_eq!(Dialect::ALL.iter().filter(|a| *a == d).count(), 1, "{d:?}");
        }
    }
}

/// A plain decimal taken apart: `[+-]?`, digits with at most one point (a digit on one
/// side of it at least), an exponent `[eE][+-]?` of one or two digits — the pattern of
/// [`Dialect::plain_number`].
struct Decimal<'a> {
    whole: &'a [u8],
    fraction: &'a [u8],
    exponent: i64,
}

impl<'a> Decimal<'a> {
    fn of(s: &'a str) -> Option<Self> {
        let b = s.as_bytes();
        let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
        let digits = |i: &mut usize| {
            let start = *i;
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
            &b[start..*i]
        };
        let whole = digits(&mut i);
        let mut fraction: &[u8] = &[];
        if b.get(i) == Some(&b'.') {
            i += 1;
            fraction = digits(&mut i);
        }
        if whole.is_empty() && fraction.is_empty() {
            return None;
        }
        let mut exponent = 0;
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            let negative = b.get(i) == Some(&b'-');
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let e = digits(&mut i);
            if !(1..=2).contains(&e.len()) {
                return None;
            }
            exponent = e.iter().fold(0i64, |n, c| n * 10 + i64::from(c - b'0'));
            if negative {
                exponent = -exponent;
            }
        }
        (i == b.len()).then_some(Decimal {
            whole,
            fraction,
            exponent,
        })
    }
}

#[cfg(test)]
mod decimal_tests {
    use super::Dialect;

    #[test]
    fn plain_decimals_are_what_the_dialect_pattern_matches() {
        for yes in [
            "0", "10", "-1.25", "+4", "7.", ".5", "1e3", "2E-7", "007", "1e99",
        ] {
            assert!(Dialect::Duckdb.reads_decimal(yes), "{yes}");
        }
        for no in [
            "", ".", "-", "e3", "1e", "1e+", " 2", "2 ", "0x10", "Infinity", "1.2.3", "abc",
            "1e400", "1e-400",
        ] {
            assert!(!Dialect::Duckdb.reads_decimal(no), "{no}");
            assert!(!Dialect::Sqlite.reads_decimal(no), "{no}");
        }
    }

    #[test]
    fn sqlite_reads_the_decimals_one_rounding_makes_exact() {
        for yes in [
            "0",
            "-1.25",
            "007",
            "1e22",
            "123456789012345",
            "0.000015",
            "1e-22",
            "12.5e-21",
            "0001234567890123.45e-5",
            "1000000000000000",
            "1.500000000000000000",
            "0.0e99",
            "100e20",
        ] {
            assert!(Dialect::Sqlite.reads_decimal(yes), "{yes}");
        }
        for no in [
            "1e23",
            "1e-23",
            "1234567890123456",
            "0.1234567890123456",
            "1e99",
            "0.00000000000000000000001",
            "100e21",
        ] {
            assert!(!Dialect::Sqlite.reads_decimal(no), "{no}");
            assert!(Dialect::Postgres.reads_decimal(no), "{no}");
        }
    }
}
