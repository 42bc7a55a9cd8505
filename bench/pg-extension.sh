#!/usr/bin/env bash
# Benchmarks the PostgreSQL extension against PostgreSQL's own id sources, on the cluster that
# `ci/steps/pg-extension.sh --bench` starts (release build, preloaded) and rewrites the
# "PostgreSQL extension" section of BENCHMARKS.md:
#   - one statement inserting 1,000,000 rows into a table whose key is DEFAULT idforge_snowflake(),
#     DEFAULT nextval(...) (bigserial), DEFAULT gen_random_uuid(), DEFAULT idforge_flake128() or
#     DEFAULT idforge_uuid7();
#   - 4 sessions of one-row INSERTs (pgbench, 10 s each), the same five tables;
#   - SELECT count(f()) FROM generate_series(1, 1000000): the function alone;
# and the ratios of idforge_uuid7() to gen_random_uuid() (the UUIDv7 target: >= 1.0x in the
# SELECT) from the same run.
# Each figure is the median of 3 runs, interleaved. pg_idkit (UUIDv7) needs cargo-pgrx to build,
# which this project does not install, so gen_random_uuid() (PostgreSQL 15 has no uuidv7) is the
# random-uuid peer.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${IDFORGE_PGEXT_BIN:?run through ci/steps/pg-extension.sh --bench}"
# shellcheck source=bench/common.sh
. bench/common.sh

psql_() {
  "$IDFORGE_PGEXT_BIN/psql" -X -A -t -q -v ON_ERROR_STOP=1 -h "$IDFORGE_PGEXT_SOCKET" \
    -p "$IDFORGE_PGEXT_PORT" -U postgres -d postgres "$@"
}

psql_ -c "DROP EXTENSION IF EXISTS idforge CASCADE" -c "CREATE EXTENSION idforge"
# Each id source: its key column's type, and the call that makes one id (the column's DEFAULT;
# bigint with nextval is what bigserial declares).
declare -A TYPE=([idforge_snowflake]=bigint [nextval]=bigint [gen_random_uuid]=uuid
  [idforge_flake128]=uuid [idforge_uuid7]=uuid)
declare -A FN=(
  [idforge_snowflake]="idforge_snowflake()"
  [nextval]="nextval('bench_seq')"
  [gen_random_uuid]="gen_random_uuid()"
  [idforge_flake128]="idforge_flake128()"
  [idforge_uuid7]="idforge_uuid7()"
)
ORDER=(idforge_snowflake nextval gen_random_uuid idforge_flake128 idforge_uuid7)
psql_ -c "DROP SEQUENCE IF EXISTS bench_seq" -c "CREATE SEQUENCE bench_seq"

# ms NAME SQL: the statement's server-side time (psql's \timing), in ms.
ms() {
  psql_ -c '\timing on' -c "$2" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}
median() { printf '%s\n' "$@" | sort -g | sed -n "$(( ($# + 1) / 2 ))p"; }

declare -A BULK SELECT_MS TPS
for name in "${ORDER[@]}"; do BULK[$name]=""; SELECT_MS[$name]=""; TPS[$name]=""; done
echo 'INSERT INTO bench_t (n) VALUES (1);' >"$work/insert.sql"
for run in 1 2 3; do
  for name in "${ORDER[@]}"; do
    psql_ -c "DROP TABLE IF EXISTS bench_t" -c "CREATE TABLE bench_t (id ${TYPE[$name]} PRIMARY KEY DEFAULT ${FN[$name]}, n int)" \
      -c "CHECKPOINT"
    BULK[$name]+=" $(ms "$name" "INSERT INTO bench_t (n) SELECT g FROM generate_series(1, 1000000) g")"
    psql_ -c "TRUNCATE bench_t" -c "CHECKPOINT"
    t=$("$IDFORGE_PGEXT_BIN/pgbench" -n -h "$IDFORGE_PGEXT_SOCKET" -p "$IDFORGE_PGEXT_PORT" \
      -U postgres -c 4 -j 2 -T 10 -f "$work/insert.sql" postgres 2>/dev/null |
      sed -n 's/^tps = \([0-9.]*\).*/\1/p')
    TPS[$name]+=" $t"
    SELECT_MS[$name]+=" $(ms "$name" "SELECT count(${FN[$name]}) FROM generate_series(1, 1000000)")"
    echo "run $run $name: bulk ${BULK[$name]##* } ms, pgbench ${TPS[$name]##* } tps, select ${SELECT_MS[$name]##* } ms" >&2
  done
done
psql_ -c "DROP TABLE IF EXISTS bench_t" -c "DROP SEQUENCE IF EXISTS bench_seq"
FLOOR=""
for run in 1 2 3; do
  FLOOR+=" $(ms floor "SELECT count(g) FROM generate_series(1, 1000000) g")"
done

report="$work/report.md"
{
  echo "Run: \`bash ci/steps/pg-extension.sh --bench\` at $(git rev-parse --short HEAD), $(date -u +%Y-%m-%d), $(nproc) cores; $("$IDFORGE_PGEXT_BIN/postgres" --version), default settings (fsync on, synchronous_commit on), the extension's release build. Median of 3 interleaved runs."
  echo
  echo "| id source | INSERT 1,000,000 rows, one statement (rows/s) | one-row INSERTs, 4 sessions (pgbench, rows/s) | SELECT count(f()) over 1,000,000 rows (ns per row: ms for 1,000,000) |"
  echo "| --- | ---: | ---: | ---: |"
  for name in "${ORDER[@]}"; do
    # shellcheck disable=SC2086
    b=$(median ${BULK[$name]}); s=$(median ${SELECT_MS[$name]}); t=$(median ${TPS[$name]})
    printf '| `%s` | %s | %s | %s |\n' "${FN[$name]}" \
      "$(python3 -c "print(f'{1e6 / ($b / 1000):,.0f}')")" \
      "$(python3 -c "print(f'{$t:,.0f}')")" \
      "$s"
  done
  # shellcheck disable=SC2086
  printf '| (no function: `count(g)`, the floor of the last column) | | | %s |\n' "$(median $FLOOR)"
  echo
  # shellcheck disable=SC2086
  python3 - "$(median ${SELECT_MS[gen_random_uuid]})" "$(median ${SELECT_MS[idforge_uuid7]})" \
    "$(median ${BULK[gen_random_uuid]})" "$(median ${BULK[idforge_uuid7]})" \
    "$(median ${TPS[gen_random_uuid]})" "$(median ${TPS[idforge_uuid7]})" <<'PY'
import sys
sel_peer, sel_ours, bulk_peer, bulk_ours, tps_peer, tps_ours = map(float, sys.argv[1:])
ratio = sel_peer / sel_ours
verdict = "met" if ratio >= 1.0 else "MISSED"
print(f"`idforge_uuid7()` / `gen_random_uuid()` in this run: SELECT count(f()) "
      f"**{ratio:.2f}x** (target >= 1.0x: {verdict}), bulk INSERT {bulk_peer / bulk_ours:.2f}x, "
      f"pgbench one-row INSERTs {tps_ours / tps_peer:.2f}x.")
PY
} >"$report"
cat "$report"
write_section pgextbench "PostgreSQL extension (bench/pg-extension.sh)" "$report"
