// Package idforge makes unique ids with the idforge engine, the same one the Rust, C, Python,
// Node and JVM libraries use: snowflake ids in every common layout (Snowflake), MongoDB
// ObjectIds (ObjectID), 128-bit flake ids (Flake128Generator), UUIDv7s (UUID7Generator), ULIDs
// (ULIDGenerator) and Leaf-style segments from a shared source (Segments). Never a duplicate: not after a crash, a clock step back, a fork or
// a failover.
//
// Every generator is safe for concurrent use by many goroutines. Calls return (value, error);
// an error is an *Error whose Code is one of the stable codes of core/testdata/errors.json,
// matched with errors.Is(err, idforge.ErrInvalidHex) or read with errors.As.
//
// # Linking
//
// The package is cgo over the C library, found with pkg-config: unpack the release's C tarball
// (idforge-c-VERSION-x86_64-linux-gnu.tar.gz) anywhere and point PKG_CONFIG_PATH at its
// lib/pkgconfig. By default a program links libidforge.so (idforge.pc adds an rpath, so it
// starts with no LD_LIBRARY_PATH); with -tags idforge_static it links libidforge.a and needs no
// idforge file at run time. Building needs the Go toolchain and a C compiler, no Rust.
//
// The module path is idforge.dev/idforge; until a proxy serves it, use the module from a
// checkout or an unpacked copy with a replace directive:
//
//	go mod edit -require=idforge.dev/idforge@v0.0.0 -replace=idforge.dev/idforge=/path/to/bindings/go
package idforge
