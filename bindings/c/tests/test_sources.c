/* C tests of the segment sources against real servers on 127.0.0.1 (started by ci/services.sh,
 * which exports IDFORGE_TEST_{IDFORGE,REDIS,POSTGRES,MYSQL}_URL; with IDFORGE_REQUIRE_SERVICES
 * set, a missing one fails), SQLite in a temp dir, the typed failures, and fork. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "idforge.h"

#define N_IDS 3000

/* The URL in `var`, or NULL (a failed check when IDFORGE_REQUIRE_SERVICES is set). */
static const char *service(const char *var) {
  const char *url = getenv(var);
  if (url && *url) return url;
  if (getenv("IDFORGE_REQUIRE_SERVICES")) {
    fprintf(stderr, "    %s is not set but IDFORGE_REQUIRE_SERVICES is\n", var);
    CHECK(0);
  } else {
    printf("    skipped: %s is not set (ci/services.sh sets it)\n", var);
  }
  return NULL;
}

/* A tag of its own per run: the servers outlive the test. */
static void unique_tag(char *buf, size_t len, const char *name) {
  snprintf(buf, len, "c-%s-%ld-%ld", name, (long)getpid(), (long)rand());
}

static idforge_segment_options fixed(uint64_t step) {
  idforge_segment_options o;
  memset(&o, 0, sizeof o);
  o.step = step;
  o.fixed_step = true;
  o.timeout_ms = 5000;
  return o;
}

/* Draws N_IDS ids from `url`: strictly increasing, so also unique. */
static void draw_from(const char *url, const char *name) {
  static uint64_t ids[N_IDS];
  idforge_segments *s = NULL;
  idforge_segment_options o = fixed(250);
  idforge_segment_stats stats;
  char tag[96];
  size_t i, increasing = 1;
  if (!url) return;
  unique_tag(tag, sizeof tag, name);
  CHECK_OK(idforge_segments_new(url, tag, &o, &s));
  if (!s) return;
  CHECK_OK(idforge_segments_next_many(s, ids, N_IDS));
  for (i = 1; i < N_IDS; i++) increasing &= ids[i] > ids[i - 1];
  CHECK(increasing);
  CHECK(ids[0] == 1); /* a new tag starts at 1 in every source */
  CHECK_OK(idforge_segments_stats(s, &stats));
  CHECK(stats.ranges_fetched >= N_IDS / 250 && stats.fetch_errors == 0);
  idforge_segments_free(s);
}

/* Many tags on one server share the process's refill engine: one thread, one connection. */
static void many_tags_on(const char *url, const char *name) {
  enum { TAGS = 500 };
  static idforge_segments *all[TAGS];
  idforge_segment_options o = fixed(10);
  idforge_engine_stats engine;
  char tag[96];
  size_t i;
  uint64_t id;
  if (!url) return;
  o.timeout_ms = 20000;
  unique_tag(tag, sizeof tag, name);
  for (i = 0; i < TAGS; i++) {
    char each[128];
    snprintf(each, sizeof each, "%s-%zu", tag, i);
    all[i] = NULL;
    CHECK_OK(idforge_segments_new(url, each, &o, &all[i]));
    if (!all[i]) return;
  }
  for (i = 0; i < TAGS; i++) {
    CHECK_OK(idforge_segments_next(all[i], &id));
    CHECK(id == 1);
  }
  CHECK_OK(idforge_segments_engine_stats(all[0], &engine));
  CHECK(engine.generators >= TAGS);
  CHECK(engine.threads == 1 && engine.connections == 1);
  CHECK(engine.batched_refills > 0 && engine.round_trips < engine.refills);
  for (i = 0; i < TAGS; i++) idforge_segments_free(all[i]);
}

static void test_many_tags(void) {
  many_tags_on(service("IDFORGE_TEST_IDFORGE_URL"), "idf-many");
  many_tags_on(service("IDFORGE_TEST_REDIS_URL"), "redis-many");
}

static void test_idforge_server(void) { draw_from(service("IDFORGE_TEST_IDFORGE_URL"), "idf"); }
static void test_redis(void) { draw_from(service("IDFORGE_TEST_REDIS_URL"), "redis"); }
static void test_postgres(void) { draw_from(service("IDFORGE_TEST_POSTGRES_URL"), "pg"); }
static void test_mariadb(void) { draw_from(service("IDFORGE_TEST_MYSQL_URL"), "my"); }

static char sqlite_dir[64];

static void test_sqlite(void) {
  char url[160];
  snprintf(url, sizeof url, "sqlite://%s/leaf.db", sqlite_dir);
  draw_from(url, "sqlite");
}

/* The first status of a generator over `url` (its first id's). */
static idforge_status first_status(const char *url, const char *tag) {
  idforge_segments *s = NULL;
  idforge_segment_options o = fixed(10);
  uint64_t id = 0;
  /* Transient failures are waited out until the timeout: a short one keeps this quick. */
  o.timeout_ms = 1000;
  idforge_status st = idforge_segments_new(url, tag, &o, &s);
  if (st == IDFORGE_STATUS_OK) st = idforge_segments_next(s, &id);
  idforge_segments_free(s);
  return st;
}

/* A loopback port that accepts connections (the kernel completes them) and never answers. */
static int silent_listener(int *port) {
  struct sockaddr_in a;
  socklen_t len = sizeof a;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
    perror("silent listener");
    exit(2);
  }
  *port = ntohs(a.sin_port);
  return fd;
}

static void test_failures_are_typed(void) {
  char url[256];
  const char *idf = service("IDFORGE_TEST_IDFORGE_URL");
  int port, fd = silent_listener(&port);
  snprintf(url, sizeof url, "idforge://127.0.0.1:%d?timeout_ms=200", port);
  CHECK_STATUS(first_status(url, "t"), "IDFORGE_STATUS_TIMEOUT");
  close(fd); /* now nothing listens there */
  snprintf(url, sizeof url, "idforge://127.0.0.1:%d", port);
  CHECK_STATUS(first_status(url, "t"), "IDFORGE_STATUS_SOURCE_UNAVAILABLE");
  if (idf) {
    /* The services' URL with the password replaced. */
    const char *at = strchr(idf, '@');
    if (at) snprintf(url, sizeof url, "idforge://default:wrong%s", at);
    CHECK(at != NULL);
    CHECK_STATUS(first_status(url, "t"), "IDFORGE_STATUS_SOURCE_UNAVAILABLE");
  }
  snprintf(url, sizeof url, "sqlite://%s/leaf.db?auto_create=false", sqlite_dir);
  CHECK_STATUS(first_status(url, "no-such-tag"), "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(first_status("idforge://127.0.0.1:0", "t"), "IDFORGE_STATUS_INVALID_URL");
  CHECK_STATUS(first_status("redis://h/x", "t"), "IDFORGE_STATUS_INVALID_URL");
  CHECK_STATUS(first_status("sqlite:///tmp/x?table=a;b", "t"), "IDFORGE_STATUS_INVALID_URL");
}

/* A child never reuses its parent's buffered range: both draw after the fork, 0 duplicates. */
static void fork_from(const char *url, const char *name) {
  enum { PER = 2000 };
  static uint64_t ids[2 * PER];
  idforge_segments *s = NULL;
  idforge_segment_options o = fixed(500);
  char tag[96];
  uint64_t first = 0;
  int fds[2], status = 0;
  pid_t pid;
  size_t got = 0;
  ssize_t n;
  if (!url) return;
  unique_tag(tag, sizeof tag, name);
  CHECK_OK(idforge_segments_new(url, tag, &o, &s));
  if (!s) return;
  CHECK_OK(idforge_segments_next(s, &first)); /* the parent holds a buffered range now */
  if (pipe(fds) != 0) exit(2);
  pid = fork();
  if (pid == 0) {
    uint64_t child[PER];
    int rc = idforge_segments_next_many(s, child, PER) == IDFORGE_STATUS_OK ? 0 : 3;
    if (write(fds[1], child, sizeof child) != (ssize_t)sizeof child) rc = 4;
    _exit(rc);
  }
  close(fds[1]);
  CHECK_OK(idforge_segments_next_many(s, ids, PER));
  while (got < sizeof(uint64_t) * PER &&
         (n = read(fds[0], (char *)(ids + PER) + got, sizeof(uint64_t) * PER - got)) > 0)
    got += (size_t)n;
  close(fds[0]);
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fprintf(stderr, "    child status %d\n", status);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(got == sizeof(uint64_t) * PER);
  CHECK(duplicates(ids, 2 * PER) == 0);
  idforge_segments_free(s);
}

static void test_fork_idforge(void) { fork_from(service("IDFORGE_TEST_IDFORGE_URL"), "fork"); }

static void test_fork_sqlite(void) {
  char url[160];
  snprintf(url, sizeof url, "sqlite://%s/leaf.db", sqlite_dir);
  fork_from(url, "fork");
}

/* Snowflakes whose node ids are leased from the idforge server: two live ones never share an id,
 * freeing one gives its id back, a forked child is refused, and bad settings are typed. */
static void test_leased_snowflakes(void) {
  const char *idf = service("IDFORGE_TEST_IDFORGE_URL");
  idforge_snowflake_config config;
  idforge_snowflake *a = NULL, *b = NULL;
  uint64_t node_a = 99, node_b = 99, id = 0;
  idforge_parts parts;
  char svc[96];
  pid_t pid;
  int status = 0;
  if (!idf) return;
  unique_tag(svc, sizeof svc, "lease");
  memset(&config, 0, sizeof config);
  CHECK_OK(idforge_layout_preset(IDFORGE_PRESET_TWITTER, &config.layout));
  CHECK_OK(idforge_snowflake_new_leased(&config, idf, svc, 2000, &a));
  CHECK_OK(idforge_snowflake_new_leased(&config, idf, svc, 0, &b));
  if (!a || !b) return;
  CHECK_OK(idforge_snowflake_node(a, &node_a));
  CHECK_OK(idforge_snowflake_node(b, &node_b));
  CHECK(node_a == 0 && node_b == 1);
  CHECK_OK(idforge_snowflake_next(b, &id));
  CHECK_OK(idforge_snowflake_decode(b, id, &parts));
  CHECK(parts.node == 1);
  pid = fork();
  if (pid == 0) {
    /* The lease belongs to the parent: the child must not issue ids under it. */
    _exit(idforge_snowflake_next(a, &id) == IDFORGE_STATUS_FORKED ? 0 : 1);
  }
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0);
  CHECK_OK(idforge_snowflake_next(a, &id)); /* the parent's lease is intact */
  idforge_snowflake_free(a);
  {
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL); /* past the last time `a` used */
  }
  {
    /* A leased generator with a random sequence start: the flag and the lease together. */
    bool random_start = false;
    CHECK_OK(idforge_snowflake_new_leased_with_flags(&config, IDFORGE_SNOWFLAKE_FLAG_RANDOM_START, idf,
                                                     svc, 0, &a));
    CHECK_OK(idforge_snowflake_node(a, &node_a));
    CHECK(node_a == 0); /* given back by the free */
    CHECK_OK(idforge_snowflake_random_start(a, &random_start));
    CHECK(random_start);
    CHECK_OK(idforge_snowflake_next(a, &id));
  }
  idforge_snowflake_free(a);
  idforge_snowflake_free(b);
  CHECK_STATUS(idforge_snowflake_new_leased(&config, "redis://127.0.0.1:1", svc, 0, &a),
               "IDFORGE_STATUS_INVALID_URL");
  CHECK_STATUS(idforge_snowflake_new_leased(&config, idf, "no spaces", 0, &a),
               "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_snowflake_new_leased(&config, idf, svc, 5, &a),
               "IDFORGE_STATUS_INVALID_ARGUMENT");
  CHECK_STATUS(idforge_snowflake_new_leased(&config, NULL, svc, 0, &a),
               "IDFORGE_STATUS_NULL_ARGUMENT");
}

int main(void) {
  char cmd[128];
  int rc;
  srand((unsigned)getpid());
  snprintf(sqlite_dir, sizeof sqlite_dir, "/tmp/idforge-csrc-XXXXXX");
  if (!mkdtemp(sqlite_dir)) return 2;
  RUN(test_idforge_server);
  RUN(test_redis);
  RUN(test_many_tags);
  RUN(test_postgres);
  RUN(test_mariadb);
  RUN(test_sqlite);
  RUN(test_failures_are_typed);
  RUN(test_fork_idforge);
  RUN(test_fork_sqlite);
  RUN(test_leased_snowflakes);
  rc = SUMMARY();
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", sqlite_dir);
  if (system(cmd) != 0) rc = 1;
  return rc;
}
