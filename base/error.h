/* base/error.h — status codes and the error context carried up to the CLI.
 *
 * Every library function returns an int status: OOC_OK (0) or a negative
 * OOC_E* code. When it fails it also fills an ooc_err, if the caller passed
 * one, with a single human-readable line naming the file, layer, field or
 * option at fault (control characters from user input become '?', so the
 * message is always one line). The CLI prints that line prefixed with "oocsim: " and
 * exits 1. Library code never prints and never exits.
 *
 * The ooc_err is caller-owned (usually on the stack); it holds no heap
 * memory, so nothing needs freeing.
 */
#ifndef OOC_ERROR_H
#define OOC_ERROR_H

#include <stdarg.h>
#include <stddef.h>

enum {
  OOC_OK = 0,
  OOC_EINVAL = -1,   /* bad input: a field, option or value */
  OOC_ENOMEM = -2,   /* host allocation failed */
  OOC_EIO = -3,      /* a file could not be read or written */
  OOC_EPARSE = -4,   /* malformed JSON or plan file */
  OOC_ENOTFOUND = -5,/* unknown model, profile, planner, allocator, key */
  OOC_ERANGE = -6,   /* a value out of range or overflowing */
  OOC_EOOM = -7,     /* simulated device out of memory (a result, not a bug) */
  OOC_EUNSUP = -8,   /* not supported in this build (e.g. no CUDA) */
  OOC_EBUSY = -9     /* an output folder another process is writing */
};

#define OOC_ERR_MSG_MAX 512

typedef struct ooc_err {
  int code;
  char msg[OOC_ERR_MSG_MAX];
} ooc_err;

/* A short fixed description of a status code ("invalid input", ...). */
const char *ooc_strerror(int code);

/* Record an error: formats msg into err (if err is non-NULL) and returns
 * code, so callers can write `return ooc_err_set(err, OOC_EINVAL, ...)`. */
int ooc_err_set(ooc_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefix an existing message with more context ("models/x.json: " ...).
 * Returns err->code (or code if err is NULL). */
int ooc_err_prefix(ooc_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void ooc_err_clear(ooc_err *err);
/* The length (1 to 4) of the well-formed UTF-8 character at s, of which
 * avail bytes may be read (RFC 3629: no overlong form, no surrogate,
 * nothing above U+10FFFF), or 0 when it is not one. A NUL ends it. */
int ooc_utf8_len(const char *s, size_t avail);
/* s made one line of UTF-8 text in place, as every message is: each
 * control character and each byte that is not part of a well-formed
 * UTF-8 character becomes '?'. O(length). */
void ooc_text_one_line(char *s);

#endif
