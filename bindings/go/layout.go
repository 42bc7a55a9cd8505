package idforge

// #include "bridge.h"
import "C"

import (
	"strconv"
	"sync"
	"time"
)

// Order tells which field follows the time field of a snowflake (the values are the C
// idforge_order values).
type Order uint32

const (
	// TimeNodeSeq is time | node | seq (Twitter, Discord, Instagram, Baidu).
	TimeNodeSeq Order = 0
	// TimeSeqNode is time | seq | node (Sonyflake).
	TimeSeqNode Order = 1
)

// String gives "time_node_seq" or "time_seq_node", as layout specs spell them.
func (o Order) String() string {
	switch o {
	case TimeNodeSeq:
		return "time_node_seq"
	case TimeSeqNode:
		return "time_seq_node"
	}
	return "Order(" + strconv.FormatUint(uint64(o), 10) + ")"
}

// Preset names one of the layouts every language knows by name (the values are the C
// idforge_preset values).
type Preset uint32

const (
	// Twitter is 41-bit ms since 2010-11-04T01:42:54.657Z, 10-bit node, 12-bit sequence.
	Twitter Preset = 0
	// Discord is 42-bit ms since 2015-01-01, 10-bit node, 12-bit sequence; unsigned.
	Discord Preset = 1
	// Instagram is 41-bit ms since 2011-08-24, 13-bit shard, 10-bit sequence; unsigned.
	Instagram Preset = 2
	// Sonyflake is 39-bit 10 ms ticks since 2014-09-01, 8-bit sequence, 16-bit node (last).
	Sonyflake Preset = 3
	// Baidu is uid-generator's 28-bit seconds since 2016-05-20, 22-bit node, 13-bit sequence.
	// Its time field ran out on 2024-11-20: decode only, a generator fails.
	Baidu Preset = 4
	// JSSafe is 53 bits in all, so ids fit a JavaScript number: 41-bit ms since 2020, 4-bit
	// node, 8-bit sequence.
	JSSafe Preset = 5
)

// presetNames holds each preset's name, in the order of the Preset values.
var presetNames = [...]string{"twitter", "discord", "instagram", "sonyflake", "baidu", "js_safe"}

// Presets gives every preset, in the order of their values.
func Presets() []Preset {
	out := make([]Preset, len(presetNames))
	for i := range out {
		out[i] = Preset(i)
	}
	return out
}

// String gives the preset's name, such as "twitter".
func (p Preset) String() string {
	if int(p) < len(presetNames) {
		return presetNames[p]
	}
	return "Preset(" + strconv.FormatUint(uint64(p), 10) + ")"
}

// Layout is a snowflake layout: where each field sits and what a tick is. Build one with
// Preset.Layout, ParseLayout, or by hand; every call that takes one validates it
// (ErrInvalidLayout).
type Layout struct {
	// EpochMs is the epoch, in Unix milliseconds.
	EpochMs uint64
	// TickMs is milliseconds per tick (1 for most layouts, 10 for Sonyflake, 1000 for Baidu).
	TickMs uint64
	// TimeBits is the width of the time field.
	TimeBits uint32
	// NodeBits is the width of the node field.
	NodeBits uint32
	// SeqBits is the width of the sequence field.
	SeqBits uint32
	// Order tells which field follows the time field.
	Order Order
	// Unsigned lets ids use bit 63 (then they do not fit an int64).
	Unsigned bool
}

// Layout gives the preset's layout.
func (p Preset) Layout() Layout {
	var out C.struct_idforge_layout
	var msg *C.char
	if check(C.idf_go_layout_preset(C.uint32_t(p), &out, &msg), msg) != nil {
		return Layout{}
	}
	return layoutOf(out)
}

// ParseLayout reads a layout as every language and the idforge CLI write it: a preset name
// ("twitter"; case and -/_ ignored) or a spec naming every field,
// "epoch=1288834974657,tick=1,time=41,node=10,seq=12", then optionally ",order=time_seq_node"
// and ",unsigned". Anything else fails with ErrInvalidLayout and the same message as in every
// other language.
func ParseLayout(text string) (Layout, error) {
	var out C.struct_idforge_layout
	err := withText(text, ErrInvalidLayout, "invalid layout: the text", func(s *C.char) error {
		var msg *C.char
		return check(C.idf_go_layout_parse(s, &out, &msg), msg)
	})
	if err != nil {
		return Layout{}, err
	}
	return layoutOf(out), nil
}

// Validate checks the layout: nil, or ErrInvalidLayout with the rule it breaks.
func (l Layout) Validate() error {
	c := l.c()
	var msg *C.char
	return check(C.idf_go_layout_validate(&c, &msg), msg)
}

// PresetName gives the name of the preset equal to l, or "" when none is.
func (l Layout) PresetName() string {
	for i, p := range presetLayouts() {
		if p == l {
			return presetNames[i]
		}
	}
	return ""
}

// presetLayouts gives every preset's layout, read from the library once.
var presetLayouts = sync.OnceValue(func() []Layout {
	out := make([]Layout, len(presetNames))
	for i, p := range Presets() {
		out[i] = p.Layout()
	}
	return out
})

// Spec gives the layout as a spec naming every field, such as
// "epoch=1288834974657,tick=1,time=41,node=10,seq=12"; ParseLayout reads it back.
func (l Layout) Spec() string {
	s := "epoch=" + strconv.FormatUint(l.EpochMs, 10) + ",tick=" + strconv.FormatUint(l.TickMs, 10) +
		",time=" + strconv.FormatUint(uint64(l.TimeBits), 10) + ",node=" + strconv.FormatUint(uint64(l.NodeBits), 10) +
		",seq=" + strconv.FormatUint(uint64(l.SeqBits), 10)
	if l.Order != TimeNodeSeq {
		s += ",order=" + l.Order.String()
	}
	if l.Unsigned {
		s += ",unsigned"
	}
	return s
}

// String gives the preset's name when l is a preset, else its Spec: the form every language
// prints.
func (l Layout) String() string {
	if name := l.PresetName(); name != "" {
		return name
	}
	return l.Spec()
}

// MarshalText gives l.String(), so a Layout is a string in JSON, YAML or TOML.
func (l Layout) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads text as ParseLayout does.
func (l *Layout) UnmarshalText(text []byte) error { return unmarshal(l, text, ParseLayout) }

// Epoch gives the epoch as a time.
func (l Layout) Epoch() time.Time { return time.UnixMilli(int64(l.EpochMs)) }

// Compose builds the id of (tick, node, seq): ErrTimeOutOfRange, ErrNodeOutOfRange or
// ErrSequenceOutOfRange when a field does not fit.
func (l Layout) Compose(tick, node, seq uint64) (uint64, error) {
	c := l.c()
	var id C.uint64_t
	var msg *C.char
	if err := check(C.idf_go_snowflake_compose(&c, C.uint64_t(tick), C.uint64_t(node), C.uint64_t(seq), &id, &msg), msg); err != nil {
		return 0, err
	}
	return uint64(id), nil
}

// Decompose splits an id of this layout into its fields.
func (l Layout) Decompose(id uint64) (Parts, error) {
	c := l.c()
	var out C.struct_idforge_parts
	var msg *C.char
	if err := check(C.idf_go_snowflake_decompose(&c, C.uint64_t(id), &out, &msg), msg); err != nil {
		return Parts{}, err
	}
	return partsOf(out), nil
}

// BoundsAtMs gives the smallest and largest ids of the tick holding timeMs (Unix ms), for range
// queries such as WHERE id BETWEEN min AND max.
func (l Layout) BoundsAtMs(timeMs uint64) (min, max uint64, err error) {
	c := l.c()
	var lo, hi C.uint64_t
	var msg *C.char
	if err := check(C.idf_go_snowflake_bounds_at(&c, C.uint64_t(timeMs), &lo, &hi, &msg), msg); err != nil {
		return 0, 0, err
	}
	return uint64(lo), uint64(hi), nil
}

// BoundsAt is BoundsAtMs of t; a time before 1970 is ErrTimeOutOfRange.
func (l Layout) BoundsAt(t time.Time) (min, max uint64, err error) {
	ms := t.UnixMilli()
	if ms < 0 {
		return 0, 0, invalid(ErrTimeOutOfRange, "time "+strconv.FormatInt(ms, 10)+" ms is outside what the layout can encode")
	}
	return l.BoundsAtMs(uint64(ms))
}

// Parts are the fields of a snowflake id.
type Parts struct {
	// Tick is the count of ticks since the layout's epoch.
	Tick uint64
	// TimeMs is the start of that tick, in Unix milliseconds.
	TimeMs uint64
	// Node is the node (worker, machine, shard) id.
	Node uint64
	// Seq is the sequence within the tick.
	Seq uint64
}

// Time gives TimeMs as a time.
func (p Parts) Time() time.Time { return time.UnixMilli(int64(p.TimeMs)) }

func (l Layout) c() C.struct_idforge_layout {
	return C.struct_idforge_layout{
		epoch_ms:    C.uint64_t(l.EpochMs),
		tick_ms:     C.uint64_t(l.TickMs),
		time_bits:   C.uint32_t(l.TimeBits),
		node_bits:   C.uint32_t(l.NodeBits),
		seq_bits:    C.uint32_t(l.SeqBits),
		order:       C.uint32_t(l.Order),
		is_unsigned: C.bool(l.Unsigned),
	}
}

func layoutOf(c C.struct_idforge_layout) Layout {
	return Layout{
		EpochMs:  uint64(c.epoch_ms),
		TickMs:   uint64(c.tick_ms),
		TimeBits: uint32(c.time_bits),
		NodeBits: uint32(c.node_bits),
		SeqBits:  uint32(c.seq_bits),
		Order:    Order(c.order),
		Unsigned: bool(c.is_unsigned),
	}
}

func partsOf(c C.struct_idforge_parts) Parts {
	return Parts{Tick: uint64(c.tick), TimeMs: uint64(c.time_ms), Node: uint64(c.node), Seq: uint64(c.seq)}
}
