/* report/sweep_grid.h — the grid of a what-if sweep: its axes, how each is
 * given on the command line, and point i of the grid.
 *
 * A grid is the cartesian product of its axes in one fixed order, the last
 * varying fastest:
 *
 *   hw  x  hw-set axis 1 x ... x hw-set axis k  x  dtype  x  optimizer
 *       x  allocator  x  budget  x  planner  x  batch
 *
 * (in --maxbatch mode there is no batch axis: each point is a search for the
 * largest trainable batch). Point i of a grid always has the same
 * coordinates, so --shard K/N (points with i % N == K-1) and --merge can put
 * rows back in grid order, and a resumed run keeps that order too.
 * grid.json records the axes so that --merge can restore the order.
 *
 * Ownership: ooc_sweep_grid is caller-embedded (ooc_sweep_grid_init/_fini)
 * and owns copies of every string. Cost: decoding a point is O(axes).
 */
#ifndef OOC_SWEEP_GRID_H
#define OOC_SWEEP_GRID_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"

/* Most --hw-set axes a grid may have. */
#define OOC_SWEEP_MAX_HWSETS 32

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
  int steady;                 /* 1 (--steady): plan and simulate until the
                                 allocator is steady (sim/sim.h) */
  int no_timing;              /* 1 (--no-timing): wall-clock columns 0; not
                                 a coordinate, so not in grid.json */
  int n_batches;
  int64_t *batches;
  int n_hw;
  char **hw;
  int n_hwsets;
  ooc_sweep_hwset *hwsets;
  int n_dtypes;
  char **dtypes;              /* canonical names; default: the model's;
                                 precision names when precision is set */
  int precision;              /* 1: the dtype axis holds --precision values
                                 (fp32, tf32, amp-fp16, amp-bf16), each
                                 setting the dtypes as frameworks do */
  int n_optimizers;
  char **optimizers;          /* canonical names; default: momentum */
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
 *   batches: "256", "64,128,256", a range "A:B:STEP" (A, A+STEP, ... up to B;
 *            1 <= A <= B, STEP >= 1) or "A:B" (STEP 1)
 *   list:    comma-separated names (hw, allocators)
 *   planners: a list, or "all" for every registered planner
 *   budgets: sizes ("16GiB,8GiB"), or "default"
 *   hwset:   "KEY=V1,V2,..." or "K1+K2=V1,V2,..."
 *   dtypes:  "fp32,fp16" (fp32, fp16, bf16)
 *   precisions: "fp32,amp-bf16" (fp32, tf32, amp-fp16, amp-bf16): the
 *            dtype axis as --precision values (not with --dtype)
 *   optimizers: "sgd,adam" (sgd, momentum, adam) */
int ooc_sweep_parse_batches(ooc_sweep_grid *g, const char *spec, ooc_err *err);
/* The same, with opt naming the option in messages ("--batches" for
 * report's): ooc_sweep_parse_batches is this with "-b". */
int ooc_sweep_parse_batches_as(ooc_sweep_grid *g, const char *spec,
                               const char *opt, ooc_err *err);
int ooc_sweep_parse_hw(ooc_sweep_grid *g, const char *spec, ooc_err *err);
int ooc_sweep_parse_planners(ooc_sweep_grid *g, const char *spec,
                             ooc_err *err);
int ooc_sweep_parse_allocators(ooc_sweep_grid *g, const char *spec,
                               ooc_err *err);
int ooc_sweep_parse_budgets(ooc_sweep_grid *g, const char *spec, ooc_err *err);
int ooc_sweep_add_hwset(ooc_sweep_grid *g, const char *spec, ooc_err *err);
int ooc_sweep_parse_dtypes(ooc_sweep_grid *g, const char *spec, ooc_err *err);
int ooc_sweep_parse_precisions(ooc_sweep_grid *g, const char *spec,
                               ooc_err *err);
/* The dtype a point's dtype-axis value stands for (a precision's
 * activations' dtype when g->precision), and with the precision (or
 * OOC_PREC_NONE). */
void ooc_sweep_point_dtype(const ooc_sweep_grid *g, int idx, ooc_dtype *dt,
                           ooc_precision *prec);
int ooc_sweep_parse_optimizers(ooc_sweep_grid *g, const char *spec,
                               ooc_err *err);
/* A fixed model override "K=V" (--set). */
int ooc_sweep_add_set(ooc_sweep_grid *g, const char *kv, ooc_err *err);
int ooc_sweep_set_model(ooc_sweep_grid *g, const char *model, ooc_err *err);

/* Fill defaults (dtype: the model's, optimizer "momentum", allocator
 * "caching", budget "default") and check every
 * axis before anything runs: the model loads, the planners and allocators
 * exist, and every profile loads with every --hw-set value (an unknown key
 * is an error naming it). */
int ooc_sweep_grid_check(ooc_sweep_grid *g, ooc_err *err);

/* Number of points (product of the axis lengths). */
int64_t ooc_sweep_npoints(const ooc_sweep_grid *g);

/* A value repeated on an axis of g (a read grid.json's: a sweep's own
 * axes are refused as they are parsed): 1 with *field its grid.json field
 * and what[] saying which value, e.g. "'v100-pcie3' given twice", 0
 * when none, -1 out of memory. O(n log n) in the batches, O(n^2) in the
 * other (short) axes. */
int ooc_sweep_grid_repeat(const ooc_sweep_grid *g, const char **field,
                          char *what, size_t n);

/* The most points a grid may have: a sweep of more would not finish, and
 * the product of its axes could overflow. */
#define OOC_SWEEP_MAX_POINTS 1000000000LL

/* 1 when the product of g's axis lengths is above OOC_SWEEP_MAX_POINTS
 * (computed without overflow), else 0. */
int ooc_sweep_too_big(const ooc_sweep_grid *g);

/* The coordinates of a point: an index into each axis. */
typedef struct ooc_sweep_point {
  int hw, dtype, optimizer, alloc, budget, planner, batch;
  int hwset[OOC_SWEEP_MAX_HWSETS];
} ooc_sweep_point;

/* Point i of g (mixed radix, batch fastest); batch is 0 in --maxbatch
 * mode. */
void ooc_sweep_point_decode(const ooc_sweep_grid *g, int64_t i,
                            ooc_sweep_point *p);

/* Number of coordinate columns of g's results: model, set, hw, one
 * "hw_set:KEY" per --hw-set axis, allocator, budget, planner, batch
 * (unless in --maxbatch mode), precision (only with a --precision axis),
 * dtype and optimizer: the first columns of every row
 * (docs/output-schema.md). */
int ooc_sweep_ncoords(const ooc_sweep_grid *g);

/* The coordinate cells of point i as heap strings, into cells[0 ..
 * ooc_sweep_ncoords(g)). OOC_ENOMEM when one could not be made (those
 * made are in cells, for the caller to free). */
int ooc_sweep_point_coords(const ooc_sweep_grid *g, int64_t i, char **cells);

/* grid.json: the axes of g as pretty-printed JSON text ending in a
 * newline (heap string, caller frees); NULL when out of memory. */
char *ooc_sweep_grid_to_json(const ooc_sweep_grid *g);

/* Rebuild a grid's axes (unchecked) from grid.json text; OOC_EPARSE
 * "PATH: not a sweep grid file" when it is not one. g is initialised
 * here. */
int ooc_sweep_grid_from_json(const char *text, const char *path,
                             ooc_sweep_grid *g, ooc_err *err);

#endif
