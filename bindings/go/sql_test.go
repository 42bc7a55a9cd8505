package idforge_test

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"idforge.dev/idforge"
)

// scanner is what every id type is to database/sql.
type scanner interface {
	driver.Valuer
	sql.Scanner
}

// Each id's Value scans back into the same id, from the driver's form and from the id's text.
func TestSQLValuesScanBack(t *testing.T) {
	oid := must(idforge.NewObjectID())
	uuids := must(idforge.NewUUID7Generator(idforge.TimeOrderedConfig{}))
	defer uuids.Close()
	u7 := must(uuids.Next())
	ulids := must(idforge.NewULIDGenerator(idforge.TimeOrderedConfig{}))
	defer ulids.Close()
	ul := must(ulids.Next())
	gen := must(idforge.NewFlake128Generator(idforge.RandomWorker()))
	defer gen.Close()
	fl := must(gen.Next())
	cases := []struct {
		name  string
		value scanner
		fresh func() scanner
		text  string
	}{
		{"ObjectID", &oid, func() scanner { return new(idforge.ObjectID) }, oid.Hex()},
		{"UUID7", &u7, func() scanner { return new(idforge.UUID7) }, u7.String()},
		{"ULID", &ul, func() scanner { return new(idforge.ULID) }, ul.String()},
		{"Flake128", &fl, func() scanner { return new(idforge.Flake128) }, fl.Base62()},
	}
	for _, c := range cases {
		v, err := c.value.Value()
		if err != nil {
			t.Fatalf("%s: Value: %v", c.name, err)
		}
		if !driver.IsValue(v) {
			t.Fatalf("%s: Value %T is not a driver value", c.name, v)
		}
		for _, src := range []any{v, c.text, []byte(c.text)} {
			got := c.fresh()
			if err := got.Scan(src); err != nil {
				t.Fatalf("%s: Scan(%T): %v", c.name, src, err)
			}
			back, _ := got.Value()
			if !equalValues(back, v) {
				t.Fatalf("%s: Scan(%v) gave %v, not %v", c.name, src, back, v)
			}
		}
		for _, bad := range []any{nil, 42, []byte("sh@rt!"), "not an id"} {
			if err := c.fresh().Scan(bad); err == nil || !errors.As(err, new(*idforge.Error)) {
				t.Fatalf("%s: Scan(%#v) gave %v, not an idforge error", c.name, bad, err)
			}
		}
	}
	var null sql.Null[idforge.ObjectID]
	if err := null.Scan(nil); err != nil || null.Valid {
		t.Fatalf("sql.Null[ObjectID] of NULL: %v %v", err, null.Valid)
	}
}

func equalValues(a, b driver.Value) bool {
	ab, aok := a.([]byte)
	bb, bok := b.([]byte)
	if aok && bok {
		return string(ab) == string(bb)
	}
	return a == b
}

// A snowflake id tagged `json:",string"` is decimal text in JSON, as every binding writes it
// (core/testdata/json_ids.json), and the texts the others refuse are refused.
func TestSnowflakeJSONIsTheSharedDecimalText(t *testing.T) {
	type order struct {
		ID uint64 `json:"id,string"`
	}
	data := load(t, "json_ids.json")
	for _, c := range rows(data, "cases") {
		id := c.u64(t, "id")
		got, err := json.Marshal(order{ID: id})
		if err != nil || string(got) != c.str("json") {
			t.Fatalf("%d: %s %v, want %s", id, got, err, c.str("json"))
		}
		var back order
		if err := json.Unmarshal([]byte(c.str("json")), &back); err != nil || back.ID != id {
			t.Fatalf("%s: %d %v", c.str("json"), back.ID, err)
		}
	}
	// SnowflakeID writes the same JSON, and reads only the id's one text: the stdlib's
	// `json:",string"` reads "007" as 7, so the invalid texts are checked on SnowflakeID.
	type typed struct {
		ID idforge.SnowflakeID `json:"id"`
	}
	for _, c := range rows(data, "cases") {
		id := c.u64(t, "id")
		got, err := json.Marshal(typed{ID: idforge.SnowflakeID(id)})
		if err != nil || string(got) != c.str("json") {
			t.Fatalf("SnowflakeID %d: %s %v, want %s", id, got, err, c.str("json"))
		}
		var back typed
		if err := json.Unmarshal(got, &back); err != nil || uint64(back.ID) != id {
			t.Fatalf("SnowflakeID %s: %d %v", got, back.ID, err)
		}
	}
	for _, text := range data["invalid"].([]any) {
		raw, _ := json.Marshal(map[string]string{"id": text.(string)})
		var back typed
		if err := json.Unmarshal(raw, &back); err == nil {
			t.Fatalf("%s was read as %d", raw, back.ID)
		}
	}
}

func TestShortIDJSONIsBase32AndSorts(t *testing.T) {
	type link struct {
		ID idforge.ShortID `json:"id"`
	}
	g := must(idforge.NewSnowflake(idforge.SnowflakeConfig{Layout: idforge.Twitter.Layout(), Node: 5}))
	defer g.Close()
	prev := ""
	for i := 0; i < 1000; i++ {
		id := idforge.ShortID(must(g.Next()))
		raw, err := json.Marshal(link{ID: id})
		if err != nil || string(raw) != `{"id":"`+id.String()+`"}` || len(id.String()) != 13 {
			t.Fatalf("%d: %s %v", id, raw, err)
		}
		var back link
		if err := json.Unmarshal([]byte(strings.ToLower(string(raw))), &back); err != nil || back.ID != id {
			t.Fatalf("%s: %d %v", raw, back.ID, err)
		}
		if id.String() <= prev {
			t.Fatalf("%s after %s", id, prev)
		}
		prev = id.String()
	}
	var back link
	if err := json.Unmarshal([]byte(`{"id":"000000000000O"}`), &back); err == nil {
		t.Fatal("an O was read")
	}
}
