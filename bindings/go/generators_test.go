package idforge_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"idforge.dev/idforge"
)

const (
	goroutines = 8
	perRoutine = 1_000_000
)

// 8 goroutines share one generator and draw 1,000,000 snowflakes each: every id distinct,
// each goroutine's increasing, every one of this node and near now.
func TestSnowflakesFromGoroutines(t *testing.T) {
	g := must(idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 7}))
	defer g.Close()
	all := make([]uint64, goroutines*perRoutine)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for w := 0; w < goroutines; w++ {
		wg.Add(1)
		go func(out []uint64) {
			defer wg.Done()
			var prev uint64
			for i := range out {
				id, err := g.Next()
				if err != nil {
					errs <- err
					return
				}
				if id <= prev {
					t.Errorf("ids of one goroutine must increase: %d after %d", id, prev)
					return
				}
				out[i], prev = id, id
			}
		}(all[w*perRoutine : (w+1)*perRoutine])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("duplicate id %d", all[i])
		}
	}
	p := must(g.Decode(all[len(all)-1]))
	if p.Node != 7 || time.Since(p.Time()).Abs() > time.Minute {
		t.Fatalf("the last id decodes to %+v", p)
	}
}

// 8 goroutines draw 1,000,000 ObjectIds each: every id distinct.
func TestObjectIDsFromGoroutines(t *testing.T) {
	all := make([]idforge.ObjectID, goroutines*perRoutine)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for w := 0; w < goroutines; w++ {
		wg.Add(1)
		go func(out []idforge.ObjectID) {
			defer wg.Done()
			for i := range out {
				id, err := idforge.NewObjectID()
				if err != nil {
					errs <- err
					return
				}
				out[i] = id
			}
		}(all[w*perRoutine : (w+1)*perRoutine])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// One process: the 5 process bytes are the same in every id, so the ids are distinct when
	// their (seconds, counter) keys are; sorting those 8-byte keys is far cheaper than 12-byte ids.
	keys := make([]uint64, len(all))
	for i, id := range all {
		if !bytes.Equal(id[4:9], all[0][4:9]) {
			t.Fatalf("process bytes differ: %s and %s", id, all[0])
		}
		keys[i] = uint64(binary.BigEndian.Uint32(id[0:4]))<<24 | uint64(id[9])<<16 | uint64(id[10])<<8 | uint64(id[11])
	}
	slices.Sort(keys)
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			t.Fatalf("duplicate ObjectId (seconds<<24|counter %x)", keys[i])
		}
	}
	if age := time.Since(all[0].Timestamp()).Abs(); age > time.Minute {
		t.Fatalf("the first id is %v from now", age)
	}
}

func TestSnowflakeBatchAndAccessors(t *testing.T) {
	g := must(idforge.NewSnowflake(idforge.SnowflakeConfig{
		Layout: idforge.Twitter.Layout(), Node: 3, Policy: idforge.Policy{Kind: idforge.PolicyWait, Duration: time.Second},
	}))
	defer g.Close()
	ids := make([]uint64, 10_000)
	if err := g.NextMany(ids); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("batch not increasing at %d", i)
		}
	}
	if err := g.NextMany(nil); err != nil {
		t.Fatal(err)
	}
	if l := must(g.Layout()); l != idforge.Twitter.Layout() {
		t.Fatalf("layout %+v", l)
	}
	if n := must(g.Node()); n != 3 {
		t.Fatalf("node %d", n)
	}
	lo, hi := must2(idforge.Twitter.Layout().BoundsAt(time.Now()))
	next := must(g.Next())
	if next < lo-(1<<22)*1000 || next > hi+(1<<22)*1000 {
		t.Fatalf("id %d far from the bounds of now [%d, %d]", next, lo, hi)
	}
}

// A state file keeps the high-water time: a second generator on it never goes below the first's
// ids (it refuses with ErrClockBehind until the clock passes the time the file reserved).
func TestSnowflakeStateFile(t *testing.T) {
	path := t.TempDir() + "/state"
	cfg := idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 1, StateFile: path}
	a := must(idforge.NewSnowflake(cfg))
	last := make([]uint64, 50_000)
	if err := a.NextMany(last); err != nil {
		t.Fatal(err)
	}
	a.Close()
	b := must(idforge.NewSnowflake(cfg))
	defer b.Close()
	id, err := b.Next()
	if err != nil && !errors.Is(err, idforge.ErrClockBehind) {
		t.Fatal(err)
	}
	if err == nil && id <= last[len(last)-1] {
		t.Fatalf("after a restart on the state file %d <= %d", id, last[len(last)-1])
	}
}

func TestFlake128Generator(t *testing.T) {
	g := must(idforge.NewFlake128Generator(idforge.FixedWorker(42)))
	defer g.Close()
	if w := must(g.Worker()); w != 42 {
		t.Fatalf("worker %d", w)
	}
	ids := make([]idforge.Flake128, 10_000)
	if err := g.NextMany(ids[:5000]); err != nil {
		t.Fatal(err)
	}
	for i := 5000; i < len(ids); i++ {
		ids[i] = must(g.Next())
	}
	for i := 1; i < len(ids); i++ {
		if bytes.Compare(ids[i][:], ids[i-1][:]) <= 0 || ids[i].Base62() <= ids[i-1].Base62() {
			t.Fatalf("not increasing at %d", i)
		}
	}
	if p := ids[0].Decompose(); p.Worker != 42 || time.Since(p.Time()).Abs() > time.Minute {
		t.Fatalf("%+v", p)
	}
	r := must(idforge.NewFlake128Generator(idforge.RandomWorker()))
	defer r.Close()
	if w := must(r.Worker()); w >= 1<<48 {
		t.Fatalf("random worker %d", w)
	}
}

func TestObjectIDBatch(t *testing.T) {
	ids := make([]idforge.ObjectID, 1000)
	if err := idforge.NewObjectIDs(ids); err != nil {
		t.Fatal(err)
	}
	seen := map[idforge.ObjectID]bool{}
	for _, id := range ids {
		if seen[id] || id.IsZero() {
			t.Fatalf("repeated or zero %s", id)
		}
		seen[id] = true
		if back := must(idforge.ParseObjectID(id.Hex())); back != id {
			t.Fatal(back)
		}
	}
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}
