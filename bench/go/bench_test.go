package bench

import (
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"

	"idforge.dev/idforge"
)

var (
	sinkU64  uint64
	sinkOID  idforge.ObjectID
	sinkXID  xid.ID
	sinkF128 idforge.Flake128
	sinkULID ulid.ULID
	sinkTime time.Time
)

func BenchmarkFloorCgoNoop(b *testing.B) {
	for b.Loop() {
		Noop()
	}
}

func BenchmarkFloorTimeNow(b *testing.B) {
	for b.Loop() {
		sinkTime = time.Now()
	}
}

// The pieces of a call, to show where its time goes: a cgo call with an out-parameter, and the
// C calls made directly, without the binding's wrapper.
func BenchmarkPieceCgoNoopOutParam(b *testing.B) {
	for b.Loop() {
		sinkU64 = NoopPtr()
	}
}

func BenchmarkPieceRawObjectID(b *testing.B) {
	var id [12]byte
	for b.Loop() {
		RawObjectID(&id)
	}
	sinkOID = id
}

func BenchmarkPieceRawSnowflakeNext(b *testing.B) {
	g := NewRawSnowflake()
	defer g.Close()
	for b.Loop() {
		sinkU64 = g.Next()
	}
}

func snowflake(b *testing.B) *idforge.Snowflake {
	layout, err := idforge.ParseLayout(wideSeq)
	if err != nil {
		b.Fatal(err)
	}
	g, err := idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: layout})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	return g
}

func BenchmarkSnowflakeNext(b *testing.B) {
	g := snowflake(b)
	for b.Loop() {
		id, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		sinkU64 = id
	}
}

// One op is 64 ids from one cgo call (NextMany); ns/id is reported beside.
func BenchmarkSnowflakeBatch64(b *testing.B) {
	g := snowflake(b)
	var buf [64]uint64
	for b.Loop() {
		if err := g.NextMany(buf[:]); err != nil {
			b.Fatal(err)
		}
	}
	sinkU64 = buf[63]
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/id")
}

// One op is 64 ids from 64 single calls in a row: the batch's baseline.
func BenchmarkSnowflakeSingle64(b *testing.B) {
	g := snowflake(b)
	var buf [64]uint64
	for b.Loop() {
		for i := range buf {
			id, err := g.Next()
			if err != nil {
				b.Fatal(err)
			}
			buf[i] = id
		}
	}
	sinkU64 = buf[63]
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/id")
}

func BenchmarkObjectIDNew(b *testing.B) {
	for b.Loop() {
		id, err := idforge.NewObjectID()
		if err != nil {
			b.Fatal(err)
		}
		sinkOID = id
	}
}

// One op is 64 ObjectIds from one cgo call (NewObjectIDs); ns/id is reported beside.
func BenchmarkObjectIDBatch64(b *testing.B) {
	var buf [64]idforge.ObjectID
	for b.Loop() {
		if err := idforge.NewObjectIDs(buf[:]); err != nil {
			b.Fatal(err)
		}
	}
	sinkOID = buf[63]
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*64), "ns/id")
}

func BenchmarkPeerXIDNew(b *testing.B) {
	for b.Loop() {
		sinkXID = xid.New()
	}
}

func BenchmarkFlake128Next(b *testing.B) {
	g, err := idforge.NewFlake128Generator(idforge.RandomWorker())
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	for b.Loop() {
		f, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		sinkF128 = f
	}
}

// ulid.Make of oklog/ulid v2.1: the time now and a process-wide monotonic entropy under a
// mutex. Debian packages v2.0.2, which lacks Make, so this is its body.
var (
	ulidMu      sync.Mutex
	ulidEntropy = ulid.Monotonic(rand.Reader, 0)
)

func ulidMake() ulid.ULID {
	ulidMu.Lock()
	defer ulidMu.Unlock()
	return ulid.MustNew(ulid.Now(), ulidEntropy)
}

func BenchmarkPeerULIDMake(b *testing.B) {
	for b.Loop() {
		sinkULID = ulidMake()
	}
}
