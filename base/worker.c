/* base/worker.c — the speculative helper thread of worker.h: a mutex, a
 * condition variable and a state the caller and the thread move along,
 * idle -> posted -> running -> done -> idle, or posted -> idle when the
 * caller takes the job back first.
 */
#include "config.h"

#include <stdatomic.h>

#include "base/worker.h"

enum { W_IDLE, W_POSTED, W_RUNNING, W_DONE, W_QUIT };

/* The test hooks of worker.h. */
static atomic_int eager;
static atomic_ulong n_ran, n_used;

static void *
worker_main(void *arg)
{
  ooc_worker *w = arg;

  pthread_mutex_lock(&w->mu);
  for (;;) {
    while (w->state != W_POSTED && w->state != W_QUIT)
      pthread_cond_wait(&w->cv, &w->mu);
    if (w->state == W_QUIT)
      break;
    w->state = W_RUNNING;
    pthread_mutex_unlock(&w->mu);
    w->fn(w->arg);
    atomic_fetch_add_explicit(&n_ran, 1, memory_order_relaxed);
    pthread_mutex_lock(&w->mu);
    if (w->state == W_RUNNING)  /* (not over a stop's W_QUIT) */
      w->state = W_DONE;
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

int
ooc_worker_start(ooc_worker *w)
{
  *w = (ooc_worker){ .state = W_IDLE };
  if (pthread_mutex_init(&w->mu, NULL) != 0)
    return 0;
  if (pthread_cond_init(&w->cv, NULL) != 0) {
    pthread_mutex_destroy(&w->mu);
    return 0;
  }
  if (pthread_create(&w->th, NULL, worker_main, w) != 0) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    return 0;
  }
  w->started = 1;
  return 1;
}

void
ooc_worker_post(ooc_worker *w, void (*fn)(void *), void *arg)
{
  pthread_mutex_lock(&w->mu);
  w->fn = fn;
  w->arg = arg;
  w->state = W_POSTED;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

int
ooc_worker_collect(ooc_worker *w)
{
  int ran;

  pthread_mutex_lock(&w->mu);
  while (w->state == W_RUNNING ||
         (w->state == W_POSTED &&
          atomic_load_explicit(&eager, memory_order_relaxed)))
    pthread_cond_wait(&w->cv, &w->mu);
  ran = w->state == W_DONE;
  w->state = W_IDLE;
  pthread_mutex_unlock(&w->mu);
  return ran;
}

void
ooc_worker_stop(ooc_worker *w)
{
  if (!w->started)
    return;
  pthread_mutex_lock(&w->mu);
  while (w->state == W_RUNNING)   /* a job not collected: let it end */
    pthread_cond_wait(&w->cv, &w->mu);
  w->state = W_QUIT;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  w->started = 0;
}

void
ooc_worker_set_eager(int on)
{
  atomic_store(&eager, on != 0);
}

void
ooc_worker_used(void)
{
  atomic_fetch_add_explicit(&n_used, 1, memory_order_relaxed);
}

void
ooc_worker_counts(unsigned long *ran, unsigned long *used)
{
  *ran = atomic_load(&n_ran);
  *used = atomic_load(&n_used);
}
