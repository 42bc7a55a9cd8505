package idforge

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"strings"
	"unsafe"
)

// shortText is the longest text passed to C from a stack buffer (ids, layout names); longer
// text is copied with C.CString.
const shortText = 63

// withText calls f with s as a NUL-terminated C string. Text holding a NUL byte, which C would
// read only up to that byte, is refused with code and a message naming what.
func withText(s string, code Code, what string, f func(*C.char) error) error {
	if strings.IndexByte(s, 0) >= 0 {
		return invalid(code, what+" holds a NUL byte")
	}
	if len(s) <= shortText {
		var buf [shortText + 1]byte
		copy(buf[:], s)
		return f((*C.char)(unsafe.Pointer(&buf[0])))
	}
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	return f(cs)
}

// format writes the text form of the id bytes into buf (its length and a NUL) with one of the C
// formatters, and gives it ("" if the formatter failed, which a well-sized buf never makes it).
func format(id, buf []byte, f func(*C.uint8_t, *C.char, C.size_t, **C.char) C.idforge_status) string {
	var msg *C.char
	if check(f((*C.uint8_t)(unsafe.Pointer(&id[0])), (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &msg), msg) != nil {
		return ""
	}
	return string(buf[:len(buf)-1])
}

// parseID reads text into out (an id's bytes) with one of the C parsers; out is left zero on
// failure.
func parseID(out []byte, text string, code Code, what string, parse func(*C.char, *C.uint8_t, **C.char) C.idforge_status) error {
	err := withText(text, code, what, func(s *C.char) error {
		var msg *C.char
		return check(parse(s, (*C.uint8_t)(unsafe.Pointer(&out[0])), &msg), msg)
	})
	if err != nil {
		clear(out)
	}
	return err
}
