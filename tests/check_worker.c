/* tests/check_worker.c — base/worker.c, the planners' speculative helper
 * thread: a collected job ran exactly when ooc_worker_collect says so (a
 * taken-back job never runs, not even later), a job known to have begun
 * is always collected as run with its result, and stop returns whether
 * or not a job was collected, and for a worker never started; with the
 * tests' eager hook every posted job runs, and the counts count.
 */
#include "config.h"

#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base/worker.h"

struct job {
  atomic_int begun;         /* set by the job as it starts */
  atomic_int runs;          /* times it ran */
  atomic_int release;       /* the job waits for it when hold is set */
  int hold;
  int in, out;
};

static void
job_fn(void *arg)
{
  struct job *j = arg;

  atomic_store(&j->begun, 1);
  while (j->hold && !atomic_load(&j->release))
    ;
  j->out = 2 * j->in;
  atomic_fetch_add(&j->runs, 1);
}

/* Posted and collected many times: collect says 1 exactly as often as a
 * job ran, whatever the thread's timing, and a job taken back is never
 * run afterwards (the count is checked after the stop too). */
START_TEST(collect_counts_runs)
{
  ooc_worker w;
  struct job j = { .hold = 0 };
  int said = 0;

  ck_assert_int_eq(ooc_worker_start(&w), 1);
  for (int i = 0; i < 2000; i++) {
    int before = atomic_load(&j.runs);
    j.in = i;
    ooc_worker_post(&w, job_fn, &j);
    if (ooc_worker_collect(&w)) {
      said++;
      ck_assert_int_eq(atomic_load(&j.runs), before + 1);
      ck_assert_int_eq(j.out, 2 * i);
    } else {
      ck_assert_int_eq(atomic_load(&j.runs), before);
    }
  }
  ooc_worker_stop(&w);
  ck_assert_int_eq(atomic_load(&j.runs), said);
}
END_TEST

/* Eager (the tests' hook): every posted job runs, collected as run with
 * its result, and the process-wide counts follow: ran counts each job,
 * used what the caller reports. */
START_TEST(eager_runs_every_job)
{
  ooc_worker w;
  struct job j = { .hold = 0 };
  unsigned long r0, u0, r1, u1;

  ooc_worker_counts(&r0, &u0);
  ooc_worker_set_eager(1);
  ck_assert_int_eq(ooc_worker_start(&w), 1);
  for (int i = 0; i < 500; i++) {
    j.in = i;
    ooc_worker_post(&w, job_fn, &j);
    ck_assert_int_eq(ooc_worker_collect(&w), 1);
    ck_assert_int_eq(j.out, 2 * i);
    if (i % 2 == 0)
      ooc_worker_used();
  }
  ooc_worker_stop(&w);
  ooc_worker_set_eager(0);
  ooc_worker_counts(&r1, &u1);
  ck_assert_int_eq(atomic_load(&j.runs), 500);
  ck_assert_uint_eq(r1 - r0, 500);
  ck_assert_uint_eq(u1 - u0, 250);
}
END_TEST

/* A job seen to begin is collected as run, after it ends. */
START_TEST(begun_is_collected)
{
  ooc_worker w;
  struct job j = { .hold = 0, .in = 21 };

  ck_assert_int_eq(ooc_worker_start(&w), 1);
  ooc_worker_post(&w, job_fn, &j);
  while (!atomic_load(&j.begun))
    ;
  ck_assert_int_eq(ooc_worker_collect(&w), 1);
  ck_assert_int_eq(j.out, 42);
  ck_assert_int_eq(atomic_load(&j.runs), 1);
  ooc_worker_stop(&w);
}
END_TEST

/* Stop while a job runs, not collected: it waits for the job, then the
 * thread ends (before the fix, the job's end overwrote the stop and the
 * join never returned). */
static void *
release_later(void *arg)
{
  struct job *j = arg;

  while (!atomic_load(&j->begun))
    ;
  atomic_store(&j->release, 1);
  return NULL;
}

START_TEST(stop_while_running)
{
  ooc_worker w;
  struct job j = { .hold = 1, .in = 5 };
  pthread_t th;

  ck_assert_int_eq(ooc_worker_start(&w), 1);
  ooc_worker_post(&w, job_fn, &j);
  while (!atomic_load(&j.begun))
    ;
  ck_assert_int_eq(pthread_create(&th, NULL, release_later, &j), 0);
  ooc_worker_stop(&w);
  pthread_join(th, NULL);
  ck_assert_int_eq(atomic_load(&j.runs), 1);
  ck_assert_int_eq(j.out, 10);
}
END_TEST

START_TEST(stop_never_started)
{
  ooc_worker w = { .started = 0 };

  ooc_worker_stop(&w);
  ck_assert_int_eq(w.started, 0);
}
END_TEST

static Suite *
worker_suite(void)
{
  Suite *s = suite_create("worker");
  TCase *tc = tcase_create("core");

  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, collect_counts_runs);
  tcase_add_test(tc, eager_runs_every_job);
  tcase_add_test(tc, begun_is_collected);
  tcase_add_test(tc, stop_while_running);
  tcase_add_test(tc, stop_never_started);
  suite_add_tcase(s, tc);
  return s;
}

int
main(void)
{
  SRunner *sr = srunner_create(worker_suite());
  int failed;

  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
