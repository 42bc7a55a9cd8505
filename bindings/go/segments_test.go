package idforge_test

// Segments on every source URL this machine has: memory:, file://, sqlite:// always; the
// servers of ci/services.sh (IDFORGE_TEST_*_URL) when set; and an idforge server of the test's
// own (IDFORGE_BIN) killed with SIGKILL and restarted under load.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"idforge.dev/idforge"
)

// service gives the URL of a ci/services.sh server, or skips (fails when IDFORGE_REQUIRE_SERVICES
// says the services must be there).
func service(t *testing.T, name string) string {
	t.Helper()
	url := os.Getenv(name)
	if url == "" {
		if os.Getenv("IDFORGE_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s is not set but IDFORGE_REQUIRE_SERVICES is", name)
		}
		t.Skipf("%s is not set (ci/test.sh sets it)", name)
	}
	return url
}

// drawDistinct draws n ids from two generators on one tag and checks none repeats.
func drawDistinct(t *testing.T, url, tag string, n int) {
	t.Helper()
	opts := &idforge.SegmentOptions{Step: 100}
	a := must(idforge.NewSegments(url, tag, opts))
	defer a.Close()
	b := must(idforge.NewSegments(url, tag, opts))
	defer b.Close()
	seen := make(map[uint64]bool, 2*n)
	batch := make([]uint64, n/2)
	for _, g := range []*idforge.Segments{a, b} {
		for i := 0; i < n/2; i++ {
			id := must(g.Next())
			if seen[id] {
				t.Fatalf("%s: id %d twice", url, id)
			}
			seen[id] = true
		}
		if err := g.NextMany(batch); err != nil {
			t.Fatal(err)
		}
		for _, id := range batch {
			if seen[id] {
				t.Fatalf("%s: id %d twice", url, id)
			}
			seen[id] = true
		}
	}
	st := must(a.Stats())
	if st.RangesFetched == 0 || st.Step == 0 {
		t.Fatalf("stats %+v", st)
	}
}

// tempDir is t.TempDir for sources: a refill engine may still be closing its files in its own
// thread after the last generator's Close, so the removal is retried and never fails the test.
func tempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "idforge-go-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 50 && os.RemoveAll(dir) != nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	})
	return dir
}

func TestSegmentsLocalSources(t *testing.T) {
	dir := tempDir(t)
	for _, url := range []string{"file://" + dir, "sqlite://" + filepath.Join(dir, "seg.db")} {
		drawDistinct(t, url, "orders", 2000)
	}
	// memory: is one generator's own counter.
	m := must(idforge.NewSegments("memory:", "t", &idforge.SegmentOptions{Step: 10}))
	defer m.Close()
	for want := uint64(1); want <= 100; want++ {
		if id := must(m.Next()); id != want {
			t.Fatalf("memory: gave %d, want %d", id, want)
		}
	}
	s := must(idforge.NewSegments("sqlite://"+filepath.Join(dir, "seg.db"), "orders", nil))
	defer s.Close()
	must(s.Next())
	e := must(s.EngineStats())
	if e.Generators < 1 || e.Refills < 1 {
		t.Fatalf("engine %+v", e)
	}
}

func TestSegmentsServices(t *testing.T) {
	for _, name := range []string{"IDFORGE_TEST_IDFORGE_URL", "IDFORGE_TEST_REDIS_URL", "IDFORGE_TEST_POSTGRES_URL", "IDFORGE_TEST_MYSQL_URL"} {
		t.Run(strings.TrimPrefix(name, "IDFORGE_TEST_"), func(t *testing.T) {
			drawDistinct(t, service(t, name), "go-test", 4000)
		})
	}
}

// NextContext returns when its context is done, even while the library waits for a source
// that does not answer; Close then waits for the abandoned call.
func TestNextContext(t *testing.T) {
	s := must(idforge.NewSegments("memory:", "t", nil))
	if id := must(s.NextContext(context.Background())); id != 1 {
		t.Fatalf("first id %d", id)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.NextContext(ctx); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	s.Close()

	down := must(idforge.NewSegments("idforge://127.0.0.1:9", "t", &idforge.SegmentOptions{Timeout: time.Second}))
	defer down.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := down.NextContext(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("NextContext returned after %v, the deadline was 100ms", took)
	}
}

// server is an idforge serve of the test's own, on one port across restarts.
type server struct {
	t    *testing.T
	bin  string
	dir  string
	port string
	cmd  *exec.Cmd
}

func (s *server) start() {
	s.t.Helper()
	portFile := filepath.Join(s.dir, "port")
	os.Remove(portFile)
	port := s.port
	if port == "" {
		port = "0"
	}
	s.cmd = exec.Command(s.bin, "serve", "--port", port, "--port-file", portFile, "--data-dir", filepath.Join(s.dir, "data"))
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if raw, err := os.ReadFile(portFile); err == nil && strings.TrimSpace(string(raw)) != "" {
			s.port = strings.TrimSpace(string(raw))
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatal("the server did not start")
		}
	}
}

func (s *server) kill9() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
}

// Goroutines draw ids while the server is killed with SIGKILL and restarted, three times: no
// call fails (each rides out the restart within its timeout) and no id is handed out twice.
func TestSegmentsThroughKill9(t *testing.T) {
	bin := os.Getenv("IDFORGE_BIN")
	if bin == "" {
		if os.Getenv("IDFORGE_REQUIRE_SERVICES") == "1" {
			t.Fatal("IDFORGE_BIN is not set but IDFORGE_REQUIRE_SERVICES is")
		}
		t.Skip("IDFORGE_BIN is not set (ci/test.sh sets it)")
	}
	srv := &server{t: t, bin: bin, dir: tempDir(t)}
	srv.start()
	defer srv.kill9()
	url := "idforge://127.0.0.1:" + srv.port
	// Small fixed ranges, so the buffers run dry during each restart and calls must wait.
	g := must(idforge.NewSegments(url, "kill9", &idforge.SegmentOptions{Step: 50, FixedStep: true, Timeout: 20 * time.Second}))
	defer g.Close()

	const workers = 4
	stop := make(chan struct{})
	ids := make([][]uint64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id, err := g.NextContext(context.Background())
				if err != nil {
					errs[w] = err
					return
				}
				ids[w] = append(ids[w], id)
				time.Sleep(50 * time.Microsecond)
			}
		}(w)
	}
	for cycle := 0; cycle < 3; cycle++ {
		time.Sleep(300 * time.Millisecond)
		srv.kill9()
		time.Sleep(200 * time.Millisecond)
		srv.start()
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	seen := map[uint64]bool{}
	for w := 0; w < workers; w++ {
		if errs[w] != nil {
			t.Fatalf("goroutine %d: a call failed: %v", w, errs[w])
		}
		for _, id := range ids[w] {
			if seen[id] {
				t.Fatalf("id %d handed out twice", id)
			}
			seen[id] = true
		}
	}
	st := must(g.Stats())
	if len(seen) < 1000 || st.Waits == 0 {
		t.Fatalf("%d ids, stats %+v: the restarts were not felt", len(seen), st)
	}
	t.Logf("%d ids through 3 kill -9 restarts, 0 duplicates, 0 failed calls; stats %+v", len(seen), st)
}

// A generator leased from the server gets the lowest free node id of its service.
func TestLeasedSnowflake(t *testing.T) {
	url := service(t, "IDFORGE_TEST_IDFORGE_URL")
	svc := "go-lease-" + time.Now().Format("150405.000000")
	svc = strings.ReplaceAll(svc, ".", "-")
	cfg := idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout()}
	a := must(idforge.NewLeasedSnowflake(cfg, url, svc, 0))
	defer a.Close()
	b := must(idforge.NewLeasedSnowflake(cfg, url, svc, 2*time.Second))
	defer b.Close()
	if must(a.Node()) != 0 || must(b.Node()) != 1 {
		t.Fatalf("nodes %d %d", must(a.Node()), must(b.Node()))
	}
	if p := must(b.Decode(must(b.Next()))); p.Node != 1 {
		t.Fatalf("%+v", p)
	}
	_, err := idforge.NewLeasedSnowflake(cfg, "redis://127.0.0.1:1", "s", 0)
	wantCode(t, err, "INVALID_URL", "redis lease")
	_, err = idforge.NewLeasedSnowflake(cfg, url, "bad name", 0)
	wantCode(t, err, "INVALID_ARGUMENT", "bad name")
}
