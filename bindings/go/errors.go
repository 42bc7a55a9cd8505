package idforge

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"errors"
	"strconv"
	"unsafe"
)

// Code is the stable code of an idforge error: its number is the C idforge_status, its name
// (String) the one every language uses, both frozen in core/testdata/errors.json. A Code is an
// error itself, as syscall.Errno is, so errors.Is(err, idforge.ErrInvalidHex) matches any
// *Error of that code.
type Code uint32

// String gives the code's name, such as "INVALID_HEX".
func (c Code) String() string {
	if name := c.name(); name != "" {
		return name
	}
	return "UNKNOWN(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// Error gives the code's name, as String does (fmt prints an error's Error).
func (c Code) Error() string { return c.String() }

// Timeout reports whether the code is ErrTimeout (a wait exceeded its budget), as net.Error does.
func (c Code) Timeout() bool { return c == ErrTimeout }

// Codes gives every code, in numeric order.
func Codes() []Code { return append([]Code(nil), allCodes[:]...) }

// Error is a failed call: its stable code and the message idforge gave.
type Error struct {
	// Code is the stable code: compare with errors.Is(err, idforge.ErrInvalidHex).
	Code Code
	// Message says what failed, as the other languages' messages do ("invalid hex: ...").
	Message string
}

// Error gives "idforge: " and the message.
func (e *Error) Error() string {
	if e.Message == "" {
		return "idforge: " + e.Code.String()
	}
	return "idforge: " + e.Message
}

// Unwrap gives the code, so errors.Is and errors.As see it.
func (e *Error) Unwrap() error { return e.Code }

// Timeout reports whether the call ran out of its wait budget.
func (e *Error) Timeout() bool { return e.Code.Timeout() }

// ErrClosed is returned by a generator's methods after its Close.
var ErrClosed = errors.New("idforge: the generator is closed")

// check turns a status and the message the C side copied into an error (nil on success).
func check(st C.idforge_status, msg *C.char) error {
	if st == C.IDFORGE_STATUS_OK {
		return nil
	}
	e := &Error{Code: Code(st)}
	if msg != nil {
		e.Message = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return e
}

// invalid is an error found on the Go side, before any call (a NUL inside a string, a slice
// of the wrong length), worded as the core words it.
func invalid(code Code, message string) error { return &Error{Code: code, Message: message} }
