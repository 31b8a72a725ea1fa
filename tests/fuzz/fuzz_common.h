/* tests/fuzz/fuzz_common.h — what the libFuzzer targets share: the input
 * as a NUL-terminated copy (the loaders take C strings), and the rule
 * every target checks: a loader either succeeds or fails with a one-line
 * message; it never crashes, leaks (LeakSanitizer) or overflows (UBSan).
 */
#ifndef OOC_FUZZ_COMMON_H
#define OOC_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

/* A heap copy of data with a terminating NUL (caller frees). */
static inline char *
fuzz_text(const uint8_t *data, size_t size)
{
  char *t = malloc(size + 1);

  if (t != NULL) {
    memcpy(t, data, size);
    t[size] = '\0';
  }
  return t;
}

/* A failure's message is one non-empty line. */
static inline void
fuzz_check_message(int rc, const ooc_err *err)
{
  if (rc != OOC_OK && (err->msg[0] == '\0' || strchr(err->msg, '\n')))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
