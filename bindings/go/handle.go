package idforge

// #include "bridge.h"
import "C"

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// handle is the C handle a generator owns: freed by Close, or by the garbage collector once the
// generator is unreachable. Nil once closed.
type handle struct {
	p       unsafe.Pointer
	cleanup runtime.Cleanup
}

// own stores p in h, a field of owner, and has the collector free p when owner is unreachable.
func own[T any](owner *T, h *handle, p unsafe.Pointer, free func(unsafe.Pointer)) {
	atomic.StorePointer(&h.p, p)
	h.cleanup = runtime.AddCleanup(owner, free, p)
}

// load gives the live handle, or nil after Close.
func (h *handle) load() unsafe.Pointer { return atomic.LoadPointer(&h.p) }

// call runs f on the live handle (ErrClosed after Close), keeping owner alive until f returns,
// and turns its status into an error.
func (h *handle) call(owner any, f func(p unsafe.Pointer, msg **C.char) C.idforge_status) error {
	p := h.load()
	if p == nil {
		return ErrClosed
	}
	var msg *C.char
	st := f(p, &msg)
	runtime.KeepAlive(owner)
	return check(st, msg)
}

// close frees the handle once (wait runs first, when not nil); later calls see nil.
func (h *handle) close(free func(unsafe.Pointer), wait func()) {
	if p := atomic.SwapPointer(&h.p, nil); p != nil {
		if wait != nil {
			wait()
		}
		h.cleanup.Stop()
		free(p)
	}
}

// unmarshal parses text into *dst with parse: the UnmarshalText of every id and of Layout.
func unmarshal[T any](dst *T, text []byte, parse func(string) (T, error)) error {
	v, err := parse(string(text))
	if err != nil {
		return err
	}
	*dst = v
	return nil
}
