// Package bench holds the benchmarks of the Go binding against its floors (a cgo call that does
// nothing, time.Now) and its peers (rs/xid, oklog/ulid): go test -bench . in this folder.
package bench

/*
#cgo pkg-config: idforge
#include <stdint.h>
#include <stdlib.h>
#include <idforge.h>

static void idforge_bench_noop(void) {}
static void idforge_bench_noop_ptr(uint64_t *out) { *out = 1; }
*/
import "C"

import "unsafe"

// wideSeq has 22 sequence bits (4 M ids a millisecond): a loop makes ids faster than Twitter's
// 4,096 a millisecond, and past its 1 s lead a Twitter generator waits for the clock, so the
// loop would time the clock's pace rather than the call. The call is the same for every layout.
const wideSeq = "epoch=1577836800000,tick=1,time=41,node=0,seq=22"

// Noop is a cgo call that does nothing: the floor of any call into the C library.
func Noop() { C.idforge_bench_noop() }

// NoopPtr is a cgo call that writes one word through a pointer to the caller's stack: the floor
// of a call with an out-parameter, as every id call has.
func NoopPtr() uint64 {
	var out C.uint64_t
	C.idforge_bench_noop_ptr(&out)
	return uint64(out)
}

// RawObjectID calls idforge_objectid_generate with no wrapper: what the binding adds is the rest.
func RawObjectID(id *[12]byte) { C.idforge_objectid_generate((*C.uint8_t)(unsafe.Pointer(&id[0]))) }

// RawSnowflake is a snowflake handle of the C library, called with no wrapper.
type RawSnowflake struct{ h *C.idforge_snowflake }

// NewRawSnowflake makes a generator of the 22-bit sequence layout the benchmarks use.
func NewRawSnowflake() RawSnowflake {
	var cfg C.idforge_snowflake_config
	text := C.CString(wideSeq)
	defer C.free(unsafe.Pointer(text))
	C.idforge_layout_parse(text, &cfg.layout)
	var h *C.idforge_snowflake
	C.idforge_snowflake_new(&cfg, &h)
	return RawSnowflake{h}
}

// Next calls idforge_snowflake_next directly: what the binding adds to it is the rest.
func (r RawSnowflake) Next() uint64 {
	var id C.uint64_t
	C.idforge_snowflake_next(r.h, &id)
	return uint64(id)
}

// Close frees the generator.
func (r RawSnowflake) Close() { C.idforge_snowflake_free(r.h) }
