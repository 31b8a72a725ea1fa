/* report/report.h — the planner comparison report (`oocsim report`).
 *
 * One scenario (model, batch, profile, budget, allocator) becomes DIR with
 * report.md and a self-contained report.html (inline CSS, images beside it
 * referenced relatively), the plots as PNG, and the CSV data behind every
 * table and plot under DIR/data/. The content: the scenario; a comparison
 * of every planner; the winner and why (where each planner's time goes:
 * compute, recompute, stalls waiting for swap-in/out or memory, allocator;
 * and how close each comes to the lower bound); plots of samples/s vs batch
 * around B, slowdown vs link bandwidth, the largest batch of each planner
 * on this GPU, and the winner's memory curve and timeline; a what-if over
 * the link of the other profiles (this GPU with their host link).
 *
 * Owner: report helper. Cost: a few sweeps (sweep.h) of about
 * planners x (batches + bandwidths + links) points plus one maxbatch search
 * per planner, all on `jobs` threads; then one traced run of the winner.
 */
#ifndef OOC_REPORT_H
#define OOC_REPORT_H

#include <stdint.h>
#include "base/error.h"
#include "ir/model.h"
#include "ir/hw.h"
#include "base/progress.h"

typedef struct ooc_report_opts {
  const char *model;
  int64_t batch;
  const char *hw;
  const char *planners;       /* comma list or "all" (NULL: all) */
  const char *allocator;      /* NULL: caching */
  const char *budget;         /* NULL: the profile's usable memory */
  const ooc_kv *sets;         /* --set */
  int n_sets;
  const char *dtype;          /* NULL: the model's */
  const char *precision;      /* --precision (NULL: none; not with dtype) */
  const char *optimizer;      /* NULL: momentum */
  const ooc_hw_override *hw_sets;          /* --hw-set K=V */
  int n_hw_sets;
  const char *batches;        /* throughput batches (NULL: around batch) */
  int maxbatch;               /* 1: include the maxbatch search */
  int steady;                 /* 1 (--steady): plan and simulate until the
                                 allocator is steady (sim/sim.h) */
  int no_timing;              /* 1 (--no-timing): the data's wall-clock
                                 columns 0 */
  int jobs;                   /* threads (>= 1) */
  const char *dir;            /* output directory */
  ooc_progress *progress;     /* points done, all sweeps; NULL: none */
} ooc_report_opts;

typedef struct ooc_report_info {
  char winner[64];            /* "" when no planner is feasible */
  int plots_drawn;            /* plots written */
  double wall_s;
} ooc_report_info;

/* Write the report. Returns OOC_OK; OOC_EUNSUP when gnuplot is missing
 * (report.md, report.html and every CSV are still written; err says so);
 * another negative code on bad input or a failed run. */
int ooc_report_run(const ooc_report_opts *o, ooc_report_info *info,
                   ooc_err *err);

#endif
