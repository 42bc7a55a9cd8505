package idforge_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"idforge.dev/idforge"
)

// The Go codes are errors.json's, in its order, with its names and numbers.
func TestErrorTableEqualsErrorsJSON(t *testing.T) {
	table := rows(load(t, "errors.json"), "errors")
	codes := idforge.Codes()
	if len(codes) != len(table) {
		t.Fatalf("%d codes, errors.json has %d", len(codes), len(table))
	}
	for i, r := range table {
		if uint64(codes[i]) != r.u64(t, "code") || codes[i].String() != r.str("name") {
			t.Fatalf("code %d is %d %s, errors.json says %v", i, codes[i], codes[i], r)
		}
	}
	if idforge.Code(9999).String() != "UNKNOWN(9999)" {
		t.Fatal(idforge.Code(9999).String())
	}
}

// Each failure is an *Error of its code: errors.Is with the code, errors.As for the message.
func TestTypedErrors(t *testing.T) {
	cases := []struct {
		call  func() error
		code  idforge.Code
		words string
	}{
		{func() error { _, err := idforge.ParseObjectID("zz"); return err }, idforge.ErrInvalidHex, "hex"},
		{func() error { _, err := idforge.ParseFlake128("!"); return err }, idforge.ErrInvalidBase62, "base62"},
		{func() error { _, err := idforge.ObjectIDFromBytes(make([]byte, 5)); return err }, idforge.ErrInvalidLength, "length"},
		{func() error {
			_, err := idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 1024})
			return err
		}, idforge.ErrNodeOutOfRange, "node"},
		{func() error { _, err := idforge.ParseLayout("nope"); return err }, idforge.ErrInvalidLayout, "preset"},
		{func() error { return idforge.Layout{TickMs: 0, TimeBits: 41, NodeBits: 10, SeqBits: 12}.Validate() }, idforge.ErrInvalidLayout, "tick"},
		{func() error {
			_, err := idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Policy: idforge.Policy{Kind: 99}})
			return err
		}, idforge.ErrInvalidArgument, "policy"},
		{func() error { _, err := idforge.NewSegments("bogus://x", "t", nil); return err }, idforge.ErrInvalidURL, ""},
		{func() error { _, err := idforge.NewSegments("memory:", "../x", nil); return err }, idforge.ErrInvalidArgument, ""},
		{func() error {
			_, err := idforge.NewSegments("memory:", "t", &idforge.SegmentOptions{PrefetchPct: 100})
			return err
		}, idforge.ErrInvalidArgument, "prefetch"},
		{func() error {
			_, err := idforge.NewSegments("memory:", "t", &idforge.SegmentOptions{Timeout: -1})
			return err
		}, idforge.ErrInvalidArgument, "negative"},
		{func() error { _, _, err := idforge.Twitter.Layout().BoundsAtMs(0); return err }, idforge.ErrTimeOutOfRange, ""},
		{func() error { _, err := idforge.Twitter.Layout().Compose(0, 0, 4096); return err }, idforge.ErrSequenceOutOfRange, ""},
		{func() error { _, err := idforge.NewFlake128Generator(idforge.FixedWorker(1 << 48)); return err }, idforge.ErrNodeOutOfRange, ""},
		{func() error { _, err := idforge.ParseObjectID("507f1f77bcf86cd7994390\x001"); return err }, idforge.ErrInvalidHex, "nul"},
	}
	for i, c := range cases {
		err := c.call()
		if !errors.Is(err, c.code) {
			t.Fatalf("case %d: want %s, got %v", i, c.code, err)
		}
		var e *idforge.Error
		if !errors.As(err, &e) || e.Code != c.code || e.Message == "" {
			t.Fatalf("case %d: errors.As gave %#v", i, e)
		}
		var code idforge.Code
		if !errors.As(err, &code) || code != c.code {
			t.Fatalf("case %d: errors.As to a Code gave %v", i, code)
		}
		if !strings.Contains(strings.ToLower(err.Error()), c.words) || !strings.HasPrefix(err.Error(), "idforge: ") {
			t.Fatalf("case %d: %q should start with idforge: and say %q", i, err, c.words)
		}
		for _, other := range idforge.Codes() {
			if other != c.code && errors.Is(err, other) {
				t.Fatalf("case %d: %v also matches %s", i, err, other)
			}
		}
	}
	// Wrapped, it still matches.
	_, err := idforge.ParseObjectID("zz")
	if wrapped := errors.Join(errors.New("loading"), err); !errors.Is(wrapped, idforge.ErrInvalidHex) {
		t.Fatal("a wrapped error lost its code")
	}
}

// A source that is down: SOURCE_UNAVAILABLE within the timeout, and Timeout() only for ErrTimeout.
func TestSourceDownIsTyped(t *testing.T) {
	s := must(idforge.NewSegments("idforge://127.0.0.1:9", "t", &idforge.SegmentOptions{Timeout: 500 * 1e6}))
	defer s.Close()
	_, err := s.Next()
	if !errors.Is(err, idforge.ErrSourceUnavailable) && !errors.Is(err, idforge.ErrTimeout) {
		t.Fatalf("want SOURCE_UNAVAILABLE or TIMEOUT, got %v", err)
	}
	var e *idforge.Error
	errors.As(err, &e)
	if e.Timeout() != (e.Code == idforge.ErrTimeout) {
		t.Fatal("Timeout() disagrees with the code")
	}
}

func TestClosedGenerators(t *testing.T) {
	s := must(idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 1}))
	s.Close()
	s.Close()
	if _, err := s.Next(); !errors.Is(err, idforge.ErrClosed) {
		t.Fatal(err)
	}
	f := must(idforge.NewFlake128Generator(idforge.RandomWorker()))
	f.Close()
	if _, err := f.Next(); !errors.Is(err, idforge.ErrClosed) {
		t.Fatal(err)
	}
	g := must(idforge.NewSegments("memory:", "t", nil))
	g.Close()
	if _, err := g.Next(); !errors.Is(err, idforge.ErrClosed) {
		t.Fatal(err)
	}
}

// Ids are JSON strings, as a user of encoding/json expects, and read back.
func TestJSON(t *testing.T) {
	type doc struct {
		ID     idforge.ObjectID `json:"_id"`
		Flake  idforge.Flake128 `json:"flake"`
		Layout idforge.Layout   `json:"layout"`
	}
	g := must(idforge.NewFlake128Generator(idforge.RandomWorker()))
	defer g.Close()
	in := doc{ID: must(idforge.NewObjectID()), Flake: must(g.Next()), Layout: idforge.Sonyflake.Layout()}
	raw := must(json.Marshal(in))
	want := `{"_id":"` + in.ID.Hex() + `","flake":"` + in.Flake.Base62() + `","layout":"sonyflake"}`
	if string(raw) != want {
		t.Fatalf("%s, want %s", raw, want)
	}
	var out doc
	if err := json.Unmarshal(raw, &out); err != nil || out != in {
		t.Fatalf("%+v %v", out, err)
	}
	if err := json.Unmarshal([]byte(`{"_id":"nope"}`), &out); !errors.Is(err, idforge.ErrInvalidHex) {
		t.Fatalf("want INVALID_HEX, got %v", err)
	}
}
