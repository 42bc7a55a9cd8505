package idforge

import "testing"

// The Go enums carry the C header's numbers (written as literals, so go doc shows them).
func TestEnumsMatchTheHeader(t *testing.T) {
	for name, v := range cEnums() {
		if v[0] != v[1] {
			t.Errorf("%s is %d in Go, %d in idforge.h", name, v[0], v[1])
		}
	}
}
