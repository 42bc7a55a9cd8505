/* The C API's cost per id, next to libbson and a clock read, in one process:
 *   clock_gettime(CLOCK_REALTIME)       the floor of a millisecond id (snowflake)
 *   CLOCK_MONOTONIC_COARSE, time(NULL)  the second clocks of our ObjectId and of libbson's
 *   idforge_objectid_generate           vs bson_oid_init with its own bson_context_t
 *   idforge_snowflake_next              vs the Rust figure (criterion), in bench/report/rust.py
 * Prints one JSON array: [{"name", "ns", "runs"}], ns the median of the runs.
 * Built and run by bench/bench.sh (or bench/c/run.sh alone). */
#define _POSIX_C_SOURCE 200809L
#include <bson/bson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "idforge.h"

enum { RUNS = 9, ITERS = 2000000 };

static volatile uint64_t sink;

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static bson_context_t *bson_ctx;

/* One clock read per iteration; inlined, so the clock id is a constant in each caller. */
static inline void run_clock_of(clockid_t clock) {
  struct timespec ts;
  uint64_t acc = 0;
  int i;
  for (i = 0; i < ITERS; i++) {
    clock_gettime(clock, &ts);
    acc += (uint64_t)ts.tv_nsec;
  }
  sink += acc;
}

static void run_clock(void) { run_clock_of(CLOCK_REALTIME); }

static void run_clock_coarse(void) { run_clock_of(CLOCK_MONOTONIC_COARSE); }

static void run_time(void) {
  uint64_t acc = 0;
  int i;
  for (i = 0; i < ITERS; i++) acc += (uint64_t)time(NULL);
  sink += acc;
}

static void run_idforge_objectid(void) {
  uint8_t oid[IDFORGE_OBJECTID_LEN];
  uint64_t acc = 0;
  int i;
  for (i = 0; i < ITERS; i++) {
    if (idforge_objectid_generate(oid) != IDFORGE_STATUS_OK) abort();
    acc += oid[11];
  }
  sink += acc;
}

static void run_bson_oid(void) {
  bson_oid_t oid;
  uint64_t acc = 0;
  int i;
  for (i = 0; i < ITERS; i++) {
    bson_oid_init(&oid, bson_ctx);
    acc += oid.bytes[11];
  }
  sink += acc;
}

/* Like the Rust bench: a fresh generator every CHUNK ids, so the loop stays below the layout's
 * 4,096 ids/ms and measures the call, not the wait for the clock. Only the calls are timed. */
static double run_idforge_snowflake(void) {
  enum { CHUNK = 4000 };
  uint64_t id, acc = 0;
  double spent = 0;
  int done = 0, i;
  while (done < ITERS) {
    idforge_snowflake *g = NULL;
    double start;
    if (idforge_snowflake_new_preset(IDFORGE_PRESET_TWITTER, 1, &g) != IDFORGE_STATUS_OK) abort();
    start = now_ns();
    for (i = 0; i < CHUNK; i++) {
      if (idforge_snowflake_next(g, &id) != IDFORGE_STATUS_OK) abort();
      acc += id;
    }
    spent += now_ns() - start;
    idforge_snowflake_free(g);
    done += CHUNK;
  }
  sink += acc;
  return spent;
}

/* Waits for the wall clock's next second. An ObjectId second holds 2^24 counter values: a run
 * that starts in a fresh second (2M ids) stays below that, so it measures the call and not the
 * generator's guard against wrapping the counter (ours borrows the next second, then waits;
 * libbson's counter silently wraps, repeating ids). */
static void fresh_second(void) {
  time_t start = time(NULL);
  struct timespec pause = {0, 1000 * 1000};
  while (time(NULL) == start) nanosleep(&pause, NULL);
}

static double timed(void (*body)(void)) {
  double start;
  if (body == run_idforge_objectid || body == run_bson_oid) fresh_second();
  start = now_ns();
  body();
  return now_ns() - start;
}

static double measure(void (*body)(void), double (*self_timed)(void)) {
  double runs[RUNS];
  int r;
  if (body) body(); else self_timed(); /* warm up */
  for (r = 0; r < RUNS; r++) runs[r] = (body ? timed(body) : self_timed()) / ITERS;
  qsort(runs, RUNS, sizeof runs[0], cmp_double);
  return runs[RUNS / 2];
}

int main(void) {
  static const struct {
    const char *name;
    void (*body)(void);
    double (*self_timed)(void);
  } cases[] = {
      {"c/clock_gettime(CLOCK_REALTIME)", run_clock, NULL},
      {"c/clock_gettime(CLOCK_MONOTONIC_COARSE)", run_clock_coarse, NULL},
      {"c/time(NULL)", run_time, NULL},
      {"c/idforge_objectid_generate", run_idforge_objectid, NULL},
      {"c/libbson bson_oid_init (own context)", run_bson_oid, NULL},
      {"c/idforge_snowflake_next", NULL, run_idforge_snowflake},
  };
  size_t i;
  bson_ctx = bson_context_new(BSON_CONTEXT_NONE);
  printf("[\n");
  for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double ns = measure(cases[i].body, cases[i].self_timed);
    printf("  {\"name\": \"%s\", \"ns\": %.3f, \"runs\": %d, \"iters\": %d}%s\n", cases[i].name, ns, RUNS,
           ITERS, i + 1 < sizeof cases / sizeof cases[0] ? "," : "");
    fflush(stdout);
  }
  printf("]\n");
  bson_context_destroy(bson_ctx);
  return 0;
}
