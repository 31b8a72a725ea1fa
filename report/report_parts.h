/* report/report_parts.h — the parts of ooc_report_run (report.h) and the
 * data they hand on; private to report/report*.c.
 *
 *   report_data.c   load the scenario, run the sweeps behind every table
 *                   and plot (kept under DIR/data/), pick the winner
 *   report_plots.c  draw the plots; run the winner once more, traced, for
 *                   its memory curve and timeline
 *   report_write.c  the document, one function per section
 *   report.c        ooc_report_run: the parts in that order, then the
 *                   status (gnuplot missing, points failed)
 *
 * Ownership: ooc_report_data owns the model, the profile and every table
 * (ooc_report_data_init/_fini). Cost: see report.h.
 */
#ifndef OOC_REPORT_PARTS_H
#define OOC_REPORT_PARTS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/error.h"
#include "ir/hw.h"
#include "ir/model.h"
#include "report/report.h"
#include "report/table.h"
#include "analysis/explain.h"

/* Most what-if links. */
#define OOC_REPORT_MAX_LINKS 8

/* The report's plots (its images in DIR), in drawing order. */
enum { OOC_REPORT_PLOTS = 5 };
extern const char *const ooc_report_plot_files[OOC_REPORT_PLOTS];

/* The plots drawn, the first failure, and why each one that failed did
 * (why[k] for ooc_report_plot_files[k], "" when it was drawn or not
 * tried). */
typedef struct ooc_report_plots {
  int drawn, missing, failed;
  int first_rc;
  char first_msg[OOC_ERR_MSG_MAX];
  char why[OOC_REPORT_PLOTS][OOC_ERR_MSG_MAX];
} ooc_report_plots;

/* Why the plot in file (one of ooc_report_plot_files) is not drawn:
 * its own failure, else the first (a plot not tried). */
const char *ooc_report_plot_why(const ooc_report_plots *pl,
                                const char *file);

typedef struct ooc_report_data {
  ooc_model *model;           /* at the report's batch */
  ooc_hw *hw;
  char batches[256];          /* the throughput batches ("64,128,...") */
  ooc_table thr;              /* every planner at those batches */
  ooc_table bw;               /* every planner over link bandwidths at B */
  ooc_table mb;               /* largest batch per planner (have_mb) */
  int have_mb;
  ooc_table wi[OOC_REPORT_MAX_LINKS];      /* what-if: each link at B */
  const char *wi_name[OOC_REPORT_MAX_LINKS];
  int n_wi;
  int64_t win;                /* row of thr winning at B, -1: none fits */
  int64_t failed;             /* points whose run failed, all sweeps */
  char note[OOC_ERR_MSG_MAX + 200];        /* "SWEEP: first error" */
  int bw_any;                 /* some planner fits at some bandwidth */
  double win_stall_s;         /* the winner's compute stalls, seconds */
  ooc_explain win_explain;    /* the winner per tensor class (explain.h) */
  int64_t points_done, points_total;       /* progress, all sweeps */
  ooc_report_plots pl;
} ooc_report_data;

void ooc_report_data_init(ooc_report_data *d);
void ooc_report_data_fini(ooc_report_data *d);

/* Load o's model and profile into d and check every option before
 * anything is written: the planners, batches and allocator the sweeps
 * will take, and a --budget against the working set at o->batch (below
 * it is bad input, as for simulate and compare). */
int ooc_report_load(const ooc_report_opts *o, ooc_report_data *d,
                    ooc_err *err);

/* After ooc_report_load: run the throughput, bandwidth, maxbatch
 * (o->maxbatch) and what-if sweeps into DIR/data/, and set d->win. */
int ooc_report_collect(const ooc_report_opts *o, ooc_report_data *d,
                       ooc_err *err);

/* Remove an earlier report's document and images from DIR, before this
 * one writes its data there: the document would show data and images not
 * its own, and an image left behind would be shown as drawn
 * (ooc_doc_img looks for the file). OOC_EIO naming the file. */
int ooc_report_clear(const ooc_report_opts *o, ooc_err *err);

/* Draw the plots (counted in d->pl; a plot that fails is not an error
 * here) after the traced run of the winner, whose failure is. */
int ooc_report_draw(const ooc_report_opts *o, ooc_report_data *d,
                    ooc_err *err);

/* Write DIR/report.md and DIR/report.html; info->winner is set. */
int ooc_report_write(const ooc_report_opts *o, const ooc_report_data *d,
                     ooc_report_info *info, ooc_err *err);

/* Reading a results table (sweep_row.h columns), row r, column col: tv a
 * number (NaN when absent, empty or not a number), ts a string ("" when
 * absent), feasible whether the point fits. Used on most lines of the
 * parts, hence the short names. */
static inline double
tv(const ooc_table *t, int64_t r, const char *col)
{
  int c = ooc_table_col(t, col);
  char *e;
  double v;
  if (c < 0 || r < 0 || r >= t->nrows || !t->rows[r][c][0])
    return NAN;
  v = strtod(t->rows[r][c], &e);
  return *e ? NAN : v;
}

static inline const char *
ts(const ooc_table *t, int64_t r, const char *col)
{
  int c = ooc_table_col(t, col);
  return c < 0 || r < 0 || r >= t->nrows ? "" : t->rows[r][c];
}

static inline int
feasible(const ooc_table *t, int64_t r)
{
  return strcmp(ts(t, r, "feasible"), "1") == 0;
}

/* Row of planner p (and batch b when b > 0), or -1. */
int64_t ooc_report_find_row(const ooc_table *t, const char *p, int64_t b);

/* The feasible row with the smallest iteration time among rows at batch b
 * (b <= 0: all rows), -1 if none. Ties keep the first (planner order). */
int64_t ooc_report_best_row(const ooc_table *t, int64_t b);

#endif
