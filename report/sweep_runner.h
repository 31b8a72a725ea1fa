/* report/sweep_runner.h — the points of a sweep run on worker threads while
 * the caller's thread waits, draws progress and saves what is done.
 *
 * Use: ooc_sweep_runner_alloc, ooc_sweep_runner_add for each point to run
 * (in ooc_sweep_runner_order), ooc_sweep_runner_start, then
 * ooc_sweep_runner_wait in a loop until it returns 0, with
 * ooc_sweep_runner_rows to snapshot the rows done so far and
 * ooc_sweep_runner_stop to stop claiming new points; finally
 * ooc_sweep_runner_join, ooc_sweep_runner_result and _free.
 *
 * Points are claimed unit by unit (same profile, --hw-set values and
 * batch) so a worker keeps its opened scenario, and with it the cached
 * in-core baseline, across the allocators, budgets and planners of a unit.
 * A budget below the largest working set is a point, not an error: its
 * row is the infeasible summary naming the step and the shortfall.
 *
 * Ownership: the runner borrows the grid (which must outlive it, unchanged)
 * and owns its threads and every row stored (ooc_sweep_runner_free frees
 * them); ooc_sweep_runner_rows lends their pointers. Cost: one scenario run
 * (or maxbatch search) per point, on min(jobs, points) threads.
 */
#ifndef OOC_SWEEP_RUNNER_H
#define OOC_SWEEP_RUNNER_H

#include <stdint.h>
#include "base/error.h"
#include "report/sweep_grid.h"

typedef struct ooc_sweep_runner ooc_sweep_runner;

/* The k-th point to claim (0 <= k < ooc_sweep_npoints(g)): unit by unit,
 * each unit's points in grid order. */
int64_t ooc_sweep_runner_order(const ooc_sweep_grid *g, int64_t k);

/* A runner for g whose rows have ncols cells (ooc_sweep_header). */
int ooc_sweep_runner_alloc(const ooc_sweep_grid *g, int ncols,
                           ooc_sweep_runner **out, ooc_err *err);

/* Queue point i (each point at most once, before start). */
void ooc_sweep_runner_add(ooc_sweep_runner *r, int64_t i);

/* Points queued. */
int64_t ooc_sweep_runner_count(const ooc_sweep_runner *r);

/* Start min(jobs, queued) worker threads; when none can be created, run
 * every point on the caller's thread before returning. */
int ooc_sweep_runner_start(ooc_sweep_runner *r, int jobs, ooc_err *err);

/* 0 once every claimed point is done. Otherwise wait up to timeout_s for
 * one to finish, then set *done and *total (points done and to do) and
 * return 1. */
int ooc_sweep_runner_wait(ooc_sweep_runner *r, double timeout_s,
                          int64_t *done, int64_t *total);

/* Stop claiming points: wait then returns 0 once those claimed are done. */
void ooc_sweep_runner_stop(ooc_sweep_runner *r);

/* Copy, at one instant, the row of every point (ooc_sweep_npoints(g)
 * pointers, NULL where none yet) into rows. The rows stay the runner's. */
void ooc_sweep_runner_rows(ooc_sweep_runner *r, char ***rows);

/* Wait for the worker threads to end (after wait returned 0). */
void ooc_sweep_runner_join(ooc_sweep_runner *r);

/* After join: points run, points whose run failed (left without a row)
 * and the error of the first of those in grid order, as "PLANNER at batch
 * B on HW: MESSAGE" ("" when none; valid until free). */
void ooc_sweep_runner_result(const ooc_sweep_runner *r, int64_t *ran,
                             int64_t *failed, const char **first_error);

/* Join, then free the runner and its rows; accepts NULL. */
void ooc_sweep_runner_free(ooc_sweep_runner *r);

#endif
