/* The C API as a C program sees it: built with the machine's cc against
 * libmemstored.a by tests/c_program.rs. Usage: test_memstored DIR
 * (DIR: an empty directory for the database files). Exits 0 when every check holds. */

#include "memstored.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* True when the malloc'ed result (its size in *size, read after the call
 * that made it) equals `want`; frees it. */
static bool take_eq(char* got, const int32_t* size, const char* want) {
  bool ok = got != NULL && *size == (int32_t)strlen(want) && memcmp(got, want, *size) == 0 &&
            got[*size] == '\0';
  memstored_free(got);
  return ok;
}

static void test_status(void) {
  CHECK(strcmp(memstored_status_code_name(MEMSTORED_STATUS_SUCCESS), "SUCCESS") == 0);
  CHECK(strcmp(memstored_status_code_name(MEMSTORED_STATUS_INFEASIBLE_ERROR),
               "INFEASIBLE_ERROR") == 0);
  CHECK(MEMSTORED_STATUS_APPLICATION_ERROR == 13 && MEMSTORED_STATUS_NOT_FOUND_ERROR == 7);
  CHECK(strcmp(memstored_status_code_name(99), "INVALID_CODE") == 0);
  memstored_set_last_status(MEMSTORED_STATUS_APPLICATION_ERROR, "mine");
  MemstoredStatus st = memstored_get_last_status();
  CHECK(st.code == 13 && strcmp(st.message, "mine") == 0);
}

static void test_records(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/casket.tkh", dir);
  CHECK(memstored_dbm_open(path, true, "no_such_param=1") == NULL);
  LAST_IS(MEMSTORED_STATUS_INVALID_ARGUMENT_ERROR);
  MemstoredDBM* dbm = memstored_dbm_open(path, true, "truncate=true,num_buckets=100");
  CHECK(dbm != NULL);
  if (dbm == NULL) return;
  LAST_IS(MEMSTORED_STATUS_SUCCESS);
  int32_t size = -1;

  CHECK(memstored_dbm_set(dbm, "first", -1, "hop", -1, true));
  CHECK(!memstored_dbm_set(dbm, "first", -1, "jump", -1, false));
  LAST_IS(MEMSTORED_STATUS_DUPLICATION_ERROR);
  CHECK(take_eq(memstored_dbm_get(dbm, "first", -1, &size), &size, "hop"));
  CHECK(memstored_dbm_get(dbm, "none", -1, &size) == NULL);
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  /* Binary keys and values: sizes, not NULs, delimit them. */
  CHECK(memstored_dbm_set(dbm, "b\0in", 4, "v\0al", 4, true));
  char* bin = memstored_dbm_get(dbm, "b\0in", 4, &size);
  CHECK(bin != NULL && size == 4 && memcmp(bin, "v\0al", 4) == 0);
  memstored_free(bin);
  /* get_to: the value copied into a buffer, its whole size returned. */
  char small[8];
  memset(small, 'x', sizeof(small));
  CHECK(memstored_dbm_get_to(dbm, "b\0in", 4, small, sizeof(small)) == 4);
  LAST_IS(MEMSTORED_STATUS_SUCCESS);
  CHECK(memcmp(small, "v\0alxxxx", 8) == 0);
  CHECK(memstored_dbm_get_to(dbm, "first", -1, small, 2) == 3);
  CHECK(memcmp(small, "hoalxxxx", 8) == 0);
  CHECK(memstored_dbm_get_to(dbm, "first", -1, NULL, 0) == 3);
  CHECK(memstored_dbm_get_to(dbm, "none", -1, small, sizeof(small)) == -1);
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);

  CHECK(memstored_dbm_append(dbm, "first", -1, "step", -1, ",", -1));
  CHECK(take_eq(memstored_dbm_get(dbm, "first", -1, &size), &size, "hop,step"));
  CHECK(memstored_dbm_increment(dbm, "n", -1, 5, 100) == 105);
  CHECK(memstored_dbm_increment(dbm, "n", -1, INT64_MIN, 0) == 105);
  CHECK(memstored_dbm_increment(dbm, "first", -1, 1, 0) == INT64_MIN);
  LAST_IS(MEMSTORED_STATUS_INFEASIBLE_ERROR);

  CHECK(!memstored_dbm_compare_exchange(dbm, "cx", -1, "x", -1, "y", -1));
  LAST_IS(MEMSTORED_STATUS_INFEASIBLE_ERROR);
  CHECK(memstored_dbm_compare_exchange(dbm, "cx", -1, NULL, 0, "y", -1));
  CHECK(memstored_dbm_compare_exchange(dbm, "cx", -1, "y", -1, NULL, 0));
  CHECK(memstored_dbm_get(dbm, "cx", -1, NULL) == NULL);

  CHECK(memstored_dbm_set_and_get(dbm, "sg", -1, "1", -1, true, &size) == NULL);
  LAST_IS(MEMSTORED_STATUS_SUCCESS);
  CHECK(take_eq(memstored_dbm_set_and_get(dbm, "sg", -1, "2", -1, false, &size), &size, "1"));
  LAST_IS(MEMSTORED_STATUS_DUPLICATION_ERROR);
  CHECK(take_eq(memstored_dbm_remove_and_get(dbm, "sg", -1, &size), &size, "1"));
  CHECK(memstored_dbm_remove_and_get(dbm, "sg", -1, &size) == NULL);
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(!memstored_dbm_remove(dbm, "sg", -1));
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);

  /* Alice pays Bob 500, atomically; a stale expectation changes nothing. */
  MemstoredKeyValuePair start[] = {{"Alice", 5, "3000", 4}, {"Bob", 3, "1000", 4}};
  CHECK(memstored_dbm_set_multi(dbm, start, 2, true));
  MemstoredKeyValuePair stale[] = {{"Alice", 5, "2999", 4}, {"Bob", 3, "1000", 4}};
  MemstoredKeyValuePair after[] = {{"Alice", 5, "2500", 4}, {"Bob", 3, "1500", 4}};
  CHECK(!memstored_dbm_compare_exchange_multi(dbm, stale, 2, after, 2));
  LAST_IS(MEMSTORED_STATUS_INFEASIBLE_ERROR);
  CHECK(memstored_dbm_compare_exchange_multi(dbm, start, 2, after, 2));
  MemstoredStr keys[] = {{"Alice", -1}, {"Bob", -1}, {"Carol", -1}};
  int32_t n = -1;
  MemstoredKeyValuePair* got = memstored_dbm_get_multi(dbm, keys, 3, &n);
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(got != NULL && n == 2);
  if (got != NULL && n == 2) {
    CHECK(strcmp(got[0].key_ptr, "Alice") == 0 && strcmp(got[0].value_ptr, "2500") == 0);
    CHECK(got[1].key_size == 3 && strcmp(got[1].value_ptr, "1500") == 0);
  }
  memstored_free(got);

  MemstoredStr* found = memstored_dbm_search(dbm, "begin", "Al", -1, 0, &n);
  CHECK(found != NULL && n == 1 && strcmp(found[0].ptr, "Alice") == 0);
  memstored_free(found);
  CHECK(memstored_dbm_search(dbm, "nonsense", "x", -1, 0, &n) == NULL);
  LAST_IS(MEMSTORED_STATUS_INVALID_ARGUMENT_ERROR);

  CHECK(memstored_dbm_count(dbm) == 5);
  CHECK(memstored_dbm_remove_multi(dbm, keys, 2));
  CHECK(memstored_dbm_count(dbm) == 3);
  MemstoredKeyValuePair* props = memstored_dbm_inspect(dbm, &n);
  bool saw_class = false;
  for (int32_t i = 0; props != NULL && i < n; i++) {
    if (strcmp(props[i].key_ptr, "class") == 0) saw_class = strcmp(props[i].value_ptr, "HashDBM") == 0;
  }
  CHECK(saw_class);
  memstored_free(props);
  CHECK(memstored_dbm_is_writable(dbm) && !memstored_dbm_is_ordered(dbm));
  CHECK(memstored_dbm_synchronize(dbm, true, NULL));
  CHECK(memstored_dbm_rebuild(dbm, NULL));
  CHECK(!memstored_dbm_should_be_rebuilt(dbm));
  CHECK(memstored_dbm_count(dbm) == 3);
  CHECK(memstored_dbm_clear(dbm));
  CHECK(memstored_dbm_count(dbm) == 0);
  CHECK(memstored_dbm_close(dbm));

  /* A read-only open refuses writes with PRECONDITION_ERROR. */
  dbm = memstored_dbm_open(path, false, NULL);
  CHECK(dbm != NULL && !memstored_dbm_set(dbm, "k", -1, "v", -1, true));
  LAST_IS(MEMSTORED_STATUS_PRECONDITION_ERROR);
  CHECK(memstored_dbm_close(dbm));
}

static void test_iterator(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/casket.tkt", dir);
  MemstoredDBM* dbm = memstored_dbm_open(path, true, "truncate=true");
  CHECK(dbm != NULL);
  if (dbm == NULL) return;
  const char* words[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; i++) CHECK(memstored_dbm_set(dbm, words[i], -1, words[i], -1, true));
  MemstoredDBMIter* it = memstored_dbm_make_iterator(dbm);
  CHECK(it != NULL);
  char *k, *v;
  int32_t ks, vs;
  CHECK(memstored_dbm_iter_first(it));
  CHECK(memstored_dbm_iter_get(it, &k, &ks, &v, &vs));
  CHECK(take_eq(k, &ks, "a") && take_eq(v, &vs, "a"));
  CHECK(memstored_dbm_iter_last(it));
  CHECK(take_eq(memstored_dbm_iter_get_key(it, &ks), &ks, "d"));
  CHECK(memstored_dbm_iter_previous(it));
  CHECK(take_eq(memstored_dbm_iter_get_value(it, &vs), &vs, "c"));
  CHECK(memstored_dbm_iter_jump(it, "bb", -1));
  CHECK(take_eq(memstored_dbm_iter_get_key(it, &ks), &ks, "c"));
  CHECK(memstored_dbm_iter_jump_lower(it, "c", -1, false));
  CHECK(take_eq(memstored_dbm_iter_get_key(it, &ks), &ks, "b"));
  CHECK(memstored_dbm_iter_jump_upper(it, "c", -1, true));
  CHECK(memstored_dbm_iter_set(it, "C", -1));
  CHECK(memstored_dbm_iter_remove(it));
  CHECK(take_eq(memstored_dbm_iter_get_key(it, &ks), &ks, "d"));
  CHECK(memstored_dbm_iter_next(it));
  CHECK(!memstored_dbm_iter_get(it, NULL, NULL, NULL, NULL));
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(memstored_dbm_iter_first(it));
  int steps = 0;
  while (memstored_dbm_iter_step(it, &k, &ks, NULL, NULL)) {
    memstored_free(k);
    steps++;
  }
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(steps == 3);
  /* The iterator keeps the database alive after close: free it after. */
  CHECK(memstored_dbm_close(dbm));
  memstored_dbm_iter_free(it);
  memstored_dbm_iter_free(NULL);
}

typedef struct {
  MemstoredDBM* dbm;
  int errors;
} Worker;

static void* add_many(void* arg) {
  Worker* w = arg;
  for (int i = 0; i < 1000; i++) {
    if (memstored_dbm_increment(w->dbm, "counter", -1, 1, 0) == INT64_MIN) w->errors++;
    /* Each thread has its own last status. */
    if (memstored_dbm_get(w->dbm, "absent", -1, NULL) != NULL ||
        memstored_get_last_status_code() != MEMSTORED_STATUS_NOT_FOUND_ERROR)
      w->errors++;
  }
  return NULL;
}

static void test_threads(void) {
  MemstoredDBM* dbm = memstored_dbm_open("*", true, NULL);
  CHECK(dbm != NULL);
  if (dbm == NULL) return;
  pthread_t threads[4];
  Worker workers[4];
  for (int i = 0; i < 4; i++) {
    workers[i] = (Worker){dbm, 0};
    pthread_create(&threads[i], NULL, add_many, &workers[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(threads[i], NULL);
    CHECK(workers[i].errors == 0);
  }
  CHECK(memstored_dbm_increment(dbm, "counter", -1, 0, 0) == 4000);
  CHECK(memstored_dbm_close(dbm));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  test_status();
  test_records(argv[1]);
  test_iterator(argv[1]);
  test_threads();
  CHECK(!memstored_dbm_close(NULL));
  LAST_IS(MEMSTORED_STATUS_INVALID_ARGUMENT_ERROR);
  if (failures > 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
