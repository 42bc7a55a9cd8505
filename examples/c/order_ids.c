/* An example C service: order numbers from a snowflake generator and a document id.
 *
 *   ci/install/install-c.sh /tmp/idforge
 *   export PKG_CONFIG_PATH=/tmp/idforge/lib/pkgconfig
 *   cc -std=c99 -o order_ids examples/c/order_ids.c $(pkg-config --cflags --libs idforge)
 *   ./order_ids        (idforge.pc adds an rpath to /tmp/idforge/lib)
 *   cc -std=c99 -o order_ids_static examples/c/order_ids.c $(pkg-config --cflags --libs idforge-static)
 */
#include <inttypes.h>
#include <stdio.h>

#include <idforge.h>

/* Prints the status name and this thread's message for a failed call. */
static int fail(const char *what, idforge_status status) {
  char message[256];
  idforge_last_error(message, sizeof message, NULL);
  fprintf(stderr, "%s: %s: %s\n", what, idforge_status_str(status), message);
  return 1;
}

int main(void) {
  idforge_snowflake *orders = NULL;
  idforge_parts parts;
  uint64_t id;
  uint8_t doc[IDFORGE_OBJECTID_LEN];
  char doc_hex[IDFORGE_OBJECTID_HEX_LEN + 1];
  idforge_status st;
  int i;

  /* Node 42 of a Twitter-layout fleet; the handle is thread-safe, share it. */
  st = idforge_snowflake_new_preset(IDFORGE_PRESET_TWITTER, 42, &orders);
  if (st != IDFORGE_STATUS_OK) return fail("idforge_snowflake_new_preset", st);
  for (i = 0; i < 3; i++) {
    st = idforge_snowflake_next(orders, &id);
    if (st != IDFORGE_STATUS_OK) return fail("idforge_snowflake_next", st);
    idforge_snowflake_decode(orders, id, &parts);
    printf("order %" PRIu64 " (node %" PRIu64 ", ms %" PRIu64 ", seq %" PRIu64 ")\n", id, parts.node,
           parts.time_ms, parts.seq);
  }
  idforge_snowflake_free(orders);

  st = idforge_objectid_generate(doc);
  if (st != IDFORGE_STATUS_OK) return fail("idforge_objectid_generate", st);
  idforge_objectid_to_hex(doc, doc_hex, sizeof doc_hex);
  printf("document %s (library %s)\n", doc_hex, idforge_version());

  /* Bad input gets a status and a message, never a crash. */
  st = idforge_objectid_from_hex("not-an-objectid", doc);
  if (st != IDFORGE_STATUS_OK) fail("idforge_objectid_from_hex (expected)", st);
  return 0;
}
