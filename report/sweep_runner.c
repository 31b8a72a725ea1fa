/* report/sweep_runner.c — the points of a sweep on -j pthreads
 * (sweep_runner.h).
 *
 * Workers claim points from the todo list under a mutex, run each with
 * their own opened scenario (nothing is shared between threads but the
 * grid, which is read-only, and the result slots, each written once under
 * the mutex), and signal the caller's thread after each point.
 *
 * Ownership: the runner owns its threads, the todo list and every row
 * stored; the grid is borrowed. Cost: one scenario run (or maxbatch
 * search) per point; a worker reopens its scenario only when the profile,
 * --hw-set values or batch change.
 */
#include "config.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/sweep_runner.h"
#include "report/sweep_row.h"
#include "analysis/maxbatch.h"
#include "analysis/scenario.h"
#include "planners/registry.h"
#include "base/strv.h"

struct ooc_sweep_runner {
  const ooc_sweep_grid *g;
  int ncols;
  int64_t np;                 /* points of the grid */
  int64_t *todo;              /* point indices to run, unit by unit */
  int64_t n_todo;             /* lowered to next to stop claiming */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t next;               /* next todo slot to claim */
  int64_t done;
  int64_t failed;
  char ***rows;               /* per point: its new row (NULL if none) */
  char first_error[OOC_ERR_MSG_MAX + 128];
  int64_t first_error_point;
  pthread_t *th;
  int nth;                    /* threads started */
};

/* A worker's open scenario, reused while its points share the model,
 * batch, profile and --hw-set values (the in-core baseline is cached in it). */
typedef struct scache {
  ooc_scenario *sc;
  int64_t unit;               /* point's unit id (see unit_of), -1: none */
} scache;

/* Points with the same unit id share one opened scenario: same profile,
 * --hw-set values, dtype, optimizer and batch (every axis outside the
 * allocator x budget x planner block). */
static int64_t
unit_of(const ooc_sweep_grid *g, int64_t i)
{
  int64_t inner = (int64_t)g->n_allocators * g->n_budgets * g->n_planners *
                  (g->maxbatch ? 1 : g->n_batches);
  int64_t nb = g->maxbatch ? 1 : g->n_batches;
  return (i / inner) * nb + (i % nb);
}

int64_t
ooc_sweep_runner_order(const ooc_sweep_grid *g, int64_t k)
{
  int64_t nb = g->maxbatch ? 1 : g->n_batches;
  int64_t nmid = (int64_t)g->n_allocators * g->n_budgets * g->n_planners;
  int64_t unit = k / nmid;
  return (unit / nb) * nmid * nb + (k % nmid) * nb + unit % nb;
}

/* Run point i (on the worker's cached scenario when it shares its unit)
 * and fill its row. */
static int
run_point(const ooc_sweep_grid *g, int64_t i, scache *cache, char **row,
          ooc_err *err)
{
  ooc_sweep_point p;
  ooc_hw_override ov[64];
  int nov = 0, rc;
  ooc_summary sum = { .feasible = 0 };
  int64_t best = 0;
  ooc_maxbatch_limit lim = { .batch = 0 };

  ooc_sweep_point_decode(g, i, &p);
  ooc_dtype dt = OOC_FP32;
  ooc_precision prec = OOC_PREC_NONE;
  ooc_optimizer opt = OOC_OPT_SGD_MOMENTUM;
  ooc_sweep_point_dtype(g, p.dtype, &dt, &prec);
  ooc_optimizer_parse(g->optimizers[p.optimizer], &opt);
  for (int j = 0; j < g->n_hwsets; j++)
    for (int q = 0; q < g->hwsets[j].n_keys && nov < 64; q++)
      ov[nov++] = (ooc_hw_override){ .key = g->hwsets[j].keys[q],
                                     .value = g->hwsets[j].values[p.hwset[j]] };
  ooc_scenario_spec spec = {
    .model = g->model,
    .batch = g->maxbatch ? 1 : g->batches[p.batch],
    .dtype_set = prec == OOC_PREC_NONE, .dtype = dt, .precision = prec,
    .optimizer = opt,
    .sets = g->sets, .n_sets = g->n_sets,
    .hw = g->hw[p.hw],
    .hw_sets = nov ? ov : NULL, .n_hw_sets = nov,
    .planner = g->planners[p.planner],
    .allocator = g->allocators[p.alloc],
    .budget = g->budget_bytes[p.budget],
    .iterations = g->iterations,
    .steady = g->steady,
  };
  if (g->maxbatch) {
    rc = ooc_maxbatch_find_limit(&spec, &best, &sum, &lim, err);
    if (!rc && best == 0) {
      /* No summary: only the budget the search ran under (the profile's
       * when the grid gives none) and why; ooc_sweep_row leaves the rest
       * empty. */
      ooc_scenario *one = NULL;
      ooc_summary_fini(&sum);
      sum = (ooc_summary){ .feasible = 0, .budget_bytes = spec.budget };
      sum.oom.instr = -1;
      snprintf(sum.oom.reason, sizeof sum.oom.reason,
               "not even batch 1 fits the budget");
      if (spec.budget == 0 && (rc = ooc_scenario_open(&spec, &one, err)) == 0)
        sum.budget_bytes = ooc_scenario_hw(one)->mem_usable;
      ooc_scenario_close(one);
    }
  } else {
    int64_t unit = unit_of(g, i);
    if (cache->unit != unit) {
      ooc_scenario_close(cache->sc);
      cache->sc = NULL;
      cache->unit = -1;
      if ((rc = ooc_scenario_open(&spec, &cache->sc, err)))
        return rc;
      cache->unit = unit;
    }
    /* A budget below the largest working set is a point of the grid, not
     * bad input: the same infeasible summary (step and shortfall) as
     * simulate gives for a profile that is too small, whose oom_reason
     * says why in the words simulate's error uses for this budget. The
     * check is the planner's, as simulate's is: one that offloads
     * parameters needs less. */
    const ooc_planner_type *pt = ooc_planner_find(spec.planner, NULL);
    int offload = pt != NULL && (pt->flags & OOC_PLANNER_OFFLOAD);
    ooc_err why = { 0 };
    if (spec.budget != 0 &&
        (rc = ooc_scenario_check_budget_size(cache->sc, spec.budget, err)))
      ooc_err_prefix(err, rc, "--budget: ");
    else if (ooc_scenario_check_budget_for(cache->sc, spec.budget, offload,
                                           &why)) {
      rc = ooc_scenario_no_fit(cache->sc, &spec, why.msg, &sum, err);
    } else
      rc = ooc_scenario_run_in(cache->sc, &spec, &sum, NULL, err);
  }
  if (rc) {
    ooc_summary_fini(&sum);
    return rc;
  }
  if (g->no_timing)
    sum.plan_wall_s = sum.sim_wall_s = 0;
  rc = ooc_sweep_row(g, i, best, &lim, &sum, row);
  ooc_summary_fini(&sum);
  return rc ? ooc_err_set(err, OOC_ENOMEM, "out of memory") : OOC_OK;
}

/* Claim points until none is left; store each row or count the failure
 * (the message of the first failing point in grid order is kept). */
static void *
worker(void *arg)
{
  struct ooc_sweep_runner *R = arg;
  scache cache = { .sc = NULL, .unit = -1 };
  for (;;) {
    int64_t slot, pt;
    char **row;
    ooc_err e = { 0 };
    int rc;

    pthread_mutex_lock(&R->mu);
    slot = R->next < R->n_todo ? R->next++ : -1;
    pthread_mutex_unlock(&R->mu);
    if (slot < 0)
      break;
    pt = R->todo[slot];
    row = calloc((size_t)R->ncols, sizeof *row);
    rc = row ? run_point(R->g, pt, &cache, row, &e)
             : ooc_err_set(&e, OOC_ENOMEM, "out of memory");
    pthread_mutex_lock(&R->mu);
    if (rc) {
      ooc_strv_free(row, R->ncols);
      R->failed++;
      if (R->first_error_point < 0 || pt < R->first_error_point) {
        ooc_sweep_point p;
        ooc_sweep_point_decode(R->g, pt, &p);
        R->first_error_point = pt;
        if (R->g->maxbatch)
          snprintf(R->first_error, sizeof R->first_error,
                   "%s on %s: %s", R->g->planners[p.planner],
                   R->g->hw[p.hw], e.msg);
        else
          snprintf(R->first_error, sizeof R->first_error,
                   "%s at batch %" PRId64 " on %s: %s",
                   R->g->planners[p.planner], R->g->batches[p.batch],
                   R->g->hw[p.hw], e.msg);
      }
    } else {
      R->rows[pt] = row;
    }
    R->done++;
    pthread_cond_signal(&R->cv);
    pthread_mutex_unlock(&R->mu);
  }
  ooc_scenario_close(cache.sc);
  return NULL;
}

int
ooc_sweep_runner_alloc(const ooc_sweep_grid *g, int ncols,
                       ooc_sweep_runner **out, ooc_err *err)
{
  ooc_sweep_runner *R = calloc(1, sizeof *R);
  int64_t np = ooc_sweep_npoints(g);

  *out = NULL;
  if (!R)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  R->g = g;
  R->ncols = ncols;
  R->np = np;
  R->first_error_point = -1;
  R->rows = calloc((size_t)(np ? np : 1), sizeof *R->rows);
  R->todo = malloc((size_t)(np ? np : 1) * sizeof *R->todo);
  if (!R->rows || !R->todo) {
    free(R->rows);
    free(R->todo);
    free(R);
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  }
  pthread_mutex_init(&R->mu, NULL);
  pthread_cond_init(&R->cv, NULL);
  *out = R;
  return OOC_OK;
}

void
ooc_sweep_runner_add(ooc_sweep_runner *R, int64_t point)
{
  R->todo[R->n_todo++] = point;
}

int64_t
ooc_sweep_runner_count(const ooc_sweep_runner *R)
{
  return R->n_todo;
}

int
ooc_sweep_runner_start(ooc_sweep_runner *R, int jobs, ooc_err *err)
{
  if (jobs > R->n_todo)
    jobs = R->n_todo > 0 ? (int)R->n_todo : 1;
  R->th = calloc((size_t)jobs, sizeof *R->th);
  if (!R->th)
    return ooc_err_set(err, OOC_ENOMEM, "out of memory");
  for (R->nth = 0; R->nth < jobs && R->n_todo > 0; R->nth++)
    if (pthread_create(&R->th[R->nth], NULL, worker, R) != 0)
      break;
  if (R->nth == 0 && R->n_todo > 0)
    worker(R);
  return OOC_OK;
}

int
ooc_sweep_runner_wait(ooc_sweep_runner *R, double timeout_s, int64_t *done,
                      int64_t *total)
{
  struct timespec ts;
  long ns = (long)(timeout_s * 1e9);

  pthread_mutex_lock(&R->mu);
  if (R->done >= R->n_todo) {
    pthread_mutex_unlock(&R->mu);
    return 0;
  }
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += ns / 1000000000L;
  ts.tv_nsec += ns % 1000000000L;
  if (ts.tv_nsec >= 1000000000L) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000L;
  }
  pthread_cond_timedwait(&R->cv, &R->mu, &ts);
  *done = R->done;
  *total = R->n_todo;
  pthread_mutex_unlock(&R->mu);
  return 1;
}

void
ooc_sweep_runner_stop(ooc_sweep_runner *R)
{
  pthread_mutex_lock(&R->mu);
  R->n_todo = R->next;
  pthread_mutex_unlock(&R->mu);
}

void
ooc_sweep_runner_rows(ooc_sweep_runner *R, char ***rows)
{
  pthread_mutex_lock(&R->mu);
  if (R->np > 0)
    memcpy(rows, R->rows, (size_t)R->np * sizeof *rows);
  pthread_mutex_unlock(&R->mu);
}

void
ooc_sweep_runner_join(ooc_sweep_runner *R)
{
  for (int i = 0; i < R->nth; i++)
    pthread_join(R->th[i], NULL);
  R->nth = 0;
}

void
ooc_sweep_runner_result(const ooc_sweep_runner *R, int64_t *ran,
                        int64_t *failed, const char **first_error)
{
  *ran = R->n_todo - R->failed;
  *failed = R->failed;
  *first_error = R->first_error;
}

void
ooc_sweep_runner_free(ooc_sweep_runner *R)
{
  if (!R)
    return;
  ooc_sweep_runner_join(R);
  pthread_mutex_destroy(&R->mu);
  pthread_cond_destroy(&R->cv);
  for (int64_t i = 0; i < R->np; i++)
    ooc_strv_free(R->rows[i], R->ncols);
  free(R->rows);
  free(R->todo);
  free(R->th);
  free(R);
}
