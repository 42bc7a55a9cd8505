#!/usr/bin/env bash
# The go step: the Go binding (bindings/go) over the C library of this checkout.
#   Go from PyPI (ci/install/install-go.sh); libidforge built and installed into a prefix of the
#   cache (ci/install/install-c.sh), found through its pkg-config file as a user's would be;
#   gofmt, go vet (shared and static), go test -race (the shared vectors, 8 goroutines x
#   1,000,000 snowflakes and ObjectIds, the typed errors, Segments on every source URL of
#   ci/services.sh and through kill -9 of a server of its own: IDFORGE_BIN), the vectors again
#   linked statically (-tags idforge_static), the ids through database/sql in PostgreSQL and
#   SQLite (bindings/go/sqltest, with Debian's lib/pq and go-sqlite3), and the benchmarks run once
#   each (bench/go, with the Debian peers) so they keep building. The program in an empty folder against the
#   release tarball is ci/dist/dist-test.sh's (the dist step), as it needs dist/.
#
#   ci/steps/go.sh      (ci/test.sh go, with the services started)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"
# shellcheck source=ci/lib.sh
. ci/lib.sh
# The library in the debug profile, as the other bindings' steps build theirs.
binding_debug

bash ci/install/install-deps.sh c
bash ci/install/install-go.sh --peers >/dev/null
# shellcheck source=ci/install/go-env.sh
. ci/install/go-env.sh
go version

prefix="$CACHE/go/c-prefix"
bash ci/install/install-c.sh "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

cd bindings/go
unformatted="$(gofmt -l .)"
[ -z "$unformatted" ] || { echo "error: not gofmt'd: $unformatted" >&2; exit 1; }
go vet ./...
go vet -tags idforge_static ./...
go test -race -count=1 ./...
go test -count=1 -tags idforge_static -run 'Vectors|Layout|Compose|Typed' ./...
(
  # The ids through database/sql in PostgreSQL (the services') and SQLite (docs/frameworks.md).
  cd sqltest
  unformatted="$(gofmt -l .)"
  [ -z "$unformatted" ] || { echo "error: not gofmt'd: $unformatted" >&2; exit 1; }
  go vet ./...
  go test -count=1 ./...
)
cd ../../bench/go
unformatted="$(gofmt -l .)"
[ -z "$unformatted" ] || { echo "error: not gofmt'd: $unformatted" >&2; exit 1; }
go vet ./...
go test -count=1 -run '^$' -bench . -benchtime=1x ./... >/dev/null
echo "go: vet, tests (race), static link, database/sql in PostgreSQL and SQLite, benchmarks build and run"
