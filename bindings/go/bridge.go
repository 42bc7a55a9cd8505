package idforge

// The C helpers are in bridge.h. noescape and nocallback say that the hot calls keep no pointer
// past the call and never call back into Go, so the Go side passes pointers to its stack
// variables without moving them to the heap: a call allocates nothing unless it fails.

/*
#include "bridge.h"

#cgo noescape idf_go_snowflake_next
#cgo nocallback idf_go_snowflake_next
#cgo noescape idf_go_snowflake_next_many
#cgo nocallback idf_go_snowflake_next_many
#cgo noescape idf_go_objectid_generate
#cgo nocallback idf_go_objectid_generate
#cgo noescape idf_go_objectid_many
#cgo nocallback idf_go_objectid_many
#cgo noescape idf_go_flake128_next
#cgo nocallback idf_go_flake128_next
#cgo noescape idf_go_flake128_many
#cgo nocallback idf_go_flake128_many
#cgo noescape idf_go_uuid7_next
#cgo nocallback idf_go_uuid7_next
#cgo noescape idf_go_uuid7_next_many
#cgo nocallback idf_go_uuid7_next_many
#cgo noescape idf_go_ulid_next
#cgo nocallback idf_go_ulid_next
#cgo noescape idf_go_ulid_next_many
#cgo nocallback idf_go_ulid_next_many
#cgo noescape idf_go_segments_next
#cgo nocallback idf_go_segments_next
#cgo noescape idf_go_segments_next_many
#cgo nocallback idf_go_segments_next_many
#cgo noescape idf_go_snowflake_decode
#cgo nocallback idf_go_snowflake_decode
#cgo noescape idf_go_objectid_to_hex
#cgo nocallback idf_go_objectid_to_hex
#cgo noescape idf_go_objectid_from_hex
#cgo nocallback idf_go_objectid_from_hex
#cgo noescape idf_go_flake128_to_base62
#cgo nocallback idf_go_flake128_to_base62
#cgo noescape idf_go_flake128_from_base62
#cgo nocallback idf_go_flake128_from_base62
*/
import "C"
