package idforge

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"runtime"
	"time"
	"unsafe"
)

// PolicyKind says what a snowflake generator does when it is ahead of the clock (the values are
// the C idforge_policy_kind values).
type PolicyKind uint32

const (
	// PolicyDefault borrows with a 1 s lead.
	PolicyDefault PolicyKind = 0
	// PolicyBorrow runs up to Policy.Duration ahead of the clock when a tick's sequence is used
	// up; past it, waits at most that long, else fails with ErrClockBehind. With 50 ms or more
	// (and by default) Next reads the coarse clock: an id's time may trail the clock by a kernel
	// tick (1-10 ms), never lead it.
	PolicyBorrow PolicyKind = 1
	// PolicyWait never runs ahead: it waits for the next tick, at most Policy.Duration, else
	// fails with ErrClockBehind.
	PolicyWait PolicyKind = 2
	// PolicyError never runs ahead and waits only up to 5 ms, else ErrClockBehind.
	PolicyError PolicyKind = 3
)

// Policy is a clock policy: a kind and its lead (PolicyBorrow) or wait budget (PolicyWait),
// in whole milliseconds. The zero Policy is the default.
type Policy struct {
	// Kind is what the generator does when it is ahead of the clock.
	Kind PolicyKind
	// Duration is the lead or the wait budget.
	Duration time.Duration
}

// SnowflakeConfig is everything NewSnowflake needs.
type SnowflakeConfig struct {
	// Layout is where each field sits; the zero Layout is refused, use Twitter.Layout() or
	// another preset.
	Layout Layout
	// Node is this generator's node id; it must fit Layout.NodeBits.
	Node uint64
	// Policy is the clock policy (zero: the default).
	Policy Policy
	// StateFile, when not empty, is the path of a file that keeps the high-water time across
	// restarts, so a restart with the clock set back never repeats an id.
	StateFile string
	// RandomStart starts each tick's sequence at a random value below half its range instead
	// of 0, so id % n spreads evenly over shards even at a few ids per tick; a tick then holds
	// at least half its sequence range (2,048 ids per ms in the Twitter layout).
	RandomStart bool
}

// Snowflake makes 64-bit snowflake ids. It is safe for concurrent use by many goroutines: share
// one per node id. Close it when done (a leased one then gives its node id back); one that is
// dropped without Close is freed by the garbage collector.
type Snowflake struct{ h handle }

func freeSnowflake(p unsafe.Pointer) { C.idforge_snowflake_free((*C.struct_idforge_snowflake)(p)) }

// NewSnowflake makes a generator: ErrInvalidLayout, ErrNodeOutOfRange, ErrEpochInFuture,
// ErrInvalidArgument (policy) or ErrIO (state file) when it cannot.
func NewSnowflake(cfg SnowflakeConfig) (*Snowflake, error) {
	return newSnowflake(cfg, func(c *C.struct_idforge_snowflake_config, out **C.struct_idforge_snowflake, msg **C.char) C.idforge_status {
		return C.idf_go_snowflake_new_with_flags(c, flagsOf(cfg), out, msg)
	})
}

// NewLeasedSnowflake makes a generator whose node id is leased from an idforge server
// (IDF.WORKER): the lowest id of service that no live process holds, renewed in the background
// every third of ttl (0: 10 s) and given back by Close. cfg.Node is ignored; Node tells the id
// leased. If the lease is lost or cannot be renewed in time, every call fails with
// ErrLeaseLost: make a new generator. url is idforge://[user:pass@]host:port[,host:port...].
func NewLeasedSnowflake(cfg SnowflakeConfig, url, service string, ttl time.Duration) (*Snowflake, error) {
	ms, err := millis("ttl", ttl, 1<<32-1)
	if err != nil {
		return nil, err
	}
	curl, cservice := C.CString(url), C.CString(service)
	defer C.free(unsafe.Pointer(curl))
	defer C.free(unsafe.Pointer(cservice))
	if err := noNUL(ErrInvalidURL, "url", url); err != nil {
		return nil, err
	}
	if err := noNUL(ErrInvalidArgument, "service", service); err != nil {
		return nil, err
	}
	return newSnowflake(cfg, func(c *C.struct_idforge_snowflake_config, out **C.struct_idforge_snowflake, msg **C.char) C.idforge_status {
		return C.idf_go_snowflake_new_leased_with_flags(c, flagsOf(cfg), curl, cservice, C.uint32_t(ms), out, msg)
	})
}

// flagsOf gives the C flags of cfg's options.
func flagsOf(cfg SnowflakeConfig) C.uint32_t {
	if cfg.RandomStart {
		return C.IDFORGE_SNOWFLAKE_FLAG_RANDOM_START
	}
	return 0
}

func newSnowflake(cfg SnowflakeConfig, make func(*C.struct_idforge_snowflake_config, **C.struct_idforge_snowflake, **C.char) C.idforge_status) (*Snowflake, error) {
	lead, err := millis("policy duration", cfg.Policy.Duration, 1<<64-1)
	if err != nil {
		return nil, err
	}
	c := (*C.struct_idforge_snowflake_config)(C.calloc(1, C.sizeof_struct_idforge_snowflake_config))
	defer C.free(unsafe.Pointer(c))
	c.layout = cfg.Layout.c()
	c.node = C.uint64_t(cfg.Node)
	c.policy = C.struct_idforge_policy{kind: C.uint32_t(cfg.Policy.Kind), millis: C.uint64_t(lead)}
	if cfg.StateFile != "" {
		if err := noNUL(ErrInvalidArgument, "state file", cfg.StateFile); err != nil {
			return nil, err
		}
		c.state_file = C.CString(cfg.StateFile)
		defer C.free(unsafe.Pointer(c.state_file))
	}
	var h *C.struct_idforge_snowflake
	var msg *C.char
	if err := check(make(c, &h, &msg), msg); err != nil {
		return nil, err
	}
	s := &Snowflake{}
	own(s, &s.h, unsafe.Pointer(h), freeSnowflake)
	return s, nil
}

// Next gives a fresh id. Usually one clock read and one atomic operation inside the library,
// plus the cgo call; NextMany fills a slice in one call.
func (s *Snowflake) Next() (uint64, error) {
	h := (*C.struct_idforge_snowflake)(s.h.load())
	if h == nil {
		return 0, ErrClosed
	}
	var id C.uint64_t
	var msg *C.char
	st := C.idf_go_snowflake_next(h, &id, &msg)
	runtime.KeepAlive(s)
	if st != C.IDFORGE_STATUS_OK {
		return 0, check(st, msg)
	}
	return uint64(id), nil
}

// NextMany fills ids with fresh ids in increasing order, in one call into the library (one
// clock read per run of ids that share a tick). On failure the contents of ids are unspecified;
// ids written there are never issued again.
func (s *Snowflake) NextMany(ids []uint64) error {
	if len(ids) == 0 {
		return nil
	}
	return s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_snowflake_next_many((*C.struct_idforge_snowflake)(p), (*C.uint64_t)(unsafe.Pointer(&ids[0])), C.size_t(len(ids)), msg)
	})
}

// Decode splits an id of this generator's layout into its fields.
func (s *Snowflake) Decode(id uint64) (Parts, error) {
	var out C.struct_idforge_parts
	err := s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_snowflake_decode((*C.struct_idforge_snowflake)(p), C.uint64_t(id), &out, msg)
	})
	return partsOf(out), err
}

// Layout gives the generator's layout.
func (s *Snowflake) Layout() (Layout, error) {
	var out C.struct_idforge_layout
	err := s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_snowflake_layout((*C.struct_idforge_snowflake)(p), &out, msg)
	})
	return layoutOf(out), err
}

// Node gives the generator's node id (for a leased generator, the id leased).
func (s *Snowflake) Node() (uint64, error) {
	var out C.uint64_t
	err := s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_snowflake_node((*C.struct_idforge_snowflake)(p), &out, msg)
	})
	return uint64(out), err
}

// RandomStart tells whether each tick's sequence starts at a random value
// (SnowflakeConfig.RandomStart).
func (s *Snowflake) RandomStart() (bool, error) {
	var out C.bool
	err := s.h.call(s, func(p unsafe.Pointer, msg **C.char) C.idforge_status {
		return C.idf_go_snowflake_random_start((*C.struct_idforge_snowflake)(p), &out, msg)
	})
	return bool(out), err
}

// Close frees the generator (a leased one gives its node id back); later calls return
// ErrClosed, a second Close does nothing. Close must not run while another goroutine is inside
// a call on the same generator, as with the C API's _free.
func (s *Snowflake) Close() error {
	s.h.close(freeSnowflake, nil)
	return nil
}

// millis gives d in whole milliseconds, rounded up, refusing a negative d or one over max ms.
func millis(what string, d time.Duration, max uint64) (uint64, error) {
	if d < 0 {
		return 0, invalid(ErrInvalidArgument, "invalid argument: "+what+" must not be negative")
	}
	ms := uint64((d + time.Millisecond - 1) / time.Millisecond)
	if ms > max {
		return 0, invalid(ErrInvalidArgument, "invalid argument: "+what+" is too long")
	}
	return ms, nil
}

// noNUL refuses text holding a NUL byte, which C would read only up to that byte.
func noNUL(code Code, what, text string) error {
	for i := 0; i < len(text); i++ {
		if text[i] == 0 {
			return invalid(code, what+" holds a NUL byte")
		}
	}
	return nil
}
