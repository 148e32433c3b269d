// The README's C example: opens a hash store in the current directory,
// stores and reads a record, lists the records, and closes.
#include <stdio.h>
#include <stdlib.h>
#include "memstored.h"

static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, memstored_get_last_status_message());
  return 1;
}

int main(void) {
  MemstoredDBM *dbm = memstored_dbm_open("casket.tkh", true, "truncate=true,num_buckets=1000");
  if (dbm == NULL) return fail("open");
  if (!memstored_dbm_set(dbm, "hop", -1, "step", -1, true)) return fail("set");
  if (!memstored_dbm_set(dbm, "jump", -1, "land", -1, true)) return fail("set");
  int32_t size = 0;
  char *value = memstored_dbm_get(dbm, "hop", -1, &size);
  if (value == NULL) return fail("get");
  printf("hop is %s (%d bytes)\n", value, size);
  memstored_free(value);
  MemstoredDBMIter *iter = memstored_dbm_make_iterator(dbm);
  memstored_dbm_iter_first(iter);
  char *key;
  int32_t key_size;
  while (memstored_dbm_iter_step(iter, &key, &key_size, &value, &size)) {
    printf("%s\t%s\n", key, value);
    memstored_free(key);
    memstored_free(value);
  }
  memstored_dbm_iter_free(iter);
  if (!memstored_dbm_close(dbm)) return fail("close");
  return 0;
}
