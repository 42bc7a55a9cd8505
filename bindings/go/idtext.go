package idforge

// #include "bridge.h"
import "C"

import (
	"strconv"
	"unsafe"
)

// TextForm is a text form of a 64-bit id (a snowflake, or any uint64 key).
type TextForm uint32

const (
	// TextDecimal is the id's digits, no sign, no leading zero: JSON-safe (JavaScript numbers
	// hold 53 bits); its text order is not id order.
	TextDecimal TextForm = C.IDFORGE_TEXT_FORM_DECIMAL
	// TextBase32 is 13 characters of Crockford base32 (TSID's form): upper case out, either
	// case in; text order is id order.
	TextBase32 TextForm = C.IDFORGE_TEXT_FORM_BASE32
	// TextBase62 is 11 characters of 0-9A-Za-z; byte order (not a case-blind collation) is id
	// order.
	TextBase62 TextForm = C.IDFORGE_TEXT_FORM_BASE62
)

// String gives the form's name: decimal, base32 or base62.
func (f TextForm) String() string {
	switch f {
	case TextDecimal:
		return "decimal"
	case TextBase32:
		return "base32"
	case TextBase62:
		return "base62"
	}
	return "TextForm(" + strconv.FormatUint(uint64(f), 10) + ")"
}

// FormatID writes id in form; ErrInvalidArgument for an unknown form.
func FormatID(id uint64, form TextForm) (string, error) {
	var buf [C.IDFORGE_ID_TEXT_MAX_LEN + 1]byte
	var msg *C.char
	st := C.idf_go_id_to_text(C.uint64_t(id), C.uint32_t(form), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &msg)
	if err := check(st, msg); err != nil {
		return "", err
	}
	n := 0
	for buf[n] != 0 {
		n++
	}
	return string(buf[:n]), nil
}

// ParseID reads the id whose text in form is text. Only the id's one text is taken (base32 in
// either case): a sign, a space, a leading zero, another width or I L O U give ErrInvalidDecimal,
// ErrInvalidBase32 or ErrInvalidBase62, so two different texts never name one id.
func ParseID(text string, form TextForm) (uint64, error) {
	// No form is longer than 20 characters: a longer text is refused by its length all the same,
	// and the cut keeps the copy to C small whatever the caller passes.
	if len(text) > 64 {
		text = text[:64]
	}
	var id uint64
	err := withText(text, invalidCodeOf(form), "the text", func(s *C.char) error {
		var msg *C.char
		var out C.uint64_t
		if err := check(C.idf_go_id_from_text(s, C.uint32_t(form), &out, &msg), msg); err != nil {
			return err
		}
		id = uint64(out)
		return nil
	})
	return id, err
}

// invalidCodeOf is the error of a bad text in form (text holding a NUL byte never reaches C).
func invalidCodeOf(form TextForm) Code {
	switch form {
	case TextDecimal:
		return ErrInvalidDecimal
	case TextBase32:
		return ErrInvalidBase32
	case TextBase62:
		return ErrInvalidBase62
	}
	return ErrInvalidArgument
}

// ShortID is a 64-bit id whose text, and so its JSON, is the 13-character base32 form: sortable
// like the ids, and exact in every JSON reader. Its database value is the id (a BIGINT).
type ShortID uint64

// String gives the 13 base32 characters.
func (s ShortID) String() string {
	text, _ := FormatID(uint64(s), TextBase32) // base32 is a known form: no error
	return text
}

// MarshalText gives the 13 base32 characters, so a ShortID is a JSON string.
func (s ShortID) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads 13 base32 characters in either case (ErrInvalidBase32 otherwise).
func (s *ShortID) UnmarshalText(text []byte) error {
	id, err := ParseID(string(text), TextBase32)
	if err != nil {
		return err
	}
	*s = ShortID(id)
	return nil
}

// SnowflakeID is a 64-bit id whose text, and so its JSON, is its decimal digits: a JSON string,
// exact in every JSON reader (a JavaScript number holds 53 bits). Unlike a uint64 tagged
// `json:",string"` (strconv reads "007" as 7), it reads only the id's one text, as every
// binding does (core/testdata/json_ids.json).
type SnowflakeID uint64

// String gives the decimal digits.
func (s SnowflakeID) String() string { return strconv.FormatUint(uint64(s), 10) }

// MarshalText gives the decimal digits, so a SnowflakeID is a JSON string.
func (s SnowflakeID) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the decimal digits: a sign, a space, a leading zero or a value above
// 2^64 - 1 give ErrInvalidDecimal.
func (s *SnowflakeID) UnmarshalText(text []byte) error {
	id, err := ParseID(string(text), TextDecimal)
	if err != nil {
		return err
	}
	*s = SnowflakeID(id)
	return nil
}
