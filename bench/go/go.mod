// The benchmarks of the Go binding: a module of their own, so the idforge module needs nothing
// but the standard library. The peers are Debian's packaged source (ci/install/install-go.sh
// --peers), named by path: nothing is fetched.
module idforge.dev/idforge/bench

go 1.24

require (
	github.com/oklog/ulid/v2 v2.0.2
	github.com/rs/xid v1.4.0
	idforge.dev/idforge v0.0.0
)

replace (
	github.com/oklog/ulid/v2 => /usr/share/gocode/src/github.com/oklog/ulid
	github.com/rs/xid => /usr/share/gocode/src/github.com/rs/xid
	idforge.dev/idforge => ../../bindings/go
)
