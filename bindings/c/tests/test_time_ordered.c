/* C tests of the 128-bit time-ordered ids (UUIDv7, ULID) and of snowflakes with a random
 * sequence start: the shared vectors (uuid7.json, ulid.json: fields, parse, refuse; the `stamp`
 * rows need the generator's inputs, which the C API does not take), generators from threads,
 * across a restart with the clock set back, across fork(), and every error path. Built by
 * bindings/c/tests/run.sh like test_idforge.c. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "idforge.h"
#include "vectors.h"

#define OK "IDFORGE_STATUS_OK"
#define INVALID_UUID "IDFORGE_STATUS_INVALID_UUID"

static void unhex(const char *hex, uint8_t *out) {
  size_t i, n = strlen(hex) / 2;
  for (i = 0; i < n; i++) {
    unsigned v = 0;
    sscanf(hex + 2 * i, "%2x", &v);
    out[i] = (uint8_t)v;
  }
}

static void temp_path(char *dir, size_t dlen, char *path, size_t plen, const char *name) {
  snprintf(dir, dlen, "/tmp/idforge-ctest-XXXXXX");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    exit(2);
  }
  snprintf(path, plen, "%s/%s", dir, name);
}

/* Removes the state file at `path`, the lock file its generators take beside it, and `dir`. */
static void remove_dir(const char *dir, const char *path) {
  char lock[160];
  snprintf(lock, sizeof lock, "%s.lock", path);
  unlink(path);
  unlink(lock);
  rmdir(dir);
}

/* Whether the `n` ids of 16 bytes at `ids` strictly increase. */
static int increasing(const uint8_t *ids, size_t n) {
  size_t i;
  for (i = 1; i < n; i++)
    if (memcmp(ids + 16 * (i - 1), ids + 16 * i, 16) >= 0) return 0;
  return 1;
}

static int cmp16(const void *a, const void *b) { return memcmp(a, b, 16); }

/* Sorts the `n` ids of 16 bytes at `ids` and counts the values that repeat. */
static size_t duplicates16(uint8_t *ids, size_t n) {
  size_t i, dups = 0;
  qsort(ids, n, 16, cmp16);
  for (i = 1; i < n; i++) dups += memcmp(ids + 16 * (i - 1), ids + 16 * i, 16) == 0;
  return dups;
}

/* ---- shared vectors ----------------------------------------------------------------------- */

static void test_uuid7_vectors(void) {
  size_t i;
  uint8_t id[IDFORGE_UUID7_LEN], back[IDFORGE_UUID7_LEN];
  char text[IDFORGE_UUID7_TEXT_LEN + 1], hex[33], ulid[IDFORGE_ULID_TEXT_LEN + 1];
  idforge_uuid7_parts parts;
  uint64_t ms = 0;
  for (i = 0; i < V_UUID7_FIELDS_LEN; i++) {
    const v_uuid7_fields *v = &V_UUID7_FIELDS[i];
    CHECK_OK(idforge_uuid7_compose(v->time_ms, v->rand_a, v->rand_b, id));
    hex_of(id, sizeof id, hex);
    CHECK(strcmp(hex, v->bytes_hex) == 0);
    CHECK_OK(idforge_uuid7_validate(id));
    CHECK_OK(idforge_uuid7_to_text(id, text, sizeof text));
    CHECK(strcmp(text, v->text) == 0);
    CHECK_OK(idforge_uuid7_to_ulid_text(id, ulid, sizeof ulid));
    CHECK(strcmp(ulid, v->ulid) == 0);
    CHECK_OK(idforge_uuid7_parse(v->text, back));
    CHECK(memcmp(id, back, sizeof id) == 0);
    CHECK_OK(idforge_uuid7_from_ulid_text(v->ulid, back));
    CHECK(memcmp(id, back, sizeof id) == 0);
    /* The same bits as a ULID: the same text and millisecond. */
    CHECK_OK(idforge_ulid_to_text(id, ulid, sizeof ulid));
    CHECK(strcmp(ulid, v->ulid) == 0);
    CHECK_OK(idforge_uuid7_time(id, &ms));
    CHECK(ms == v->time_ms);
    CHECK_OK(idforge_ulid_time(id, &ms));
    CHECK(ms == v->time_ms);
    CHECK_OK(idforge_uuid7_decompose(id, &parts));
    CHECK(parts.time_ms == v->time_ms && parts.rand_a == v->rand_a && parts.rand_b == v->rand_b);
  }
  for (i = 0; i < V_UUID7_PARSE_LEN; i++) {
    CHECK_OK(idforge_uuid7_parse(V_UUID7_PARSE[i].input, id));
    CHECK_OK(idforge_uuid7_to_text(id, text, sizeof text));
    CHECK(strcmp(text, V_UUID7_PARSE[i].hex) == 0);
  }
  for (i = 0; i < V_UUID7_REFUSE_LEN; i++) {
    memset(id, 0xAA, sizeof id);
    CHECK_STATUS(idforge_uuid7_parse(V_UUID7_REFUSE[i].input, id), V_UUID7_REFUSE[i].error);
    CHECK(id[0] == 0xAA && id[15] == 0xAA);
  }
}

static void test_ulid_vectors(void) {
  size_t i;
  uint8_t id[IDFORGE_ULID_LEN], back[IDFORGE_ULID_LEN], random[IDFORGE_ULID_RANDOM_LEN];
  char text[IDFORGE_ULID_TEXT_LEN + 1], hex[33];
  uint64_t ms = 0;
  for (i = 0; i < V_ULID_FIELDS_LEN; i++) {
    const v_ulid_fields *v = &V_ULID_FIELDS[i];
    unhex(v->random_hex, random);
    CHECK_OK(idforge_ulid_compose(v->time_ms, random, id));
    hex_of(id, sizeof id, hex);
    CHECK(strcmp(hex, v->bytes_hex) == 0);
    CHECK_OK(idforge_ulid_to_text(id, text, sizeof text));
    CHECK(strcmp(text, v->text) == 0);
    CHECK_OK(idforge_ulid_parse(v->text, back));
    CHECK(memcmp(id, back, sizeof id) == 0);
    CHECK_OK(idforge_ulid_time(id, &ms));
    CHECK(ms == v->time_ms);
  }
  for (i = 0; i < V_ULID_PARSE_LEN; i++) {
    CHECK_OK(idforge_ulid_parse(V_ULID_PARSE[i].input, id));
    CHECK_OK(idforge_ulid_to_text(id, text, sizeof text));
    CHECK(strcmp(text, V_ULID_PARSE[i].hex) == 0);
  }
  for (i = 0; i < V_ULID_REFUSE_LEN; i++) {
    memset(id, 0xAA, sizeof id);
    CHECK_STATUS(idforge_ulid_parse(V_ULID_REFUSE[i].input, id), V_ULID_REFUSE[i].error);
    CHECK(id[0] == 0xAA && id[15] == 0xAA);
  }
}

/* ---- generators --------------------------------------------------------------------------- */

static void test_uuid7_generator(void) {
  enum { N = 100000 };
  idforge_uuid7 *g = NULL;
  uint8_t a[16], b[16];
  uint8_t *many = (uint8_t *)malloc(16 * (size_t)N);
  char text_a[IDFORGE_UUID7_TEXT_LEN + 1], text_b[IDFORGE_UUID7_TEXT_LEN + 1];
  uint64_t ms = 0, before = now_ms();
  CHECK_OK(idforge_uuid7_new(&g));
  if (!g || !many) return;
  CHECK_OK(idforge_uuid7_next(g, a));
  CHECK_OK(idforge_uuid7_next(g, b));
  CHECK(memcmp(a, b, 16) < 0);
  CHECK((a[6] >> 4) == 7 && (a[8] >> 6) == 2); /* version 7, variant 0b10 */
  CHECK_OK(idforge_uuid7_time(b, &ms));
  /* The coarse clock may trail by a kernel tick; a borrowed millisecond may lead by a little. */
  CHECK(ms + 1000 >= before && ms <= now_ms() + 1000);
  CHECK_OK(idforge_uuid7_to_text(a, text_a, sizeof text_a));
  CHECK_OK(idforge_uuid7_to_text(b, text_b, sizeof text_b));
  CHECK(strcmp(text_a, text_b) < 0); /* text sorts like the bytes */
  CHECK_OK(idforge_uuid7_next_many(g, many, N));
  CHECK(memcmp(many, b, 16) > 0);
  CHECK(increasing(many, N));
  CHECK_OK(idforge_uuid7_next_many(g, NULL, 0));
  /* A count whose byte size overflows size_t is refused before anything is written. */
  CHECK_STATUS(idforge_uuid7_next_many(g, many, SIZE_MAX / 8), "IDFORGE_STATUS_INVALID_ARGUMENT");
  idforge_uuid7_free(g);
  idforge_uuid7_free(NULL);
  free(many);
}

static void test_ulid_generator(void) {
  enum { N = 10000 };
  idforge_ulid *g = NULL;
  idforge_policy wait = {IDFORGE_POLICY_KIND_WAIT, 50};
  uint8_t a[16], many[16 * N];
  char prev[IDFORGE_ULID_TEXT_LEN + 1], text[IDFORGE_ULID_TEXT_LEN + 1];
  uint64_t ms = 0, before = now_ms();
  size_t i;
  CHECK_OK(idforge_ulid_new_with_policy(&wait, NULL, &g));
  if (!g) return;
  CHECK_OK(idforge_ulid_next(g, a));
  CHECK_OK(idforge_ulid_time(a, &ms));
  CHECK(ms + 1000 >= before && ms <= now_ms() + 1000); /* the clock follows the monotonic one */
  CHECK_OK(idforge_ulid_to_text(a, prev, sizeof prev));
  CHECK_OK(idforge_ulid_next_many(g, many, N));
  CHECK(memcmp(many, a, 16) > 0 && increasing(many, N));
  for (i = 0; i < N; i++) { /* the text of the spec's monotonic mode sorts too */
    CHECK_OK(idforge_ulid_to_text(many + 16 * i, text, sizeof text));
    CHECK(strlen(text) == IDFORGE_ULID_TEXT_LEN && strcmp(prev, text) < 0);
    memcpy(prev, text, sizeof text);
  }
  idforge_ulid_free(g);
  g = NULL;
  CHECK_OK(idforge_ulid_new(&g));
  CHECK_OK(idforge_ulid_next(g, a));
  idforge_ulid_free(g);
  idforge_ulid_free(NULL);
}

/* A state file one hour ahead of the clock, as after the clock was set back across a restart:
 * the ids still come after it (within a 2 h lead), or the generator refuses (no lead). */
static void test_state_file_clock_set_back(void) {
  char dir[64], path[128];
  FILE *f;
  uint64_t held = now_ms() + 3600u * 1000u, ms = 0;
  idforge_policy lead = {IDFORGE_POLICY_KIND_BORROW, 7200u * 1000u};
  idforge_policy none = {IDFORGE_POLICY_KIND_ERROR, 0};
  idforge_uuid7 *u = NULL;
  idforge_ulid *l = NULL;
  uint8_t id[16], first[16];
  temp_path(dir, sizeof dir, path, sizeof path, "uuid7.state");

  CHECK_OK(idforge_uuid7_new_with_state_file(path, &u));
  CHECK_OK(idforge_uuid7_next(u, first));
  idforge_uuid7_free(u);
  u = NULL;
  CHECK(access(path, F_OK) == 0);

  f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fprintf(f, "idforge-high-water-ms v1\n%" PRIu64 "\n", held);
  fclose(f);
  CHECK_OK(idforge_uuid7_new_with_policy(&none, path, &u));
  CHECK_STATUS(idforge_uuid7_next(u, id), "IDFORGE_STATUS_CLOCK_BEHIND");
  idforge_uuid7_free(u);
  u = NULL;
  CHECK_OK(idforge_uuid7_new_with_policy(&lead, path, &u));
  CHECK_OK(idforge_uuid7_next(u, id));
  CHECK_OK(idforge_uuid7_time(id, &ms));
  CHECK(ms > held && memcmp(id, first, 16) > 0);
  idforge_uuid7_free(u);

  /* ULIDs keep their file the same way. */
  CHECK_OK(idforge_ulid_new_with_policy(&lead, path, &l));
  CHECK_OK(idforge_ulid_next(l, id));
  CHECK_OK(idforge_ulid_time(id, &ms));
  CHECK(ms > held);
  idforge_ulid_free(l);
  l = NULL;
  CHECK_STATUS(idforge_ulid_new_with_state_file("/nonexistent-idforge-dir/state", &l), "IDFORGE_STATUS_IO");
  CHECK(l == NULL);
  remove_dir(dir, path);
}

struct uuid_thread {
  const idforge_uuid7 *g;
  uint8_t *out;
  size_t n;
  int failures, out_of_order;
};

static void *draw_uuid7s(void *p) {
  struct uuid_thread *arg = (struct uuid_thread *)p;
  size_t i;
  for (i = 0; i < arg->n; i++) {
    if (idforge_uuid7_next(arg->g, arg->out + 16 * i) != IDFORGE_STATUS_OK) arg->failures++;
    if (i > 0 && memcmp(arg->out + 16 * (i - 1), arg->out + 16 * i, 16) >= 0) arg->out_of_order++;
  }
  return NULL;
}

static void test_uuid7_threads(void) {
  enum { THREADS = 4, PER_THREAD = 100000 };
  idforge_uuid7 *g = NULL;
  uint8_t *ids = (uint8_t *)malloc(16 * (size_t)THREADS * PER_THREAD);
  pthread_t threads[THREADS];
  struct uuid_thread args[THREADS];
  int t;
  CHECK(ids != NULL);
  CHECK_OK(idforge_uuid7_new(&g));
  if (!ids || !g) return;
  for (t = 0; t < THREADS; t++) {
    args[t].g = g;
    args[t].out = ids + 16 * (size_t)t * PER_THREAD;
    args[t].n = PER_THREAD;
    args[t].failures = args[t].out_of_order = 0;
    CHECK(pthread_create(&threads[t], NULL, draw_uuid7s, &args[t]) == 0);
  }
  for (t = 0; t < THREADS; t++) {
    pthread_join(threads[t], NULL);
    CHECK(args[t].failures == 0 && args[t].out_of_order == 0);
  }
  CHECK(duplicates16(ids, (size_t)THREADS * PER_THREAD) == 0);
  idforge_uuid7_free(g);
  free(ids);
}

/* A forked child draws its own random bits: its ids are never the parent's. One with a state
 * file refuses in the child (the file is the parent's). */
static void test_uuid7_fork(void) {
  enum { N = 1000 };
  idforge_uuid7 *g = NULL, *kept = NULL;
  char dir[64], path[128];
  uint8_t ids[16 * 2 * N];
  int fds[2];
  pid_t pid;
  temp_path(dir, sizeof dir, path, sizeof path, "kept.state");
  CHECK_OK(idforge_uuid7_new(&g));
  CHECK_OK(idforge_uuid7_new_with_state_file(path, &kept));
  if (!g || !kept) return;
  CHECK_OK(idforge_uuid7_next(g, ids));
  CHECK(pipe(fds) == 0);
  pid = fork();
  if (pid == 0) {
    uint8_t child[16 * N + 1], one[16];
    child[16 * N] = idforge_uuid7_next(kept, one) == IDFORGE_STATUS_FORKED;
    if (idforge_uuid7_next_many(g, child, N) != IDFORGE_STATUS_OK) child[16 * N] = 0;
    _exit(write(fds[1], child, sizeof child) == (ssize_t)sizeof child ? 0 : 1);
  }
  CHECK(pid > 0);
  close(fds[1]);
  {
    uint8_t child[16 * N + 1];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof child && (r = read(fds[0], child + got, sizeof child - got)) > 0) got += (size_t)r;
    CHECK(got == sizeof child && child[16 * N] == 1);
    CHECK_OK(idforge_uuid7_next_many(g, ids, N));
    memcpy(ids + 16 * N, child, 16 * N);
    CHECK(duplicates16(ids, 2 * N) == 0);
  }
  close(fds[0]);
  CHECK(waitpid(pid, NULL, 0) == pid);
  CHECK_OK(idforge_uuid7_next(kept, ids)); /* the parent goes on */
  idforge_uuid7_free(g);
  idforge_uuid7_free(kept);
  remove_dir(dir, path);
}

/* ---- snowflakes with a random sequence start ---------------------------------------------- */

/* The sequence of `n` ids made about 1 ms apart (a low rate: each its tick's first). */
static void sequences_at_low_rate(idforge_snowflake *g, uint64_t *seqs, size_t n, int *failures) {
  struct timespec pause = {0, 1100 * 1000};
  idforge_parts parts;
  uint64_t id;
  size_t i;
  memset(&parts, 0, sizeof parts);
  for (i = 0; i < n; i++) {
    nanosleep(&pause, NULL);
    if (idforge_snowflake_next(g, &id) != IDFORGE_STATUS_OK ||
        idforge_snowflake_decode(g, id, &parts) != IDFORGE_STATUS_OK)
      (*failures)++;
    seqs[i] = parts.seq;
  }
}

static void test_snowflake_random_start(void) {
  enum { N = 200 };
  idforge_snowflake_config config;
  idforge_snowflake *g = NULL;
  uint64_t seqs[N];
  bool random_start = true;
  size_t i, zeros = 0, low_half = 0;
  int failures = 0;
  memset(&config, 0, sizeof config);
  CHECK_OK(idforge_layout_preset(IDFORGE_PRESET_TWITTER, &config.layout));
  config.node = 9;
  /* Never ahead of the clock, so ids read the precise clock (not the coarse one a lead uses,
   * whose kernel tick would put several ids in one millisecond). */
  config.policy.kind = IDFORGE_POLICY_KIND_WAIT;
  config.policy.millis = 50;

  CHECK_OK(idforge_snowflake_new_with_flags(&config, 0, &g));
  CHECK_OK(idforge_snowflake_random_start(g, &random_start));
  CHECK(!random_start);
  sequences_at_low_rate(g, seqs, N, &failures);
  for (i = 0; i < N; i++) zeros += seqs[i] == 0;
  CHECK(zeros >= N * 9 / 10); /* the default: a tick's first id ends in sequence 0 */
  idforge_snowflake_free(g);

  g = NULL;
  CHECK_OK(idforge_snowflake_new_with_flags(&config, IDFORGE_SNOWFLAKE_FLAG_RANDOM_START, &g));
  if (!g) return;
  CHECK_OK(idforge_snowflake_random_start(g, &random_start));
  CHECK(random_start);
  sequences_at_low_rate(g, seqs, N, &failures);
  zeros = 0;
  for (i = 0; i < N; i++) {
    zeros += seqs[i] == 0;
    low_half += seqs[i] < 1024; /* starts lie below 2048, half the 4096 of a Twitter tick */
    CHECK(seqs[i] < 2048 + 16);
  }
  CHECK(zeros < N / 10);
  CHECK(low_half > N / 4 && low_half < N * 3 / 4);
  CHECK(failures == 0);
  idforge_snowflake_free(g);

  g = NULL;
  CHECK_STATUS(idforge_snowflake_new_with_flags(&config, 2, &g), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_snowflake_new_leased_with_flags(&config, 2, "idforge://127.0.0.1:9", "s", 0, &g),
               "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK(g == NULL);
}

/* ---- errors ------------------------------------------------------------------------------- */

static void test_errors(void) {
  /* A version 4 UUID, and the version 7 one of the vectors. */
  uint8_t v4[16], v7[16], out[16], random[10] = {0};
  char text[64], small[IDFORGE_UUID7_TEXT_LEN], ulid_small[IDFORGE_ULID_TEXT_LEN];
  idforge_uuid7_parts parts;
  idforge_policy bad = {9, 0};
  idforge_uuid7 *u = NULL;
  idforge_ulid *l = NULL;
  uint64_t ms = 0;
  unhex("00000000000140018000000000000001", v4);
  unhex("018bcfe5687b7abc8123456789abcdef", v7);

  CHECK_STATUS(idforge_uuid7_validate(v4), INVALID_UUID);
  CHECK_STATUS(idforge_uuid7_to_text(v4, text, sizeof text), INVALID_UUID);
  CHECK_STATUS(idforge_uuid7_to_ulid_text(v4, text, sizeof text), INVALID_UUID);
  CHECK_STATUS(idforge_uuid7_time(v4, &ms), INVALID_UUID);
  CHECK_STATUS(idforge_uuid7_decompose(v4, &parts), INVALID_UUID);
  /* ULID text of a version 4 UUID is a ULID, not a UUIDv7. */
  CHECK_OK(idforge_ulid_to_text(v4, text, sizeof text));
  CHECK_STATUS(idforge_uuid7_from_ulid_text(text, out), INVALID_UUID);
  CHECK_STATUS(idforge_uuid7_from_ulid_text("not a ulid", out), "IDFORGE_STATUS_INVALID_BASE32");
  CHECK_STATUS(idforge_uuid7_parse("018bcfe5-687b-7abc-8123-456789abcde\xff", out), INVALID_UUID);
  CHECK_STATUS(idforge_ulid_parse("01ARYZ6S4128T5CY4TQKFF04H\xff", out), "IDFORGE_STATUS_INVALID_BASE32");

  CHECK_STATUS(idforge_uuid7_compose(UINT64_C(1) << 48, 0, 0, out), "IDFORGE_STATUS_TIME_OUT_OF_RANGE");
  CHECK_STATUS(idforge_uuid7_compose(0, 4096, 0, out), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_uuid7_compose(0, 0, UINT64_C(1) << 62, out), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_ulid_compose(UINT64_C(1) << 48, random, out), "IDFORGE_STATUS_TIME_OUT_OF_RANGE");
  CHECK_STATUS(idforge_uuid7_new_with_policy(&bad, NULL, &u), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_ulid_new_with_policy(&bad, NULL, &l), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_uuid7_new_with_state_file("/nonexistent-idforge-dir/state", &u), "IDFORGE_STATUS_IO");
  CHECK(u == NULL && l == NULL);

  /* Short buffers: BUFFER_TOO_SMALL, nothing written. */
  memset(small, 'x', sizeof small);
  CHECK_STATUS(idforge_uuid7_to_text(v7, small, sizeof small), "IDFORGE_STATUS_BUFFER_TOO_SMALL");
  CHECK(small[0] == 'x' && small[sizeof small - 1] == 'x');
  memset(ulid_small, 'x', sizeof ulid_small);
  CHECK_STATUS(idforge_uuid7_to_ulid_text(v7, ulid_small, sizeof ulid_small), "IDFORGE_STATUS_BUFFER_TOO_SMALL");
  CHECK_STATUS(idforge_ulid_to_text(v7, ulid_small, sizeof ulid_small), "IDFORGE_STATUS_BUFFER_TOO_SMALL");
  CHECK(ulid_small[0] == 'x');
  {
    char msg[256] = "";
    size_t needed = 0;
    CHECK_OK(idforge_last_error(msg, sizeof msg, &needed));
    CHECK(strstr(msg, "27 needed") != NULL);
  }
}

static void test_null_arguments(void) {
  const char *N = "IDFORGE_STATUS_NULL_ARGUMENT";
  uint8_t id[16] = {0}, random[10] = {0};
  char text[64];
  uint64_t ms;
  bool flag;
  idforge_uuid7_parts parts;
  idforge_uuid7 *u = NULL;
  idforge_ulid *l = NULL;
  idforge_snowflake *s = NULL;
  idforge_snowflake_config config;
  memset(&config, 0, sizeof config);
  idforge_layout_preset(IDFORGE_PRESET_TWITTER, &config.layout);
  unhex("00000000000070008000000000000000", id); /* a UUIDv7, so only the NULL is wrong */

  CHECK_STATUS(idforge_uuid7_new(NULL), N);
  CHECK_STATUS(idforge_uuid7_new_with_state_file(NULL, &u), N);
  CHECK_STATUS(idforge_uuid7_new_with_state_file("/tmp/x", NULL), N);
  CHECK_STATUS(idforge_uuid7_new_with_policy(NULL, NULL, NULL), N);
  CHECK_STATUS(idforge_uuid7_next(NULL, id), N);
  CHECK_STATUS(idforge_uuid7_next_many(NULL, id, 1), N);
  CHECK_STATUS(idforge_uuid7_to_text(NULL, text, sizeof text), N);
  CHECK_STATUS(idforge_uuid7_to_text(id, NULL, 37), N);
  CHECK_STATUS(idforge_uuid7_parse(NULL, id), N);
  CHECK_STATUS(idforge_uuid7_parse("018bcfe5-687b-7abc-8123-456789abcdef", NULL), N);
  CHECK_STATUS(idforge_uuid7_validate(NULL), N);
  CHECK_STATUS(idforge_uuid7_time(NULL, &ms), N);
  CHECK_STATUS(idforge_uuid7_decompose(NULL, &parts), N);
  CHECK_STATUS(idforge_uuid7_compose(0, 0, 0, NULL), N);
  CHECK_STATUS(idforge_uuid7_to_ulid_text(NULL, text, sizeof text), N);
  CHECK_STATUS(idforge_uuid7_from_ulid_text(NULL, id), N);
  CHECK_STATUS(idforge_ulid_new(NULL), N);
  CHECK_STATUS(idforge_ulid_new_with_state_file(NULL, &l), N);
  CHECK_STATUS(idforge_ulid_new_with_policy(NULL, NULL, NULL), N);
  CHECK_STATUS(idforge_ulid_next(NULL, id), N);
  CHECK_STATUS(idforge_ulid_next_many(NULL, id, 1), N);
  CHECK_STATUS(idforge_ulid_to_text(NULL, text, sizeof text), N);
  CHECK_STATUS(idforge_ulid_parse(NULL, id), N);
  CHECK_STATUS(idforge_ulid_time(id, NULL), N);
  CHECK_STATUS(idforge_ulid_compose(0, NULL, id), N);
  CHECK_STATUS(idforge_ulid_compose(0, random, NULL), N);
  CHECK_STATUS(idforge_snowflake_new_with_flags(NULL, 0, &s), N);
  CHECK_STATUS(idforge_snowflake_new_with_flags(&config, 0, NULL), N);
  CHECK_STATUS(idforge_snowflake_new_leased_with_flags(&config, 0, NULL, "s", 0, &s), N);
  CHECK_STATUS(idforge_snowflake_random_start(NULL, &flag), N);
  CHECK_OK(idforge_uuid7_new(&u));
  CHECK_STATUS(idforge_uuid7_next(u, NULL), N);
  CHECK_STATUS(idforge_uuid7_next_many(u, NULL, 1), N);
  idforge_uuid7_free(u);
  CHECK_OK(idforge_ulid_new(&l));
  CHECK_STATUS(idforge_ulid_next(l, NULL), N);
  CHECK_STATUS(idforge_ulid_next_many(l, NULL, 2), N);
  idforge_ulid_free(l);
  CHECK_OK(idforge_snowflake_new_with_flags(&config, 0, &s));
  CHECK_STATUS(idforge_snowflake_random_start(s, NULL), N);
  idforge_snowflake_free(s);
}

int main(void) {
  RUN(test_uuid7_vectors);
  RUN(test_ulid_vectors);
  RUN(test_errors);
  RUN(test_null_arguments);
  /* Before any thread of a test's generator runs: a fork copies memory only such threads
   * pointed to, which valgrind then counts as lost in the child. */
  RUN(test_uuid7_fork);
  RUN(test_uuid7_generator);
  RUN(test_ulid_generator);
  RUN(test_state_file_clock_set_back);
  RUN(test_uuid7_threads);
  RUN(test_snowflake_random_start);
  return SUMMARY();
}
