#!/bin/bash
# Creates the claim-check store's own database and user in the compose PostgreSQL
# (docker-entrypoint-initdb.d: runs once, when the data volume is first initialised).
# The password comes from CLAIM_CHECK_DB_PASSWORD and is passed as a psql variable, never
# spliced into the SQL text or echoed. The store creates its table itself on first connect.
set -euo pipefail

if [ -z "${CLAIM_CHECK_DB_PASSWORD:-}" ]; then
  echo "10-claimcheck.sh: CLAIM_CHECK_DB_PASSWORD is not set" >&2
  exit 1
fi

psql -v ON_ERROR_STOP=1 -v claimcheck_password="$CLAIM_CHECK_DB_PASSWORD" \
  --username "$POSTGRES_USER" --dbname postgres <<'EOSQL'
CREATE ROLE claimcheck LOGIN PASSWORD :'claimcheck_password';
CREATE DATABASE claimcheck OWNER claimcheck;
-- Only its owner (and superusers) may connect; the Temporal user reaches it only as superuser.
REVOKE ALL ON DATABASE claimcheck FROM PUBLIC;
EOSQL
