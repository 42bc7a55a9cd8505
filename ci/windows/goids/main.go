// Test scaffolding for ci/dist/windows-test.sh: cross-built for windows/amd64 against the Windows
// C library and run under Wine. 4 goroutines share one snowflake generator and take 25,000 ids
// each; every id must be distinct, every goroutine's ascending, and ObjectIds and UUIDv7s too.
package main

import (
	"fmt"
	"os"
	"sync"

	"idforge.dev/idforge"
)

const goroutines, each = 4, 25000

func main() {
	ids, err := idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 7})
	if err != nil {
		fail(err)
	}
	defer ids.Close()
	got := make([][]uint64, goroutines)
	var wg sync.WaitGroup
	for g := range got {
		got[g] = make([]uint64, each)
		wg.Add(1)
		go func(out []uint64) {
			defer wg.Done()
			for i := range out {
				id, err := ids.Next()
				if err != nil {
					fail(err)
				}
				out[i] = id
			}
		}(got[g])
	}
	wg.Wait()
	seen := make(map[uint64]struct{}, goroutines*each)
	for g, run := range got {
		for i, id := range run {
			if i > 0 && id <= run[i-1] {
				fail(fmt.Errorf("goroutine %d: %d after %d", g, id, run[i-1]))
			}
			seen[id] = struct{}{}
		}
	}
	if len(seen) != goroutines*each {
		fail(fmt.Errorf("%d distinct snowflakes of %d", len(seen), goroutines*each))
	}
	uuids, err := idforge.NewUUID7Generator(idforge.TimeOrderedConfig{})
	if err != nil {
		fail(err)
	}
	defer uuids.Close()
	oids, us := distinct(10000, idforge.NewObjectID), distinct(10000, uuids.Next)
	if oids != 10000 || us != 10000 {
		fail(fmt.Errorf("%d distinct ObjectIds, %d distinct UUIDv7s of 10000", oids, us))
	}
	fmt.Printf("%d snowflakes from %d goroutines, 10000 ObjectIds, 10000 UUIDv7s: all distinct\n", len(seen), goroutines)
}

// distinct takes n ids from next and counts the distinct ones.
func distinct[T comparable](n int, next func() (T, error)) int {
	seen := make(map[T]struct{}, n)
	for i := 0; i < n; i++ {
		id, err := next()
		if err != nil {
			fail(err)
		}
		seen[id] = struct{}{}
	}
	return len(seen)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "error:", err)
	os.Exit(1)
}
