package idforge

// #include "bridge.h"
import "C"

import (
	"strconv"
	"time"
	"unsafe"
)

// ObjectID is a MongoDB ObjectId per the BSON spec: 4-byte big-endian seconds, 5 random bytes
// per process, a 3-byte counter. Its bytes are the id (the same layout as the Go driver's
// primitive.ObjectID, so a conversion is ObjectID(x)); it compares with == and sorts by time
// with bytes.Compare.
type ObjectID [12]byte

// NewObjectID gives a fresh ObjectId. Safe for concurrent use; a forked child reseeds, so parent
// and child never share ids. It fails only when the OS has no entropy (ErrIO).
func NewObjectID() (ObjectID, error) {
	var id ObjectID
	var msg *C.char
	if err := check(C.idf_go_objectid_generate((*C.uint8_t)(unsafe.Pointer(&id[0])), &msg), msg); err != nil {
		return ObjectID{}, err
	}
	return id, nil
}

// NewObjectIDs fills ids with fresh ObjectIds in one call into the library.
func NewObjectIDs(ids []ObjectID) error {
	if len(ids) == 0 {
		return nil
	}
	var msg *C.char
	return check(C.idf_go_objectid_many((*C.uint8_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), &msg), msg)
}

// ParseObjectID reads 24 hex digits (either case): ErrInvalidHex otherwise. Ids of the legacy
// layout (machine 3 | pid 2) parse the same way.
func ParseObjectID(text string) (ObjectID, error) {
	var id ObjectID
	err := parseID(id[:], text, ErrInvalidHex, "invalid hex: the text", func(s *C.char, out *C.uint8_t, msg **C.char) C.idforge_status {
		return C.idf_go_objectid_from_hex(s, out, msg)
	})
	return id, err
}

// ObjectIDFromBytes copies 12 bytes into an ObjectID: ErrInvalidLength for any other length.
func ObjectIDFromBytes(b []byte) (ObjectID, error) {
	var id ObjectID
	if len(b) != len(id) {
		return ObjectID{}, invalid(ErrInvalidLength, "invalid length: expected 12 bytes, got "+strconv.Itoa(len(b)))
	}
	copy(id[:], b)
	return id, nil
}

// Hex gives the 24 lower-case hex digits.
func (id ObjectID) Hex() string {
	var buf [C.IDFORGE_OBJECTID_HEX_LEN + 1]byte
	return format(id[:], buf[:], func(id *C.uint8_t, out *C.char, n C.size_t, msg **C.char) C.idforge_status {
		return C.idf_go_objectid_to_hex(id, out, n, msg)
	})
}

// String gives the hex form.
func (id ObjectID) String() string { return id.Hex() }

// Timestamp gives the creation time (whole seconds; the 4 bytes are unsigned, so until 2106).
func (id ObjectID) Timestamp() time.Time {
	var secs C.uint32_t
	var msg *C.char
	if check(C.idf_go_objectid_timestamp((*C.uint8_t)(unsafe.Pointer(&id[0])), &secs, &msg), msg) != nil {
		return time.Time{}
	}
	return time.Unix(int64(secs), 0).UTC()
}

// IsZero reports whether every byte is zero (an ObjectID never set).
func (id ObjectID) IsZero() bool { return id == ObjectID{} }

// MarshalText gives the hex form, so an ObjectID is a JSON string (as mongoexport writes it
// without extended JSON).
func (id ObjectID) MarshalText() ([]byte, error) { return []byte(id.Hex()), nil }

// UnmarshalText reads the hex form, as ParseObjectID does.
func (id *ObjectID) UnmarshalText(text []byte) error { return unmarshal(id, text, ParseObjectID) }
