package idforge_test

// The shared vectors of core/testdata, as the Rust, C, Python, Node and JVM tests run them.

import (
	"encoding/hex"
	"strings"
	"testing"

	"idforge.dev/idforge"
)

// layoutOf reads a vector's layout: a preset name or an object of fields.
func layoutOf(t *testing.T, spec any) idforge.Layout {
	t.Helper()
	if name, ok := spec.(string); ok {
		return must(idforge.ParseLayout(name))
	}
	r := row(spec.(map[string]any))
	order := idforge.TimeNodeSeq
	if r.str("order") == "time_seq_node" {
		order = idforge.TimeSeqNode
	}
	return idforge.Layout{
		EpochMs: r.u64(t, "epoch_ms"), TickMs: r.u64(t, "tick_ms"),
		TimeBits: uint32(r.u64(t, "time_bits")), NodeBits: uint32(r.u64(t, "node_bits")), SeqBits: uint32(r.u64(t, "seq_bits")),
		Order: order, Unsigned: r["unsigned"].(bool),
	}
}

func TestLayoutPresets(t *testing.T) {
	snow := load(t, "snowflake.json")
	presets := rows(snow, "presets")
	if len(presets) != len(idforge.Presets()) {
		t.Fatalf("%d presets, want %d", len(idforge.Presets()), len(presets))
	}
	for i, p := range presets {
		got := idforge.Presets()[i]
		if got.String() != p.str("name") || got.Layout() != layoutOf(t, map[string]any(p)) {
			t.Fatalf("preset %d: %v %+v, want %v", i, got, got.Layout(), p)
		}
		if err := got.Layout().Validate(); err != nil && p.str("name") != "baidu" {
			t.Fatal(err)
		}
	}
	for _, r := range rows(snow, "preset_names") {
		got, err := idforge.ParseLayout(r.str("input"))
		if !r.has("preset") {
			wantCode(t, err, "INVALID_LAYOUT", r)
			continue
		}
		if err != nil || got != must(idforge.ParseLayout(r.str("preset"))) {
			t.Fatalf("%v: %+v %v", r, got, err)
		}
	}
	for _, spec := range snow["valid_layouts"].([]any) {
		if err := layoutOf(t, spec).Validate(); err != nil {
			t.Fatalf("%v: %v", spec, err)
		}
	}
	for _, r := range rows(snow, "invalid_layouts") {
		wantCode(t, layoutOf(t, r["layout"]).Validate(), r.str("error"), r)
	}
}

func TestComposeDecompose(t *testing.T) {
	snow := load(t, "snowflake.json")
	for _, r := range rows(snow, "compose") {
		l := layoutOf(t, r["layout"])
		id := must(l.Compose(r.u64(t, "tick"), r.u64(t, "node"), r.u64(t, "seq")))
		if id != r.u64(t, "id") {
			t.Fatalf("%v: compose gave %d", r, id)
		}
		p := must(l.Decompose(id))
		want := idforge.Parts{Tick: r.u64(t, "tick"), TimeMs: r.u64(t, "time_ms"), Node: r.u64(t, "node"), Seq: r.u64(t, "seq")}
		if p != want {
			t.Fatalf("%v: decompose gave %+v", r, p)
		}
	}
	for _, r := range rows(snow, "invalid_compose") {
		_, err := layoutOf(t, r["layout"]).Compose(r.u64(t, "tick"), r.u64(t, "node"), r.u64(t, "seq"))
		wantCode(t, err, r.str("error"), r)
	}
	for _, r := range rows(snow, "invalid_decompose") {
		_, err := layoutOf(t, r["layout"]).Decompose(r.u64(t, "id"))
		wantCode(t, err, r.str("error"), r)
	}
	for _, r := range rows(snow, "bounds_at") {
		lo, hi, err := layoutOf(t, r["layout"]).BoundsAtMs(r.u64(t, "time_ms"))
		if err != nil || lo != r.u64(t, "min") || hi != r.u64(t, "max") {
			t.Fatalf("%v: %d %d %v", r, lo, hi, err)
		}
	}
	for _, r := range rows(snow, "invalid_bounds_at") {
		_, _, err := layoutOf(t, r["layout"]).BoundsAtMs(r.u64(t, "time_ms"))
		wantCode(t, err, r.str("error"), r)
	}
	for _, r := range rows(snow, "invalid_generator_new") {
		_, err := idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: layoutOf(t, r["layout"]), Node: r.u64(t, "node")})
		wantCode(t, err, r.str("error"), r)
	}
}

func TestLayoutText(t *testing.T) {
	text := load(t, "layout_text.json")
	for _, r := range rows(text, "valid") {
		got := must(idforge.ParseLayout(r.str("text")))
		if got != layoutOf(t, map[string]any(r)) {
			t.Fatalf("%s: %+v", r.str("text"), got)
		}
		if got.String() != r.str("display") {
			t.Fatalf("%s: String() %q, want %q", r.str("text"), got.String(), r.str("display"))
		}
		if again := must(idforge.ParseLayout(got.Spec())); again != got {
			t.Fatalf("%s: the spec %q reads back as %+v", r.str("text"), got.Spec(), again)
		}
		var back idforge.Layout
		if err := back.UnmarshalText(must(got.MarshalText())); err != nil || back != got {
			t.Fatalf("%s: text round trip %+v %v", r.str("text"), back, err)
		}
	}
	for _, r := range rows(text, "invalid") {
		_, err := idforge.ParseLayout(r.str("text"))
		wantCode(t, err, "INVALID_LAYOUT", r.str("text"))
		if !strings.HasSuffix(err.Error(), r.str("message")) {
			t.Fatalf("%q: %q does not end with %q", r.str("text"), err, r.str("message"))
		}
	}
}

func TestObjectIDVectors(t *testing.T) {
	oid := load(t, "objectid.json")
	for _, r := range append(rows(oid, "timestamps"), rows(oid, "legacy")...) {
		id := must(idforge.ParseObjectID(r.str("hex")))
		if got := id.Timestamp(); got.Unix() != int64(r.u64(t, "seconds")) || got.Format("2006-01-02T15:04:05Z07:00") != r.str("rfc3339") {
			t.Fatalf("%v: %v", r, got)
		}
	}
	for _, r := range rows(oid, "parse") {
		id := must(idforge.ParseObjectID(r.str("input")))
		if id.Hex() != r.str("hex") || id.String() != r.str("hex") {
			t.Fatalf("%v: %s", r, id)
		}
	}
	for _, r := range rows(oid, "from_parts") {
		id := must(idforge.ObjectIDFromBytes(unhex(t, r.str("hex"))))
		if id.Hex() != r.str("hex") || hex.EncodeToString(id[:]) != r.str("hex") {
			t.Fatalf("%v: %s", r, id)
		}
	}
	for _, r := range rows(oid, "invalid_hex") {
		_, err := idforge.ParseObjectID(r.str("input"))
		wantCode(t, err, r.str("error"), r)
	}
	for _, r := range rows(oid, "invalid_bytes") {
		_, err := idforge.ObjectIDFromBytes(unhex(t, r.str("bytes_hex")))
		wantCode(t, err, r.str("error"), r)
	}
}

func TestFlake128Vectors(t *testing.T) {
	fl := load(t, "flake128.json")
	for _, r := range rows(fl, "parts") {
		f := must(idforge.ComposeFlake128(r.u64(t, "time_ms"), r.u64(t, "worker"), uint16(r.u64(t, "seq"))))
		if f.Hex() != r.str("hex") || f.Base62() != r.str("base62") || f.String() != r.str("base62") ||
			hex.EncodeToString(f[:]) != r.str("bytes_hex") || f.BigInt().String() != r.str("u128") {
			t.Fatalf("%v: %s %s", r, f.Hex(), f.Base62())
		}
		for _, back := range []idforge.Flake128{
			must(idforge.ParseFlake128(r.str("base62"))),
			must(idforge.ParseFlake128Hex(r.str("hex"))),
			must(idforge.Flake128FromBytes(unhex(t, r.str("bytes_hex")))),
		} {
			if back != f {
				t.Fatalf("%v: read back as %s", r, back.Hex())
			}
		}
		p := f.Decompose()
		if p.TimeMs != r.u64(t, "time_ms") || p.Worker != r.u64(t, "worker") || uint64(p.Seq) != r.u64(t, "seq") {
			t.Fatalf("%v: %+v", r, p)
		}
	}
	for _, r := range rows(fl, "boundary_base62") {
		f := must(idforge.ParseFlake128(r.str("input")))
		p := f.Decompose()
		if f.Base62() != r.str("base62") || f.BigInt().String() != r.str("u128") || p.TimeMs != r.u64(t, "time_ms") ||
			p.Worker != r.u64(t, "worker") || uint64(p.Seq) != r.u64(t, "seq") {
			t.Fatalf("%v: %s %+v", r, f.Base62(), p)
		}
	}
	for _, r := range rows(fl, "invalid_base62") {
		_, err := idforge.ParseFlake128(r.str("input"))
		wantCode(t, err, r.str("error"), r)
	}
	for _, r := range rows(fl, "invalid_hex") {
		_, err := idforge.ParseFlake128Hex(r.str("input"))
		wantCode(t, err, r.str("error"), r)
	}
	for _, r := range rows(fl, "invalid_bytes") {
		_, err := idforge.Flake128FromBytes(unhex(t, r.str("bytes_hex")))
		wantCode(t, err, r.str("error"), r)
	}
	for _, r := range rows(fl, "invalid_parts") {
		_, err := idforge.ComposeFlake128(r.u64(t, "time_ms"), r.u64(t, "worker"), uint16(r.u64(t, "seq")))
		wantCode(t, err, r.str("error"), r)
	}
}

// The rows Go can give: a zero field is Go's "not given" (as C's), PrefetchPct is 8 bits and no
// option is negative.
func TestSegmentOptionsVectors(t *testing.T) {
	v := load(t, "segment_options.json")
	canGive := func(given row) bool {
		for k, val := range given {
			if n, ok := val.(interface{ String() string }); ok && (n.String() == "0" || strings.HasPrefix(n.String(), "-")) {
				return false
			}
			if k == "prefetch_pct" && given.u64(t, k) > 255 {
				return false
			}
		}
		return true
	}
	open := func(given row) (*idforge.Segments, error) {
		o := &idforge.SegmentOptions{}
		for k := range given {
			switch k {
			case "step":
				o.Step = given.u64(t, k)
			case "max_step":
				o.MaxStep = given.u64(t, k)
			case "dynamic_step":
				o.FixedStep = !given[k].(bool)
			case "target_ms":
				o.Target = msDuration(given.u64(t, k))
			case "prefetch_pct":
				o.PrefetchPct = uint8(given.u64(t, k))
			case "timeout_ms":
				o.Timeout = msDuration(given.u64(t, k))
			default:
				t.Fatalf("option %s", k)
			}
		}
		return idforge.NewSegments("memory:", "t", o)
	}
	ran := 0
	for _, r := range rows(v, "valid") {
		given := row(r["given"].(map[string]any))
		if !canGive(given) {
			continue
		}
		s := must(open(given))
		got := must(s.Options())
		s.Close()
		want := row(r["resolved"].(map[string]any))
		exp := idforge.SegmentOptions{
			Step: want.u64(t, "step"), MaxStep: want.u64(t, "max_step"), FixedStep: !want["dynamic_step"].(bool),
			Target: msDuration(want.u64(t, "target_ms")), PrefetchPct: uint8(want.u64(t, "prefetch_pct")),
			Timeout: msDuration(want.u64(t, "timeout_ms")),
		}
		if got != exp {
			t.Fatalf("%v: %+v", r, got)
		}
		ran++
	}
	for _, r := range rows(v, "invalid") {
		given := row(r["given"].(map[string]any))
		if !canGive(given) {
			continue
		}
		_, err := open(given)
		wantCode(t, err, r.str("error"), r)
		if err.Error() != "idforge: invalid argument: "+r.str("message") {
			t.Fatalf("%v: %q", r, err)
		}
		ran++
	}
	if ran < 10 {
		t.Fatalf("only %d rows ran", ran)
	}
	// nil is the defaults.
	s := must(idforge.NewSegments("memory:", "t", nil))
	defer s.Close()
	d := row(v["defaults"].(map[string]any))
	if got := must(s.Options()); got.Step != d.u64(t, "step") || got.Timeout != msDuration(d.u64(t, "timeout_ms")) {
		t.Fatalf("defaults %+v", got)
	}
}

func TestIDTextVectors(t *testing.T) {
	v := load(t, "id_text.json")
	forms := map[string]idforge.TextForm{"decimal": idforge.TextDecimal, "base32": idforge.TextBase32, "base62": idforge.TextBase62}
	for _, r := range rows(v, "ids") {
		id := r.u64(t, "id")
		for name, form := range forms {
			if got := must(idforge.FormatID(id, form)); got != r.str(name) {
				t.Fatalf("%s of %d: %q, want %q", form, id, got, r.str(name))
			}
			if got := must(idforge.ParseID(r.str(name), form)); got != id {
				t.Fatalf("%s %q: %d, want %d", form, r.str(name), got, id)
			}
		}
		if idforge.ShortID(id).String() != r.str("base32") {
			t.Fatalf("ShortID(%d): %s", id, idforge.ShortID(id))
		}
	}
	for _, r := range rows(v, "parse") {
		if got := must(idforge.ParseID(r.str("text"), forms[r.str("form")])); got != r.u64(t, "id") {
			t.Fatalf("%v: %d", r, got)
		}
	}
	for _, r := range rows(v, "errors") {
		_, err := idforge.ParseID(r.str("text"), forms[r.str("form")])
		wantCode(t, err, r.str("error"), r)
	}
	// Reading an id of any kind takes a snowflake's one text too ("007" is not 7).
	kinds := map[string]idforge.IDKind{"any": idforge.KindAny, "snowflake": idforge.KindSnowflake}
	for _, r := range rows(v, "describe_errors") {
		_, err := idforge.DescribeID(r.str("text"), kinds[r.str("kind")], nil)
		wantCode(t, err, r.str("error"), r)
	}
	_, err := idforge.FormatID(1, idforge.TextForm(3))
	wantCode(t, err, "INVALID_ARGUMENT", "form 3")
	_, err = idforge.ParseID("1", idforge.TextForm(3))
	wantCode(t, err, "INVALID_ARGUMENT", "form 3")
	_, err = idforge.ParseID("0000000000001\x00", idforge.TextBase32)
	wantCode(t, err, "INVALID_BASE32", "a NUL byte")
	// The worst length: refused by its length, with the form's error.
	huge := strings.Repeat("1", 10_000_000)
	for form, code := range map[idforge.TextForm]string{idforge.TextDecimal: "INVALID_DECIMAL", idforge.TextBase32: "INVALID_BASE32", idforge.TextBase62: "INVALID_BASE62"} {
		_, err = idforge.ParseID(huge, form)
		wantCode(t, err, code, form)
	}
	if idforge.TextBase62.String() != "base62" {
		t.Fatal(idforge.TextBase62.String())
	}
}
