#!/bin/sh
# One-shot (temporalio/admin-tools): creates Temporal's two databases in the compose PostgreSQL and
# brings their schemas to the version this admin-tools image ships. Safe to run on every `up`:
# `create` of an existing database is tolerated (a real connection or password problem fails the
# next step loudly), `setup-schema -v 0.0` does not reset an already versioned database (that takes
# --overwrite), and `update-schema` applies only the migrations newer than the stored version.
# The password comes from SQL_PASSWORD (the environment), never from this file.
set -eu
: "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${SQL_PASSWORD:?}"
DB_PORT="${DB_PORT:-5432}"
PLUGIN="${DB:-postgres12}"
SCHEMA_ROOT=/etc/temporal/schema/postgresql/v12

sql() { temporal-sql-tool --plugin "$PLUGIN" --ep "$POSTGRES_SEEDS" -u "$POSTGRES_USER" -p "$DB_PORT" "$@"; }

for db in temporal temporal_visibility; do
  case "$db" in
    temporal) dir="$SCHEMA_ROOT/temporal/versioned" ;;
    *) dir="$SCHEMA_ROOT/visibility/versioned" ;;
  esac
  echo "setup-schema: database $db"
  sql --db "$db" create || echo "setup-schema: database $db not created (it exists?)"
  sql --db "$db" setup-schema -v 0.0
  sql --db "$db" update-schema -d "$dir"
done
echo "setup-schema: done"
