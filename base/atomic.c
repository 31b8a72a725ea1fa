/* base/atomic.c — write-to-temporary, fsync, rename (atomic.h).
 *
 * Ownership: the two path copies and the stream live from open to commit
 * or abort. Cost: at most ATTEMPTS open() calls to find a free temporary
 * name, one fsync per commit.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"

/* Temporary names tried before giving up (each taken one is EEXIST). */
#define ATTEMPTS 100

static void
release(ooc_atomic_file *af)
{
  free(af->path);
  free(af->tmp);
  *af = (ooc_atomic_file){ .f = NULL };
}

/* "-" as an output: a user means standard output, which the files
 * written through here are not (a file named "-" was made). */
static int
dash(ooc_err *err)
{
  return ooc_err_set(err, OOC_EINVAL, "'-': this output is a file, not "
                     "standard output; name one ('./-' for a file called "
                     "'-')");
}

int
ooc_atomic_open(ooc_atomic_file *af, const char *path, ooc_err *err)
{
  size_t n;
  int fd = -1, k;
  struct stat st;
  char *real = NULL;

  *af = (ooc_atomic_file){ .f = NULL };
  if (path[0] == '\0')
    return ooc_err_set(err, OOC_EINVAL, "empty output name");
  if (strcmp(path, "-") == 0)
    return dash(err);
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    /* Replace the file the link names, and keep the link. */
    if ((real = realpath(path, NULL)) == NULL)
      return ooc_err_set(err, OOC_EIO, "cannot write '%s': a symbolic "
                         "link to %s", path, errno == ENOENT
                             ? "a missing file" : strerror(errno));
  }
  if (stat(real != NULL ? real : path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      free(real);
      return ooc_err_set(err, OOC_EIO, "cannot write '%s': is a directory",
                         path);
    }
    if (!S_ISREG(st.st_mode)) {
      /* A FIFO, a device: write into it; a rename would replace it. */
      FILE *f = fopen(real != NULL ? real : path, "w");
      int e = errno;
      free(real);
      if (f == NULL)
        return ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", path,
                           strerror(e));
      if ((af->path = strdup(path)) == NULL) {
        fclose(f);
        return ooc_err_set(err, OOC_ENOMEM, "out of memory");
      }
      af->f = f;
      return OOC_OK;
    }
  }
  af->path = real != NULL ? real : strdup(path);
  n = strlen(path) + (real != NULL ? strlen(real) : 0) + 48;
  af->tmp = malloc(n);
  if (af->path == NULL || af->tmp == NULL) {
    release(af);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  path = af->path;
  for (k = 0; k < ATTEMPTS && fd < 0; k++) {
    snprintf(af->tmp, n, "%s.tmp.%ld.%d", path, (long)getpid(), k);
    fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0 || (af->f = fdopen(fd, "w")) == NULL) {
    int e = errno;
    if (fd >= 0) {
      close(fd);
      unlink(af->tmp);
    }
    ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", path, strerror(e));
    release(af);
    return OOC_EIO;
  }
  return OOC_OK;
}

/* fflush, then fsync for a temporary file: 0, or the errno of the step
 * that failed, named in *what. */
static int
flush_sync(ooc_atomic_file *af, const char **what)
{
  *what = "write";
  errno = 0;
  if (fflush(af->f) != 0 || ferror(af->f))
    return errno != 0 ? errno : EIO;
  if (af->tmp != NULL && fsync(fileno(af->f)) != 0) {
    *what = "sync";
    return errno;
  }
  return 0;
}

int
ooc_atomic_prepare(ooc_atomic_file *af, ooc_err *err)
{
  const char *what;
  int e = flush_sync(af, &what);

  if (e != 0)
    return ooc_err_set(err, OOC_EIO, "cannot %s '%s': %s", what, af->path,
                       strerror(e));
  return OOC_OK;
}

int
ooc_atomic_commit(ooc_atomic_file *af, ooc_err *err)
{
  const char *what;
  int e = flush_sync(af, &what);

  if (af->tmp == NULL) {
    /* Written in place: a device or FIFO may not sync. */
    if (fclose(af->f) != 0 && e == 0)
      e = errno;
    af->f = NULL;
    if (e != 0) {
      ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", af->path,
                  strerror(e));
      release(af);
      return OOC_EIO;
    }
    release(af);
    return OOC_OK;
  }
  if (fclose(af->f) != 0 && e == 0)
    e = errno;
  af->f = NULL;
  if (e == 0 && rename(af->tmp, af->path) != 0) {
    e = errno;
    what = "rename into";
  }
  if (e != 0) {
    unlink(af->tmp);
    ooc_err_set(err, OOC_EIO, "cannot %s '%s': %s", what, af->path,
                strerror(e));
    release(af);
    return OOC_EIO;
  }
  release(af);
  return OOC_OK;
}

int
ooc_atomic_check(const char *path, ooc_err *err)
{
  const char *slash = strrchr(path, '/');
  char *dir;
  struct stat st;
  int ok;

  if (path[0] == '\0')
    return ooc_err_set(err, OOC_EINVAL, "empty output name");
  if (strcmp(path, "-") == 0)
    return dash(err);
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return ooc_err_set(err, OOC_EIO, "cannot write '%s': is a directory",
                       path);
  if (slash == NULL)
    dir = strdup(".");
  else if (slash == path)
    dir = strdup("/");
  else
    dir = strndup(path, (size_t)(slash - path));
  if (dir == NULL)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
       access(dir, W_OK | X_OK) == 0;
  if (!ok) {
    int e = errno != 0 ? errno : ENOTDIR;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
      e = ENOTDIR;
    free(dir);
    return ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", path,
                       strerror(e));
  }
  free(dir);
  return OOC_OK;
}

void
ooc_atomic_abort(ooc_atomic_file *af)
{
  int e = errno;

  if (af->f != NULL)
    fclose(af->f);
  if (af->tmp != NULL)
    unlink(af->tmp);
  release(af);
  errno = e;
}

int
ooc_atomic_write(const char *path, const char *text, ooc_err *err)
{
  ooc_atomic_file af;
  int rc;

  if ((rc = ooc_atomic_open(&af, path, err)) < 0)
    return rc;
  /* A text longer than the stream's buffer is written here, and its
   * error (ENOSPC) would be gone by the commit's flush: said now. */
  errno = 0;
  if (fputs(text, af.f) == EOF) {
    int e = errno != 0 ? errno : EIO;
    ooc_atomic_abort(&af);
    return ooc_err_set(err, OOC_EIO, "cannot write '%s': %s", path,
                       strerror(e));
  }
  return ooc_atomic_commit(&af, err);
}

int
ooc_dir_lock(const char *dir, int *fd, ooc_err *err)
{
  char path[4096], pid[32] = "";
  struct stat a, b;
  ssize_t n;
  int e, f, tries;

  *fd = -1;
  if ((size_t)snprintf(path, sizeof path, "%s/.oocsim.lock", dir) >=
      sizeof path)
    return ooc_err_set(err, OOC_EINVAL, "output directory name too long");
  /* The holder removes the file before it lets go: a lock taken on a file
   * that is no longer the one at path guards nothing, so take it again
   * (a few times: each retry means another run just finished). */
  for (tries = 0;; tries++) {
    f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (f < 0)
      return ooc_err_set(err, OOC_EIO, "cannot lock output directory '%s': "
                         "%s", dir, strerror(errno));
    if (flock(f, LOCK_EX | LOCK_NB) != 0) {
      e = errno;
      if (e == EWOULDBLOCK) {
        n = pread(f, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        close(f);
        return ooc_err_set(err, OOC_EBUSY, "output directory '%s' is in use "
                           "by another oocsim%s%s%s; wait for it to finish "
                           "or use another -o directory", dir,
                           pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "");
      }
      close(f);
      return ooc_err_set(err, OOC_EIO, "cannot lock output directory '%s': "
                         "%s", dir, strerror(e));
    }
    if (fstat(f, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
      break;
    close(f);
    if (tries == 100)
      return ooc_err_set(err, OOC_EBUSY, "output directory '%s' is in use "
                         "by another oocsim; wait for it to finish or use "
                         "another -o directory", dir);
  }
  n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (ftruncate(f, 0) != 0 || pwrite(f, pid, (size_t)n, 0) != n) {
    /* The pid is only for the message: the lock holds without it. */
  }
  *fd = f;
  return OOC_OK;
}

void
ooc_dir_unlock(const char *dir, int fd)
{
  char path[4096];

  if (fd < 0)
    return;
  /* Removed while held: whoever opens the path next makes a new file. */
  if ((size_t)snprintf(path, sizeof path, "%s/.oocsim.lock", dir) <
      sizeof path)
    unlink(path);
  close(fd);
}
