package idforge

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"strconv"
	"time"
	"unsafe"
)

// UUID7 is a version 7 UUID (RFC 9562) as its 16 bytes: 48-bit Unix ms, the version, 12 bits
// rand_a, the variant, 62 bits rand_b. A UUID7Generator's ids strictly increase as bytes and as
// text. String gives the hyphenated lower-case form.
type UUID7 [16]byte

// UUID7Parts are the fields of a UUIDv7.
type UUID7Parts struct {
	// TimeMs is the time, in Unix milliseconds (48 bits).
	TimeMs uint64
	// RandA is the 12 bits after the version.
	RandA uint16
	// RandB is the 62 bits after the variant.
	RandB uint64
}

// ComposeUUID7 builds the UUIDv7 of these fields: ErrTimeOutOfRange or ErrInvalidArgument for
// a field too wide.
func ComposeUUID7(timeMs uint64, randA uint16, randB uint64) (UUID7, error) {
	var u UUID7
	var msg *C.char
	if err := check(C.idf_go_uuid7_compose(C.uint64_t(timeMs), C.uint16_t(randA), C.uint64_t(randB), (*C.uint8_t)(unsafe.Pointer(&u[0])), &msg), msg); err != nil {
		return UUID7{}, err
	}
	return u, nil
}

// ParseUUID7 reads a version 7 UUID: hyphenated, 32 hex digits, in braces or after urn:uuid:,
// in either case. Other text, and a UUID of another version or variant, is ErrInvalidUUID.
func ParseUUID7(text string) (UUID7, error) {
	var u UUID7
	err := parseID(u[:], text, ErrInvalidUUID, "invalid uuid: the text", func(s *C.char, out *C.uint8_t, msg **C.char) C.idforge_status {
		return C.idf_go_uuid7_parse(s, out, msg)
	})
	return u, err
}

// UUID7FromBytes reads 16 bytes: ErrInvalidLength for another length, ErrInvalidUUID when they
// are not a UUIDv7.
func UUID7FromBytes(b []byte) (UUID7, error) {
	var u UUID7
	if len(b) != len(u) {
		return UUID7{}, invalid(ErrInvalidLength, "invalid length: expected 16 bytes, got "+strconv.Itoa(len(b)))
	}
	copy(u[:], b)
	var msg *C.char
	if err := check(C.idf_go_uuid7_validate((*C.uint8_t)(unsafe.Pointer(&u[0])), &msg), msg); err != nil {
		return UUID7{}, err
	}
	return u, nil
}

// String gives the 36-character hyphenated lower-case form.
func (u UUID7) String() string {
	var buf [C.IDFORGE_UUID7_TEXT_LEN + 1]byte
	return format(u[:], buf[:], func(id *C.uint8_t, out *C.char, n C.size_t, msg **C.char) C.idforge_status {
		return C.idf_go_uuid7_to_text(id, out, n, msg)
	})
}

// ULID gives the same 128 bits as a ULID (the same millisecond).
func (u UUID7) ULID() ULID { return ULID(u) }

// Decompose splits the UUID into its fields.
func (u UUID7) Decompose() UUID7Parts {
	var out C.struct_idforge_uuid7_parts
	var msg *C.char
	if check(C.idf_go_uuid7_decompose((*C.uint8_t)(unsafe.Pointer(&u[0])), &out, &msg), msg) != nil {
		return UUID7Parts{}
	}
	return UUID7Parts{TimeMs: uint64(out.time_ms), RandA: uint16(out.rand_a), RandB: uint64(out.rand_b)}
}

// Time gives the UUID's millisecond as a time.
func (u UUID7) Time() time.Time { return time.UnixMilli(int64(u.Decompose().TimeMs)) }

// MarshalText gives the hyphenated form, so a UUID7 is a JSON string.
func (u UUID7) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads any form ParseUUID7 reads.
func (u *UUID7) UnmarshalText(text []byte) error { return unmarshal(u, text, ParseUUID7) }

// TimeOrderedConfig configures a UUID7Generator or a ULIDGenerator; the zero value is the
// default (borrow up to 1 s, no state file).
type TimeOrderedConfig struct {
	// Policy is the clock policy (zero: the default).
	Policy Policy
	// StateFile, when not empty, keeps a high-water time across restarts, so ids keep
	// increasing after a restart with the clock set back. A forked child cannot use it
	// (ErrForked).
	StateFile string
}

// withConfig calls make with cfg's policy and state file as C values.
func withConfig(cfg TimeOrderedConfig, make func(*C.struct_idforge_policy, *C.char) error) error {
	lead, err := millis("policy duration", cfg.Policy.Duration, 1<<64-1)
	if err != nil {
		return err
	}
	policy := C.struct_idforge_policy{kind: C.uint32_t(cfg.Policy.Kind), millis: C.uint64_t(lead)}
	var path *C.char
	if cfg.StateFile != "" {
		if err := noNUL(ErrInvalidArgument, "state file", cfg.StateFile); err != nil {
			return err
		}
		path = C.CString(cfg.StateFile)
		defer C.free(unsafe.Pointer(path))
	}
	return make(&policy, path)
}

// UUID7Generator makes UUIDv7s that strictly increase: the millisecond, an 18-bit counter that
// starts each millisecond at a random value below 2^17, and 56 random bits. It is safe for
// concurrent use by many goroutines; Close frees it (or the garbage collector does).
type UUID7Generator struct{ h handle }

func freeUUID7(p unsafe.Pointer) { C.idforge_uuid7_free((*C.struct_idforge_uuid7)(p)) }

// NewUUID7Generator makes a generator: ErrInvalidArgument (policy) or ErrIO (state file) when
// it cannot.
func NewUUID7Generator(cfg TimeOrderedConfig) (*UUID7Generator, error) {
	var h *C.struct_idforge_uuid7
	err := withConfig(cfg, func(policy *C.struct_idforge_policy, path *C.char) error {
		var msg *C.char
		return check(C.idf_go_uuid7_new_with_policy(policy, path, &h, &msg), msg)
	})
	if err != nil {
		return nil, err
	}
	g := &UUID7Generator{}
	own(g, &g.h, unsafe.Pointer(h), freeUUID7)
	return g, nil
}

// Next gives a fresh UUIDv7.
func (g *UUID7Generator) Next() (UUID7, error) {
	var u UUID7
	err := g.h.call(g, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_uuid7_next((*C.struct_idforge_uuid7)(p), (*C.uint8_t)(unsafe.Pointer(&u[0])), msg)
	})
	return u, err
}

// NextMany fills ids with fresh UUIDv7s, in increasing order, in one call into the library.
func (g *UUID7Generator) NextMany(ids []UUID7) error {
	if len(ids) == 0 {
		return nil
	}
	return g.h.call(g, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_uuid7_next_many((*C.struct_idforge_uuid7)(p), (*C.uint8_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), msg)
	})
}

// Close frees the generator (and settles its state file's mark to the last id); later calls
// return ErrClosed. It must not run while another goroutine is inside a call on it.
func (g *UUID7Generator) Close() error {
	g.h.close(freeUUID7, nil)
	return nil
}
