/* base/error.c — status codes and error messages (see error.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

/* One line, always: a control character that came from user input (a
 * layer name or key with a newline, say) becomes '?', so the CLI's
 * message stays a single line. */
static void
one_line(char *s)
{
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      *s = '?';
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
  one_line(err->msg);
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
  one_line(err->msg);
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
