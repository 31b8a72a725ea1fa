/* report/sweep.h — what-if grids: expansion, parallel runs, CSV/JSON results,
 * resume, shards and merge (`oocsim sweep`, `oocsim report`).
 *
 * A grid is the cartesian product of its axes in one fixed order, the last
 * varying fastest:
 *
 *   hw  x  hw-set axis 1 x ... x hw-set axis k  x  allocator  x  budget
 *       x  planner  x  batch
 *
 * (in --maxbatch mode there is no batch axis: each point is a search for the
 * largest trainable batch). Point i of a grid always has the same
 * coordinates, so --shard K/N (points with i % N == K-1) and --merge can put
 * rows back in grid order, and a resumed run keeps that order too.
 *
 * Results are a table of strings (ooc_table): the coordinate columns
 * (model, set, hw, "hw_set:KEY" per hw-set axis, allocator, budget, planner,
 * batch), then every field of the summary object flattened (oom_reason, ...),
 * with the wall-clock columns (plan_wall_s, sim_wall_s) last so byte
 * comparisons can cut them. results.json is the same rows as an array of
 * flat objects (numbers as numbers, empty fields as null); grid.json records
 * the grid so --merge can restore its order.
 *
 * Cost: one ooc_scenario_run (or maxbatch search) per point, on -j threads;
 * the loaders and the simulator keep no global state. Resume matching is a
 * hash lookup per row.
 *
 * Ownership: ooc_sweep_grid is caller-embedded (ooc_sweep_grid_init/_fini)
 * and owns copies of every string. ooc_table likewise (ooc_table_init/_fini).
 */
#ifndef OOC_SWEEP_H
#define OOC_SWEEP_H

#include <stdint.h>
#include <stdio.h>
#include "base/error.h"
#include "analysis/scenario.h"

/* One --hw-set axis: "KEY=V1,V2" or "KEY1+KEY2=V1,V2" (every key set to the
 * same value at each point). */
typedef struct ooc_sweep_hwset {
  char *name;                 /* "link.h2d_GBps" or "KEY1+KEY2" */
  int n_keys;
  char **keys;
  int n_values;
  char **values;
} ooc_sweep_hwset;

typedef struct ooc_sweep_grid {
  char *model;                /* name or path */
  int n_sets;                 /* fixed --set K=V for the model */
  ooc_kv *sets;               /* owned key/value strings */
  char *set_label;            /* "K=V;K=V" ("" when none) */
  int maxbatch;               /* 1: points search the largest batch */
  int iterations;             /* 0: the runner's default */
  int n_batches;
  int64_t *batches;
  int n_hw;
  char **hw;
  int n_hwsets;
  ooc_sweep_hwset *hwsets;
  int n_allocators;
  char **allocators;
  int n_budgets;
  char **budgets;             /* as given ("default" for the profile's) */
  uint64_t *budget_bytes;     /* 0 for "default" */
  int n_planners;
  char **planners;
} ooc_sweep_grid;

void ooc_sweep_grid_init(ooc_sweep_grid *g);
void ooc_sweep_grid_fini(ooc_sweep_grid *g);

/* Axis parsers. Each checks its spec and returns OOC_EINVAL naming the
 * option on a malformed one (e.g. "-b 64:1:64", "-b x").
 *   batches: "256", "64,128,256" or a range "A:B:STEP" (A <= B, STEP >= 1)
 *   list:    comma-separated names (hw, allocators)
 *   planners: a list, or "all" for every registered planner
 *   budgets: sizes ("16GiB,8GiB"), or "default"
 *   hwset:   "KEY=V1,V2,..." or "K1+K2=V1,V2,..." */
int ooc_sweep_parse_batches(ooc_sweep_grid *g, const char *spec, ooc_err *err);
int ooc_sweep_parse_hw(ooc_sweep_grid *g, const char *spec, ooc_err *err);
int ooc_sweep_parse_planners(ooc_sweep_grid *g, const char *spec,
                             ooc_err *err);
int ooc_sweep_parse_allocators(ooc_sweep_grid *g, const char *spec,
                               ooc_err *err);
int ooc_sweep_parse_budgets(ooc_sweep_grid *g, const char *spec, ooc_err *err);
int ooc_sweep_add_hwset(ooc_sweep_grid *g, const char *spec, ooc_err *err);
/* A fixed model override "K=V" (--set). */
int ooc_sweep_add_set(ooc_sweep_grid *g, const char *kv, ooc_err *err);
int ooc_sweep_set_model(ooc_sweep_grid *g, const char *model, ooc_err *err);

/* Fill defaults (allocator "caching", budget "default") and check every
 * axis before anything runs: the model loads, the planners and allocators
 * exist, and every profile loads with every --hw-set value (an unknown key
 * is an error naming it). */
int ooc_sweep_grid_check(ooc_sweep_grid *g, ooc_err *err);

/* Number of points (product of the axis lengths). */
int64_t ooc_sweep_npoints(const ooc_sweep_grid *g);

/* A table of strings: ncols column names, nrows rows of ncols cells. */
typedef struct ooc_table {
  int ncols;
  char **cols;
  int64_t nrows, cap;
  char ***rows;
} ooc_table;

void ooc_table_init(ooc_table *t);
void ooc_table_fini(ooc_table *t);
/* Column index by name, or -1. */
int ooc_table_col(const ooc_table *t, const char *name);
/* Read a CSV file with a header line (RFC 4180 quoting). */
int ooc_table_read_csv(const char *path, ooc_table *t, ooc_err *err);
int ooc_table_write_csv(FILE *f, const ooc_table *t);
/* Array of flat objects; cells that parse as numbers (except in columns
 * that hold names) are written as numbers, empty cells as null. */
int ooc_table_write_json(FILE *f, const ooc_table *t);

/* The header of a grid's results (coordinate + summary columns). */
int ooc_sweep_header(const ooc_sweep_grid *g, ooc_table *t, ooc_err *err);
/* Number of leading coordinate columns in that header. */
int ooc_sweep_ncoords(const ooc_sweep_grid *g);

/* Progress callback, called on the caller's thread at most five times a
 * second while points run, then once with done == total (not at all when
 * every point was already done). */
typedef void (*ooc_sweep_progress_fn)(void *ctx, int64_t done, int64_t total,
                                      double elapsed_s);

typedef struct ooc_sweep_opts {
  int jobs;                   /* worker threads, >= 1 */
  int shard_k, shard_n;       /* run points with i % n == k-1; n=0: all */
  const char *dir;            /* output directory (created if missing) */
  int resume;                 /* 1: keep rows already in dir/results.csv */
  ooc_sweep_progress_fn progress;
  void *progress_ctx;
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

/* Join the results of shard directories into dir: all must come from the
 * same grid (grid.json) and header; rows are put back in grid order. */
int ooc_sweep_merge(const char *const *dirs, int n, const char *dir,
                    ooc_err *err);

/* Create dir if missing and check that a file can be written in it. */
int ooc_sweep_mkdir(const char *dir, ooc_err *err);

/* Write one CSV cell, quoted (RFC 4180) when it holds a comma, a quote or a
 * line break. */
void ooc_csv_cell(FILE *f, const char *s);

#endif
