// The Go binding's ids in real databases through database/sql: a module of its own, so the
// idforge module needs nothing but the standard library. The drivers are Debian's packaged
// source (ci/install/install-go.sh --peers), named by path: nothing is fetched.
module idforge.dev/idforge/sqltest

go 1.24

require (
	github.com/lib/pq v1.10.7
	github.com/mattn/go-sqlite3 v1.14.16
	idforge.dev/idforge v0.0.0
)

replace (
	github.com/lib/pq => /usr/share/gocode/src/github.com/lib/pq
	github.com/mattn/go-sqlite3 => /usr/share/gocode/src/github.com/mattn/go-sqlite3
	idforge.dev/idforge => ../
)
