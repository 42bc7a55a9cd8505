package idforge_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"idforge.dev/idforge"
)

// row is one object of a shared vector file; numbers stay json.Number (they exceed 2^53).
type row map[string]any

// load reads core/testdata/NAME, the vectors every language runs.
func load(t *testing.T, name string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "core", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func rows(data map[string]any, key string) []row {
	var out []row
	for _, r := range data[key].([]any) {
		out = append(out, row(r.(map[string]any)))
	}
	return out
}

// u64 reads a decimal string or a JSON number as a uint64.
func (r row) u64(t *testing.T, key string) uint64 {
	t.Helper()
	var s string
	switch v := r[key].(type) {
	case string:
		s = v
	case json.Number:
		s = v.String()
	default:
		t.Fatalf("%s: %v is no integer", key, r[key])
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return n
}

func (r row) str(key string) string { s, _ := r[key].(string); return s }

func (r row) has(key string) bool { _, ok := r[key]; return ok && r[key] != nil }

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantCode fails unless err is an *idforge.Error of the code named name.
func wantCode(t *testing.T, err error, name string, context any) {
	t.Helper()
	var e *idforge.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v: want %s, got %v", context, name, err)
	}
	if e.Code.String() != name {
		t.Fatalf("%v: want %s, got %s (%v)", context, name, e.Code, err)
	}
}

// must gives v, or panics on err (which fails the test that called it, with the error).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func msDuration(ms uint64) time.Duration { return time.Duration(ms) * time.Millisecond }
