package idforge

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"context"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// SegmentOptions are the options of NewSegments. A zero field is not given: its default
// applies, so the zero SegmentOptions (or nil) is the default set. The defaults and bounds are
// the same in every language (docs/segment-sources.md, "Options"); a field out of its bounds fails
// with ErrInvalidArgument and a message naming the option. Durations are whole milliseconds,
// rounded up.
type SegmentOptions struct {
	// Step is the first and smallest range (1000).
	Step uint64
	// MaxStep is the largest range dynamic sizing may reach (1,000,000, or Step when larger).
	MaxStep uint64
	// FixedStep always asks for Step ids (false: grow or shrink the range to keep it lasting
	// about Target, as Leaf does).
	FixedStep bool
	// Target is how long a range should last (15 min).
	Target time.Duration
	// PrefetchPct is the percent of a range used before the next is fetched, 1 to 99 (10).
	PrefetchPct uint8
	// Timeout is the longest a call waits for a range when both buffers are empty, through
	// transient failures such as a server restarting (3 s; at most a day). A permanent failure
	// (authentication refused, an unknown tag) returns at once.
	Timeout time.Duration
}

// SegmentStats are the counters of a Segments generator.
type SegmentStats struct {
	// RangesFetched counts the ranges fetched from the source.
	RangesFetched uint64
	// FetchErrors counts the fetches that failed.
	FetchErrors uint64
	// FetchTotal is the time spent fetching, in all.
	FetchTotal time.Duration
	// FetchLast is the last fetch's duration.
	FetchLast time.Duration
	// Waits counts the calls that found both buffers empty and had to wait.
	Waits uint64
	// Step is the range the next fetch asks for.
	Step uint64
	// Buffered counts the ids buffered now.
	Buffered uint64
}

// EngineStats are the figures of the refill engine that serves every generator of the process
// on one source URL.
type EngineStats struct {
	// Generators counts the generators the engine serves.
	Generators uint64
	// Threads counts the threads it runs now.
	Threads uint64
	// Connections counts the connections the source holds open in this process now.
	Connections uint64
	// RoundTrips counts the requests made to the source, one under way included.
	RoundTrips uint64
	// Refills counts the ranges the engine asked for (failed ones included).
	Refills uint64
	// BatchedRefills counts the ranges asked for in a round trip shared with other tags'.
	BatchedRefills uint64
	// Queued counts the tags waiting for a range now, retries included.
	Queued uint64
}

// Segments gives the ids of one tag from a segment source: usually one atomic add, with ranges
// fetched in the background before they run out. It is safe for concurrent use by many
// goroutines. Close it when done; one dropped without Close is freed by the garbage collector.
type Segments struct {
	h handle
	// pending counts NextContext calls still waiting in the library after their caller left.
	pending sync.WaitGroup
}

func freeSegments(p unsafe.Pointer) { C.idforge_segments_free((*C.struct_idforge_segments)(p)) }

// NewSegments makes a generator for tag over the source at url:
// idforge://[user:pass@]host:port[,host:port...] (the segment server; ?mode=any for striped
// servers), redis://[user:pass@]host:port[/db], postgres://..., mysql://..., sqlite:///path
// (Leaf's leaf_alloc table), file:///abs/dir (a locked counter file per tag) or memory: (this
// process only). opts may be nil for the defaults. It fails with ErrInvalidURL,
// ErrInvalidArgument (tag, options) or ErrIO; a network source connects in the background, so
// its failures (ErrSourceUnavailable, ErrTimeout) come from Next.
func NewSegments(url, tag string, opts *SegmentOptions) (*Segments, error) {
	if err := noNUL(ErrInvalidURL, "url", url); err != nil {
		return nil, err
	}
	if err := noNUL(ErrInvalidArgument, "tag", tag); err != nil {
		return nil, err
	}
	var o C.struct_idforge_segment_options
	if opts != nil {
		target, err := millis("target", opts.Target, 1<<64-1)
		if err != nil {
			return nil, err
		}
		timeout, err := millis("timeout", opts.Timeout, 1<<64-1)
		if err != nil {
			return nil, err
		}
		o = C.struct_idforge_segment_options{
			step:         C.uint64_t(opts.Step),
			max_step:     C.uint64_t(opts.MaxStep),
			fixed_step:   C.bool(opts.FixedStep),
			target_ms:    C.uint64_t(target),
			prefetch_pct: C.uint8_t(opts.PrefetchPct),
			timeout_ms:   C.uint64_t(timeout),
		}
	}
	curl, ctag := C.CString(url), C.CString(tag)
	defer C.free(unsafe.Pointer(curl))
	defer C.free(unsafe.Pointer(ctag))
	var h *C.struct_idforge_segments
	var msg *C.char
	if err := check(C.idf_go_segments_new(curl, ctag, &o, &h, &msg), msg); err != nil {
		return nil, err
	}
	s := &Segments{}
	own(s, &s.h, unsafe.Pointer(h), freeSegments)
	return s, nil
}

// Next gives the next id. It waits up to the Timeout option when both buffers are empty
// (ErrTimeout, or the source's error such as ErrSourceUnavailable).
func (s *Segments) Next() (uint64, error) {
	h := (*C.struct_idforge_segments)(s.h.load())
	if h == nil {
		return 0, ErrClosed
	}
	var id C.uint64_t
	var msg *C.char
	st := C.idf_go_segments_next(h, &id, &msg)
	runtime.KeepAlive(s)
	if st != C.IDFORGE_STATUS_OK {
		return 0, check(st, msg)
	}
	return uint64(id), nil
}

// NextContext is Next that returns ctx.Err() as soon as ctx is done (its deadline passed or it
// was cancelled), even while the library still waits for a range. The id such a call would have
// got is dropped: never handed out (a gap, as after a restart). With a context that is never
// done it is Next.
func (s *Segments) NextContext(ctx context.Context) (uint64, error) {
	done := ctx.Done()
	if done == nil {
		return s.Next()
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	type result struct {
		id  uint64
		err error
	}
	// The library's wait cannot be interrupted from outside, so it runs on a goroutine of its
	// own; Close waits for such calls (each ends within the Timeout option) before freeing.
	got := make(chan result, 1)
	s.pending.Add(1)
	go func() {
		defer s.pending.Done()
		id, err := s.Next()
		got <- result{id, err}
	}()
	select {
	case r := <-got:
		return r.id, r.err
	case <-done:
		return 0, ctx.Err()
	}
}

// NextMany fills ids with ids, in one call into the library. On failure the contents of ids
// are unspecified; ids written there are never handed out again.
func (s *Segments) NextMany(ids []uint64) error {
	if len(ids) == 0 {
		return nil
	}
	return s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_segments_next_many((*C.struct_idforge_segments)(p), (*C.uint64_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), msg)
	})
}

// Options gives the options in effect, every field set, as NewSegments resolved them.
func (s *Segments) Options() (SegmentOptions, error) {
	var o C.struct_idforge_segment_options
	err := s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_segments_options((*C.struct_idforge_segments)(p), &o, msg)
	})
	if err != nil {
		return SegmentOptions{}, err
	}
	return SegmentOptions{
		Step:        uint64(o.step),
		MaxStep:     uint64(o.max_step),
		FixedStep:   bool(o.fixed_step),
		Target:      time.Duration(o.target_ms) * time.Millisecond,
		PrefetchPct: uint8(o.prefetch_pct),
		Timeout:     time.Duration(o.timeout_ms) * time.Millisecond,
	}, nil
}

// Stats gives the generator's counters.
func (s *Segments) Stats() (SegmentStats, error) {
	var o C.struct_idforge_segment_stats
	err := s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_segments_stats((*C.struct_idforge_segments)(p), &o, msg)
	})
	if err != nil {
		return SegmentStats{}, err
	}
	return SegmentStats{
		RangesFetched: uint64(o.ranges_fetched),
		FetchErrors:   uint64(o.fetch_errors),
		FetchTotal:    time.Duration(o.fetch_micros_total) * time.Microsecond,
		FetchLast:     time.Duration(o.fetch_micros_last) * time.Microsecond,
		Waits:         uint64(o.waits),
		Step:          uint64(o.step),
		Buffered:      uint64(o.buffered),
	}, nil
}

// EngineStats gives the figures of the refill engine serving this generator's source.
func (s *Segments) EngineStats() (EngineStats, error) {
	var o C.struct_idforge_engine_stats
	err := s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_segments_engine_stats((*C.struct_idforge_segments)(p), &o, msg)
	})
	if err != nil {
		return EngineStats{}, err
	}
	return EngineStats{
		Generators:     uint64(o.generators),
		Threads:        uint64(o.threads),
		Connections:    uint64(o.connections),
		RoundTrips:     uint64(o.round_trips),
		Refills:        uint64(o.refills),
		BatchedRefills: uint64(o.batched_refills),
		Queued:         uint64(o.queued),
	}, nil
}

// Close frees the generator (the last one on a source ends its refill engine); ids still
// buffered are dropped, never handed out. It first waits for NextContext calls whose callers
// left. Later calls return ErrClosed; it must not run while another goroutine is inside a call
// on the same generator.
func (s *Segments) Close() error {
	s.h.close(freeSegments, s.pending.Wait)
	return nil
}
