package idforge

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func value(t *testing.T, fields []Field, key string) any {
	t.Helper()
	for _, f := range fields {
		if f.Key == key {
			return f.Value
		}
	}
	t.Fatalf("no field %q in %v", key, fields)
	return nil
}

func TestDescribeIDReadsEveryKind(t *testing.T) {
	fields, err := DescribeID("1700000000000000000", KindAny, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{}
	for _, f := range fields {
		keys = append(keys, f.Key)
	}
	if got := strings.Join(keys, ","); got != "type,layout,id,time,time_ms,node,sequence,tick" {
		t.Fatalf("keys %s", got)
	}
	if value(t, fields, "time") != "2023-09-08T04:15:59.129Z" || value(t, fields, "id") != "1700000000000000000" {
		t.Fatalf("fields %v", fields)
	}
	if _, ok := value(t, fields, "time_ms").(uint64); !ok {
		t.Fatalf("time_ms is %T", value(t, fields, "time_ms"))
	}
	discord := Discord.Layout()
	fields, err = DescribeID("1700000000000000000", KindSnowflake, &discord)
	if err != nil || value(t, fields, "layout") != "discord" {
		t.Fatalf("%v %v", fields, err)
	}
	fields, err = DescribeID("ffffffff0000000000000000", KindAny, nil)
	if err != nil || value(t, fields, "timestamp") != uint64(4294967295) {
		t.Fatalf("%v %v", fields, err)
	}
	fields, err = DescribeID("123", KindFlake128, nil)
	if err != nil || value(t, fields, "type") != "flake128" {
		t.Fatalf("%v %v", fields, err)
	}
	// A short text form goes through ParseID first.
	id, err := ParseID("6AMSJ4ZME9EP0", TextBase32)
	if err != nil {
		t.Fatal(err)
	}
	fields, err = DescribeID(strconv.FormatUint(id, 10), KindSnowflake, nil)
	if err != nil || value(t, fields, "id") != "7301234567890123456" {
		t.Fatalf("%v %v", fields, err)
	}
}

func TestDescribeIDRefusesWithTypedErrors(t *testing.T) {
	for _, c := range []struct {
		text string
		kind IDKind
		code Code
	}{
		{"nope", KindAny, ErrInvalidArgument},
		{"12a", KindSnowflake, ErrInvalidDecimal},
		{"1", IDKind(6), ErrInvalidArgument},
		{"a\x00b", KindAny, ErrInvalidArgument},
		{"\xff\xfe", KindAny, ErrInvalidArgument},
		{strings.Repeat("1", 10_000_000), KindAny, ErrInvalidDecimal},
	} {
		_, err := DescribeID(c.text, c.kind, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != c.code {
			t.Errorf("%.20q (%v): %v, want %v", c.text, c.kind, err, c.code)
		}
	}
}
