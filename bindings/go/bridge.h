// The C side of every call of the package (included by each file that calls C: cgo keeps a
// file's preamble to itself). Each idforge_* call is wrapped in a function that, on failure,
// copies the thread's last-error message in the same C call: a goroutine may run its next cgo
// call on another OS thread, where idforge_last_error would tell another call's message.
#ifndef IDFORGE_GO_BRIDGE_H
#define IDFORGE_GO_BRIDGE_H

#include <stdlib.h>
#include <idforge.h>

// The message of the calling thread's last failure, malloc'd (the Go side frees it).
static inline char *idf_go_msg(void) {
	size_t n = 0;
	idforge_last_error(NULL, 0, &n);
	if (n == 0) n = 1;
	char *buf = malloc(n);
	if (buf != NULL && idforge_last_error(buf, n, NULL) != IDFORGE_STATUS_OK) buf[0] = 0;
	return buf;
}

#define IDF_GO(name, params, args) \
	static inline idforge_status idf_go_##name params { \
		idforge_status st = idforge_##name args; \
		if (st != IDFORGE_STATUS_OK) *msg = idf_go_msg(); \
		return st; \
	}

IDF_GO(layout_preset, (uint32_t p, struct idforge_layout *out, char **msg), (p, out))
IDF_GO(layout_named, (const char *name, struct idforge_layout *out, char **msg), (name, out))
IDF_GO(layout_parse, (const char *text, struct idforge_layout *out, char **msg), (text, out))
IDF_GO(layout_validate, (const struct idforge_layout *l, char **msg), (l))
IDF_GO(snowflake_compose, (const struct idforge_layout *l, uint64_t tick, uint64_t node, uint64_t seq, uint64_t *out, char **msg), (l, tick, node, seq, out))
IDF_GO(snowflake_decompose, (const struct idforge_layout *l, uint64_t id, struct idforge_parts *out, char **msg), (l, id, out))
IDF_GO(snowflake_bounds_at, (const struct idforge_layout *l, uint64_t t, uint64_t *lo, uint64_t *hi, char **msg), (l, t, lo, hi))

IDF_GO(snowflake_new_with_flags, (const struct idforge_snowflake_config *c, uint32_t flags, struct idforge_snowflake **out, char **msg), (c, flags, out))
IDF_GO(snowflake_new_leased_with_flags, (const struct idforge_snowflake_config *c, uint32_t flags, const char *url, const char *service, uint32_t ttl, struct idforge_snowflake **out, char **msg), (c, flags, url, service, ttl, out))
IDF_GO(snowflake_random_start, (const struct idforge_snowflake *h, bool *out, char **msg), (h, out))
IDF_GO(snowflake_next, (const struct idforge_snowflake *h, uint64_t *out, char **msg), (h, out))
IDF_GO(snowflake_next_many, (const struct idforge_snowflake *h, uint64_t *out, size_t n, char **msg), (h, out, n))
IDF_GO(snowflake_decode, (const struct idforge_snowflake *h, uint64_t id, struct idforge_parts *out, char **msg), (h, id, out))
IDF_GO(snowflake_layout, (const struct idforge_snowflake *h, struct idforge_layout *out, char **msg), (h, out))
IDF_GO(snowflake_node, (const struct idforge_snowflake *h, uint64_t *out, char **msg), (h, out))

IDF_GO(describe_id, (const char *text, uint32_t kind, const struct idforge_layout *l, char *out, size_t len, char **msg), (text, kind, l, out, len))

IDF_GO(objectid_generate, (uint8_t *out, char **msg), (out))
IDF_GO(objectid_to_hex, (const uint8_t *id, char *out, size_t len, char **msg), (id, out, len))
IDF_GO(objectid_from_hex, (const char *hex, uint8_t *out, char **msg), (hex, out))
IDF_GO(objectid_timestamp, (const uint8_t *id, uint32_t *out, char **msg), (id, out))

IDF_GO(flake128_new, (uint32_t kind, uint64_t worker, struct idforge_flake128 **out, char **msg), (kind, worker, out))
IDF_GO(flake128_next, (const struct idforge_flake128 *h, uint8_t *out, char **msg), (h, out))
IDF_GO(flake128_worker, (const struct idforge_flake128 *h, uint64_t *out, char **msg), (h, out))
IDF_GO(flake128_to_base62, (const uint8_t *id, char *out, size_t len, char **msg), (id, out, len))
IDF_GO(flake128_to_hex, (const uint8_t *id, char *out, size_t len, char **msg), (id, out, len))
IDF_GO(flake128_from_base62, (const char *text, uint8_t *out, char **msg), (text, out))
IDF_GO(flake128_from_hex, (const char *text, uint8_t *out, char **msg), (text, out))
IDF_GO(flake128_decompose, (const uint8_t *id, struct idforge_flake128_parts *out, char **msg), (id, out))
IDF_GO(flake128_compose, (uint64_t t, uint64_t worker, uint16_t seq, uint8_t *out, char **msg), (t, worker, seq, out))
IDF_GO(uuid7_new_with_policy, (const struct idforge_policy *p, const char *state_file, struct idforge_uuid7 **out, char **msg), (p, state_file, out))
IDF_GO(uuid7_next, (const struct idforge_uuid7 *h, uint8_t *out, char **msg), (h, out))
IDF_GO(uuid7_next_many, (const struct idforge_uuid7 *h, uint8_t *out, size_t n, char **msg), (h, out, n))
IDF_GO(uuid7_to_text, (const uint8_t *id, char *out, size_t len, char **msg), (id, out, len))
IDF_GO(uuid7_parse, (const char *text, uint8_t *out, char **msg), (text, out))
IDF_GO(uuid7_validate, (const uint8_t *id, char **msg), (id))
IDF_GO(uuid7_decompose, (const uint8_t *id, struct idforge_uuid7_parts *out, char **msg), (id, out))
IDF_GO(uuid7_compose, (uint64_t t, uint16_t rand_a, uint64_t rand_b, uint8_t *out, char **msg), (t, rand_a, rand_b, out))
IDF_GO(ulid_new_with_policy, (const struct idforge_policy *p, const char *state_file, struct idforge_ulid **out, char **msg), (p, state_file, out))
IDF_GO(ulid_next, (const struct idforge_ulid *h, uint8_t *out, char **msg), (h, out))
IDF_GO(ulid_next_many, (const struct idforge_ulid *h, uint8_t *out, size_t n, char **msg), (h, out, n))
IDF_GO(ulid_to_text, (const uint8_t *id, char *out, size_t len, char **msg), (id, out, len))
IDF_GO(ulid_parse, (const char *text, uint8_t *out, char **msg), (text, out))
IDF_GO(id_to_text, (uint64_t id, uint32_t form, char *out, size_t len, char **msg), (id, form, out, len))
IDF_GO(id_from_text, (const char *text, uint32_t form, uint64_t *out, char **msg), (text, form, out))

IDF_GO(segments_new, (const char *url, const char *tag, const struct idforge_segment_options *o, struct idforge_segments **out, char **msg), (url, tag, o, out))
IDF_GO(segments_next, (const struct idforge_segments *h, uint64_t *out, char **msg), (h, out))
IDF_GO(segments_next_many, (const struct idforge_segments *h, uint64_t *out, size_t n, char **msg), (h, out, n))
IDF_GO(segments_stats, (const struct idforge_segments *h, struct idforge_segment_stats *out, char **msg), (h, out))
IDF_GO(segments_options, (const struct idforge_segments *h, struct idforge_segment_options *out, char **msg), (h, out))
IDF_GO(segments_engine_stats, (const struct idforge_segments *h, struct idforge_engine_stats *out, char **msg), (h, out))

// Batches the C API has no call for, in one crossing: the ids of n calls.
static inline idforge_status idf_go_objectid_many(uint8_t *out, size_t n, char **msg) {
	for (size_t i = 0; i < n; i++) {
		idforge_status st = idforge_objectid_generate(out + i * IDFORGE_OBJECTID_LEN);
		if (st != IDFORGE_STATUS_OK) { *msg = idf_go_msg(); return st; }
	}
	return IDFORGE_STATUS_OK;
}

static inline idforge_status idf_go_flake128_many(const struct idforge_flake128 *h, uint8_t *out, size_t n, char **msg) {
	for (size_t i = 0; i < n; i++) {
		idforge_status st = idforge_flake128_next(h, out + i * IDFORGE_FLAKE128_LEN);
		if (st != IDFORGE_STATUS_OK) { *msg = idf_go_msg(); return st; }
	}
	return IDFORGE_STATUS_OK;
}

#endif
