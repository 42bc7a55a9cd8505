// Package sqltest keeps idforge's ids in PostgreSQL (lib/pq, the services' server of
// ci/services.sh: IDFORGE_TEST_POSTGRES_URL) and SQLite (mattn/go-sqlite3, Debian's, on the
// system's libsqlite3) through database/sql: 10,000 rows from 8 goroutines, read back unique and
// in each goroutine's creation order (also by the database's ORDER BY), through encoding/json
// and back, and the catalog's column types as docs/frameworks.md gives them.
package sqltest

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	_ "github.com/lib/pq"
	_ "github.com/mattn/go-sqlite3"

	"idforge.dev/idforge"
)

const workers, perWorker, batch = 8, 1250, 250

// row is one order; in JSON its snowflake id is decimal text (the `,string` option).
type row struct {
	ID     uint64           `json:"id,string"`
	Ref    idforge.UUID7    `json:"ref"`
	ULID   idforge.ULID     `json:"ulid"`
	OID    idforge.ObjectID `json:"oid"`
	Flake  idforge.Flake128 `json:"flake"`
	Worker int              `json:"-"`
	Seq    int              `json:"-"`
}

type database struct {
	name, driver, dsn, ddl, placeholder string
	types                               map[string]string
}

func databases(t *testing.T) []database {
	dbs := []database{{
		name: "sqlite", driver: "sqlite3",
		dsn: "file:" + filepath.Join(t.TempDir(), "ids.db") + "?_busy_timeout=60000&_journal_mode=WAL",
		ddl: "CREATE TABLE orders (id BIGINT PRIMARY KEY, ref TEXT NOT NULL, ulid VARCHAR(26) NOT NULL, " +
			"oid BLOB NOT NULL, flake BLOB NOT NULL, worker INTEGER NOT NULL, seq INTEGER NOT NULL)",
		placeholder: "?",
		types:       map[string]string{"id": "BIGINT", "ref": "TEXT", "ulid": "VARCHAR(26)", "oid": "BLOB", "flake": "BLOB"},
	}}
	url := os.Getenv("IDFORGE_TEST_POSTGRES_URL")
	if url == "" && os.Getenv("IDFORGE_REQUIRE_SERVICES") != "" {
		t.Fatal("IDFORGE_TEST_POSTGRES_URL is not set but IDFORGE_REQUIRE_SERVICES is")
	}
	if url != "" {
		dbs = append(dbs, database{
			name: "postgres", driver: "postgres", dsn: url + query(url) + "sslmode=disable",
			ddl: "CREATE TABLE orders (id BIGINT PRIMARY KEY, ref UUID NOT NULL, ulid VARCHAR(26) NOT NULL, " +
				"oid BYTEA NOT NULL, flake BYTEA NOT NULL, worker INTEGER NOT NULL, seq INTEGER NOT NULL)",
			placeholder: "$",
			types:       map[string]string{"id": "bigint", "ref": "uuid", "ulid": "character varying(26)", "oid": "bytea", "flake": "bytea"},
		})
	} else {
		t.Log("IDFORGE_TEST_POSTGRES_URL is not set: SQLite only (ci/services.sh sets it)")
	}
	return dbs
}

func TestIdsInDatabases(t *testing.T) {
	for _, d := range databases(t) {
		t.Run(d.name, func(t *testing.T) { roundTrip(t, d) })
	}
}

// query is what joins one more parameter to url: ? or &.
func query(url string) string {
	if strings.Contains(url, "?") {
		return "&"
	}
	return "?"
}

func roundTrip(t *testing.T, d database) {
	if d.name == "postgres" {
		// A schema of its own (the server outlives the test), every pooled connection in it.
		schema := fmt.Sprintf("ids_%d", os.Getpid())
		admin, err := sql.Open(d.driver, d.dsn)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, admin, "CREATE SCHEMA "+schema)
		defer func() {
			mustExec(t, admin, "DROP SCHEMA "+schema+" CASCADE")
			admin.Close()
		}()
		d.dsn += query(d.dsn) + "search_path=" + schema
	}
	db, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(workers)
	mustExec(t, db, d.ddl)

	snow, err := idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 9})
	if err != nil {
		t.Fatal(err)
	}
	defer snow.Close()
	uuids, _ := idforge.NewUUID7Generator(idforge.TimeOrderedConfig{})
	ulids, _ := idforge.NewULIDGenerator(idforge.TimeOrderedConfig{})
	flakes, _ := idforge.NewFlake128Generator(idforge.RandomWorker())
	defer uuids.Close()
	defer ulids.Close()
	defer flakes.Close()

	insert := "INSERT INTO orders (id, ref, ulid, oid, flake, worker, seq) VALUES (?, ?, ?, ?, ?, ?, ?)"
	if d.placeholder == "$" {
		insert = "INSERT INTO orders (id, ref, ulid, oid, flake, worker, seq) VALUES ($1, $2, $3, $4, $5, $6, $7)"
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for start := 0; start < perWorker; start += batch {
				if err := insertBatch(db, insert, w, start, snow, uuids, ulids, flakes); err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	rows := readAll(t, db, "SELECT id, ref, ulid, oid, flake, worker, seq FROM orders")
	if len(rows) != workers*perWorker {
		t.Fatalf("%d rows", len(rows))
	}
	keys := map[string]func(r row) string{
		"id":    func(r row) string { return fmt.Sprintf("%020d", r.ID) },
		"ref":   func(r row) string { return string(r.Ref[:]) },
		"ulid":  func(r row) string { return string(r.ULID[:]) },
		"oid":   func(r row) string { return string(r.OID[:]) },
		"flake": func(r row) string { return string(r.Flake[:]) },
	}
	for column, key := range keys {
		seen := map[string]bool{}
		for _, r := range rows {
			seen[key(r)] = true
		}
		if len(seen) != len(rows) {
			t.Fatalf("%s: %d duplicates", column, len(rows)-len(seen))
		}
		// Each goroutine made its rows in seq order: every kind of id increases with it.
		byWorker := map[int][]row{}
		for _, r := range rows {
			byWorker[r.Worker] = append(byWorker[r.Worker], r)
		}
		for w, mine := range byWorker {
			sort.Slice(mine, func(i, j int) bool { return mine[i].Seq < mine[j].Seq })
			for i := 1; i < len(mine); i++ {
				if key(mine[i-1]) >= key(mine[i]) {
					t.Fatalf("%s: worker %d's ids out of creation order at seq %d", column, w, mine[i].Seq)
				}
			}
		}
		// The database orders them as their bytes (and numbers) sort.
		ordered := readAll(t, db, "SELECT id, ref, ulid, oid, flake, worker, seq FROM orders ORDER BY "+column)
		for i := 1; i < len(ordered); i++ {
			if key(ordered[i-1]) >= key(ordered[i]) {
				t.Fatalf("%s: ORDER BY disagrees at row %d", column, i)
			}
		}
	}
	for _, r := range rows {
		text, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(text, []byte(fmt.Sprintf(`{"id":"%d","ref":"%s"`, r.ID, r.Ref))) {
			t.Fatalf("JSON %s", text)
		}
		var back row
		if err := json.Unmarshal(text, &back); err != nil {
			t.Fatal(err)
		}
		back.Worker, back.Seq = r.Worker, r.Seq
		if back != r {
			t.Fatalf("JSON round trip: %+v, not %+v", back, r)
		}
	}
	if got := columnTypes(t, db, d.name); fmt.Sprint(got) != fmt.Sprint(d.types) {
		t.Fatalf("column types %v, want %v", got, d.types)
	}
}

func insertBatch(db *sql.DB, insert string, w, start int, snow *idforge.Snowflake, uuids *idforge.UUID7Generator,
	ulids *idforge.ULIDGenerator, flakes *idforge.Flake128Generator) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.Prepare(insert)
	if err != nil {
		return err
	}
	for n := start; n < start+batch; n++ {
		id, err := snow.Next()
		if err != nil {
			return err
		}
		ref, _ := uuids.Next()
		u, _ := ulids.Next()
		oid, _ := idforge.NewObjectID()
		fl, _ := flakes.Next()
		if _, err := stmt.Exec(id, ref, u, oid, fl, w, n); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func readAll(t *testing.T, db *sql.DB, query string) []row {
	t.Helper()
	rs, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		var r row
		if err := rs.Scan(&r.ID, &r.Ref, &r.ULID, &r.OID, &r.Flake, &r.Worker, &r.Seq); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func columnTypes(t *testing.T, db *sql.DB, kind string) map[string]string {
	t.Helper()
	query := "SELECT name, type FROM pragma_table_info('orders')"
	if kind == "postgres" {
		query = "SELECT column_name, CASE WHEN character_maximum_length IS NULL THEN data_type " +
			"ELSE data_type || '(' || character_maximum_length || ')' END FROM information_schema.columns " +
			"WHERE table_name = 'orders' AND table_schema = current_schema()"
	}
	rs, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out := map[string]string{}
	for rs.Next() {
		var name, typ string
		if err := rs.Scan(&name, &typ); err != nil {
			t.Fatal(err)
		}
		if name != "worker" && name != "seq" {
			out[name] = typ
		}
	}
	return out
}

func mustExec(t *testing.T, db *sql.DB, query string) {
	t.Helper()
	if _, err := db.Exec(query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
