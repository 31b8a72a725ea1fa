/* report/sweep.h — what-if sweeps: run every point of a grid on -j
 * threads and write DIR/results.csv, DIR/results.json and DIR/grid.json;
 * resume, shards and merge (`oocsim sweep`, `oocsim report`).
 *
 * The pieces, each with its header: the grid and its points
 * (sweep_grid.h), the result columns and rows (sweep_row.h), the string
 * table and its CSV/JSON files (table.h), the rows already done
 * (sweep_resume.h) and the worker threads (sweep_runner.h). This module
 * puts them together.
 *
 * Results are a table of strings (ooc_table): the coordinate columns, then
 * every field of the summary object flattened, with the wall-clock columns
 * (plan_wall_s, sim_wall_s) last so byte comparisons can cut them.
 * results.json is the same rows as an array of flat objects (numbers as
 * numbers, empty fields as null); grid.json records the grid so --merge
 * can restore its order. Every file is replaced atomically
 * (base/atomic.h): an interrupted sweep leaves whole files behind.
 *
 * Cost: one ooc_scenario_run (or maxbatch search) per point, on -j threads;
 * the loaders and the simulator keep no global state. Resume matching is a
 * hash lookup per row.
 *
 * Ownership: the grid and the options are borrowed; a table returned is
 * the caller's (ooc_table_fini).
 */
#ifndef OOC_SWEEP_H
#define OOC_SWEEP_H

#include <stdint.h>
#include "base/error.h"
#include "base/progress.h"
#include "report/sweep_grid.h"
#include "report/sweep_row.h"
#include "report/table.h"

typedef struct ooc_sweep_opts {
  int jobs;                   /* worker threads, >= 1 */
  int shard_k, shard_n;       /* run points with i % n == k-1; n=0: all */
  const char *dir;            /* output directory (created if missing) */
  int resume;                 /* 1: keep rows already in dir/results.csv */
  ooc_progress *progress;     /* points done (base/progress.h); NULL: none */
  const char *progress_note;  /* shown beside it ("bandwidth"); may be NULL */
} ooc_sweep_opts;

typedef struct ooc_sweep_stats {
  int64_t points;             /* grid points in this shard */
  int64_t skipped;            /* already present (resume) */
  int64_t ran;                /* run now */
  int64_t failed;             /* points whose run returned an error */
  char first_error[OOC_ERR_MSG_MAX + 128];
  double wall_s;
} ooc_sweep_stats;

/* Run the grid and write dir/results.csv, dir/results.json and
 * dir/grid.json (rewritten every few seconds while it runs, so an
 * interrupted sweep resumes where it stopped). A point whose run fails is
 * counted in st->failed and left out of the results (a resume retries it);
 * the sweep still returns OOC_OK. If table is non-NULL it receives the final
 * rows. Returns OOC_EIO naming the path when dir cannot be written. */
int ooc_sweep_run(const ooc_sweep_grid *g, const ooc_sweep_opts *o,
                  ooc_sweep_stats *st, ooc_table *table, ooc_err *err);

/* What a merge found (ooc_sweep_merge). */
typedef struct ooc_sweep_merged {
  int64_t points;             /* grid points */
  int64_t present;            /* of them, those some shard holds */
  int64_t dups;               /* rows a later shard held again (dropped) */
  char first_missing[512];    /* the first point none holds, "col=value, ..." */
} ooc_sweep_merged;

/* Join the results of shard directories into dir: all must come from the
 * same grid (grid.json) and header, and every row must be a point of it
 * (OOC_EINVAL naming the shard and line); rows are put back in grid
 * order, a point two shards hold once (the first directory's). *ms says
 * how many points the merge holds: fewer than the grid's when a shard was
 * not finished or a point failed (a sweep of the same grid into dir runs
 * just those). */
int ooc_sweep_merge(const char *const *dirs, int n, const char *dir,
                    ooc_sweep_merged *ms, ooc_err *err);

/* Create dir if missing and check that a file can be written in it. */
int ooc_sweep_mkdir(const char *dir, ooc_err *err);

#endif
