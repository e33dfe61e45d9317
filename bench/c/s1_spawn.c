/* s1_spawn.c: raw libuv comparator for workload S1 (spawn N /bin/true
 * children with uv_spawn, at most K in flight, each waited for).
 *
 * Usage: s1_spawn [children [in_flight]]   (defaults 1000 and 32)
 *
 * Prints children per second (wall clock, first spawn to last exit),
 * cpu_us_per_child: this process's own user+system CPU (RUSAGE_SELF) over
 * the run, divided by the children, and child_cpu_us_per_child: the
 * children's user+system CPU (RUSAGE_CHILDREN), likewise. Children get
 * /dev/null for stdin, stdout and stderr, as os/exec gives by default. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <uv.h>

static uv_loop_t *loop;
static long total, started, exited;
static int failed;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t cpu_us(int who) {
  struct rusage ru;
  getrusage(who, &ru);
  return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
         ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static void spawn_one(void);

/* Frees the uv_process_t malloc'd in spawn_one, after uv_close; the slot it
 * held goes to the next child. */
static void on_close(uv_handle_t *h) {
  free(h);
  if (started < total && !failed)
    spawn_one();
}

static void on_child_exit(uv_process_t *p, int64_t status, int signal) {
  if (status != 0 || signal != 0) {
    fprintf(stderr, "s1_spawn: child exited with %lld, signal %d\n",
            (long long)status, signal);
    failed = 1;
  }
  exited++;
  uv_close((uv_handle_t *)p, on_close);
}

static void spawn_one(void) {
  static char *args[] = {"/bin/true", NULL};
  static uv_stdio_container_t stdio[3] = {
      {.flags = UV_IGNORE}, {.flags = UV_IGNORE}, {.flags = UV_IGNORE}};
  uv_process_options_t opts = {
      .exit_cb = on_child_exit,
      .file = args[0],
      .args = args,
      .stdio_count = 3,
      .stdio = stdio,
  };
  /* Owned by the handle; freed in on_close (or here if the spawn fails,
   * after uv_close, which libuv requires even then). */
  uv_process_t *p = malloc(sizeof(*p));
  if (p == NULL) {
    fprintf(stderr, "s1_spawn: out of memory\n");
    exit(1);
  }
  started++;
  int err = uv_spawn(loop, p, &opts);
  if (err < 0) {
    fprintf(stderr, "s1_spawn: uv_spawn: %s\n", uv_strerror(err));
    failed = 1;
    uv_close((uv_handle_t *)p, on_close);
  }
}

int main(int argc, char **argv) {
  total = argc > 1 ? atol(argv[1]) : 1000;
  long in_flight = argc > 2 ? atol(argv[2]) : 32;
  if (total <= 0 || in_flight <= 0) {
    fprintf(stderr, "s1_spawn: children and in_flight must be positive\n");
    return 1;
  }
  loop = uv_default_loop();
  int64_t self0 = cpu_us(RUSAGE_SELF), children0 = cpu_us(RUSAGE_CHILDREN);
  int64_t start = now_ns();
  for (long i = 0; i < in_flight && i < total; i++)
    spawn_one();
  uv_run(loop, UV_RUN_DEFAULT);
  int64_t wall = now_ns() - start;
  int64_t self = cpu_us(RUSAGE_SELF) - self0;
  int64_t children = cpu_us(RUSAGE_CHILDREN) - children0;
  uv_loop_close(loop);
  if (failed || exited != total) {
    fprintf(stderr, "s1_spawn: %ld of %ld children exited cleanly\n", exited,
            total);
    return 1;
  }
  printf("S1 raw-c children_per_s=%lld cpu_us_per_child=%.1f "
         "child_cpu_us_per_child=%.1f\n",
         (long long)(total * 1000000000LL / wall), (double)self / total,
         (double)children / total);
  return 0;
}
