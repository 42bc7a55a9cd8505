package idforge

// #include "bridge.h"
import "C"

import (
	"strconv"
	"time"
	"unsafe"
)

// ULID is a ULID as its 16 big-endian bytes: 48-bit Unix ms and 80 random bits. String gives
// the 26 characters of Crockford base32, which sort as the bytes do.
type ULID [16]byte

// ParseULID reads 26 Crockford base32 characters, in either case (I and L read as 1, O as 0):
// ErrInvalidBase32 otherwise.
func ParseULID(text string) (ULID, error) {
	var u ULID
	err := parseID(u[:], text, ErrInvalidBase32, "invalid base32: the text", func(s *C.char, out *C.uint8_t, msg **C.char) C.idforge_status {
		return C.idf_go_ulid_parse(s, out, msg)
	})
	return u, err
}

// ULIDFromBytes copies 16 bytes into a ULID (every 16 bytes are one): ErrInvalidLength for any
// other length.
func ULIDFromBytes(b []byte) (ULID, error) {
	var u ULID
	if len(b) != len(u) {
		return ULID{}, invalid(ErrInvalidLength, "invalid length: expected 16 bytes, got "+strconv.Itoa(len(b)))
	}
	copy(u[:], b)
	return u, nil
}

// String gives the 26 upper-case characters.
func (u ULID) String() string {
	var buf [C.IDFORGE_ULID_TEXT_LEN + 1]byte
	return format(u[:], buf[:], func(id *C.uint8_t, out *C.char, n C.size_t, msg **C.char) C.idforge_status {
		return C.idf_go_ulid_to_text(id, out, n, msg)
	})
}

// TimeMs gives the Unix milliseconds (the top 48 bits).
func (u ULID) TimeMs() uint64 {
	var ms uint64
	for _, b := range u[:6] {
		ms = ms<<8 | uint64(b)
	}
	return ms
}

// Time gives the ULID's millisecond as a time.
func (u ULID) Time() time.Time { return time.UnixMilli(int64(u.TimeMs())) }

// UUID7 reads the ULID as a UUIDv7: ErrInvalidUUID when its bits are not one.
func (u ULID) UUID7() (UUID7, error) { return UUID7FromBytes(u[:]) }

// MarshalText gives the 26 characters, so a ULID is a JSON string.
func (u ULID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads what ParseULID reads.
func (u *ULID) UnmarshalText(text []byte) error { return unmarshal(u, text, ParseULID) }

// ULIDGenerator makes ULIDs that strictly increase (the ULID spec's monotonic mode): the
// millisecond, an 18-bit counter that starts each millisecond at a random value below 2^17, and
// 62 random bits. It is safe for concurrent use by many goroutines; Close frees it (or the
// garbage collector does).
type ULIDGenerator struct{ h handle }

func freeULID(p unsafe.Pointer) { C.idforge_ulid_free((*C.struct_idforge_ulid)(p)) }

// NewULIDGenerator makes a generator: ErrInvalidArgument (policy) or ErrIO (state file) when it
// cannot.
func NewULIDGenerator(cfg TimeOrderedConfig) (*ULIDGenerator, error) {
	var h *C.struct_idforge_ulid
	err := withConfig(cfg, func(policy *C.struct_idforge_policy, path *C.char) error {
		var msg *C.char
		return check(C.idf_go_ulid_new_with_policy(policy, path, &h, &msg), msg)
	})
	if err != nil {
		return nil, err
	}
	g := &ULIDGenerator{}
	own(g, &g.h, unsafe.Pointer(h), freeULID)
	return g, nil
}

// Next gives a fresh ULID.
func (g *ULIDGenerator) Next() (ULID, error) {
	var u ULID
	err := g.h.call(g, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_ulid_next((*C.struct_idforge_ulid)(p), (*C.uint8_t)(unsafe.Pointer(&u[0])), msg)
	})
	return u, err
}

// NextMany fills ids with fresh ULIDs, in increasing order, in one call into the library.
func (g *ULIDGenerator) NextMany(ids []ULID) error {
	if len(ids) == 0 {
		return nil
	}
	return g.h.call(g, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_ulid_next_many((*C.struct_idforge_ulid)(p), (*C.uint8_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), msg)
	})
}

// Close frees the generator (and settles its state file's mark to the last id); later calls
// return ErrClosed. It must not run while another goroutine is inside a call on it.
func (g *ULIDGenerator) Close() error {
	g.h.close(freeULID, nil)
	return nil
}
