#!/bin/sh
# Installs the idforge PostgreSQL extension of this tarball into the PostgreSQL that pg_config
# names ($PG_CONFIG, else pg_config on PATH): lib/idforge.so into its pkglibdir, the control and
# SQL files into its sharedir/extension. Run as the owner of those folders (usually root).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
pg_config=${PG_CONFIG:-pg_config}
command -v "$pg_config" >/dev/null 2>&1 || {
  echo "error: $pg_config not found: set PG_CONFIG to the pg_config of your PostgreSQL 15" >&2
  exit 1
}
major=$("$pg_config" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
[ "$major" = 15 ] || {
  echo "error: this build is for PostgreSQL 15; $pg_config is PostgreSQL $major" >&2
  exit 1
}
libdir=$("$pg_config" --pkglibdir)
extdir=$("$pg_config" --sharedir)/extension
install -m 0755 "$here/lib/idforge.so" "$libdir/idforge.so"
install -m 0644 "$here"/share/extension/* "$extdir/"
echo "installed into $libdir and $extdir"
echo "next: shared_preload_libraries = 'idforge' and idforge.node_id = N in postgresql.conf,"
echo "restart PostgreSQL, then CREATE EXTENSION idforge;"
