/* A minimal test runner for the C tests: CHECK records a failure and goes on; RUN prints each
 * test's result; the summary line is "N passed, N failed". */
#ifndef IDFORGE_TEST_HARNESS_H
#define IDFORGE_TEST_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _WIN32
#include <direct.h>
#include <windows.h>
#endif

static int h_test_failures; /* failures in the running test */
static int h_passed, h_failed;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      h_test_failures++;                                                              \
      fprintf(stderr, "    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);    \
    }                                                                                 \
  } while (0)

/* Checks that `expr` returns the status named `name` (e.g. "IDFORGE_STATUS_OK"). */
#define CHECK_STATUS(expr, name)                                                      \
  do {                                                                                \
    idforge_status h_st = (expr);                                                     \
    const char *h_got = idforge_status_str(h_st);                                     \
    if (strcmp(h_got, (name)) != 0) {                                                 \
      char h_msg[256] = "";                                                           \
      idforge_last_error(h_msg, sizeof h_msg, NULL);                                  \
      h_test_failures++;                                                              \
      fprintf(stderr, "    %s:%d: %s returned %s, expected %s (%s)\n", __FILE__,     \
              __LINE__, #expr, h_got, (name), h_msg);                                 \
    }                                                                                 \
  } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, "IDFORGE_STATUS_OK")

#define RUN(test)                                                                     \
  do {                                                                                \
    h_test_failures = 0;                                                              \
    test();                                                                           \
    if (h_test_failures == 0) {                                                       \
      h_passed++;                                                                     \
      printf("ok     %s\n", #test);                                                   \
    } else {                                                                          \
      h_failed++;                                                                     \
      printf("FAILED %s (%d checks)\n", #test, h_test_failures);                      \
    }                                                                                 \
    fflush(stdout);                                                                   \
  } while (0)

#define SUMMARY()                                                                     \
  (printf("%d passed, %d failed\n", h_passed, h_failed), h_failed == 0 ? 0 : 1)

static inline int h_cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts `ids` and counts the values that repeat. */
static inline size_t duplicates(uint64_t *ids, size_t n) {
  size_t i, dups = 0;
  qsort(ids, n, sizeof *ids, h_cmp_u64);
  for (i = 1; i < n; i++) dups += ids[i] == ids[i - 1];
  return dups;
}

/* Lowercase hex of `n` bytes into `out` (2n + 1 bytes). */
static inline void hex_of(const uint8_t *bytes, size_t n, char *out) {
  size_t i;
  for (i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", bytes[i]);
  out[2 * n] = '\0';
}

static inline uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

#ifndef _WIN32
static inline void make_temp_dir(char *buf, size_t len) {
  snprintf(buf, len, "/tmp/idforge-ctest-XXXXXX");
  if (!mkdtemp(buf)) {
    perror("mkdtemp");
    exit(2);
  }
}
#else
/* Windows (mingw, run under Wine in CI): a new folder under %TEMP%, with '/' separators after it
 * as the tests write them (Windows takes both). */
static inline void make_temp_dir(char *buf, size_t len) {
  char base[MAX_PATH];
  unsigned n;
  DWORD got = GetTempPathA(sizeof base, base);
  if (got == 0 || got >= sizeof base) {
    fprintf(stderr, "GetTempPathA failed\n");
    exit(2);
  }
  for (n = 0; n < 1000; n++) {
    snprintf(buf, len, "%sidforge-ctest-%lu-%u", base, (unsigned long)GetCurrentProcessId(), n);
    if (_mkdir(buf) == 0) return;
  }
  fprintf(stderr, "cannot make a folder under %s\n", base);
  exit(2);
}
#endif

static inline void remove_tree(const char *dir) {
  char cmd[512];
#ifdef _WIN32
  snprintf(cmd, sizeof cmd, "rmdir /s /q \"%s\"", dir);
#else
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
#endif
  if (system(cmd) != 0) fprintf(stderr, "    could not remove %s\n", dir);
}

#endif
