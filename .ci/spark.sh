#!/usr/bin/env bash
# Opt-in: installs pyspark (pinned) for `scripts/sqlrun.py --dialect spark`.
# pyspark ships as a ~455 MB source archive with Spark's jars inside, and runs
# Spark in a local JVM, so it needs Java (17 or 21 for Spark 4).
# Idempotent: does nothing when the pinned version is installed.
set -euo pipefail

PYSPARK_VERSION=4.1.1

step() { echo "[spark] $*"; }

# Java first: pyspark is useless without it.
if ! command -v java >/dev/null 2>&1; then
  step "apt: installing openjdk-17-jre-headless"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
java_version=$(java -version 2>&1 | head -n 1)
step "java: $java_version"
major=$(sed -E 's/.*version "([0-9]+).*/\1/' <<<"$java_version")
if [ "${major:-0}" -lt 17 ]; then
  echo "Spark $PYSPARK_VERSION needs Java 17 or newer, found: $java_version" >&2
  exit 1
fi

export PIP_BREAK_SYSTEM_PACKAGES=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore
if python3 -c "import sys, pyspark; sys.exit(pyspark.__version__ != '$PYSPARK_VERSION')" 2>/dev/null; then
  step "pip: pyspark==$PYSPARK_VERSION already installed"
else
  step "pip: installing pyspark==$PYSPARK_VERSION (~455 MB download)"
  python3 -m pip install --quiet "pyspark==$PYSPARK_VERSION"
fi
step "pyspark $(python3 -c 'import pyspark; print(pyspark.__version__)') ready"
