/* C tests of libidforge: the shared vectors, threads and fork (errors and NULL handling:
 * test_errors.c). Built by bindings/c/tests/run.sh against libidforge.so and libidforge.a, and
 * by ci/steps/windows.sh with mingw against idforge.dll and libidforge.a (run under Wine: no
 * fork there). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifndef _WIN32
#include <sys/file.h>
#include <sys/wait.h>
#endif

#include "harness.h"
#include "idforge.h"
#include "vectors.h"

#define OK "IDFORGE_STATUS_OK"

static int same_layout(const idforge_layout *a, const idforge_layout *b) {
  return a->epoch_ms == b->epoch_ms && a->tick_ms == b->tick_ms && a->time_bits == b->time_bits &&
         a->node_bits == b->node_bits && a->seq_bits == b->seq_bits && a->order == b->order &&
         a->is_unsigned == b->is_unsigned;
}

/* ---- shared vectors: snowflake ------------------------------------------------------------ */

static void test_presets(void) {
  size_t i;
  for (i = 0; i < V_PRESETS_LEN; i++) {
    idforge_layout by_number, by_name;
    /* The idforge_preset numbering follows the order of the presets in the vectors. */
    CHECK_OK(idforge_layout_preset((uint32_t)i, &by_number));
    CHECK_OK(idforge_layout_named(V_PRESETS[i].name, &by_name));
    CHECK(same_layout(&by_number, &V_PRESETS[i].layout));
    CHECK(same_layout(&by_name, &V_PRESETS[i].layout));
    CHECK_OK(idforge_layout_validate(&by_number));
  }
  {
    idforge_layout l;
    CHECK_STATUS(idforge_layout_preset(IDFORGE_PRESET_JS_SAFE + 1, &l),
                 "IDFORGE_STATUS_INVALID_ARGUMENT");
  }
}

static void test_preset_names(void) {
  size_t i, j;
  for (i = 0; i < V_PRESET_NAMES_LEN; i++) {
    idforge_layout got;
    if (V_PRESET_NAMES[i].preset == NULL) {
      CHECK_STATUS(idforge_layout_named(V_PRESET_NAMES[i].input, &got),
                   "IDFORGE_STATUS_INVALID_LAYOUT");
      continue;
    }
    CHECK_OK(idforge_layout_named(V_PRESET_NAMES[i].input, &got));
    for (j = 0; j < V_PRESETS_LEN; j++)
      if (strcmp(V_PRESETS[j].name, V_PRESET_NAMES[i].preset) == 0)
        CHECK(same_layout(&got, &V_PRESETS[j].layout));
  }
}

/* Preset names and specs: the shared vectors, with the one message of every binding. */
static void test_layout_text(void) {
  size_t i, j;
  char message[512];
  for (i = 0; i < V_LAYOUT_TEXT_LEN; i++) {
    idforge_layout got;
    CHECK_OK(idforge_layout_parse(V_LAYOUT_TEXT[i].text, &got));
    CHECK(same_layout(&got, &V_LAYOUT_TEXT[i].layout));
  }
  for (j = 0; j < V_LAYOUT_TEXT_INVALID_LEN; j++) {
    idforge_layout untouched = {0}, got = untouched;
    size_t needed = 0;
    CHECK_STATUS(idforge_layout_parse(V_LAYOUT_TEXT_INVALID[j].text, &got),
                 "IDFORGE_STATUS_INVALID_LAYOUT");
    CHECK(same_layout(&got, &untouched));
    CHECK_OK(idforge_last_error(message, sizeof message, &needed));
    CHECK(strncmp(message, "invalid layout: ", 16) == 0);
    CHECK(strcmp(message + 16, V_LAYOUT_TEXT_INVALID[j].message) == 0);
  }
  {
    idforge_layout got;
    CHECK_STATUS(idforge_layout_parse(NULL, &got), "IDFORGE_STATUS_NULL_ARGUMENT");
    CHECK_STATUS(idforge_layout_parse("twitter", NULL), "IDFORGE_STATUS_NULL_ARGUMENT");
    CHECK_STATUS(idforge_layout_parse("tw\xffitter", &got), "IDFORGE_STATUS_INVALID_LAYOUT");
  }
}

static void test_layouts(void) {
  size_t i;
  for (i = 0; i < V_VALID_LAYOUTS_LEN; i++) CHECK_OK(idforge_layout_validate(&V_VALID_LAYOUTS[i].layout));
  for (i = 0; i < V_INVALID_LAYOUTS_LEN; i++) {
    uint64_t id = 12345;
    CHECK_STATUS(idforge_layout_validate(&V_INVALID_LAYOUTS[i].layout), V_INVALID_LAYOUTS[i].error);
    /* Every call that takes a layout validates it, and writes nothing when it fails. */
    CHECK_STATUS(idforge_snowflake_compose(&V_INVALID_LAYOUTS[i].layout, 0, 0, 0, &id),
                 V_INVALID_LAYOUTS[i].error);
    CHECK(id == 12345);
  }
}

static void test_compose_decompose(void) {
  size_t i;
  for (i = 0; i < V_COMPOSE_LEN; i++) {
    const v_compose *v = &V_COMPOSE[i];
    uint64_t id = 0;
    idforge_parts parts;
    CHECK_OK(idforge_snowflake_compose(&v->layout, v->tick, v->node, v->seq, &id));
    CHECK(id == v->id);
    CHECK_OK(idforge_snowflake_decompose(&v->layout, v->id, &parts));
    CHECK(parts.tick == v->tick && parts.node == v->node && parts.seq == v->seq);
    CHECK(parts.time_ms == v->time_ms);
  }
  for (i = 0; i < V_INVALID_COMPOSE_LEN; i++) {
    const v_invalid_compose *v = &V_INVALID_COMPOSE[i];
    uint64_t id = 7;
    CHECK_STATUS(idforge_snowflake_compose(&v->layout, v->tick, v->node, v->seq, &id), v->error);
    CHECK(id == 7);
  }
  for (i = 0; i < V_INVALID_DECOMPOSE_LEN; i++) {
    idforge_parts parts;
    CHECK_STATUS(idforge_snowflake_decompose(&V_INVALID_DECOMPOSE[i].layout, V_INVALID_DECOMPOSE[i].value,
                                             &parts),
                 V_INVALID_DECOMPOSE[i].error);
  }
}

static void test_bounds_at(void) {
  size_t i;
  for (i = 0; i < V_BOUNDS_AT_LEN; i++) {
    uint64_t lo = 0, hi = 0;
    CHECK_OK(idforge_snowflake_bounds_at(&V_BOUNDS_AT[i].layout, V_BOUNDS_AT[i].time_ms, &lo, &hi));
    CHECK(lo == V_BOUNDS_AT[i].min && hi == V_BOUNDS_AT[i].max);
  }
  for (i = 0; i < V_INVALID_BOUNDS_AT_LEN; i++) {
    uint64_t lo = 1, hi = 2;
    CHECK_STATUS(idforge_snowflake_bounds_at(&V_INVALID_BOUNDS_AT[i].layout, V_INVALID_BOUNDS_AT[i].value,
                                             &lo, &hi),
                 V_INVALID_BOUNDS_AT[i].error);
    CHECK(lo == 1 && hi == 2);
  }
}

static void test_generator_new_errors(void) {
  size_t i;
  for (i = 0; i < V_INVALID_GENERATOR_NEW_LEN; i++) {
    idforge_snowflake_config config;
    idforge_snowflake *g = NULL;
    memset(&config, 0, sizeof config);
    config.layout = V_INVALID_GENERATOR_NEW[i].layout;
    config.node = V_INVALID_GENERATOR_NEW[i].node;
    CHECK_STATUS(idforge_snowflake_new(&config, &g), V_INVALID_GENERATOR_NEW[i].error);
    CHECK(g == NULL);
  }
}

/* ---- snowflake generator ------------------------------------------------------------------ */

static void test_snowflake_generator(void) {
  idforge_snowflake *g = NULL;
  idforge_layout layout;
  idforge_parts parts;
  uint64_t a = 0, b = 0, before = now_ms();
  static uint64_t many[100000];
  size_t i;

  CHECK_OK(idforge_snowflake_new_preset(IDFORGE_PRESET_TWITTER, 7, &g));
  if (!g) return;
  CHECK_OK(idforge_snowflake_next(g, &a));
  CHECK_OK(idforge_snowflake_next(g, &b));
  CHECK(b > a);
  CHECK_OK(idforge_snowflake_decode(g, a, &parts));
  CHECK(parts.node == 7);
  CHECK(parts.time_ms + 1000 >= before && parts.time_ms <= now_ms() + 1000);
  CHECK_OK(idforge_snowflake_layout(g, &layout));
  CHECK(same_layout(&layout, &V_PRESETS[0].layout));
  CHECK_OK(idforge_snowflake_next_many(g, many, sizeof many / sizeof many[0]));
  CHECK(many[0] > b);
  for (i = 1; i < sizeof many / sizeof many[0]; i++) CHECK(many[i] > many[i - 1]);
  CHECK_OK(idforge_snowflake_next_many(g, NULL, 0));
  idforge_snowflake_free(g);
  idforge_snowflake_free(NULL);

  {
    idforge_snowflake_config config;
    memset(&config, 0, sizeof config);
    CHECK_OK(idforge_layout_preset(IDFORGE_PRESET_SONYFLAKE, &config.layout));
    config.node = 65535;
    config.policy.kind = IDFORGE_POLICY_KIND_WAIT;
    config.policy.millis = 50;
    g = NULL;
    CHECK_OK(idforge_snowflake_new(&config, &g));
    CHECK_OK(idforge_snowflake_next(g, &a));
    CHECK_OK(idforge_snowflake_decode(g, a, &parts));
    CHECK(parts.node == 65535);
    idforge_snowflake_free(g);
    config.policy.kind = 9;
    g = NULL;
    CHECK_STATUS(idforge_snowflake_new(&config, &g), "IDFORGE_STATUS_INVALID_ARGUMENT");
    CHECK(g == NULL);
  }
}

static void test_state_file(void) {
  char dir[256], path[320];
  idforge_snowflake_config config;
  idforge_snowflake *g = NULL;
  idforge_parts parts;
  uint64_t id = 0;
  make_temp_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/node-7.state", dir);
  memset(&config, 0, sizeof config);
  CHECK_OK(idforge_layout_preset(IDFORGE_PRESET_TWITTER, &config.layout));
  config.node = 7;
  config.state_file = path;
  CHECK_OK(idforge_snowflake_new(&config, &g));
  CHECK_OK(idforge_snowflake_next(g, &id));
  CHECK_OK(idforge_snowflake_decode(g, id, &parts));
  idforge_snowflake_free(g);
  CHECK(access(path, F_OK) == 0);
  remove_tree(dir);
}

struct thread_arg {
  const idforge_snowflake *g;
  uint64_t *out;
  size_t n;
  int failures;
};

static void *generate(void *p) {
  struct thread_arg *arg = (struct thread_arg *)p;
  size_t i;
  for (i = 0; i < arg->n; i++)
    if (idforge_snowflake_next(arg->g, &arg->out[i]) != IDFORGE_STATUS_OK) arg->failures++;
  return NULL;
}

static void test_threads_no_duplicates(void) {
  enum { THREADS = 4, PER_THREAD = 500000 };
  idforge_snowflake *g = NULL;
  uint64_t *ids = (uint64_t *)malloc(sizeof(uint64_t) * THREADS * PER_THREAD);
  pthread_t threads[THREADS];
  struct thread_arg args[THREADS];
  int t;
  CHECK(ids != NULL);
  CHECK_OK(idforge_snowflake_new_preset(IDFORGE_PRESET_TWITTER, 1, &g));
  if (!ids || !g) return;
  for (t = 0; t < THREADS; t++) {
    args[t].g = g;
    args[t].out = ids + (size_t)t * PER_THREAD;
    args[t].n = PER_THREAD;
    args[t].failures = 0;
    CHECK(pthread_create(&threads[t], NULL, generate, &args[t]) == 0);
  }
  for (t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    CHECK(args[t].failures == 0);
  }
  CHECK(duplicates(ids, (size_t)THREADS * PER_THREAD) == 0);
  idforge_snowflake_free(g);
  free(ids);
}

/* ---- ObjectId ----------------------------------------------------------------------------- */

static void test_objectid(void) {
  uint8_t a[IDFORGE_OBJECTID_LEN], b[IDFORGE_OBJECTID_LEN], back[IDFORGE_OBJECTID_LEN];
  char hex[IDFORGE_OBJECTID_HEX_LEN + 1], small[IDFORGE_OBJECTID_HEX_LEN];
  uint32_t seconds = 0;
  time_t now = time(NULL);
  size_t i;

  CHECK_OK(idforge_objectid_generate(a));
  CHECK_OK(idforge_objectid_generate(b));
  CHECK(memcmp(a, b, sizeof a) != 0);
  CHECK(memcmp(a + 4, b + 4, 5) == 0); /* one process: the same 5 random bytes */
  CHECK_OK(idforge_objectid_timestamp(a, &seconds));
  CHECK((time_t)seconds >= now - 2 && (time_t)seconds <= now + 2);
  CHECK_OK(idforge_objectid_to_hex(a, hex, sizeof hex));
  CHECK(strlen(hex) == IDFORGE_OBJECTID_HEX_LEN);
  CHECK_OK(idforge_objectid_from_hex(hex, back));
  CHECK(memcmp(a, back, sizeof a) == 0);
  memset(small, 'x', sizeof small);
  CHECK_STATUS(idforge_objectid_to_hex(a, small, sizeof small), "IDFORGE_STATUS_BUFFER_TOO_SMALL");
  CHECK(small[0] == 'x');

  for (i = 0; i < V_OID_TIMESTAMPS_LEN; i++) {
    CHECK_OK(idforge_objectid_from_hex(V_OID_TIMESTAMPS[i].hex, back));
    CHECK_OK(idforge_objectid_timestamp(back, &seconds));
    CHECK(seconds == V_OID_TIMESTAMPS[i].seconds);
  }
  for (i = 0; i < V_OID_PARSE_LEN; i++) {
    CHECK_OK(idforge_objectid_from_hex(V_OID_PARSE[i].input, back));
    CHECK_OK(idforge_objectid_to_hex(back, hex, sizeof hex));
    CHECK(strcmp(hex, V_OID_PARSE[i].hex) == 0);
  }
  for (i = 0; i < V_OID_INVALID_HEX_LEN; i++) {
    memset(back, 0xAA, sizeof back);
    CHECK_STATUS(idforge_objectid_from_hex(V_OID_INVALID_HEX[i].input, back), V_OID_INVALID_HEX[i].error);
    CHECK(back[0] == 0xAA && back[11] == 0xAA);
  }
}

/* ---- flake-128 ---------------------------------------------------------------------------- */

static void test_flake128_vectors(void) {
  size_t i;
  uint8_t id[IDFORGE_FLAKE128_LEN], back[IDFORGE_FLAKE128_LEN];
  char text[IDFORGE_FLAKE128_HEX_LEN + 1], b62[IDFORGE_FLAKE128_BASE62_LEN + 1];
  idforge_flake128_parts parts;
  for (i = 0; i < V_FLAKE_PARTS_LEN; i++) {
    const v_flake_parts *v = &V_FLAKE_PARTS[i];
    CHECK_OK(idforge_flake128_compose(v->time_ms, v->worker, v->seq, id));
    hex_of(id, sizeof id, text);
    CHECK(strcmp(text, v->bytes_hex) == 0);
    CHECK_OK(idforge_flake128_to_hex(id, text, sizeof text));
    CHECK(strcmp(text, v->hex) == 0);
    CHECK_OK(idforge_flake128_to_base62(id, b62, sizeof b62));
    CHECK(strcmp(b62, v->base62) == 0);
    CHECK_OK(idforge_flake128_from_base62(v->base62, back));
    CHECK(memcmp(id, back, sizeof id) == 0);
    CHECK_OK(idforge_flake128_from_hex(v->hex, back));
    CHECK(memcmp(id, back, sizeof id) == 0);
    CHECK_OK(idforge_flake128_decompose(id, &parts));
    CHECK(parts.time_ms == v->time_ms && parts.worker == v->worker && parts.seq == v->seq);
  }
  for (i = 0; i < V_FLAKE_BOUNDARY_LEN; i++) {
    const v_flake_boundary *v = &V_FLAKE_BOUNDARY[i];
    CHECK_OK(idforge_flake128_from_base62(v->input, id));
    CHECK_OK(idforge_flake128_decompose(id, &parts));
    CHECK(parts.time_ms == v->time_ms && parts.worker == v->worker && parts.seq == v->seq);
    CHECK_OK(idforge_flake128_to_base62(id, b62, sizeof b62));
    CHECK(strcmp(b62, v->base62) == 0);
  }
  for (i = 0; i < V_FLAKE_INVALID_BASE62_LEN; i++)
    CHECK_STATUS(idforge_flake128_from_base62(V_FLAKE_INVALID_BASE62[i].input, id), V_FLAKE_INVALID_BASE62[i].error);
  for (i = 0; i < V_FLAKE_INVALID_HEX_LEN; i++)
    CHECK_STATUS(idforge_flake128_from_hex(V_FLAKE_INVALID_HEX[i].input, id), V_FLAKE_INVALID_HEX[i].error);
  for (i = 0; i < V_FLAKE_INVALID_PARTS_LEN; i++) {
    const v_flake_invalid_parts *v = &V_FLAKE_INVALID_PARTS[i];
    CHECK_STATUS(idforge_flake128_compose(v->time_ms, v->worker, v->seq, id), v->error);
  }
}

/* The text forms of 64-bit ids (id_text.json): each form both ways, accepted spellings, and
 * refusals that leave the output untouched. */
static void test_id_text_vectors(void) {
  size_t i;
  char text[IDFORGE_ID_TEXT_MAX_LEN + 1], small[13];
  uint64_t id = 0;
  for (i = 0; i < V_ID_TEXT_LEN; i++) {
    const v_id_text *v = &V_ID_TEXT[i];
    const char *want[3];
    uint32_t form;
    want[IDFORGE_TEXT_FORM_DECIMAL] = v->decimal;
    want[IDFORGE_TEXT_FORM_BASE32] = v->base32;
    want[IDFORGE_TEXT_FORM_BASE62] = v->base62;
    for (form = 0; form < 3; form++) {
      CHECK_OK(idforge_id_to_text(v->id, form, text, sizeof text));
      CHECK(strcmp(text, want[form]) == 0);
      id = 0;
      CHECK_OK(idforge_id_from_text(want[form], form, &id));
      CHECK(id == v->id);
    }
  }
  for (i = 0; i < V_ID_TEXT_PARSE_LEN; i++) {
    CHECK_OK(idforge_id_from_text(V_ID_TEXT_PARSE[i].text, V_ID_TEXT_PARSE[i].form, &id));
    CHECK(id == V_ID_TEXT_PARSE[i].id);
  }
  for (i = 0; i < V_ID_TEXT_REFUSE_LEN; i++) {
    id = 42;
    CHECK_STATUS(idforge_id_from_text(V_ID_TEXT_REFUSE[i].text, V_ID_TEXT_REFUSE[i].form, &id),
                 V_ID_TEXT_REFUSE[i].error);
    CHECK(id == 42);
  }
  /* 13 base32 characters and the NUL need 14 bytes; nothing is written to 13. */
  memset(small, 'x', sizeof small);
  CHECK_STATUS(idforge_id_to_text(1, IDFORGE_TEXT_FORM_BASE32, small, sizeof small),
               "IDFORGE_STATUS_BUFFER_TOO_SMALL");
  CHECK(small[0] == 'x');
  CHECK_STATUS(idforge_id_to_text(1, 3, text, sizeof text), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_id_from_text("1", 3, &id), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_id_from_text(NULL, IDFORGE_TEXT_FORM_DECIMAL, &id), "IDFORGE_STATUS_NULL_ARGUMENT");
  CHECK_STATUS(idforge_id_from_text("1", IDFORGE_TEXT_FORM_DECIMAL, NULL), "IDFORGE_STATUS_NULL_ARGUMENT");
}

/* Any id's fields as JSON: detected or named kinds, a layout, and refusals that write
 * nothing. */
static void test_describe_id(void) {
  char json[IDFORGE_DESCRIBE_MAX_LEN + 1], small[40];
  idforge_layout discord;
  CHECK_OK(idforge_describe_id("1700000000000000000", IDFORGE_ID_KIND_ANY, NULL, json, sizeof json));
  CHECK(strncmp(json, "{\"type\":\"snowflake\",\"layout\":\"twitter\",\"id\":\"1700000000000000000\"", 64) == 0);
  CHECK(strstr(json, "\"time\":\"2023-09-08T04:15:59.129Z\"") != NULL);
  CHECK_OK(idforge_layout_preset(IDFORGE_PRESET_DISCORD, &discord));
  CHECK_OK(idforge_describe_id("1700000000000000000", IDFORGE_ID_KIND_SNOWFLAKE, &discord, json, sizeof json));
  CHECK(strstr(json, "\"layout\":\"discord\"") != NULL);
  CHECK_OK(idforge_describe_id("ffffffff0000000000000000", IDFORGE_ID_KIND_ANY, NULL, json, sizeof json));
  CHECK(strcmp(json, "{\"type\":\"objectid\",\"id\":\"ffffffff0000000000000000\","
                     "\"time\":\"2106-02-07T06:28:15Z\",\"timestamp\":4294967295}") == 0);
  CHECK_OK(idforge_describe_id("123", IDFORGE_ID_KIND_FLAKE128, NULL, json, sizeof json));
  CHECK(strncmp(json, "{\"type\":\"flake128\"", 18) == 0);
  memset(small, 'x', sizeof small);
  CHECK_STATUS(idforge_describe_id("1", IDFORGE_ID_KIND_ANY, NULL, small, sizeof small),
               "IDFORGE_STATUS_BUFFER_TOO_SMALL");
  CHECK(small[0] == 'x');
  CHECK_STATUS(idforge_describe_id("nope", IDFORGE_ID_KIND_ANY, NULL, json, sizeof json),
               "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_describe_id("12a", IDFORGE_ID_KIND_SNOWFLAKE, NULL, json, sizeof json),
               "IDFORGE_STATUS_INVALID_DECIMAL");
  /* id_text.json's describe_errors: a snowflake's one text only ("007" is not 7). */
  for (size_t i = 0; i < V_DESCRIBE_REFUSE_LEN; i++) {
    CHECK_STATUS(idforge_describe_id(V_DESCRIBE_REFUSE[i].text, V_DESCRIBE_REFUSE[i].kind, NULL, json, sizeof json),
                 V_DESCRIBE_REFUSE[i].error);
  }
  CHECK_STATUS(idforge_describe_id("1", 6, NULL, json, sizeof json), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_describe_id("\xff\xfe", IDFORGE_ID_KIND_ANY, NULL, json, sizeof json),
               "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_describe_id(NULL, IDFORGE_ID_KIND_ANY, NULL, json, sizeof json),
               "IDFORGE_STATUS_NULL_ARGUMENT");
  CHECK_STATUS(idforge_describe_id("1", IDFORGE_ID_KIND_ANY, NULL, NULL, 0), "IDFORGE_STATUS_NULL_ARGUMENT");
}

static void test_flake128_generator(void) {
  idforge_flake128 *g = NULL;
  uint8_t a[16], b[16];
  uint64_t worker = 0;
  idforge_flake128_parts parts;
  CHECK_OK(idforge_flake128_new(IDFORGE_WORKER_KIND_FIXED, 0xABCDEF, &g));
  if (!g) return;
  CHECK_OK(idforge_flake128_worker(g, &worker));
  CHECK(worker == 0xABCDEF);
  CHECK_OK(idforge_flake128_next(g, a));
  CHECK_OK(idforge_flake128_next(g, b));
  CHECK(memcmp(a, b, 16) < 0);
  CHECK_OK(idforge_flake128_decompose(a, &parts));
  CHECK(parts.worker == 0xABCDEF);
  idforge_flake128_free(g);
  g = NULL;
  CHECK_OK(idforge_flake128_new(IDFORGE_WORKER_KIND_RANDOM, 0, &g));
  CHECK_OK(idforge_flake128_next(g, a));
  idforge_flake128_free(g);
  g = NULL;
  CHECK_STATUS(idforge_flake128_new(IDFORGE_WORKER_KIND_FIXED, UINT64_C(1) << 48, &g),
               "IDFORGE_STATUS_NODE_OUT_OF_RANGE");
  CHECK_STATUS(idforge_flake128_new(7, 0, &g), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK(g == NULL);
}

/* ---- segments ----------------------------------------------------------------------------- */

static void test_segments_memory(void) {
  idforge_segments *s = NULL;
  idforge_segment_options opts;
  idforge_segment_stats stats;
  static uint64_t ids[5000];
  uint64_t one = 0;
  size_t i;
  memset(&opts, 0, sizeof opts);
  opts.step = 100;
  opts.fixed_step = true;
  CHECK_OK(idforge_segments_new("memory:", "orders", &opts, &s));
  if (!s) return;
  CHECK_OK(idforge_segments_next(s, &one));
  CHECK(one == 1);
  CHECK_OK(idforge_segments_next_many(s, ids, sizeof ids / sizeof ids[0]));
  CHECK(ids[0] == 2);
  for (i = 1; i < sizeof ids / sizeof ids[0]; i++) CHECK(ids[i] == ids[i - 1] + 1);
  CHECK_OK(idforge_segments_stats(s, &stats));
  CHECK(stats.ranges_fetched >= 50 && stats.step == 100);
  idforge_segments_free(s);
  idforge_segments_free(NULL);
  s = NULL;
  CHECK_OK(idforge_segments_new("memory:", "defaults", NULL, &s));
  CHECK_OK(idforge_segments_next(s, &one));
  idforge_segments_free(s);
}

static int same_segment_options(const idforge_segment_options *a, const idforge_segment_options *b) {
  return a->step == b->step && a->max_step == b->max_step && a->fixed_step == b->fixed_step &&
         a->target_ms == b->target_ms && a->prefetch_pct == b->prefetch_pct &&
         a->timeout_ms == b->timeout_ms;
}

/* The shared vectors of segment_options.json (the rows C can pass), then C's own spelling of
 * "not given": a zero-filled struct and NULL are the defaults. */
static void test_segment_options(void) {
  char message[256];
  size_t i, needed = 0;
  for (i = 0; i < V_SEGMENT_OPTIONS_LEN; i++) {
    idforge_segments *s = NULL;
    idforge_segment_options got;
    CHECK_OK(idforge_segments_new("memory:", "t", &V_SEGMENT_OPTIONS[i].given, &s));
    if (!s) continue;
    CHECK_OK(idforge_segments_options(s, &got));
    CHECK(same_segment_options(&got, &V_SEGMENT_OPTIONS[i].resolved));
    idforge_segments_free(s);
  }
  for (i = 0; i < V_SEGMENT_OPTIONS_INVALID_LEN; i++) {
    idforge_segments *s = NULL;
    CHECK_STATUS(idforge_segments_new("memory:", "t", &V_SEGMENT_OPTIONS_INVALID[i].given, &s),
                 V_SEGMENT_OPTIONS_INVALID[i].error);
    CHECK(s == NULL);
    CHECK_OK(idforge_last_error(message, sizeof message, &needed));
    CHECK(strncmp(message, "invalid argument: ", 18) == 0);
    CHECK(strcmp(message + 18, V_SEGMENT_OPTIONS_INVALID[i].message) == 0);
  }
  {
    idforge_segments *zeros = NULL, *null = NULL;
    idforge_segment_options none, a, b;
    memset(&none, 0, sizeof none);
    CHECK_OK(idforge_segments_new("memory:", "t", &none, &zeros));
    CHECK_OK(idforge_segments_new("memory:", "t", NULL, &null));
    if (!zeros || !null) return;
    CHECK_OK(idforge_segments_options(zeros, &a));
    CHECK_OK(idforge_segments_options(null, &b));
    /* Row 0 gives nothing. */
    CHECK(same_segment_options(&a, &V_SEGMENT_OPTIONS[0].resolved));
    CHECK(same_segment_options(&b, &V_SEGMENT_OPTIONS[0].resolved));
    idforge_segments_free(zeros);
    idforge_segments_free(null);
  }
}

static void test_segments_file_shared(void) {
  char dir[256], url[320];
  idforge_segments *a = NULL, *b = NULL;
  static uint64_t ids[4000];
  idforge_segment_options opts;
  size_t i;
  make_temp_dir(dir, sizeof dir);
  snprintf(url, sizeof url, "file://%s", dir);
  memset(&opts, 0, sizeof opts);
  opts.step = 50;
  opts.fixed_step = true;
  CHECK_OK(idforge_segments_new(url, "t", &opts, &a));
  CHECK_OK(idforge_segments_new(url, "t", &opts, &b));
  if (a && b) {
    for (i = 0; i < 2000; i++) {
      CHECK_OK(idforge_segments_next(a, &ids[2 * i]));
      CHECK_OK(idforge_segments_next(b, &ids[2 * i + 1]));
    }
    CHECK(duplicates(ids, 4000) == 0);
  }
  idforge_segments_free(a);
  idforge_segments_free(b);
  remove_tree(dir);
}

/* ---- fork --------------------------------------------------------------------------------- */

#ifndef _WIN32
static void test_fork(void) {
  idforge_snowflake *g = NULL;
  uint8_t parent_oid[12], child_oid[12];
  uint64_t id;
  int fds[2], status = 0;
  pid_t pid;
  CHECK_OK(idforge_snowflake_new_preset(IDFORGE_PRESET_TWITTER, 3, &g));
  CHECK_OK(idforge_snowflake_next(g, &id));
  CHECK_OK(idforge_objectid_generate(parent_oid));
  CHECK(pipe(fds) == 0);
  pid = fork();
  if (pid == 0) {
    /* Child: the fixed-node snowflake refuses; ObjectIds carry new process bytes. */
    uint8_t result = 0;
    uint8_t oid[12];
    if (idforge_snowflake_next(g, &id) == IDFORGE_STATUS_FORKED) result |= 1;
    if (idforge_objectid_generate(oid) == IDFORGE_STATUS_OK) result |= 2;
    if (write(fds[1], &result, 1) != 1 || write(fds[1], oid, 12) != 12) _exit(3);
    _exit(0);
  }
  CHECK(pid > 0);
  close(fds[1]);
  {
    uint8_t result = 0;
    CHECK(read(fds[0], &result, 1) == 1);
    CHECK(read(fds[0], child_oid, 12) == 12);
    CHECK(result == 3);
    CHECK(memcmp(parent_oid + 4, child_oid + 4, 5) != 0);
  }
  close(fds[0]);
  /* The child's results came through the pipe; its exit code is not read: under valgrind it
   * is valgrind's own (99) when the child holds memory that only the parent's other threads
   * (the ObjectId seconds thread) pointed to, which valgrind counts as lost after a fork. */
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
  CHECK_OK(idforge_snowflake_next(g, &id)); /* the parent goes on */
  idforge_snowflake_free(g);
}
#endif

int main(void) {
  RUN(test_presets);
  RUN(test_preset_names);
  RUN(test_layout_text);
  RUN(test_layouts);
  RUN(test_compose_decompose);
  RUN(test_bounds_at);
  RUN(test_generator_new_errors);
  RUN(test_snowflake_generator);
  RUN(test_state_file);
  RUN(test_threads_no_duplicates);
  RUN(test_objectid);
  RUN(test_flake128_vectors);
  RUN(test_id_text_vectors);
  RUN(test_describe_id);
  RUN(test_flake128_generator);
  /* Before the segment tests: a freed Segments' refill thread may still finish a fetch, and a
   * fork meanwhile copies memory only that thread pointed to, which valgrind then counts as
   * leaked in the child (its exit status 99). */
#ifndef _WIN32
  RUN(test_fork);
#endif
  RUN(test_segments_memory);
  RUN(test_segment_options);
  RUN(test_segments_file_shared);
  return SUMMARY();
}
