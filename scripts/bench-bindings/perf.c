/* Seed 004's measurement in C: N records with keys and values "%08d", set
 * then get, by T threads (thread t takes every T-th index). One source for
 * both libraries, so the loops are identical: built against memstored's C
 * API by default, against Tkrzw's (Debian libtkrzw-dev) with -DUSE_TKRZW.
 * Usage: perf PATH PARAMS N T; prints "set QPS", "get QPS" and max RSS (KiB). */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef USE_TKRZW
#include <tkrzw_langc.h>
#define DBM TkrzwDBM
#define dbm_open tkrzw_dbm_open
#define dbm_close tkrzw_dbm_close
#define dbm_set tkrzw_dbm_set
#define dbm_get tkrzw_dbm_get
#define dbm_count tkrzw_dbm_count
#define lib_free free
#else
#include "memstored.h"
#define DBM MemstoredDBM
#define dbm_open memstored_dbm_open
#define dbm_close memstored_dbm_close
#define dbm_set memstored_dbm_set
#define dbm_get memstored_dbm_get
#define dbm_count memstored_dbm_count
#define lib_free memstored_free
#endif

typedef struct {
  DBM* dbm;
  long n, threads, id, failures;
  int get;
} Job;

static void* work(void* arg) {
  Job* j = arg;
  char buf[32];
  for (long i = j->id; i < j->n; i += j->threads) {
    int len = snprintf(buf, sizeof(buf), "%08ld", i);
    if (j->get) {
      int32_t size = 0;
      char* v = dbm_get(j->dbm, buf, len, &size);
      if (v == NULL || size != len) j->failures++;
      lib_free(v);
    } else if (!dbm_set(j->dbm, buf, len, buf, len, true)) {
      j->failures++;
    }
  }
  return NULL;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double phase(DBM* dbm, long n, long threads, int get) {
  pthread_t tids[256];
  Job jobs[256];
  double start = now();
  for (long t = 0; t < threads; t++) {
    jobs[t] = (Job){dbm, n, threads, t, 0, get};
    pthread_create(&tids[t], NULL, work, &jobs[t]);
  }
  long failures = 0;
  for (long t = 0; t < threads; t++) {
    pthread_join(tids[t], NULL);
    failures += jobs[t].failures;
  }
  double secs = now() - start;
  if (failures > 0) {
    fprintf(stderr, "%ld failed %s calls\n", failures, get ? "get" : "set");
    exit(1);
  }
  return n / secs;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s PATH PARAMS N THREADS\n", argv[0]);
    return 2;
  }
  long n = atol(argv[3]), threads = atol(argv[4]);
  if (threads < 1 || threads > 256) return 2;
  DBM* dbm = dbm_open(argv[1], true, argv[2]);
  if (dbm == NULL) {
    fprintf(stderr, "open %s failed\n", argv[1]);
    return 1;
  }
  double set_qps = phase(dbm, n, threads, 0);
  double get_qps = phase(dbm, n, threads, 1);
  if (dbm_count(dbm) != n) {
    fprintf(stderr, "count %lld, want %ld\n", (long long)dbm_count(dbm), n);
    return 1;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  dbm_close(dbm);
  printf("set %.0f\nget %.0f\nrss_kib %ld\n", set_qps, get_qps, ru.ru_maxrss);
  return 0;
}
