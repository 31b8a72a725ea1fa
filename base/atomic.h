/* base/atomic.h — files replaced all at once: a reader sees the old file or
 * the new one, never a partial write, and a crash leaves the old one.
 *
 * ooc_atomic_open() creates a temporary file beside the target (same
 * folder, so the rename stays on one file system); the caller writes to
 * af->f; ooc_atomic_commit() flushes, syncs (fsync), closes and renames it
 * over the target; ooc_atomic_abort() closes and unlinks it instead. Used
 * for sweep results, and meant for every output a reader may open while
 * it is rewritten (plan files, traces).
 *
 * Ownership: ooc_atomic_file is caller-embedded; open fills it, commit or
 * abort (exactly one of them, after a successful open) releases everything
 * in it, whatever the outcome. Cost: one fsync per commit. The temporary
 * name is "<target>.tmp.<pid>.<n>", created with O_EXCL, so several
 * threads or processes writing the same target never share one; its mode
 * is that of fopen(path, "w") (0666 less the umask).
 *
 * The target is what a path names, not the name itself: a symbolic link
 * is followed (its file is replaced, the link kept), and a target that is
 * not a regular file (a FIFO, /dev/null, a terminal) is written in place,
 * since renaming over it would replace the node; a folder is refused up
 * front.
 */
#ifndef OOC_ATOMIC_H
#define OOC_ATOMIC_H

#include <stdio.h>
#include "base/error.h"

typedef struct ooc_atomic_file {
  FILE *f;                    /* write here between open and commit */
  char *path;                 /* the target (a copy) */
  char *tmp;                  /* the temporary file beside it (NULL when
                                 written in place) */
} ooc_atomic_file;

/* Create the temporary file for path. OOC_EIO names path and the system's
 * reason ("cannot write 'out/results.csv': Permission denied"); OOC_ENOMEM
 * when out of memory. On failure there is nothing to commit or abort. */
int ooc_atomic_open(ooc_atomic_file *af, const char *path, ooc_err *err);

/* Everything written so far on its way to the disk (fflush, and fsync for
 * a temporary file), the target not yet replaced: a command writing
 * several files prepares each, then commits them all, so that one that
 * cannot be written (a full disk, /dev/full) leaves none of them changed.
 * OOC_EIO naming the target on failure; af stays open for
 * ooc_atomic_abort(). */
int ooc_atomic_prepare(ooc_atomic_file *af, ooc_err *err);

/* Make what was written the content of the target: fflush, fsync, fclose,
 * rename. A write error left on the stream (ferror) counts as a failure.
 * On failure the temporary file is removed, the target is untouched and
 * err names the path and the reason (OOC_EIO). */
int ooc_atomic_commit(ooc_atomic_file *af, ooc_err *err);

/* The whole of text as the new content of path: open, fputs, commit. */
int ooc_atomic_write(const char *path, const char *text, ooc_err *err);

/* Could ooc_atomic_open write path? Its folder exists and takes files,
 * and path is no folder: checked before a command does its work, so
 * that an output it cannot write fails it before an earlier output is
 * written. The messages are ooc_atomic_open's. */
int ooc_atomic_check(const char *path, ooc_err *err);

/* Give up: close and unlink the temporary file; the target is untouched.
 * Keeps errno, so a caller can still report why it gave up. */
void ooc_atomic_abort(ooc_atomic_file *af);

/* An output folder owned by one process at a time: an exclusive flock on
 * DIR/.oocsim.lock (created when missing, removed by ooc_dir_unlock; it
 * holds the owner's pid; a file left by a killed process is taken over). Two sweeps (or reports) into one folder would each
 * rewrite its results with only their own rows; the second is refused:
 * OOC_EBUSY, "output directory 'DIR' is in use by another oocsim (pid N);
 * wait for it to finish or use another -o directory". The lock goes with
 * the process, so a killed sweep leaves nothing to clean up. *fd is the
 * lock (-1 on failure); ooc_dir_unlock(dir, fd) removes the file and
 * releases it, so a finished run leaves only its results. */
int ooc_dir_lock(const char *dir, int *fd, ooc_err *err);
void ooc_dir_unlock(const char *dir, int fd);

#endif
