/* base/worker.h — one helper thread for speculative work: the caller
 * posts a job, goes on with its own, then collects. A job the thread has
 * not started by then is taken back (the caller does it itself, or not at
 * all), so a helper kept off the cores by other work costs the caller a
 * lock and a signal, never a wait for a job that has not begun.
 *
 * The planners' group tests use it (planners/pooch.c, planners/joint.c):
 * while a candidate is simulated, the helper simulates the one that
 * follows it should it fail; the caller takes that result only when it
 * does, as if it had run it itself.
 *
 * Ownership: ooc_worker is caller-embedded; ooc_worker_start makes the
 * thread, ooc_worker_stop joins it (and accepts a worker never started).
 * The job's argument belongs to the caller, who must not touch what the
 * job reads or writes between post and collect. Not for more than one
 * caller thread.
 */
#ifndef OOC_WORKER_H
#define OOC_WORKER_H

#include <pthread.h>

typedef struct ooc_worker {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state;                /* idle, posted, running, done, quit */
  int started;              /* 1 once ooc_worker_start made the thread */
  void (*fn)(void *);       /* the job posted */
  void *arg;
} ooc_worker;

/* Start the thread: 1, or 0 when none could be made (then post nothing:
 * the caller works alone). */
int ooc_worker_start(ooc_worker *w);

/* Post fn(arg); the worker must be started and have nothing posted. */
void ooc_worker_post(ooc_worker *w, void (*fn)(void *), void *arg);

/* Wait for the posted job if it has begun: 1 when it ran (its results are
 * in arg), 0 when it was taken back before it began. */
int ooc_worker_collect(ooc_worker *w);

/* Stop and join the thread; a job posted and not collected is waited
 * for when it has begun, else never run. */
void ooc_worker_stop(ooc_worker *w);

/* For tests, process-wide. Whether a posted job runs depends on the
 * race between the helper and the caller, so a test that compares a
 * planner's threads=2 plan with its threads=1 plan may never see the
 * helper's results used. With eager set, ooc_worker_collect waits for
 * a posted job to run instead of taking it back: every posted job runs,
 * and what the caller then uses is decided by the search alone, the same
 * every run. Default off. */
void ooc_worker_set_eager(int on);

/* The caller used the result of a job the helper ran (it calls this once
 * per such result, as the planners do when they take a candidate's
 * simulation from the helper). */
void ooc_worker_used(void);

/* Process-wide counts since the start: jobs helpers ran, and of them
 * those whose results their callers used (ooc_worker_used). */
void ooc_worker_counts(unsigned long *ran, unsigned long *used);

#endif
