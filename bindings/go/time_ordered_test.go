package idforge_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	idforge "idforge.dev/idforge"
)

func TestUUID7Vectors(t *testing.T) {
	v := load(t, "uuid7.json")
	for _, r := range rows(v, "fields") {
		u := must(idforge.ComposeUUID7(r.u64(t, "time_ms"), uint16(r.u64(t, "rand_a")), r.u64(t, "rand_b")))
		if u.String() != r.str("text") || hex.EncodeToString(u[:]) != r.str("bytes") || u.ULID().String() != r.str("ulid") {
			t.Fatalf("%v: %s %x %s", r, u, u[:], u.ULID())
		}
		p := u.Decompose()
		if p.TimeMs != r.u64(t, "time_ms") || uint64(p.RandA) != r.u64(t, "rand_a") || p.RandB != r.u64(t, "rand_b") {
			t.Fatalf("%v: %+v", r, p)
		}
		for _, back := range []idforge.UUID7{
			must(idforge.ParseUUID7(r.str("text"))),
			must(idforge.UUID7FromBytes(unhex(t, r.str("bytes")))),
			must(must(idforge.ParseULID(r.str("ulid"))).UUID7()),
		} {
			if back != u {
				t.Fatalf("%v: read back as %s", r, back)
			}
		}
	}
	for _, r := range rows(v, "parse") {
		if got := must(idforge.ParseUUID7(r.str("input"))).String(); got != r.str("text") {
			t.Fatalf("%v: %s", r, got)
		}
	}
	for _, r := range rows(v, "refuse") {
		_, err := idforge.ParseUUID7(r.str("input"))
		wantCode(t, err, r.str("error"), r)
	}
}

func TestULIDVectors(t *testing.T) {
	v := load(t, "ulid.json")
	for _, r := range rows(v, "fields") {
		u := must(idforge.ULIDFromBytes(unhex(t, r.str("bytes"))))
		if u.String() != r.str("text") || u.TimeMs() != r.u64(t, "time_ms") || must(idforge.ParseULID(r.str("text"))) != u {
			t.Fatalf("%v: %s", r, u)
		}
	}
	for _, r := range rows(v, "parse") {
		if got := must(idforge.ParseULID(r.str("input"))).String(); got != r.str("text") {
			t.Fatalf("%v: %s", r, got)
		}
	}
	for _, r := range rows(v, "refuse") {
		_, err := idforge.ParseULID(r.str("input"))
		wantCode(t, err, r.str("error"), r)
	}
	if _, err := idforge.ULIDFromBytes(make([]byte, 15)); !errors.Is(err, idforge.ErrInvalidLength) {
		t.Fatal(err)
	}
	if _, err := idforge.UUID7FromBytes(make([]byte, 16)); !errors.Is(err, idforge.ErrInvalidUUID) {
		t.Fatal(err)
	}
}

// 8 goroutines x 100,000 UUIDv7s from one generator: all distinct, each goroutine's increasing.
func TestUUID7GoroutinesDistinctAndIncreasing(t *testing.T) {
	g := must(idforge.NewUUID7Generator(idforge.TimeOrderedConfig{}))
	defer g.Close()
	const each = 100_000
	var wg sync.WaitGroup
	out := make([][]idforge.UUID7, 8)
	for w := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]idforge.UUID7, each)
			for i := range ids {
				ids[i] = must(g.Next())
			}
			out[w] = ids
		}()
	}
	wg.Wait()
	seen := make(map[idforge.UUID7]struct{}, 8*each)
	for _, ids := range out {
		for i, u := range ids {
			if i > 0 && string(u[:]) <= string(ids[i-1][:]) {
				t.Fatalf("not increasing: %s then %s", ids[i-1], u)
			}
			seen[u] = struct{}{}
		}
	}
	if len(seen) != 8*each {
		t.Fatalf("%d distinct of %d", len(seen), 8*each)
	}
}

func TestTimeOrderedBatchesStateFileAndJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ulid.state")
	g := must(idforge.NewULIDGenerator(idforge.TimeOrderedConfig{StateFile: path}))
	batch := make([]idforge.ULID, 1000)
	if err := g.NextMany(batch); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(batch); i++ {
		if batch[i].String() <= batch[i-1].String() {
			t.Fatalf("text not increasing at %d", i)
		}
	}
	g.Close()
	if _, err := g.Next(); !errors.Is(err, idforge.ErrClosed) {
		t.Fatal(err)
	}
	again := must(idforge.NewULIDGenerator(idforge.TimeOrderedConfig{StateFile: path}))
	defer again.Close()
	if next := must(again.Next()); next.String() <= batch[999].String() {
		t.Fatalf("restart went back: %s after %s", next, batch[999])
	}

	u := must(must(idforge.NewUUID7Generator(idforge.TimeOrderedConfig{})).Next())
	text, _ := json.Marshal(map[string]any{"id": u})
	var back struct{ ID idforge.UUID7 }
	if err := json.Unmarshal(text, &back); err != nil || back.ID != u {
		t.Fatalf("%s: %v %s", text, err, back.ID)
	}
}

func TestSnowflakeRandomStart(t *testing.T) {
	s := must(idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 3, RandomStart: true}))
	defer s.Close()
	if !must(s.RandomStart()) {
		t.Fatal("RandomStart() is false")
	}
	plain := must(idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 3}))
	defer plain.Close()
	if must(plain.RandomStart()) {
		t.Fatal("RandomStart() is true by default")
	}
}
