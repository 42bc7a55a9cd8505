package idforge

// #include "bridge.h"
import "C"

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unsafe"
)

// IDKind is the kind of id DescribeID reads.
type IDKind uint32

const (
	// KindAny detects the kind: 24 hex is an ObjectID; 32 hex or a UUID a UUIDv7 when its bits
	// say so, else a flake-128, as are 22 base62 characters that are not all digits; 26
	// Crockford base32 a ULID; digits a snowflake.
	KindAny IDKind = C.IDFORGE_ID_KIND_ANY
	// KindSnowflake is a snowflake in decimal (read a short text form with ParseID first).
	KindSnowflake IDKind = C.IDFORGE_ID_KIND_SNOWFLAKE
	// KindObjectID is a MongoDB ObjectId in hex.
	KindObjectID IDKind = C.IDFORGE_ID_KIND_OBJECTID
	// KindFlake128 is a flake-128 in base62, hex or UUID form.
	KindFlake128 IDKind = C.IDFORGE_ID_KIND_FLAKE128
	// KindUUID7 is a UUIDv7 (hyphenated, 32 hex, braces or urn:uuid:).
	KindUUID7 IDKind = C.IDFORGE_ID_KIND_UUID7
	// KindULID is a ULID (26 Crockford base32 characters).
	KindULID IDKind = C.IDFORGE_ID_KIND_ULID
)

// String gives the kind's name, as the type field says it (any for KindAny).
func (k IDKind) String() string {
	switch k {
	case KindAny:
		return "any"
	case KindSnowflake:
		return "snowflake"
	case KindObjectID:
		return "objectid"
	case KindFlake128:
		return "flake128"
	case KindUUID7:
		return "uuid7"
	case KindULID:
		return "ulid"
	}
	return "IDKind(" + strconv.FormatUint(uint64(k), 10) + ")"
}

// Field is one decoded field of an id: Value is a string (ids, times, hex) or a uint64.
type Field struct {
	Key   string
	Value any
}

// DescribeID gives the fields of the id written as text, in the order the idforge command line
// prints them: type and id first (a snowflake's layout between them), then time (RFC 3339 UTC)
// and the kind's own fields. The rules are the library's, the same in every language. layout
// reads snowflakes (nil: Twitter's). Text that is no id gives ErrInvalidArgument, or the error
// of the kind it was read as.
func DescribeID(text string, kind IDKind, layout *Layout) ([]Field, error) {
	// No id text is longer than 45 characters: a longer one is refused all the same, and the
	// cut keeps the copy to C small whatever the caller passes.
	if len(text) > 64 {
		text = text[:64]
	}
	var cl *C.struct_idforge_layout
	if layout != nil {
		c := layout.c()
		cl = &c
	}
	var out [C.IDFORGE_DESCRIBE_MAX_LEN + 1]byte
	err := withText(text, ErrInvalidArgument, "the id text", func(s *C.char) error {
		var msg *C.char
		return check(C.idf_go_describe_id(s, C.uint32_t(kind), cl, (*C.char)(unsafe.Pointer(&out[0])), C.size_t(len(out)), &msg), msg)
	})
	if err != nil {
		return nil, err
	}
	return fieldsOf(out[:bytes.IndexByte(out[:], 0)])
}

// fieldsOf reads the library's JSON object, keeping its order.
func fieldsOf(object []byte) ([]Field, error) {
	d := json.NewDecoder(bytes.NewReader(object))
	d.UseNumber()
	if _, err := d.Token(); err != nil { // {
		return nil, err
	}
	var fields []Field
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return nil, err
		}
		value, err := d.Token()
		if err != nil {
			return nil, err
		}
		if n, ok := value.(json.Number); ok {
			u, err := strconv.ParseUint(string(n), 10, 64)
			if err != nil {
				return nil, err
			}
			value = u
		}
		fields = append(fields, Field{Key: key.(string), Value: value})
	}
	return fields, nil
}
