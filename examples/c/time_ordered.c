/* UUIDv7, ULID and evenly sharded snowflakes from C: one generator of each, shareable by every
 * thread; the text forms; the time an id carries.
 *
 *   cc -std=c99 -o time_ordered examples/c/time_ordered.c $(pkg-config --cflags --libs idforge)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <idforge.h>

/* Prints the status name and this thread's message for a failed call. */
static int fail(const char *what, idforge_status status) {
  char message[256];
  idforge_last_error(message, sizeof message, NULL);
  fprintf(stderr, "%s: %s: %s\n", what, idforge_status_str(status), message);
  return 1;
}

int main(void) {
  idforge_uuid7 *uuids = NULL;
  idforge_ulid *ulids = NULL;
  idforge_snowflake *shards = NULL;
  idforge_snowflake_config config;
  uint8_t id[IDFORGE_UUID7_LEN], back[IDFORGE_UUID7_LEN], batch[8 * IDFORGE_UUID7_LEN];
  char text[IDFORGE_UUID7_TEXT_LEN + 1], ulid[IDFORGE_ULID_TEXT_LEN + 1];
  uint64_t ms, order;
  idforge_status st;

  /* idforge_uuid7_new_with_state_file("uuid7.state", &uuids): increasing across restarts too. */
  if ((st = idforge_uuid7_new(&uuids)) != IDFORGE_STATUS_OK) return fail("uuid7_new", st);
  if ((st = idforge_uuid7_next(uuids, id)) != IDFORGE_STATUS_OK) return fail("uuid7_next", st);
  idforge_uuid7_to_text(id, text, sizeof text); /* 36 characters, lower case */
  idforge_uuid7_time(id, &ms);
  idforge_uuid7_to_ulid_text(id, ulid, sizeof ulid);
  printf("UUIDv7 %s made at %" PRIu64 " ms (as ULID text %s)\n", text, ms, ulid);
  if ((st = idforge_uuid7_parse(text, back)) != IDFORGE_STATUS_OK || memcmp(id, back, sizeof id) != 0)
    return fail("uuid7_parse", st);
  if ((st = idforge_uuid7_next_many(uuids, batch, 8)) != IDFORGE_STATUS_OK) return fail("next_many", st);
  st = idforge_uuid7_parse("00000000-0000-4000-8000-000000000000", back); /* version 4 */
  printf("a version 4 UUID: %s\n", idforge_status_str(st));           /* IDFORGE_STATUS_INVALID_UUID */
  idforge_uuid7_free(uuids);

  if ((st = idforge_ulid_new(&ulids)) != IDFORGE_STATUS_OK) return fail("ulid_new", st);
  if ((st = idforge_ulid_next(ulids, id)) != IDFORGE_STATUS_OK) return fail("ulid_next", st);
  idforge_ulid_to_text(id, ulid, sizeof ulid); /* 26 characters of Crockford base32 */
  idforge_ulid_time(id, &ms);
  printf("ULID %s made at %" PRIu64 " ms\n", ulid, ms);
  idforge_ulid_free(ulids);

  /* Each tick's sequence starts at a random value: order % 16 picks shards evenly at any rate. */
  memset(&config, 0, sizeof config);
  idforge_layout_preset(IDFORGE_PRESET_TWITTER, &config.layout);
  config.node = 7;
  st = idforge_snowflake_new_with_flags(&config, IDFORGE_SNOWFLAKE_FLAG_RANDOM_START, &shards);
  if (st != IDFORGE_STATUS_OK) return fail("snowflake_new_with_flags", st);
  if ((st = idforge_snowflake_next(shards, &order)) != IDFORGE_STATUS_OK) return fail("snowflake_next", st);
  printf("order %" PRIu64 " goes to shard %" PRIu64 "\n", order, order % 16);
  idforge_snowflake_free(shards);
  return 0;
}
