#!/usr/bin/env python3
"""Run a SQL data script and one query on a fresh database; print the result.

Used by the differential SQL tests of `rulebench sql`: the Rust side writes a
data script (CREATE TABLE + INSERT) and a query per dialect, this runs them on
the real engine and prints the result as JSON.

Usage:
    python3 scripts/sqlrun.py --dialect {sqlite,duckdb,postgres,spark} \\
        [--data FILE ...] [--setup FILE ...] --query FILE \\
        [--format json|count] [--timing] [--query-only] [--param NAME=VALUE]...

Engines (each run gets a fresh, empty database):
    sqlite    stdlib sqlite3, in memory.
    duckdb    the `duckdb` PyPI package, in memory.
    postgres  psycopg 3 to $RULEBENCH_PG_DSN (default
              "host=127.0.0.1 port=54329 user=postgres dbname=postgres", the
              server .ci/sql-engines.sh starts); a fresh schema rb_<hex> is
              created, put on the search_path, and dropped (CASCADE) at the
              end, also after an error.
    spark     pyspark in local mode (local[2], 4 shuffle partitions, in-memory
              catalog, warehouse in a temp dir, quiet logs). Install it with
              .ci/spark.sh. Tables: `CREATE TABLE t (...) USING parquet` +
              `INSERT INTO t VALUES ...` works (one Spark job per INSERT, so
              prefer few multi-row INSERTs), as does
              `CREATE TEMPORARY VIEW t AS SELECT * FROM VALUES (...) AS t(a, b)`
              (types inferred from the literals). Spark 4 runs with ANSI mode
              on by default (1/0 and bad casts are errors). The JVM prints one
              "WARNING: Using incubator modules" line to stderr; ignore it.

Files:
    --data FILE   statements run in order, file after file (`--data a b` and
                  `--data a --data b` both work). Statements end with `;`.
                  The splitter knows single-quoted strings ('' doubling; in
                  spark also backslash escapes, and "..." is a string too),
                  double-quoted identifiers, backquoted identifiers, postgres
                  E'...' strings (not $$-quoting), and drops `--` line and
                  /* */ block comments.
    --setup FILE  more statements, run after the data files (e.g. big tables
                  made with duckdb's range() for scale runs). Timed as load.
    --query FILE  exactly one statement (SELECT or WITH ...; a trailing `;`
                  is fine).

Output (stdout):
    --format json (default): {"columns": [...], "rows": [[...], ...]} on one
        line. Booleans are JSON true/false (sqlite has no boolean type: its 0/1
        stay integers), Decimal becomes a float, float NaN/+-inf become the
        strings "NaN"/"Infinity"/"-Infinity", NULL is null, arrays/lists are
        JSON arrays, structs/maps objects, dates and times ISO strings, bytes
        lowercase hex strings.
    --format count: only the number of rows.
    Rows are printed in the order the engine returned them.

--timing: print the wall seconds of engine start, data loading and the query
    to stderr, as one line: `timing: start=S load=S query=S`.

--param NAME=VALUE: bind a query parameter (a number; repeatable, in order):
    by name in SQLite, DuckDB and Spark (`:name`, `$name`), by position in
    PostgreSQL (`$1`, `$2`, … in the order given, through PREPARE and EXECUTE).
    For `rulebench sql --params`.
--database FILE: duckdb only: run on this database file (made if need be)
    instead of a fresh in-memory one; what the scripts create stays there.

--query-only: for scale runs. Prints only the row count (stdout) and the
    timings (stderr), without turning every row into Python objects:
      duckdb    SELECT count(*), bit_xor(hash(q)) FROM (<query>) q. Hashing the
                whole row keeps duckdb from pruning the columns the query
                computes; an ORDER BY inside the query may be dropped. The
                hash (an order-independent checksum) goes to stderr.
      postgres  SELECT count(*) FROM (<query>) q.
      spark     spark.sql(<query>).count().
      sqlite    iterates the cursor and counts.
    Example: python3 scripts/sqlrun.py --dialect duckdb --query-only \\
        --setup big.sql --query q.sql

Errors: any SQL error prints the engine's message and which statement failed
(file, number, first 200 characters) to stderr, and exits with status 1.
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import math
import os
import secrets
import shutil
import sys
import tempfile
import time
import uuid

DIALECTS = ("sqlite", "duckdb", "postgres", "spark")
DEFAULT_PG_DSN = "host=127.0.0.1 port=54329 user=postgres dbname=postgres"


# --------------------------------------------------------------------------
# Splitting a script into statements
# --------------------------------------------------------------------------


def split_statements(text: str, dialect: str) -> list[str]:
    """Split SQL text at top-level `;`, dropping comments and empty statements.

    Quote rules: '...' strings ('' is a quote inside; in spark a backslash
    escapes the next character, and "..." is a string too); "..."
    identifiers elsewhere ("" inside); `...` identifiers (`` inside); in
    postgres E'...' strings take backslash escapes. `--` runs to the end of
    the line, /* ... */ is a block comment (nested in postgres and duckdb,
    harmless elsewhere). Comments are replaced by a space or newline.
    """
    spark = dialect == "spark"
    out: list[str] = []
    cur: list[str] = []
    i, n = 0, len(text)

    def skip_quoted(i: int, quote: str, backslash: bool) -> int:
        """i is just past the opening quote; return the index past the closing one."""
        while i < n:
            c = text[i]
            if backslash and c == "\\":
                i += 2
                continue
            if c == quote:
                if i + 1 < n and text[i + 1] == quote:  # doubled quote
                    i += 2
                    continue
                return i + 1
            i += 1
        raise ValueError(f"unterminated {quote}-quoted text")

    while i < n:
        c = text[i]
        if c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j  # keep the newline itself
            cur.append(" ")
        elif c == "/" and text.startswith("/*", i):
            depth, j = 1, i + 2
            while depth and j < n:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            if depth:
                raise ValueError("unterminated /* comment")
            cur.append(" ")
            i = j
        elif c == "'" or c == "`" or c == '"':
            backslash = spark and c != "`"
            if (
                dialect == "postgres"
                and c == "'"
                and i > 0
                and text[i - 1] in "eE"
                and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] == "_"))
            ):
                backslash = True  # E'...' escape string
            j = skip_quoted(i + 1, c, backslash)
            cur.append(text[i:j])
            i = j
        elif c == ";":
            stmt = "".join(cur).strip()
            if stmt:
                out.append(stmt)
            cur = []
            i += 1
        else:
            cur.append(c)
            i += 1
    stmt = "".join(cur).strip()
    if stmt:
        out.append(stmt)
    return out


# --------------------------------------------------------------------------
# Values to JSON
# --------------------------------------------------------------------------


def _json_value(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, decimal.Decimal):
        return _json_value(float(v))
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, (datetime.date, datetime.time)):  # datetime is a date
        return v.isoformat()
    if isinstance(v, datetime.timedelta):
        return v.total_seconds()
    if isinstance(v, uuid.UUID):
        return str(v)
    # pyspark Row (a tuple subclass with field names) -> object
    if isinstance(v, tuple) and hasattr(v, "asDict"):
        return {str(k): _json_value(x) for k, x in v.asDict().items()}
    if isinstance(v, (list, tuple)):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    return str(v)


def result_json(columns: list[str], rows) -> str:
    return json.dumps(
        {"columns": list(columns), "rows": [[_json_value(x) for x in r] for r in rows]},
        ensure_ascii=False,
        allow_nan=False,
        separators=(",", ":"),
    )


# --------------------------------------------------------------------------
# Engines: each has run(stmt) for data statements, query(sql) -> (columns,
# rows), count(sql) -> int for --query-only, and close().
# --------------------------------------------------------------------------


class SqliteEngine:
    def __init__(self):
        import sqlite3

        # isolation_level=None: autocommit, no implicit BEGIN around INSERTs.
        self.con = sqlite3.connect(":memory:", isolation_level=None)

    def run(self, stmt):
        self.con.execute(stmt).fetchall()

    def query(self, sql, params=None):
        cur = self.con.execute(sql, params or {})
        rows = cur.fetchall()
        return [d[0] for d in cur.description or []], rows

    def count(self, sql):
        return sum(1 for _ in self.con.execute(sql))

    def close(self):
        self.con.close()


class DuckdbEngine:
    def __init__(self, database=None):
        import duckdb

        self.con = duckdb.connect(database or ":memory:")

    def run(self, stmt):
        self.con.execute(stmt)

    def query(self, sql, params=None):
        if params:
            self.con.execute(sql, params)
        else:
            self.con.execute(sql)
        rows = self.con.fetchall()
        return [d[0] for d in self.con.description or []], rows

    def count(self, sql):
        self.con.execute(f"SELECT count(*), bit_xor(hash(q)) FROM (\n{sql}\n) q")
        n, checksum = self.con.fetchone()
        print(f"duckdb row-hash checksum: {checksum}", file=sys.stderr)
        return n

    def close(self):
        self.con.close()


class PostgresEngine:
    def __init__(self):
        import psycopg

        dsn = os.environ.get("RULEBENCH_PG_DSN", DEFAULT_PG_DSN)
        # autocommit: a failed statement does not poison the connection, so
        # the schema can always be dropped afterwards.
        self.con = psycopg.connect(dsn, autocommit=True, connect_timeout=10)
        self.schema = "rb_" + secrets.token_hex(8)
        self.con.execute(f'CREATE SCHEMA "{self.schema}"')
        self.con.execute(f'SET search_path TO "{self.schema}"')
        # PostgreSQL's JIT compiles every expression of a costly plan with LLVM: on a
        # query of many rules that takes minutes and gigabytes (a page of 60 rules
        # over values of several types: over 12 minutes and 21 GB, against 0.2 s
        # without it).
        self.con.execute("SET jit = off")

    def run(self, stmt):
        # No parameters are passed, so psycopg sends the text as is (a `%` in
        # the SQL needs no escaping).
        self.con.execute(stmt)

    def query(self, sql, params=None):
        if params:
            # The server binds positions ($1, $2, … in the order given): a prepared
            # statement and EXECUTE with the values as literals.
            self.con.execute(f"PREPARE rb_query AS\n{sql}")
            values = ", ".join(f"CAST({float(v)!r} AS DOUBLE PRECISION)" for v in params.values())
            cur = self.con.execute(f"EXECUTE rb_query({values})")
        else:
            cur = self.con.execute(sql)
        rows = cur.fetchall()
        return [d.name for d in cur.description or []], rows

    def count(self, sql):
        return self.con.execute(f"SELECT count(*) FROM (\n{sql}\n) q").fetchone()[0]

    def close(self):
        try:
            self.con.execute(f'DROP SCHEMA IF EXISTS "{self.schema}" CASCADE')
        finally:
            self.con.close()


LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
# pyspark runs as a "shell": unless this logger (the class that first sets up
# logging) has its own level, equal to the root's, Spark prints "Setting
# default log level" to stderr.
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""


class SparkEngine:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="rb-spark-")
        try:
            log4j = os.path.join(self.tmp, "log4j2.properties")
            with open(log4j, "w") as f:
                f.write(LOG4J2)
            java_opts = f"-Dlog4j2.configurationFile=file:{log4j} -XX:+UseSerialGC"
            from pyspark.sql import SparkSession

            self.spark = (
                SparkSession.builder.master("local[2]")
                .appName("rulebench-sqlrun")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.default.parallelism", "2")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.catalogImplementation", "in-memory")
                .config("spark.sql.warehouse.dir", os.path.join(self.tmp, "warehouse"))
                .config("spark.local.dir", os.path.join(self.tmp, "local"))
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.driver.extraJavaOptions", java_opts)
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .getOrCreate()
            )
            self.spark.sparkContext.setLogLevel("ERROR")
            try:  # pyspark 4 also logs every SQL error as a JSON line on stderr
                from pyspark.logger import PySparkLogger

                for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
                    PySparkLogger.getLogger(name).disabled = True
            except ImportError:
                pass
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise

    def run(self, stmt):
        # spark.sql runs DDL/DML eagerly; a SELECT in a data file is collected.
        df = self.spark.sql(stmt)
        if stmt.split(None, 1)[0].lower() in ("select", "with", "values", "from", "table"):
            df.collect()

    def query(self, sql, params=None):
        df = self.spark.sql(sql, args=params) if params else self.spark.sql(sql)
        return list(df.columns), df.collect()

    def count(self, sql):
        return self.spark.sql(sql).count()

    def close(self):
        try:
            self.spark.stop()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)


ENGINES = {
    "sqlite": SqliteEngine,
    "duckdb": DuckdbEngine,
    "postgres": PostgresEngine,
    "spark": SparkEngine,
}


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


class StatementError(Exception):
    def __init__(self, where: str, stmt: str, err: BaseException):
        self.where, self.stmt, self.err = where, stmt, err

    def __str__(self):
        msg = str(self.err).strip() or type(self.err).__name__
        lines = msg.splitlines()
        if len(lines) > 12 or len(msg) > 3000:  # e.g. a Java stack trace
            msg = "\n".join(lines[:12])[:3000] + "\n..."
        return f"{self.where} failed: {self.stmt[:200]}\n{type(self.err).__name__}: {msg}"


def read_statements(path: str, dialect: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return split_statements(text, dialect)
    except ValueError as e:
        raise SystemExit(f"sqlrun: {path}: {e}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Run SQL data scripts and one query on a fresh database.",
        epilog="See the module docstring for details.",
    )
    ap.add_argument("--dialect", required=True, choices=DIALECTS)
    ap.add_argument("--data", action="extend", nargs="+", default=[], metavar="FILE",
                    help="statements to run first (repeatable, in order)")
    ap.add_argument("--setup", action="extend", nargs="+", default=[], metavar="FILE",
                    help="more statements, run after --data (repeatable)")
    ap.add_argument("--query", required=True, metavar="FILE",
                    help="file with exactly one SELECT / WITH query")
    ap.add_argument("--format", choices=("json", "count"), default="json")
    ap.add_argument("--timing", action="store_true",
                    help="print start/load/query wall seconds to stderr")
    ap.add_argument("--query-only", action="store_true",
                    help="scale runs: print the row count and timings only")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="bind a query parameter (a number), in order (repeatable)")
    ap.add_argument("--database", metavar="FILE",
                    help="duckdb only: this database file instead of a fresh one in memory")
    args = ap.parse_args(argv)
    params = {}
    for p in args.param:
        name, sep, value = p.partition("=")
        if not sep:
            sys.exit(f"sqlrun: --param {p}: expected NAME=VALUE")
        try:
            params[name] = float(value)
        except ValueError:
            sys.exit(f"sqlrun: --param {p}: the value is not a number")

    # Read and split everything before starting an engine.
    scripts = [(p, read_statements(p, args.dialect)) for p in args.data + args.setup]
    query = read_statements(args.query, args.dialect)
    if len(query) != 1:
        sys.exit(f"sqlrun: {args.query}: expected exactly one statement, found {len(query)}")
    query = query[0]

    t0 = time.perf_counter()
    engine = None
    try:
        try:
            if args.database:
                if args.dialect != "duckdb":
                    raise SystemExit("sqlrun: --database is for duckdb only")
                engine = ENGINES[args.dialect](args.database)
            else:
                engine = ENGINES[args.dialect]()
        except ImportError as e:
            raise SystemExit(f"sqlrun: {args.dialect}: cannot import the engine: {e}")
        t1 = time.perf_counter()
        for path, stmts in scripts:
            for k, stmt in enumerate(stmts, 1):
                try:
                    engine.run(stmt)
                except Exception as e:
                    raise StatementError(f"{path}: statement {k}", stmt, e) from e
        t2 = time.perf_counter()
        try:
            if args.query_only:
                n = engine.count(query)
            else:
                columns, rows = engine.query(query, params)
                n = len(rows)
        except Exception as e:
            raise StatementError(f"{args.query}: query", query, e) from e
        t3 = time.perf_counter()
    except StatementError as e:
        print(f"sqlrun: {args.dialect}: {e}", file=sys.stderr)
        return 1
    except SystemExit:
        raise
    except Exception as e:  # connecting, starting Spark, ...
        print(f"sqlrun: {args.dialect}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        if engine is not None:
            try:
                engine.close()
            except Exception as e:
                print(f"sqlrun: {args.dialect}: while closing: {e}", file=sys.stderr)

    if args.query_only or args.format == "count":
        out = str(n)
    else:
        out = result_json(columns, rows)
    sys.stdout.buffer.write(out.encode("utf-8") + b"\n")
    sys.stdout.flush()
    if args.timing or args.query_only:
        print(f"timing: start={t1 - t0:.3f} load={t2 - t1:.3f} query={t3 - t2:.3f}",
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
