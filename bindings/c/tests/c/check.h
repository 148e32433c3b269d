/* The checks the C test programs share: CHECK counts a failed condition
 * and prints it with the last status; LAST_IS checks the last status code. */

#ifndef MEMSTORED_TEST_CHECK_H
#define MEMSTORED_TEST_CHECK_H

#include "memstored.h"

#include <stdio.h>

static int failures = 0;

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last status %s: %s\n", __FILE__, \
              __LINE__, #cond,                                                   \
              memstored_status_code_name(memstored_get_last_status_code()),      \
              memstored_get_last_status_message());                              \
      failures++;                                                                \
    }                                                                            \
  } while (0)

#define LAST_IS(code) CHECK(memstored_get_last_status_code() == (code))

#endif
