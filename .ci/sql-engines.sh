#!/usr/bin/env bash
# Installs and starts the SQL engines that scripts/sqlrun.py drives for the
# differential SQL tests: DuckDB and psycopg (pip), and a throwaway PostgreSQL
# server on 127.0.0.1:54329 with trust auth (the runner's default DSN:
# "host=127.0.0.1 port=54329 user=postgres dbname=postgres").
#
# Idempotent and non-interactive: a second run reuses what is installed and
# the server that is already running. Meant for CI (root on Debian 12); as a
# non-root user it works too if PostgreSQL is installed already.
# Spark is opt-in: see .ci/spark.sh.
#
# Env knobs:
#   RULEBENCH_PG_PORT  port to listen on           (default 54329)
#   RULEBENCH_PG_DIR   cluster + log + socket dir   (default /tmp/rulebench-pg)
set -euo pipefail

DUCKDB_VERSION=2.0.0
PSYCOPG_VERSION=3.3.9
PG_PORT=${RULEBENCH_PG_PORT:-54329}
PG_DIR=${RULEBENCH_PG_DIR:-/tmp/rulebench-pg}
PG_DATA=$PG_DIR/data
PG_LOG=$PG_DIR/server.log

step() { echo "[sql-engines] $*"; }

# --- 1. Python packages ------------------------------------------------------
# pip refuses an "externally managed" system Python (Debian's) without this;
# it is a no-op for pyenv/venv Pythons.
export PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
if python3 - "$DUCKDB_VERSION" "$PSYCOPG_VERSION" <<'EOF' 2>/dev/null; then
import sys, duckdb, psycopg
sys.exit(0 if (duckdb.__version__, psycopg.__version__) == tuple(sys.argv[1:]) else 1)
EOF
  step "pip: duckdb==$DUCKDB_VERSION psycopg==$PSYCOPG_VERSION already installed"
else
  step "pip: installing duckdb==$DUCKDB_VERSION psycopg[binary]==$PSYCOPG_VERSION"
  python3 -m pip install --quiet "duckdb==$DUCKDB_VERSION" "psycopg[binary]==$PSYCOPG_VERSION"
fi

# --- 1b. dbt with its DuckDB adapter, in a venv of its own ----------------------
# (tests/sql_engines.rs `duckdb_dbt_model_is_the_engine` runs the README's dbt example.)
DBT_CORE_VERSION=1.10.23
DBT_DUCKDB_VERSION=1.10.1
DBT_VENV=${RULEBENCH_DBT_VENV:-$(cd "$(dirname "$0")/.." && pwd)/target/dbt-venv}
if [ -x "$DBT_VENV/bin/dbt" ] && "$DBT_VENV/bin/dbt" --version 2>/dev/null | grep -q "installed: $DBT_CORE_VERSION"; then
  step "dbt: $DBT_CORE_VERSION already in $DBT_VENV"
else
  step "dbt: installing dbt-core==$DBT_CORE_VERSION dbt-duckdb==$DBT_DUCKDB_VERSION into $DBT_VENV"
  if ! python3 -m venv "$DBT_VENV" 2>/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$DBT_VENV"
  fi
  "$DBT_VENV/bin/pip" install --quiet "dbt-core==$DBT_CORE_VERSION" \
    "dbt-duckdb==$DBT_DUCKDB_VERSION" "duckdb==$DUCKDB_VERSION"
fi

# --- 2. PostgreSQL server binaries -------------------------------------------
# Debian puts the server binaries in /usr/lib/postgresql/<major>/bin (not on
# PATH); /usr/bin has only the client wrappers. Pick the newest major.
find_pg_bin() {
  { ls -d /usr/lib/postgresql/*/bin 2>/dev/null || true; } | sort -V | tail -n 1
}
PG_BIN=$(find_pg_bin)
if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pg_ctl" ]; then
  step "apt: installing postgresql"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
  PG_BIN=$(find_pg_bin)
fi
[ -x "$PG_BIN/initdb" ] || { echo "no initdb under /usr/lib/postgresql/*/bin" >&2; exit 1; }
step "postgres binaries: $PG_BIN ($("$PG_BIN/postgres" --version))"

# initdb and postgres refuse to run as root: run them as the postgres user
# (created by the Debian package) when we are root.
if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 || useradd --system --home-dir "$PG_DIR" --shell /bin/sh postgres
  as_pg() { runuser -u postgres -- "$@"; }
else
  as_pg() { "$@"; }
fi

ready() { "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres; }

# --- 3. Cluster --------------------------------------------------------------
if ready; then
  step "postgres: already accepting connections on 127.0.0.1:$PG_PORT, reusing it"
else
  mkdir -p "$PG_DIR"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$PG_DIR"; fi
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    step "postgres: initdb $PG_DATA (trust auth, UTF8, C collation, C.UTF-8 ctype)"
    # Collation C: byte-order string comparison, like sqlite, duckdb, spark.
    # Ctype C.UTF-8: upper()/lower() know non-ASCII letters (with ctype C,
    # upper('é') stays 'é').
    as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust \
      --encoding=UTF8 --locale=C --lc-ctype=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 \
      || { cat "$PG_DIR/initdb.log" >&2; exit 1; }
  else
    step "postgres: reusing cluster $PG_DATA"
  fi
  # Loopback only; the unix socket lives in $PG_DIR so /var/run/postgresql
  # need not exist. fsync off: a throwaway test server.
  start_pg() {
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      >/dev/null
  }
  step "postgres: starting on 127.0.0.1:$PG_PORT (log: $PG_LOG)"
  # A server that died uncleanly leaves postmaster.pid behind: pg_ctl copes
  # with a stale one, but not while the dead server's children still exit,
  # hence one retry.
  if ! start_pg; then
    step "postgres: start failed, retrying once in 3 s"
    sleep 3
    start_pg || { tail -n 30 "$PG_LOG" >&2; exit 1; }
  fi
fi

# --- 4. Wait until ready and check a login -----------------------------------
for _ in $(seq 1 60); do
  ready && break
  sleep 1
done
ready || { echo "postgres did not become ready on port $PG_PORT" >&2; tail -n 30 "$PG_LOG" >&2 || true; exit 1; }
# (a plain assignment, so that a failed login stops the script under set -e)
version=$("$PG_BIN/psql" -X -At -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c 'SHOW server_version')
step "postgres: ready: PostgreSQL $version"
