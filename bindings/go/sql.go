package idforge

import (
	"database/sql/driver"
	"fmt"
)

// database/sql: each id type is a driver.Valuer and an sql.Scanner, stored in the column type
// that sorts it in creation order (docs/frameworks.md):
//
//	ObjectID  12 bytes: PostgreSQL bytea, SQLite BLOB
//	UUID7     its text: PostgreSQL uuid, SQLite TEXT
//	ULID      its 26 characters: varchar(26)
//	Flake128  16 bytes: bytea, BLOB
//
// Snowflake ids are int64, which database/sql takes as it is (bigint); in JSON, tag the field
// `json:"id,string"` so the id is decimal text, which JavaScript reads exactly
// (core/testdata/json_ids.json). A NULL column scans into sql.Null[T], not into T.

// Value gives the 12 bytes.
func (id ObjectID) Value() (driver.Value, error) { return id[:], nil }

// Scan reads 12 bytes or 24 hex digits.
func (id *ObjectID) Scan(src any) error {
	return scanID(id, src, "ObjectID", len(id), ObjectIDFromBytes, ParseObjectID)
}

// Value gives the UUID's text, which PostgreSQL's uuid type reads.
func (u UUID7) Value() (driver.Value, error) { return u.String(), nil }

// Scan reads the UUID's text (any form ParseUUID7 reads) or its 16 bytes.
func (u *UUID7) Scan(src any) error {
	return scanID(u, src, "UUID7", len(u), UUID7FromBytes, ParseUUID7)
}

// Value gives the 26 characters.
func (u ULID) Value() (driver.Value, error) { return u.String(), nil }

// Scan reads the 26 characters (either case) or 16 bytes.
func (u *ULID) Scan(src any) error { return scanID(u, src, "ULID", len(u), ULIDFromBytes, ParseULID) }

// Value gives the 16 bytes, big-endian (they sort by time).
func (f Flake128) Value() (driver.Value, error) { return f[:], nil }

// Scan reads 16 bytes or the base62 text.
func (f *Flake128) Scan(src any) error {
	return scanID(f, src, "Flake128", len(f), Flake128FromBytes, ParseFlake128)
}

// scanID is Scan of every id type: `size` raw bytes, else its text (no text form of an id has
// 12 or 16 characters).
func scanID[T any](dst *T, src any, name string, size int, fromBytes func([]byte) (T, error), parse func(string) (T, error)) error {
	var (
		v   T
		err error
	)
	switch s := src.(type) {
	case []byte:
		if len(s) == size {
			v, err = fromBytes(s)
		} else {
			v, err = parse(string(s))
		}
	case string:
		v, err = parse(s)
	case nil:
		return invalid(ErrInvalidArgument, "invalid argument: NULL scanned into "+name+" (use sql.Null["+name+"])")
	default:
		return invalid(ErrInvalidArgument, fmt.Sprintf("invalid argument: a %T scanned into %s", src, name))
	}
	if err != nil {
		return err
	}
	*dst = v
	return nil
}
