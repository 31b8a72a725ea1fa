/* cli/stdout.c — standard output that remembers why a write failed.
 *
 * A write error on stdout (a full disk, /dev/full, a closed pipe) shows
 * as ferror() only: by the time the command is done and main flushes,
 * errno has long been overwritten, and the reason is lost. stdout is
 * therefore replaced, before any command runs, by a stream on the same
 * descriptor (fopencookie) whose write keeps the errno of its first
 * failure. Every path that flushes stdout (main's exit, import's model)
 * reports through ooc_cli_stdout_flush/_close with that reason:
 * "oocsim: writing standard output: No space left on device".
 *
 * Ownership: one process-wide stream, closed once by _close. Cost: one
 * write(2) per buffer, as before.
 */
#define _GNU_SOURCE 1
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"

/* The errno of the first write to standard output that failed; 0: none. */
static int stdout_errno;

static ssize_t
stdout_write(void *cookie, const char *buf, size_t n)
{
  size_t done = 0;

  (void)cookie;
  while (done < n) {
    ssize_t w = write(STDOUT_FILENO, buf + done, n - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      if (stdout_errno == 0)
        stdout_errno = w < 0 ? errno : EIO;
      return done > 0 ? (ssize_t)done : -1;
    }
    done += (size_t)w;
  }
  return (ssize_t)done;
}

static int
stdout_close(void *cookie)
{
  (void)cookie;
  return close(STDOUT_FILENO);
}

void
ooc_cli_stdout_init(void)
{
  cookie_io_functions_t io = { .write = stdout_write,
                               .close = stdout_close };
  FILE *f = fopencookie(NULL, "w", io);

  if (f == NULL)
    return;     /* the plain stream: a failure is still caught, its
                   reason may not be */
  if (isatty(STDOUT_FILENO))
    setvbuf(f, NULL, _IOLBF, BUFSIZ);
  stdout = f;
}

/* The reason for a failure seen now (e: errno right after it, or 0). */
static const char *
reason(int e)
{
  if (stdout_errno != 0)
    return strerror(stdout_errno);
  return e != 0 ? strerror(e) : "a write failed";
}

int
ooc_cli_stdout_flush(void)
{
  ooc_err err = { 0 };

  if (ooc_cli_stdout_check(&err) == OOC_OK)
    return 0;
  return ooc_cli_fail("%s", err.msg);
}

int
ooc_cli_stdout_check(ooc_err *err)
{
  int e = fflush(stdout) != 0 ? errno : 0;

  if (e == 0 && !ferror(stdout))
    return OOC_OK;
  return ooc_err_set(err, OOC_EIO, "writing standard output: %s",
                     reason(e));
}

int
ooc_cli_stdout_close(int rc)
{
  int e = fflush(stdout) != 0 ? errno : 0;
  int lost = ferror(stdout) || e != 0 || stdout_errno != 0;

  /* A stdout closed before the start (EBADF) with nothing written to it
   * lost nothing. */
  if (fclose(stdout) != 0 && e == 0 && (errno != EBADF || lost))
    e = errno, lost = 1;
  if (lost && rc == 0)
    rc = ooc_cli_fail("writing standard output: %s", reason(e));
  return rc;
}
