/* The C API's Tkrzw calls beyond the basic records (rekey, the queue,
 * record processors, compare_exchange_and_get, append_multi, export and
 * flat records, file size/path/copy, timestamp, health, restore, File and
 * Index), as a C program sees them: built and run by tests/c_program.rs.
 * Usage: test_tkrzw_calls DIR (an empty directory). Exits 0 when every
 * check holds. */

#include "memstored.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* True when the malloc'ed string equals `want`; frees it. */
static bool take_str(char* got, const char* want) {
  bool ok = got != NULL && strcmp(got, want) == 0;
  memstored_free(got);
  return ok;
}

/* True when the value of `key` is `want`. */
static bool value_is(MemstoredDBM* dbm, const char* key, const char* want) {
  int32_t size = 0;
  char* got = memstored_dbm_get(dbm, key, -1, &size);
  bool ok = got != NULL && size == (int32_t)strlen(want) && memcmp(got, want, size) == 0;
  memstored_free(got);
  return ok;
}

static void test_rekey_and_queue(void) {
  MemstoredDBM* dbm = memstored_dbm_open("+", true, NULL);
  CHECK(dbm != NULL);
  if (dbm == NULL) return;
  CHECK(memstored_dbm_set(dbm, "a", -1, "1", -1, true));
  CHECK(memstored_dbm_set(dbm, "b", -1, "2", -1, true));
  CHECK(!memstored_dbm_rekey(dbm, "x", -1, "y", -1, true, false));
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(!memstored_dbm_rekey(dbm, "a", -1, "b", -1, false, false));
  LAST_IS(MEMSTORED_STATUS_DUPLICATION_ERROR);
  CHECK(memstored_dbm_rekey(dbm, "a", -1, "c", -1, false, false));
  CHECK(!memstored_dbm_check(dbm, "a", -1) && value_is(dbm, "c", "1"));
  CHECK(memstored_dbm_rekey(dbm, "c", -1, "d", -1, true, true));
  CHECK(value_is(dbm, "c", "1") && value_is(dbm, "d", "1"));
  CHECK(memstored_dbm_clear(dbm));

  CHECK(memstored_dbm_push_last(dbm, "one", -1, 10.0));
  CHECK(memstored_dbm_push_last(dbm, "two", -1, 10.0));
  CHECK(memstored_dbm_push_last(dbm, "now", -1, -1));
  char *key = NULL, *value = NULL;
  int32_t key_size = 0, value_size = 0;
  CHECK(memstored_dbm_pop_first(dbm, &key, &key_size, &value, &value_size));
  /* 10 s times 10^8 as 8 big-endian bytes. */
  const unsigned char want_key[8] = {0, 0, 0, 0, 0x3b, 0x9a, 0xca, 0};
  CHECK(key != NULL && key_size == 8 && memcmp(key, want_key, 8) == 0);
  CHECK(value != NULL && value_size == 3 && strcmp(value, "one") == 0);
  memstored_free(key);
  memstored_free(value);
  CHECK(memstored_dbm_pop_first(dbm, NULL, NULL, &value, NULL));
  CHECK(take_str(value, "two"));
  CHECK(memstored_dbm_pop_first_wait(dbm, NULL, NULL, &value, NULL, 0.01));
  CHECK(take_str(value, "now"));
  CHECK(!memstored_dbm_pop_first(dbm, NULL, NULL, NULL, NULL));
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(!memstored_dbm_pop_first_wait(dbm, NULL, NULL, NULL, NULL, 0.01));
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(memstored_dbm_close(dbm));
}

/* Appends "!" to a present value, stores "new" for an absent one, removes
 * "gone"; counts its calls in *arg. */
static const char* bang(void* arg, const char* key, int32_t key_size, const char* value,
                        int32_t value_size, int32_t* new_size) {
  static char buf[64];
  (*(int*)arg)++;
  if (key == NULL) return MEMSTORED_REC_PROC_NOOP;
  if (key_size == 4 && memcmp(key, "gone", 4) == 0) return MEMSTORED_REC_PROC_REMOVE;
  if (value == NULL) {
    *new_size = 3;
    return "new";
  }
  if (value_size > 60) return MEMSTORED_REC_PROC_NOOP;
  memcpy(buf, value, value_size);
  buf[value_size] = '!';
  *new_size = value_size + 1;
  return buf;
}

static void test_processors(void) {
  MemstoredDBM* dbm = memstored_dbm_open("+", true, "num_shards=3");
  CHECK(dbm != NULL);
  if (dbm == NULL) return;
  int calls = 0;
  CHECK(memstored_dbm_process(dbm, "k", -1, bang, &calls, true));
  CHECK(value_is(dbm, "k", "new") && calls == 1);
  CHECK(memstored_dbm_process(dbm, "k", -1, bang, &calls, true));
  CHECK(value_is(dbm, "k", "new!"));
  CHECK(memstored_dbm_process(dbm, "k", -1, bang, &calls, false));
  CHECK(value_is(dbm, "k", "new!") && calls == 3);
  CHECK(!memstored_dbm_process(dbm, "k", -1, NULL, NULL, true));
  LAST_IS(MEMSTORED_STATUS_INVALID_ARGUMENT_ERROR);

  CHECK(memstored_dbm_set(dbm, "gone", -1, "x", -1, true));
  MemstoredKeyProcPair pairs[3] = {
      {"gone", -1, bang, &calls}, {"k", -1, bang, &calls}, {"m", -1, bang, &calls}};
  calls = 0;
  CHECK(memstored_dbm_process_multi(dbm, pairs, 3, true));
  CHECK(calls == 3 && !memstored_dbm_check(dbm, "gone", -1));
  CHECK(value_is(dbm, "k", "new!!") && value_is(dbm, "m", "new"));

  calls = 0;
  CHECK(memstored_dbm_process_first(dbm, bang, &calls, true));
  CHECK(calls == 1 && value_is(dbm, "k", "new!!!"));
  calls = 0;
  CHECK(memstored_dbm_process_each(dbm, bang, &calls, true));
  /* Once before, once per record (k, m), once after. */
  CHECK(calls == 4 && value_is(dbm, "m", "new!"));
  CHECK(memstored_dbm_clear(dbm));
  CHECK(!memstored_dbm_process_first(dbm, bang, &calls, true));
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(memstored_dbm_close(dbm));
}

static void test_compare_and_append(void) {
  MemstoredDBM* dbm = memstored_dbm_open("*", true, NULL);
  CHECK(dbm != NULL);
  if (dbm == NULL) return;
  int32_t size = -1;
  CHECK(memstored_dbm_compare_exchange_and_get(dbm, "x", -1, NULL, 0, "123", -1, &size) == NULL);
  LAST_IS(MEMSTORED_STATUS_SUCCESS);
  CHECK(take_str(memstored_dbm_compare_exchange_and_get(dbm, "x", -1, "123", -1,
                                                        MEMSTORED_ANY_DATA, 0, &size),
                 "123"));
  LAST_IS(MEMSTORED_STATUS_SUCCESS);
  CHECK(take_str(memstored_dbm_compare_exchange_and_get(dbm, "x", -1, "9", -1, "1", -1, &size),
                 "123"));
  LAST_IS(MEMSTORED_STATUS_INFEASIBLE_ERROR);
  CHECK(take_str(
      memstored_dbm_compare_exchange_and_get(dbm, "x", -1, MEMSTORED_ANY_DATA, 0, NULL, 0, &size),
      "123"));
  CHECK(!memstored_dbm_check(dbm, "x", -1));

  /* ANY_DATA in the plain and the multi compare-exchange. */
  CHECK(!memstored_dbm_compare_exchange(dbm, "y", -1, MEMSTORED_ANY_DATA, 0, "1", -1));
  LAST_IS(MEMSTORED_STATUS_INFEASIBLE_ERROR);
  CHECK(memstored_dbm_set(dbm, "y", -1, "", 0, true));
  CHECK(memstored_dbm_compare_exchange(dbm, "y", -1, MEMSTORED_ANY_DATA, 0, "1", -1));
  CHECK(memstored_dbm_compare_exchange(dbm, "y", -1, "1", -1, MEMSTORED_ANY_DATA, 0));
  CHECK(value_is(dbm, "y", "1"));
  MemstoredKeyValuePair want[2] = {{"y", -1, MEMSTORED_ANY_DATA, 0}, {"z", -1, NULL, 0}};
  MemstoredKeyValuePair put[1] = {{"z", -1, "2", -1}};
  CHECK(memstored_dbm_compare_exchange_multi(dbm, want, 2, put, 1));
  CHECK(value_is(dbm, "z", "2"));
  CHECK(!memstored_dbm_compare_exchange_multi(dbm, want, 2, put, 1));
  LAST_IS(MEMSTORED_STATUS_INFEASIBLE_ERROR);
  want[0].key_ptr = "absent";
  want[1].key_ptr = "none";
  CHECK(!memstored_dbm_compare_exchange_multi(dbm, want, 2, put, 1));
  LAST_IS(MEMSTORED_STATUS_INFEASIBLE_ERROR);

  CHECK(memstored_dbm_set(dbm, "one", -1, "a", -1, true));
  MemstoredKeyValuePair recs[2] = {{"one", -1, "1", -1}, {"two", -1, "2", -1}};
  CHECK(memstored_dbm_append_multi(dbm, recs, 2, ":", -1));
  CHECK(value_is(dbm, "one", "a:1") && value_is(dbm, "two", "2"));
  CHECK(memstored_dbm_is_healthy(dbm));
  CHECK(memstored_dbm_get_file_size(dbm) > 0);
  CHECK(take_str(memstored_dbm_get_file_path(dbm), ""));
  CHECK(!memstored_dbm_copy_file_data(dbm, "/nonexistent/x", false));
  LAST_IS(MEMSTORED_STATUS_PRECONDITION_ERROR);
  CHECK(memstored_dbm_close(dbm));
}

static void test_files_and_export(const char* dir) {
  char path[4096], copy[4096], flat[4096], restored[4096];
  snprintf(path, sizeof(path), "%s/casket.tkh", dir);
  snprintf(copy, sizeof(copy), "%s/casket-copy.tkh", dir);
  snprintf(flat, sizeof(flat), "%s/flat.dat", dir);
  snprintf(restored, sizeof(restored), "%s/restored.tkh", dir);
  MemstoredDBM* dbm = memstored_dbm_open(path, true, "truncate=true");
  CHECK(dbm != NULL);
  if (dbm == NULL) return;
  CHECK(memstored_dbm_set(dbm, "a", -1, "1", -1, true));
  CHECK(memstored_dbm_set(dbm, "b", -1, "", 0, true));
  CHECK(memstored_dbm_synchronize(dbm, false, NULL));
  double ts = memstored_dbm_get_timestamp(dbm);
  CHECK(!isnan(ts) && ts > 1e9);
  CHECK(memstored_dbm_get_file_size(dbm) > 0);
  CHECK(take_str(memstored_dbm_get_file_path(dbm), path));
  CHECK(memstored_dbm_copy_file_data(dbm, copy, true));
  MemstoredDBM* cp = memstored_dbm_open(copy, false, NULL);
  CHECK(cp != NULL && memstored_dbm_count(cp) == 2);
  CHECK(memstored_dbm_close(cp));
  CHECK(memstored_dbm_restore_database(copy, restored, "HashDBM", -1, NULL));
  CHECK(!memstored_dbm_restore_database(copy, restored, "HashDBM", 10, NULL));
  LAST_IS(MEMSTORED_STATUS_NOT_IMPLEMENTED_ERROR);

  MemstoredDBM* mem = memstored_dbm_open("+", true, NULL);
  CHECK(memstored_dbm_export(dbm, mem));
  CHECK(memstored_dbm_count(mem) == 2 && value_is(mem, "a", "1"));

  MemstoredFile* file = memstored_file_open(flat, true, "truncate=true");
  CHECK(file != NULL);
  if (file == NULL) return;
  CHECK(memstored_dbm_export_to_flat_records(mem, file));
  /* Tkrzw's bytes: 0xFF, the length, the data; key then value, in order. */
  char buf[16];
  CHECK(memstored_file_get_size(file) == 11);
  CHECK(memstored_file_read(file, 0, buf, 11));
  CHECK(memcmp(buf, "\xff\x01" "a\xff\x01" "1\xff\x01" "b\xff\x00", 11) == 0);
  CHECK(memstored_dbm_clear(mem));
  CHECK(memstored_dbm_import_from_flat_records(mem, file));
  CHECK(memstored_dbm_count(mem) == 2 && value_is(mem, "b", ""));
  CHECK(memstored_dbm_export_keys_as_lines(mem, file));
  CHECK(memstored_file_get_size(file) == 4);
  int32_t n = 0;
  MemstoredStr* lines = memstored_file_search(file, "begin", "b", -1, 0, &n);
  CHECK(lines != NULL && n == 1 && lines[0].size == 1 && lines[0].ptr[0] == 'b');
  memstored_free(lines);
  CHECK(memstored_file_search(file, "nosuchmode", "b", -1, 0, &n) == NULL);
  LAST_IS(MEMSTORED_STATUS_INVALID_ARGUMENT_ERROR);
  CHECK(memstored_file_close(file));
  CHECK(memstored_dbm_close(mem));
  CHECK(memstored_dbm_close(dbm));
}

static void test_file(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/file.txt", dir);
  CHECK(memstored_file_open(path, true, "no_create=true") == NULL);
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  MemstoredFile* f = memstored_file_open(path, true, "truncate=true,no_lock=true");
  CHECK(f != NULL);
  if (f == NULL) return;
  int64_t off = -1;
  CHECK(memstored_file_append(f, "abc", 3, &off) && off == 0);
  CHECK(memstored_file_append(f, "def", 3, &off) && off == 3);
  CHECK(memstored_file_write(f, 1, "XY", 2));
  char buf[8] = {0};
  CHECK(memstored_file_read(f, 0, buf, 6) && memcmp(buf, "aXYdef", 6) == 0);
  CHECK(!memstored_file_read(f, 4, buf, 8));
  LAST_IS(MEMSTORED_STATUS_INFEASIBLE_ERROR);
  CHECK(memstored_file_truncate(f, 2) && memstored_file_get_size(f) == 2);
  CHECK(memstored_file_synchronize(f, true, 0, 0));
  CHECK(take_str(memstored_file_get_path(f), path));
  CHECK(memstored_file_close(f));
}

static void test_index(const char* dir) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/index.tkt", dir);
  MemstoredIndex* idx = memstored_index_open(path, true, "truncate=true,num_buckets=100");
  CHECK(idx != NULL);
  if (idx == NULL) return;
  CHECK(!memstored_index_check(idx, "single", -1, "1", -1));
  CHECK(memstored_index_add(idx, "single", -1, "1", -1));
  CHECK(memstored_index_add(idx, "single", -1, "2", -1));
  CHECK(memstored_index_add(idx, "double", -1, "11", -1));
  CHECK(memstored_index_check(idx, "single", -1, "1", -1));
  int32_t n = 0;
  MemstoredStr* values = memstored_index_get_values(idx, "single", -1, 0, &n);
  CHECK(values != NULL && n == 2 && strcmp(values[0].ptr, "1") == 0 &&
        strcmp(values[1].ptr, "2") == 0);
  memstored_free(values);
  CHECK(memstored_index_remove(idx, "single", -1, "1", -1));
  CHECK(!memstored_index_remove(idx, "single", -1, "x", -1));
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  CHECK(memstored_index_count(idx) == 2);
  CHECK(take_str(memstored_index_get_file_path(idx), path));
  CHECK(memstored_index_synchronize(idx, false) && memstored_index_rebuild(idx));
  CHECK(memstored_index_is_writable(idx));
  MemstoredIndexIter* it = memstored_index_make_iterator(idx);
  CHECK(it != NULL);
  memstored_index_iter_first(it);
  char *key = NULL, *value = NULL;
  CHECK(memstored_index_iter_get(it, &key, NULL, &value, NULL));
  CHECK(take_str(key, "double") && take_str(value, "11"));
  memstored_index_iter_next(it);
  CHECK(memstored_index_iter_get(it, &key, NULL, NULL, NULL) && take_str(key, "single"));
  memstored_index_iter_next(it);
  CHECK(!memstored_index_iter_get(it, NULL, NULL, NULL, NULL));
  LAST_IS(MEMSTORED_STATUS_NOT_FOUND_ERROR);
  memstored_index_iter_last(it);
  memstored_index_iter_previous(it);
  CHECK(memstored_index_iter_get(it, NULL, NULL, &value, NULL) && take_str(value, "11"));
  memstored_index_iter_jump(it, "single", -1, "", 0);
  CHECK(memstored_index_iter_get(it, NULL, NULL, &value, NULL) && take_str(value, "2"));
  CHECK(memstored_index_clear(idx) && memstored_index_count(idx) == 0);
  CHECK(memstored_index_close(idx));
  memstored_index_iter_free(it);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  test_rekey_and_queue();
  test_processors();
  test_compare_and_append();
  test_files_and_export(argv[1]);
  test_file(argv[1]);
  test_index(argv[1]);
  if (failures > 0) {
    fprintf(stderr, "%d checks failed\n", failures);
    return 1;
  }
  printf("all checks passed\n");
  return 0;
}
