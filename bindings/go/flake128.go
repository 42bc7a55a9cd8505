package idforge

// #include "bridge.h"
import "C"

import (
	"math/big"
	"runtime"
	"strconv"
	"time"
	"unsafe"
)

// Flake128 is a 128-bit flake id: 64-bit Unix ms | 48-bit worker | 16-bit sequence, as 16
// big-endian bytes, so byte order is time order. Its text forms are base62 (22 characters,
// String) and hex; the 16 bytes also fit a UUID column.
type Flake128 [16]byte

// Flake128Parts are the fields of a flake-128 id.
type Flake128Parts struct {
	// TimeMs is the time, in Unix milliseconds.
	TimeMs uint64
	// Worker is the 48-bit worker id.
	Worker uint64
	// Seq is the sequence within the millisecond.
	Seq uint16
}

// Time gives TimeMs as a time.
func (p Flake128Parts) Time() time.Time { return time.UnixMilli(int64(p.TimeMs)) }

// ComposeFlake128 builds the id of (timeMs, worker, seq): ErrNodeOutOfRange for a worker over
// 48 bits.
func ComposeFlake128(timeMs, worker uint64, seq uint16) (Flake128, error) {
	var f Flake128
	var msg *C.char
	if err := check(C.idf_go_flake128_compose(C.uint64_t(timeMs), C.uint64_t(worker), C.uint16_t(seq), (*C.uint8_t)(unsafe.Pointer(&f[0])), &msg), msg); err != nil {
		return Flake128{}, err
	}
	return f, nil
}

// ParseFlake128 reads base62 (0-9A-Za-z, 22 characters, or fewer as Boundary's unpadded
// form): ErrInvalidBase62 otherwise.
func ParseFlake128(text string) (Flake128, error) {
	var f Flake128
	err := parseID(f[:], text, ErrInvalidBase62, "invalid base62: the text", func(s *C.char, out *C.uint8_t, msg **C.char) C.idforge_status {
		return C.idf_go_flake128_from_base62(s, out, msg)
	})
	return f, err
}

// ParseFlake128Hex reads 32 hex digits (either case): ErrInvalidHex otherwise.
func ParseFlake128Hex(text string) (Flake128, error) {
	var f Flake128
	err := parseID(f[:], text, ErrInvalidHex, "invalid hex: the text", func(s *C.char, out *C.uint8_t, msg **C.char) C.idforge_status {
		return C.idf_go_flake128_from_hex(s, out, msg)
	})
	return f, err
}

// Flake128FromBytes copies 16 bytes into a Flake128: ErrInvalidLength for any other length.
func Flake128FromBytes(b []byte) (Flake128, error) {
	var f Flake128
	if len(b) != len(f) {
		return Flake128{}, invalid(ErrInvalidLength, "invalid length: expected 16 bytes, got "+strconv.Itoa(len(b)))
	}
	copy(f[:], b)
	return f, nil
}

// Base62 gives the 22-character base62 form; it sorts as the id does.
func (f Flake128) Base62() string {
	var buf [C.IDFORGE_FLAKE128_BASE62_LEN + 1]byte
	return format(f[:], buf[:], func(id *C.uint8_t, out *C.char, n C.size_t, msg **C.char) C.idforge_status {
		return C.idf_go_flake128_to_base62(id, out, n, msg)
	})
}

// Hex gives the 32 lower-case hex digits.
func (f Flake128) Hex() string {
	var buf [C.IDFORGE_FLAKE128_HEX_LEN + 1]byte
	return format(f[:], buf[:], func(id *C.uint8_t, out *C.char, n C.size_t, msg **C.char) C.idforge_status {
		return C.idf_go_flake128_to_hex(id, out, n, msg)
	})
}

// String gives the base62 form.
func (f Flake128) String() string { return f.Base62() }

// BigInt gives the id as an unsigned 128-bit integer.
func (f Flake128) BigInt() *big.Int { return new(big.Int).SetBytes(f[:]) }

// Decompose splits the id into its fields.
func (f Flake128) Decompose() Flake128Parts {
	var out C.struct_idforge_flake128_parts
	var msg *C.char
	if check(C.idf_go_flake128_decompose((*C.uint8_t)(unsafe.Pointer(&f[0])), &out, &msg), msg) != nil {
		return Flake128Parts{}
	}
	return Flake128Parts{TimeMs: uint64(out.time_ms), Worker: uint64(out.worker), Seq: uint16(out.seq)}
}

// MarshalText gives the base62 form, so a Flake128 is a JSON string.
func (f Flake128) MarshalText() ([]byte, error) { return []byte(f.Base62()), nil }

// UnmarshalText reads the base62 form, as ParseFlake128 does.
func (f *Flake128) UnmarshalText(text []byte) error { return unmarshal(f, text, ParseFlake128) }

// Worker says where a Flake128Generator's 48-bit worker id comes from.
type Worker struct {
	kind C.uint32_t
	id   uint64
}

// RandomWorker is 48 random bits, drawn again in a forked child (the default).
func RandomWorker() Worker { return Worker{kind: C.IDFORGE_WORKER_KIND_RANDOM} }

// MACWorker is the first non-zero MAC address (Boundary's choice); a forked child gets ErrForked.
func MACWorker() Worker { return Worker{kind: C.IDFORGE_WORKER_KIND_MAC} }

// FixedWorker is the given id (at most 2^48-1, else ErrNodeOutOfRange); a forked child gets
// ErrForked.
func FixedWorker(id uint64) Worker { return Worker{kind: C.IDFORGE_WORKER_KIND_FIXED, id: id} }

// Flake128Generator makes flake-128 ids. It is safe for concurrent use by many goroutines.
// Close frees it; one dropped without Close is freed by the garbage collector.
type Flake128Generator struct{ h handle }

func freeFlake128(p unsafe.Pointer) { C.idforge_flake128_free((*C.struct_idforge_flake128)(p)) }

// NewFlake128Generator makes a generator with the worker id w gives.
func NewFlake128Generator(w Worker) (*Flake128Generator, error) {
	var h *C.struct_idforge_flake128
	var msg *C.char
	if err := check(C.idf_go_flake128_new(w.kind, C.uint64_t(w.id), &h, &msg), msg); err != nil {
		return nil, err
	}
	g := &Flake128Generator{}
	own(g, &g.h, unsafe.Pointer(h), freeFlake128)
	return g, nil
}

// Next gives a fresh id.
func (g *Flake128Generator) Next() (Flake128, error) {
	h := (*C.struct_idforge_flake128)(g.h.load())
	if h == nil {
		return Flake128{}, ErrClosed
	}
	var f Flake128
	var msg *C.char
	st := C.idf_go_flake128_next(h, (*C.uint8_t)(unsafe.Pointer(&f[0])), &msg)
	runtime.KeepAlive(g)
	if st != C.IDFORGE_STATUS_OK {
		return Flake128{}, check(st, msg)
	}
	return f, nil
}

// NextMany fills ids with fresh ids, in increasing order, in one call into the library.
func (g *Flake128Generator) NextMany(ids []Flake128) error {
	if len(ids) == 0 {
		return nil
	}
	return g.h.call(g, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_flake128_many((*C.struct_idforge_flake128)(p), (*C.uint8_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), msg)
	})
}

// Worker gives the generator's 48-bit worker id.
func (g *Flake128Generator) Worker() (uint64, error) {
	var out C.uint64_t
	err := g.h.call(g, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_flake128_worker((*C.struct_idforge_flake128)(p), &out, msg)
	})
	return uint64(out), err
}

// Close frees the generator; later calls return ErrClosed. It must not run while another
// goroutine is inside a call on the same generator.
func (g *Flake128Generator) Close() error {
	g.h.close(freeFlake128, nil)
	return nil
}
