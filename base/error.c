/* base/error.c — status codes and error messages (see error.h). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

int
ooc_utf8_len(const char *s, size_t avail)
{
  const unsigned char *u = (const unsigned char *)s;
  unsigned char c = u[0];
  size_t n, k;

  if (avail == 0)
    return 0;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4;
  else
    return 0;
  for (k = 1; k < n; k++)
    if (k >= avail || (u[k] & 0xc0) != 0x80)
      return 0;                 /* also stops at a terminating NUL */
  if ((c == 0xe0 && u[1] < 0xa0) || (c == 0xed && u[1] > 0x9f) ||
      (c == 0xf0 && u[1] < 0x90) || (c == 0xf4 && u[1] > 0x8f))
    return 0;
  return (int)n;
}

/* One line of text, always: a control character that came from user
 * input (a layer name or key with a newline, say) becomes '?', so the
 * CLI's message stays a single line; so does each byte that is not
 * UTF-8 (a name in another encoding, or one cut mid-character), so that
 * the message prints as text and goes into JSON as it is. */
void
ooc_text_one_line(char *s)
{
  unsigned char *u = (unsigned char *)s;

  while (*u) {
    int n = ooc_utf8_len((const char *)u, SIZE_MAX);
    if (n == 1 && (*u < 0x20 || *u == 0x7f))
      *u = '?';
    if (n == 0) {
      *u++ = '?';
      continue;
    }
    u += n;
  }
}

const char *
ooc_strerror(int code)
{
  switch (code) {
  case OOC_OK: return "success";
  case OOC_EINVAL: return "invalid input";
  case OOC_ENOMEM: return "out of host memory";
  case OOC_EIO: return "input/output error";
  case OOC_EPARSE: return "parse error";
  case OOC_ENOTFOUND: return "not found";
  case OOC_ERANGE: return "value out of range";
  case OOC_EOOM: return "device out of memory";
  case OOC_EUNSUP: return "not supported in this build";
  case OOC_EBUSY: return "in use by another process";
  default: return "unknown error";
  }
}

int
ooc_err_set(ooc_err *err, int code, const char *fmt, ...)
{
  va_list ap;

  if (err == NULL)
    return code;
  err->code = code;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  ooc_text_one_line(err->msg);
  return code;
}

int
ooc_err_prefix(ooc_err *err, int code, const char *fmt, ...)
{
  char head[OOC_ERR_MSG_MAX], old[OOC_ERR_MSG_MAX];
  va_list ap;

  if (err == NULL)
    return code;
  va_start(ap, fmt);
  vsnprintf(head, sizeof head, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  {
    size_t h = strlen(head), o = strlen(old);
    if (h > sizeof err->msg - 1)
      h = sizeof err->msg - 1;
    if (o > sizeof err->msg - 1 - h)
      o = sizeof err->msg - 1 - h;
    memcpy(err->msg, head, h);
    memcpy(err->msg + h, old, o);
    err->msg[h + o] = '\0';
  }
  ooc_text_one_line(err->msg);
  if (err->code == 0)
    err->code = code;
  return err->code;
}

void
ooc_err_clear(ooc_err *err)
{
  if (err != NULL) {
    err->code = 0;
    err->msg[0] = '\0';
  }
}
